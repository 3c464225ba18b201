#include "core/models/model.hpp"

#include <algorithm>
#include <filesystem>

namespace attnviz {
namespace fs = std::filesystem;

Result<ModelTokenizer> ModelTokenizer::load(const ModelLocation& location, int vocab_size) {
  const fs::path folder(location.folder);
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

Result<std::vector<ModelToken>> ModelTokenizer::tokenize(std::string_view text) const {
  if (const auto* llama = std::get_if<Llama2cTokenizer>(&tokenizer_)) return llama->tokenize(text);
  return std::get<Gpt2Tokenizer>(tokenizer_).tokenize(text, Gpt2Tokenizer::SpecialText::kAsSpecial);
}

int ModelTokenizer::start_token() const {
  if (std::holds_alternative<Llama2cTokenizer>(tokenizer_)) return Llama2cTokenizer::kBos;
  return std::get<Gpt2Tokenizer>(tokenizer_).end_of_text();
}

int ModelTokenizer::stop_token() const {
  return start_token();
}

std::string ModelTokenizer::text_of(int previous, int id) const {
  if (const auto* llama = std::get_if<Llama2cTokenizer>(&tokenizer_))
    return llama->decode(previous, id);
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
  const Gpt2Tokenizer& gpt2 = std::get<Gpt2Tokenizer>(tokenizer_);
  return "GPT-2 byte-level BPE: " + std::to_string(gpt2.size()) + " tokens, " +
         std::to_string(gpt2.merge_count()) + " merges (" + files_ + ")";
}

Result<Model> open_model(const std::string& path_or_name) {
  Result<ModelLocation> location = locate_model(path_or_name);
  if (!location) return location.status();
  Result<Transformer> transformer = load_model(path_or_name);
  if (!transformer) return transformer.status();
  Result<ModelTokenizer> tokenizer =
      ModelTokenizer::load(*location, transformer->config().vocab_size);
  if (!tokenizer) return tokenizer.status();
  const fs::path folder = fs::path(location->folder);
  std::string name = folder.filename().string();
  if (name.empty()) name = folder.parent_path().filename().string();
  std::vector<std::string> warnings = transformer.warnings;
  return Result<Model>(
      Model{std::move(name), std::move(*location), std::move(*transformer), std::move(*tokenizer)},
      std::move(warnings));
}

Result<std::vector<ModelToken>> read_text(const Model& model, std::string_view text) {
  Result<std::vector<ModelToken>> tokens = model.tokenizer.tokenize(text);
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

std::string_view default_role_text(const Model& model) {
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
  for (const ModelToken& token : *tokens) probe.text.push_back(token.id);
  probe.random_length = std::min(48, config.context / 2);
  probe.first_random_token = config.architecture == "llama" ? 3 : 0;
  return probe;
}

}  // namespace attnviz
