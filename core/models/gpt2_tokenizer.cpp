#include "core/models/gpt2_tokenizer.hpp"

#include "core/models/mapped_file.hpp"
#include "core/models/vocabulary_json.hpp"

#include "core/base/unicode_classes.hpp"
#include "core/models/model_tokens.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <mutex>
#include <queue>
#include <system_error>

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// GPT-2's bytes_to_unicode(): the printable bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for
// themselves; the 68 others, in order, for U+0100 upward.
struct ByteAlphabet {
  std::array<std::uint32_t, 256> symbol{};
  std::array<int, 0x144> byte{};  // code point -> byte, -1 for none (every symbol < U+0144)

  ByteAlphabet() {
    byte.fill(-1);
    std::uint32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      symbol[b] = printable ? b : next++;
      byte[symbol[b]] = static_cast<int>(b);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet instance;
  return instance;
}

std::string code_point_name(std::uint32_t code_point) {
  char name[16];
  std::snprintf(name, sizeof name, "U+%04X", static_cast<unsigned>(code_point));
  return name;
}

// A token written in GPT-2's byte alphabet -> its raw bytes, or the first character that is
// not one of the 256 byte symbols.
Result<std::string> symbols_to_bytes(std::string_view symbols) {
  std::string bytes;
  for (std::size_t at = 0; at < symbols.size();) {
    const std::size_t length = utf8_character_length(symbols, at);
    if (length == 0) return Status::error("it is not valid UTF-8");
    const std::uint32_t code_point = decode_code_point(symbols.substr(at, length));
    const int byte = code_point < alphabet().byte.size() ? alphabet().byte[code_point] : -1;
    if (byte < 0)
      return Status::error("its character " + code_point_name(code_point) +
                           " is not one of GPT-2's 256 byte symbols");
    bytes += static_cast<char>(byte);
    at += length;
  }
  return bytes;
}

std::string bytes_to_symbols(std::string_view bytes) {
  std::string symbols;
  for (const char c : bytes) {
    const std::uint32_t code_point = alphabet().symbol[static_cast<unsigned char>(c)];
    if (code_point < 0x80) {
      symbols += static_cast<char>(code_point);
    } else {
      symbols += static_cast<char>(0xC0 | (code_point >> 6));
      symbols += static_cast<char>(0x80 | (code_point & 0x3F));
    }
  }
  return symbols;
}

// Reads the vocabulary's JSON object {"token": id, ...} as a stream of events: no document is
// built, every key and value is checked as it comes, and the count is capped.
// What GPT-2's pattern asks of a character: \s is Unicode's White_Space (what Python's `regex`
// module gives \s, and so encoder.py); [^\s\p{L}\p{N}] is everything else.
enum class PieceClass { kLetter, kNumber, kSpace, kOther };

PieceClass piece_class(std::uint32_t code_point) {
  if (is_white_space(code_point)) return PieceClass::kSpace;
  switch (unicode_class(code_point)) {
    case UnicodeClass::kLetter:
      return PieceClass::kLetter;
    case UnicodeClass::kNumber:
      return PieceClass::kNumber;
    default:
      return PieceClass::kOther;
  }
}

std::uint64_t pair_key(int left, int right) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32 |
         static_cast<std::uint32_t>(right);
}

}  // namespace

struct Gpt2Tokenizer::Cache {
  static constexpr std::size_t kMaxEntries = 1 << 16;
  static constexpr std::size_t kMaxPieceBytes = 256;
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<int>> ids_of_piece;
};

std::uint32_t Gpt2Tokenizer::byte_symbol(unsigned char byte) {
  return alphabet().symbol[byte];
}

Result<Gpt2Tokenizer> Gpt2Tokenizer::load_folder(const std::string& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error))
    return Status::error(folder + ": not a folder (a GPT-2 tokenizer is a folder with " +
                         "vocab.json and merges.txt, or encoder.json and vocab.bpe)");
  const auto has = [&](const char* name) { return fs::exists(fs::path(folder) / name, error); };
  const auto path = [&](const char* name) { return (fs::path(folder) / name).string(); };
  for (const auto& [vocab, merges] :
       {std::pair{"vocab.json", "merges.txt"}, std::pair{"encoder.json", "vocab.bpe"}}) {
    if (has(vocab) && has(merges)) return load(path(vocab), path(merges));
    if (has(vocab) != has(merges))
      return Status::error(folder + ": has " + (has(vocab) ? vocab : merges) + " but not " +
                           (has(vocab) ? merges : vocab));
  }
  return Status::error(folder + ": no GPT-2 tokenizer: expected vocab.json and merges.txt " +
                       "(Hugging Face's names) or encoder.json and vocab.bpe (OpenAI's)");
}

