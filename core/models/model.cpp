#include "core/models/model.hpp"

#include <algorithm>
#include <filesystem>

namespace attnviz {
namespace fs = std::filesystem;

Result<ModelTokenizer> ModelTokenizer::load(const ModelLocation& location, int vocab_size,
                                            const EncoderDecoderTokens& special) {
  const fs::path folder(location.folder);
  if (location.format == ModelFormat::HuggingFaceEncoderDecoder) {
    std::error_code error;
    if (!fs::exists(folder / "source.spm", error)) {  // BART: GPT-2's BPE with <s> and </s>
      Result<Gpt2Tokenizer> tokenizer = Gpt2Tokenizer::load_folder(location.folder);
      if (!tokenizer)
        return Status::error(tokenizer.status().message() +
                             " (an encoder–decoder's tokenizer: Marian's source.spm, target.spm "
                             "and vocab.json, or BART's vocab.json and merges.txt)");
      if (tokenizer->size() > vocab_size)
        return Status::error(location.folder + ": the tokenizer has " +
                             std::to_string(tokenizer->size()) + " tokens, the model only " +
                             std::to_string(vocab_size));
      const int begin = tokenizer->find("<s>"), end = tokenizer->find("</s>");
      if (begin < 0 || end < 0)
        return Status::error(location.folder +
                             ": vocab.json has no <s> or no </s> (BART reads <s> text </s>)");
      ModelTokenizer made(std::move(*tokenizer), "vocab.json, merges.txt");
      made.decoder_start_ = special.decoder_start;
      made.sequence_begin_ = begin;
      made.sequence_end_ = end;
      return made;
    }
    Result<MarianTokenizer> tokenizer = MarianTokenizer::load_folder(location.folder, special.pad);
    if (!tokenizer) return tokenizer.status();
    if (tokenizer->size() > vocab_size)
      return Status::error(location.folder + ": vocab.json has " +
                           std::to_string(tokenizer->size()) + " tokens, the model only " +
                           std::to_string(vocab_size));
    if (special.end >= 0 && special.end != tokenizer->end())
      return Status::error(location.folder + ": config.json's eos_token_id is " +
                           std::to_string(special.end) + ", but vocab.json gives </s> the id " +
                           std::to_string(tokenizer->end()));
    ModelTokenizer made(std::move(*tokenizer), "source.spm, target.spm, vocab.json");
    made.decoder_start_ = special.decoder_start;
    return made;
  }
  if (location.format == ModelFormat::Llama2c) {
    std::error_code error;
    fs::path file = folder / "tokenizer.bin";
    if (!fs::is_regular_file(file, error))
      file = folder / ("tok" + std::to_string(vocab_size) + ".bin");
    if (!fs::is_regular_file(file, error))
      return Status::error(location.folder +
                           ": no tokenizer beside the model (tokenizer.bin or tok" +
                           std::to_string(vocab_size) + ".bin)");
    Result<Llama2cTokenizer> tokenizer = Llama2cTokenizer::load(file.string(), vocab_size);
    if (!tokenizer) return tokenizer.status();
    return ModelTokenizer(std::move(*tokenizer), file.filename().string());
  }
  if (location.format == ModelFormat::HuggingFaceBert) {
    Result<BertTokenizer> tokenizer = BertTokenizer::load_folder(location.folder);
    if (!tokenizer) return tokenizer.status();
    if (tokenizer->size() > vocab_size)
      return Status::error(location.folder + ": vocab.txt has " +
                           std::to_string(tokenizer->size()) + " tokens, the model only " +
                           std::to_string(vocab_size));
    const bool config = fs::exists(folder / "tokenizer_config.json");
    return ModelTokenizer(std::move(*tokenizer),
                          config ? "vocab.txt, tokenizer_config.json" : "vocab.txt");
  }
  Result<Gpt2Tokenizer> tokenizer = Gpt2Tokenizer::load_folder(location.folder);
  if (!tokenizer) return tokenizer.status();
  if (tokenizer->size() > vocab_size)
    return Status::error(location.folder + ": the tokenizer has " +
                         std::to_string(tokenizer->size()) + " tokens, the model only " +
                         std::to_string(vocab_size));
  const bool openai_names =
      !fs::exists(folder / "vocab.json") && fs::exists(folder / "encoder.json");
  return ModelTokenizer(std::move(*tokenizer),
                        openai_names ? "encoder.json, vocab.bpe" : "vocab.json, merges.txt");
}

namespace {

// A BERT token as the views list it: the vocabulary's piece ("##ing" keeps its "##").
ModelToken bert_token(const BertTokenizer& bert, int id, std::size_t begin, std::size_t end,
                      int sentence) {
  ModelToken token;
  token.id = id;
  token.bytes = bert.token(id);
  token.byte_begin = static_cast<int>(begin);
  token.byte_end = static_cast<int>(end);
  token.special = bert.special(id);
  if (token.special) token.shown = token.bytes;
  token.sentence = sentence;
  return token;
}

// [CLS] a [SEP] (b [SEP]): each text's pieces with their bytes in it.
std::vector<ModelToken> bert_tokens(const BertTokenizer& bert, std::string_view a,
                                    std::optional<std::string_view> b) {
  std::vector<ModelToken> tokens;
  tokens.push_back(bert_token(bert, bert.cls(), 0, 0, 0));
  const auto add = [&](std::string_view text, int sentence) {
    for (const BertTokenizer::Piece& piece : bert.tokenize(text))
      tokens.push_back(bert_token(bert, piece.id, piece.byte_begin, piece.byte_end, sentence));
    tokens.push_back(bert_token(bert, bert.sep(), text.size(), text.size(), sentence));
  };
  add(a, 0);
  if (b) add(*b, 1);
  show_tokens(tokens);
  return tokens;
}

}  // namespace

Result<std::vector<ModelToken>> ModelTokenizer::tokenize(
    std::string_view text, std::optional<std::string_view> second) const {
  if (const auto* bert = std::get_if<BertTokenizer>(&tokenizer_)) {
    for (const std::string_view part : {text, second.value_or(std::string_view())})
      if (part.size() > kMaxTokenizedTextBytes)
        return Status::error("the text is longer than the tokenizer reads (1 GiB)");
    return bert_tokens(*bert, text, second);
  }
  if (second) return Status::error("only an encoder (BERT) reads a pair of texts");
  if (const auto* marian = std::get_if<MarianTokenizer>(&tokenizer_))
    return marian->tokenize(text, MarianTokenizer::Side::Source);
  if (sequence_end_ >= 0) {  // BART: <s> text </s>
    Result<std::vector<ModelToken>> pieces = std::get<Gpt2Tokenizer>(tokenizer_).tokenize(text);
    if (!pieces) return pieces;
    std::vector<ModelToken> tokens{special_token(sequence_begin_, 0)};
    for (ModelToken& piece : *pieces) tokens.push_back(std::move(piece));
    tokens.push_back(special_token(sequence_end_, static_cast<int>(text.size())));
    return tokens;
  }
  if (const auto* llama = std::get_if<Llama2cTokenizer>(&tokenizer_)) return llama->tokenize(text);
  return std::get<Gpt2Tokenizer>(tokenizer_).tokenize(text, Gpt2Tokenizer::SpecialText::kAsSpecial);
}

Result<std::vector<ModelToken>> ModelTokenizer::tokenize_target(std::string_view text) const {
  if (const auto* marian = std::get_if<MarianTokenizer>(&tokenizer_))
    return marian->tokenize(text, MarianTokenizer::Side::Target);
  if (sequence_end_ < 0)
    return Status::error("only an encoder–decoder (Marian, BART) reads a target text");
  // BART's target: <s>, then the text (its decoder reads </s> <s> text, as BART was trained).
  Result<std::vector<ModelToken>> pieces = std::get<Gpt2Tokenizer>(tokenizer_).tokenize(text);
  if (!pieces) return pieces;
  std::vector<ModelToken> tokens{special_token(sequence_begin_, 0)};
  for (ModelToken& piece : *pieces) tokens.push_back(std::move(piece));
  return tokens;
}

ModelToken ModelTokenizer::special_token(int id, int at) const {
  ModelToken token;
  token.id = id;
  token.shown = shown(id);
  token.bytes = token.shown;
  token.byte_begin = token.byte_end = at;
  token.special = true;
  return token;
}

int ModelTokenizer::start_token() const {
  if (std::holds_alternative<MarianTokenizer>(tokenizer_) || sequence_end_ >= 0)
    return decoder_start_;  // an encoder–decoder's decoder
  if (std::holds_alternative<Llama2cTokenizer>(tokenizer_)) return Llama2cTokenizer::kBos;
  if (const auto* gpt2 = std::get_if<Gpt2Tokenizer>(&tokenizer_)) return gpt2->end_of_text();
  return -1;  // BERT: [CLS] is always there
}

int ModelTokenizer::stop_token() const {
  if (const auto* marian = std::get_if<MarianTokenizer>(&tokenizer_)) return marian->end();
  if (sequence_end_ >= 0) return sequence_end_;
  return start_token();
}

int ModelTokenizer::mask_token() const {
  const auto* bert = std::get_if<BertTokenizer>(&tokenizer_);
  return bert ? bert->mask() : -1;
}

std::string ModelTokenizer::text_of(int previous, int id) const {
  if (const auto* llama = std::get_if<Llama2cTokenizer>(&tokenizer_))
    return llama->decode(previous, id);
  if (const auto* marian = std::get_if<MarianTokenizer>(&tokenizer_))
    return marian->text_of(previous == decoder_start_ ? -1 : previous, id);
  if (sequence_end_ >= 0 && (id == sequence_begin_ || id == sequence_end_)) return {};
  if (const auto* bert = std::get_if<BertTokenizer>(&tokenizer_)) {
    // A word's later pieces join it ("play" "##ing"); any other token is a word after a space.
    if (id < 0 || id >= bert->size()) return {};
    const std::string& piece = bert->token(id);
    if (piece.rfind("##", 0) == 0 && piece.size() > 2) return piece.substr(2);
    return (previous >= 0 ? " " : "") + piece;
  }
  const Gpt2Tokenizer& gpt2 = std::get<Gpt2Tokenizer>(tokenizer_);
  if (id == gpt2.end_of_text()) return std::string(Gpt2Tokenizer::kEndOfText);
  return id >= 0 && id < gpt2.size() ? gpt2.token_bytes(id) : std::string();
}

std::string ModelTokenizer::shown(int id) const {
  std::vector<ModelToken> one(1);
  one[0].id = id;
  if (const auto* llama = std::get_if<Llama2cTokenizer>(&tokenizer_)) {
    if (id < 0 || id >= llama->size()) return "<" + std::to_string(id) + ">";
    if (id == Llama2cTokenizer::kBos || id == Llama2cTokenizer::kEos || id == 0) {
      return id == Llama2cTokenizer::kBos ? "<s>" : id == Llama2cTokenizer::kEos ? "</s>" : "<unk>";
    }
    const std::string& piece = llama->piece(id);
    // A byte token "<0xHH>" is its one byte.
    unsigned int byte = 0;
    if (piece.size() == 6 && std::sscanf(piece.c_str(), "<0x%02X>", &byte) == 1)
      one[0].bytes = std::string(1, static_cast<char>(byte));
    else
      one[0].bytes = piece;
  } else if (const auto* bert = std::get_if<BertTokenizer>(&tokenizer_)) {
    if (id < 0 || id >= bert->size()) return "<" + std::to_string(id) + ">";
    if (bert->special(id)) return bert->token(id);
    one[0].bytes = bert->token(id);
  } else if (const auto* marian = std::get_if<MarianTokenizer>(&tokenizer_)) {
    if (id < 0 || id >= marian->size()) return "<" + std::to_string(id) + ">";
    if (marian->special(id)) return marian->piece(id);
    one[0].bytes = marian->text_of(0, id);  // "▁casa" is " casa": shown "␣casa"
  } else {
    const Gpt2Tokenizer& gpt2 = std::get<Gpt2Tokenizer>(tokenizer_);
    if (id < 0 || id >= gpt2.size()) return "<" + std::to_string(id) + ">";
    if (id == gpt2.end_of_text()) return std::string(Gpt2Tokenizer::kEndOfText);
    one[0].bytes = gpt2.token_bytes(id);
  }
  show_tokens(one);
  return one[0].shown;
}

int ModelTokenizer::size() const {
  return std::visit([](const auto& tokenizer) { return tokenizer.size(); }, tokenizer_);
}

std::string ModelTokenizer::description() const {
  if (std::holds_alternative<Llama2cTokenizer>(tokenizer_))
    return "llama2.c, merges by score: " + std::to_string(size()) + " tokens (" + files_ + ")";
  if (const auto* marian = std::get_if<MarianTokenizer>(&tokenizer_))
    return "Marian SentencePiece: " + std::to_string(marian->size()) + " tokens (" + files_ + ")";
  if (const auto* bert = std::get_if<BertTokenizer>(&tokenizer_))
    return "BERT WordPiece: " + std::to_string(bert->size()) + " tokens, " +
           (bert->options().lower_case ? "lower case" : "cased") + " (" + files_ + ")";
  const Gpt2Tokenizer& gpt2 = std::get<Gpt2Tokenizer>(tokenizer_);
  if (sequence_end_ >= 0)
    return "BART: GPT-2 byte-level BPE, " + std::to_string(gpt2.size()) + " tokens, " +
           std::to_string(gpt2.merge_count()) + " merges, <s> text </s> (" + files_ + ")";
  return "GPT-2 byte-level BPE: " + std::to_string(gpt2.size()) + " tokens, " +
         std::to_string(gpt2.merge_count()) + " merges (" + files_ + ")";
}

Result<Model> open_model(const std::string& path_or_name) {
  Result<ModelLocation> location = locate_model(path_or_name);
  if (!location) return location.status();
  EncoderDecoderTokens special;
  Result<Transformer> transformer = location->format == ModelFormat::HuggingFaceEncoderDecoder
                                        ? load_hf_encoder_decoder(location->path, &special)
                                        : load_model(path_or_name);
  if (!transformer) return transformer.status();
  Result<ModelTokenizer> tokenizer =
      ModelTokenizer::load(*location, transformer->config().vocab_size, special);
  if (!tokenizer) return tokenizer.status();
  const fs::path folder = fs::path(location->folder);
  std::string name = folder.filename().string();
  if (name.empty()) name = folder.parent_path().filename().string();
  std::vector<std::string> warnings = transformer.warnings;
  return Result<Model>(
      Model{std::move(name), std::move(*location), std::move(*transformer), std::move(*tokenizer)},
      std::move(warnings));
}

Result<std::vector<ModelToken>> read_text(const Model& model, std::string_view text,
                                          std::optional<std::string_view> second) {
  Result<std::vector<ModelToken>> tokens = model.tokenizer.tokenize(text, second);
  if (!tokens) return tokens;
  if (tokens->empty() && model.tokenizer.start_token() >= 0) {
    ModelToken start;
    start.id = model.tokenizer.start_token();
    start.shown = model.tokenizer.shown(start.id);
    start.special = true;
    tokens->push_back(std::move(start));
  }
  if (tokens->empty()) return Status::error("the text gives no tokens");
  return tokens;
}

Result<std::vector<ModelToken>> read_target(const Model& model, std::string_view text) {
  Result<std::vector<ModelToken>> pieces = model.tokenizer.tokenize_target(text);
  if (!pieces) return pieces;
  std::vector<ModelToken> tokens;
  tokens.reserve(pieces->size() + 1);
  ModelToken start;
  start.id = model.tokenizer.start_token();
  start.shown = model.tokenizer.shown(start.id);
  start.special = true;
  tokens.push_back(std::move(start));
  for (ModelToken& piece : *pieces) tokens.push_back(std::move(piece));
  return tokens;
}

std::vector<ModelToken> target_tokens_of(const Model& model, std::span<const int> ids) {
  std::vector<ModelToken> tokens;
  tokens.reserve(ids.size());
  int at = 0;  // bytes of the translation's text so far
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ModelToken token;
    token.id = ids[i];
    token.shown = model.tokenizer.shown(token.id);
    token.special = i == 0;
    if (i > 0) {
      token.bytes = model.tokenizer.text_of(ids[i - 1], ids[i]);
      token.byte_begin = at;
      at += static_cast<int>(token.bytes.size());
      token.byte_end = at;
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

std::vector<int> token_types(std::span<const ModelToken> tokens) {
  std::vector<int> types;
  types.reserve(tokens.size());
  for (const ModelToken& token : tokens) types.push_back(token.sentence);
  return types;
}

std::string_view default_role_text(const Model& model) {
  // Mark 1:9 (WEB), 22 tokens of bert-web: one sentence, of the length a class types, because
  // an encoder's [CLS] heads give [CLS] a share that shrinks with the text (bert-web's: 0.55 of
  // a row here, 0.38 over Mark 1:9–10).
  if (model.transformer.config().architecture == "bert")
    return "In those days, Jesus came from Nazareth of Galilee, and was baptized by John in the "
           "Jordan.";
  return model.transformer.config().architecture == "llama"
             ? "Once upon a time, there was a little girl named Lily. She loved to play outside in "
               "the park with her friends. One day, she saw a big red ball."
             : "And he heard the words of Laban's sons, saying, Jacob hath taken away all that was "
               "our father's; and of that which was our father's hath he gotten all this glory.\n"
               "And Jacob beheld the countenance of Laban, and, behold, it was not toward him as "
               "before.";
}

Result<HeadRoleProbe> role_probe(const Model& model, std::string_view text) {
  Result<std::vector<ModelToken>> tokens = read_text(model, text);
  if (!tokens) return tokens.status();
  const TransformerConfig& config = model.transformer.config();
  if (static_cast<int>(tokens->size()) > config.context)
    return Status::error("the text is " + std::to_string(tokens->size()) +
                         " tokens; the model reads at most " + std::to_string(config.context));
  HeadRoleProbe probe;
  probe.text.reserve(tokens->size());
  for (const ModelToken& token : *tokens) {
    probe.text.push_back(token.id);
    probe.special.push_back(token.special);
  }
  probe.text_types = token_types(*tokens);
  probe.random_length = std::min(48, config.context / 2);
  // Random tokens come from past the special ones (llama2.c's first three; BERT's [PAD], [UNK],
  // [CLS], [SEP] and [MASK], wherever its vocabulary has them, and whatever lies before them).
  probe.first_random_token = config.architecture == "llama" ? 3 : 0;
  if (model.tokenizer.reads_pairs())
    for (const ModelToken& token : *tokens)
      if (token.special)
        probe.first_random_token = std::max(probe.first_random_token, token.id + 1);
  if (model.tokenizer.mask_token() >= probe.first_random_token)
    probe.first_random_token = model.tokenizer.mask_token() + 1;
  return probe;
}

}  // namespace attnviz
