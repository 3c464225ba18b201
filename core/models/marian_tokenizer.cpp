#include "core/models/marian_tokenizer.hpp"

#include "core/models/mapped_file.hpp"
#include "core/models/vocabulary_json.hpp"

#if defined(ATTNVIZ_HAVE_SENTENCEPIECE)
#include <sentencepiece_processor.h>
#endif

#include <filesystem>
#include <system_error>

namespace attnviz {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // "▁", U+2581: a space before a word

// Text with each "▁" a space.
std::string spaced(std::string_view piece) {
  std::string out;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kWordStart.size()) == kWordStart) {
      out += ' ';
      i += kWordStart.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_character_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace

#if defined(ATTNVIZ_HAVE_SENTENCEPIECE)
struct MarianTokenizer::Processors {
  sentencepiece::SentencePieceProcessor source, target;
};
bool MarianTokenizer::available() {
  return true;
}
#else
struct MarianTokenizer::Processors {};
bool MarianTokenizer::available() {
  return false;
}
#endif

MarianTokenizer::MarianTokenizer() = default;
MarianTokenizer::~MarianTokenizer() = default;
MarianTokenizer::MarianTokenizer(MarianTokenizer&&) noexcept = default;
MarianTokenizer& MarianTokenizer::operator=(MarianTokenizer&&) noexcept = default;

int MarianTokenizer::find(std::string_view piece) const {
  const auto it = id_of_.find(std::string(piece));
  return it == id_of_.end() ? -1 : it->second;
}

Result<MarianTokenizer> MarianTokenizer::load_folder(const std::string& folder, int pad) {
  const fs::path base(folder);
  const std::string vocab_path = (base / "vocab.json").string();
  std::error_code error;
  for (const char* name : {"source.spm", "target.spm", "vocab.json"})
    if (!fs::exists(base / name, error))
      return Status::error(folder + ": no " + name +
                           " (a Marian tokenizer is source.spm, target.spm and vocab.json)");
  if (!available())
    return Status::error(folder +
                         ": this build of AttnViz reads no SentencePiece models (it was built "
                         "without libsentencepiece), so it cannot tokenize for this model");

  // 1. vocab.json: every id once, from 0 up, every piece valid UTF-8 and not too long.
  Result<std::string> vocab_text = read_capped(vocab_path, kMaxFileBytes);
  if (!vocab_text) return vocab_text.status();
  Result<std::vector<VocabularyEntry>> entries =
      read_vocabulary_json(*vocab_text, kMaxTokens, vocab_path);
  if (!entries) return entries.status();
  Result<std::vector<std::string>> pieces = keys_by_id(*entries, vocab_path, kMaxTokenBytes);
  if (!pieces) return pieces.status();
  const std::size_t count = pieces->size();
  MarianTokenizer tokenizer;
  tokenizer.id_of_.reserve(count);
  for (std::size_t id = 0; id < count; ++id) {
    const std::string& piece = (*pieces)[id];
    if (!valid_utf8(piece))
      return Status::error(vocab_path + ": " + json_quoted(piece) + " is not valid UTF-8");
    if (const auto [where, added] = tokenizer.id_of_.emplace(piece, static_cast<int>(id)); !added)
      return Status::error(vocab_path + ": " + json_quoted(piece) + " is in the file twice (ids " +
                           std::to_string(where->second) + " and " + std::to_string(id) + ")");
  }
  tokenizer.pieces_ = std::move(*pieces);
  tokenizer.end_ = tokenizer.find("</s>");
  tokenizer.unknown_ = tokenizer.find("<unk>");
  if (tokenizer.end_ < 0 || tokenizer.unknown_ < 0)
    return Status::error(vocab_path + ": no " + (tokenizer.end_ < 0 ? "</s>" : "<unk>") +
                         " token (a Marian vocabulary holds </s> and <unk>)");
  if (pad >= static_cast<int>(count))
    return Status::error(vocab_path + ": the pad token's id " + std::to_string(pad) +
                         " (config.json) is not in its " + std::to_string(count) + " tokens");
  tokenizer.pad_ = pad >= 0 ? pad : tokenizer.find("<pad>");

  // 2. The SentencePiece models, read by the library from their bytes (a bad file is its error,
  // not a crash: the library parses the protobuf and checks it).
#if defined(ATTNVIZ_HAVE_SENTENCEPIECE)
  tokenizer.processors_ = std::make_unique<Processors>();
  for (const bool source : {true, false}) {
    const std::string path = (base / (source ? "source.spm" : "target.spm")).string();
    Result<std::string> bytes = read_capped(path, kMaxFileBytes);
    if (!bytes) return bytes.status();
    if (bytes->empty()) return Status::error(path + ": empty (not a SentencePiece model)");
    sentencepiece::SentencePieceProcessor& processor =
        source ? tokenizer.processors_->source : tokenizer.processors_->target;
    const sentencepiece::util::Status loaded = processor.LoadFromSerializedProto(*bytes);
    if (!loaded.ok())
      return Status::error(path + ": not a SentencePiece model SentencePiece can read (" +
                           loaded.ToString() + ")");
  }
#endif
  return tokenizer;
}

Result<std::vector<ModelToken>> MarianTokenizer::tokenize(std::string_view text, Side side) const {
  if (text.size() > kMaxTokenizedTextBytes)
    return Status::error("the text is longer than the tokenizer reads (1 GiB)");
  std::vector<ModelToken> tokens;
  std::size_t offset = 0;
  // A language code first (">>es<<"), one token when the vocabulary has it.
  if (side == Side::Source && text.substr(0, 2) == ">>") {
    const std::size_t close = text.find("<<", 2);
    if (close != std::string_view::npos && close < 64) {
      const std::string code(text.substr(0, close + 2));
      if (const int id = find(code); id >= 0) {
        ModelToken token;
        token.id = id;
        token.bytes = code;
        token.byte_end = static_cast<int>(code.size());
        token.special = true;
        token.shown = code;
        tokens.push_back(std::move(token));
        offset = code.size();
      }
    }
  }
#if defined(ATTNVIZ_HAVE_SENTENCEPIECE)
  const sentencepiece::SentencePieceProcessor& processor =
      side == Side::Source ? processors_->source : processors_->target;
  const std::string_view rest = text.substr(offset);
  const sentencepiece::ImmutableSentencePieceText pieces =
      processor.EncodeAsImmutableProto(absl::string_view(rest.data(), rest.size()));
  for (const auto& piece : pieces.pieces()) {
    ModelToken token;
    const int id = find(piece.piece());
    token.id = id >= 0 ? id : unknown_;
    const std::size_t begin = std::min<std::size_t>(piece.begin(), rest.size());
    const std::size_t end =
        std::min<std::size_t>(std::max<std::size_t>(piece.end(), begin), rest.size());
    token.byte_begin = static_cast<int>(offset + begin);
    token.byte_end = static_cast<int>(offset + end);
    // What the piece stands for in the text: its bytes there (" casa"), or, for a piece that
    // covers none, the piece with its "▁" a space.
    token.bytes =
        end > begin ? std::string(rest.substr(begin, end - begin)) : spaced(piece.piece());
    tokens.push_back(std::move(token));
  }
#else
  return Status::error("this build of AttnViz reads no SentencePiece models");
#endif
  if (side == Side::Source) {
    ModelToken end_token;
    end_token.id = end_;
    end_token.bytes = piece(end_);
    end_token.shown = end_token.bytes;
    end_token.byte_begin = end_token.byte_end = static_cast<int>(text.size());
    end_token.special = true;
    tokens.push_back(std::move(end_token));
  }
  show_tokens(tokens);
  return tokens;
}

Result<std::vector<int>> MarianTokenizer::encode(std::string_view text, Side side) const {
  Result<std::vector<ModelToken>> tokens = tokenize(text, side);
  if (!tokens) return tokens.status();
  std::vector<int> ids;
  ids.reserve(tokens->size());
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  return ids;
}

std::string MarianTokenizer::text_of(int previous, int id) const {
  if (id < 0 || id >= size() || special(id)) return {};
  std::string text = spaced(piece(id));
  if (previous < 0 && !text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

}  // namespace attnviz