Result<Gpt2Tokenizer> Gpt2Tokenizer::load(const std::string& vocab_path,
                                          const std::string& merges_path) {
  Result<std::string> vocab_text = read_capped(vocab_path, kMaxFileBytes);
  if (!vocab_text) return vocab_text.status();
  Result<std::string> merges_text = read_capped(merges_path, kMaxFileBytes);
  if (!merges_text) return merges_text.status();
  return parse(*vocab_text, *merges_text, vocab_path, merges_path);
}

Result<Gpt2Tokenizer> Gpt2Tokenizer::parse(std::string_view vocab_text,
                                           std::string_view merges_text,
                                           const std::string& vocab_path,
                                           const std::string& merges_path) {
  if (vocab_text.size() > kMaxFileBytes || merges_text.size() > kMaxFileBytes)
    return Status::error((vocab_text.size() > kMaxFileBytes ? vocab_path : merges_path) +
                         ": more than the " + std::to_string(kMaxFileBytes >> 20) +
                         " MiB a tokenizer file may have");

  // The vocabulary.
  Result<std::vector<VocabularyEntry>> entries =
      read_vocabulary_json(vocab_text, kMaxTokens, vocab_path);
  if (!entries) return entries.status();
  // A byte stands for up to two bytes of symbols (U+0100 and up).
  Result<std::vector<std::string>> symbols_of_id =
      keys_by_id(*entries, vocab_path, 2 * kMaxTokenBytes);
  if (!symbols_of_id) return symbols_of_id.status();
  const std::size_t count = symbols_of_id->size();

  Gpt2Tokenizer tokenizer;
  tokenizer.token_bytes_.resize(count);
  tokenizer.id_of_.reserve(count);
  for (std::size_t id = 0; id < count; ++id) {
    const std::string key = json_quoted((*symbols_of_id)[id]);
    Result<std::string> bytes = symbols_to_bytes((*symbols_of_id)[id]);
    if (!bytes) return Status::error(vocab_path + ": " + key + ": " + bytes.error());
    if (bytes->size() > kMaxTokenBytes)
      return Status::error(vocab_path + ": " + key + " is longer than " +
                           std::to_string(kMaxTokenBytes) + " bytes");
    if (const auto [where, added] = tokenizer.id_of_.emplace(*bytes, static_cast<int>(id)); !added)
      return Status::error(vocab_path + ": " + key + " is in the file twice (ids " +
                           std::to_string(where->second) + " and " + std::to_string(id) + ")");
    tokenizer.token_bytes_[id] = std::move(*bytes);
  }
  for (unsigned b = 0; b < 256; ++b) {
    const int id = tokenizer.find(std::string(1, static_cast<char>(b)));
    if (id < 0) {
      char name[8];
      std::snprintf(name, sizeof name, "0x%02X", b);
      return Status::error(vocab_path + ": no token for the byte " + name + " (" +
                           json_quoted(bytes_to_symbols(std::string(1, static_cast<char>(b)))) +
                           "): byte-level BPE needs one for each of the 256 bytes");
    }
    tokenizer.byte_ids_[b] = id;
  }
  tokenizer.end_of_text_ = tokenizer.find(kEndOfText);

  // The merges, in order of rank.
  const std::string_view text = merges_text;
  int line_number = 0;
  std::unordered_map<std::uint64_t, int> line_of_merge;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    const bool last_line = end == std::string_view::npos;
    if (last_line) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = last_line ? text.size() : end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = merges_path + " line " + std::to_string(line_number) + ": ";
    if (line_number == 1 && line.substr(0, 8) == "#version") continue;
    if (line.empty()) {
      if (at == text.size()) break;  // the file's final newline
      return Status::error(where + "empty (each line is two tokens separated by a space)");
    }
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos ||
        line.find('\t') != std::string_view::npos)
      return Status::error(where + json_quoted(line) + " is not two tokens separated by one space");
    if (tokenizer.merges_.size() >= kMaxMerges)
      return Status::error(merges_path + ": more than " + std::to_string(kMaxMerges) + " merges");
    int ids[2] = {-1, -1};
    std::string joined;
    for (int part = 0; part < 2; ++part) {
      const std::string_view symbols = part == 0 ? line.substr(0, space) : line.substr(space + 1);
      Result<std::string> bytes = symbols_to_bytes(symbols);
      if (!bytes) return Status::error(where + json_quoted(symbols) + ": " + bytes.error());
      ids[part] = tokenizer.find(*bytes);
      if (ids[part] < 0)
        return Status::error(where + json_quoted(symbols) + " is not a token of " + vocab_path);
      joined += *bytes;
    }
    const int merged = tokenizer.find(joined);
    if (merged < 0)
      return Status::error(where + "the merge of " + json_quoted(line) + ", " +
                           json_quoted(bytes_to_symbols(joined)) + ", is not a token of " +
                           vocab_path);
    const std::uint64_t key = pair_key(ids[0], ids[1]);
    if (const auto [previous, added] = line_of_merge.emplace(key, line_number); !added)
      return Status::error(where + json_quoted(line) + " repeats line " +
                           std::to_string(previous->second));
    tokenizer.merges_.emplace(key, Merge{static_cast<int>(tokenizer.merges_.size()), merged});
  }
  tokenizer.cache_ = std::make_shared<Cache>();
  return tokenizer;
}

int Gpt2Tokenizer::find(std::string_view bytes) const {
  const auto found = id_of_.find(std::string(bytes));
  return found == id_of_.end() ? -1 : found->second;
}

std::vector<std::pair<std::size_t, std::size_t>> Gpt2Tokenizer::split(std::string_view text) const {
  // GPT-2's pattern, matched by hand as a regular expression engine would (the first
  // alternative that matches at a position wins, each one greedy):
  //   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  // Pass 1: the characters, with their classes. An invalid byte is one character, U+FFFD (a
  // symbol), as a regex engine sees it once the text is made valid UTF-8.
  struct Character {
    std::size_t begin;  // byte offset in text
    std::uint32_t code_point;
    PieceClass kind;
  };
  std::vector<Character> characters;  // (n_characters + 1): the last one marks the end
  characters.reserve(text.size() + 1);
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_character_length(text, at);
    const std::uint32_t code_point =
        length == 0 ? std::uint32_t{0xFFFD} : decode_code_point(text.substr(at, length));
    characters.push_back({at, code_point, piece_class(code_point)});
    at += std::max<std::size_t>(length, 1);
  }
  const std::size_t count = characters.size();
  characters.push_back({text.size(), 0, PieceClass::kOther});

  // Pass 2: the pieces, each one the first alternative that matches where the last one ended.
  const auto run_end = [&](std::size_t from, PieceClass kind) {
    while (from < count && characters[from].kind == kind) ++from;
    return from;
  };
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  for (std::size_t at = 0; at < count;) {
    std::size_t end = at;  // in characters
    // 's 't 're 've 'm 'll 'd
    if (characters[at].code_point == '\'') {
      const std::string_view rest = text.substr(characters[at].begin + 1);
      for (const std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"})
        if (rest.starts_with(suffix)) {
          end = at + 1 + suffix.size();  // ASCII: one character a byte
          break;
        }
    }
    //  ?\p{L}+   ?\p{N}+   ?[^\s\p{L}\p{N}]+
    for (const PieceClass kind : {PieceClass::kLetter, PieceClass::kNumber, PieceClass::kOther}) {
      if (end > at) break;
      if (characters[at].code_point == ' ' && at + 1 < count && characters[at + 1].kind == kind)
        end = run_end(at + 1, kind);
      else if (characters[at].kind == kind)
        end = run_end(at, kind);
    }
    // \s+(?!\S), which backs off one space from a run followed by a non-space; else \s+.
    if (end == at) {
      end = run_end(at, PieceClass::kSpace);
      if (end < count && end - at > 1) --end;
    }
    pieces.emplace_back(characters[at].begin, characters[end].begin);
    at = end;
  }
  return pieces;
}

void Gpt2Tokenizer::merge_piece(std::string_view piece, std::vector<int>& out) const {
  if (piece.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  const bool cacheable = piece.size() <= Cache::kMaxPieceBytes;
  if (cacheable) {
    const std::lock_guard<std::mutex> lock(cache_->mutex);
    const auto found = cache_->ids_of_piece.find(std::string(piece));
    if (found != cache_->ids_of_piece.end()) {
      out.insert(out.end(), found->second.begin(), found->second.end());
      return;
    }
  }
  // encoder.py's bpe(): find the adjacent pair whose merge ranks first, merge every occurrence
  // of it from left to right, repeat. Here with a heap of (rank, position) and a linked list:
  // all the heap's entries of the first rank are taken at once and merged in position order
  // (merging a pair never makes another occurrence of the same pair, so they are exactly the
  // occurrences reference merges in that round), then the next rank.
  const std::size_t n = piece.size();
  std::vector<int> ids(n), next(n), previous(n);
  for (std::size_t i = 0; i < n; ++i) {
    ids[i] = byte_ids_[static_cast<unsigned char>(piece[i])];
    next[i] = i + 1 < n ? static_cast<int>(i + 1) : -1;
    previous[i] = static_cast<int>(i) - 1;
  }
  using Entry = std::pair<int, int>;  // (rank, position of the pair's left token)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  const auto push_pair = [&](int left) {
    if (left < 0 || next[left] < 0) return;
    const auto found = merges_.find(pair_key(ids[left], ids[next[left]]));
    if (found != merges_.end()) heap.emplace(found->second.rank, left);
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push_pair(static_cast<int>(i));
  std::vector<int> round;
  while (!heap.empty()) {
    const int rank = heap.top().first;
    round.clear();
    while (!heap.empty() && heap.top().first == rank) {
      round.push_back(heap.top().second);
      heap.pop();
    }
    for (const int left : round) {
      const int right = next[left];
      if (ids[left] < 0 || right < 0) continue;  // gone, or now last
      const auto found = merges_.find(pair_key(ids[left], ids[right]));
      if (found == merges_.end() || found->second.rank != rank) continue;  // changed since
      ids[left] = found->second.merged;
      ids[right] = -1;
      next[left] = next[right];
      if (next[left] >= 0) previous[next[left]] = left;
      push_pair(previous[left]);
      push_pair(left);
    }
  }
  const std::size_t first_out = out.size();
  for (int i = 0; i >= 0; i = next[i]) out.push_back(ids[i]);
  if (cacheable) {
    const std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->ids_of_piece.size() >= Cache::kMaxEntries) cache_->ids_of_piece.clear();
    cache_->ids_of_piece.emplace(
        std::string(piece),
        std::vector<int>(out.begin() + static_cast<std::ptrdiff_t>(first_out), out.end()));
  }
}

template <class Emit>
void Gpt2Tokenizer::encode_into(std::string_view text, SpecialText special, Emit&& emit) const {
  std::vector<int> ids;
  const auto ordinary = [&](std::size_t offset, std::string_view part) {
    for (const auto& [begin, end] : split(part)) {
      ids.clear();
      merge_piece(part.substr(begin, end - begin), ids);
      std::size_t at = offset + begin;
      for (const int id : ids) {
        const std::size_t length = token_bytes(id).size();
        emit(id, at, at + length, false);
        at += length;
      }
    }
  };
  std::size_t at = 0;
  if (special == SpecialText::kAsSpecial && end_of_text_ >= 0) {
    for (std::size_t found = text.find(kEndOfText); found != std::string_view::npos;
         found = text.find(kEndOfText, at)) {
      ordinary(at, text.substr(at, found - at));
      emit(end_of_text_, found, found + kEndOfText.size(), true);
      at = found + kEndOfText.size();
    }
  }
  ordinary(at, text.substr(at));
}

std::vector<int> Gpt2Tokenizer::encode(std::string_view text, SpecialText special) const {
  std::vector<int> ids;
  encode_into(text, special, [&](int id, std::size_t, std::size_t, bool) { ids.push_back(id); });
  return ids;
}

Result<std::string> Gpt2Tokenizer::decode(const std::vector<int>& ids) const {
  std::string text;
  for (const int id : ids) {
    if (id < 0 || id >= size())
      return Status::error("token id " + std::to_string(id) + " is not in the vocabulary (0 ... " +
                           std::to_string(size() - 1) + ")");
    text += token_bytes(id);
  }
  return text;
}

Result<std::vector<ModelToken>> Gpt2Tokenizer::tokenize(std::string_view text,
                                                        SpecialText special) const {
  if (text.size() > kMaxTokenizedTextBytes)
    return Status::error("the text is " + std::to_string(text.size()) +
                         " bytes; a model's tokens are shown for at most " +
                         std::to_string(kMaxTokenizedTextBytes >> 20) + " MiB");
  std::vector<ModelToken> tokens;
  encode_into(text, special, [&](int id, std::size_t begin, std::size_t end, bool is_special) {
    ModelToken token;
    token.id = id;
    token.bytes = token_bytes(id);
    token.byte_begin = static_cast<int>(begin);
    token.byte_end = static_cast<int>(end);
    token.special = is_special;
    if (token.special) token.shown = std::string(kEndOfText);
    tokens.push_back(std::move(token));
  });
  show_tokens(tokens);
  return tokens;
}

}  // namespace attnviz
