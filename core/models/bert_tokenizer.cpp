#include "core/models/bert_tokenizer.hpp"

#include "core/models/bert_text.hpp"
#include "core/models/mapped_file.hpp"
#include "core/models/model_tokens.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <system_error>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 16;
constexpr int kMaxConfigDepth = 32;
constexpr std::array<std::string_view, 5> kSpecialNames = {"[CLS]", "[SEP]", "[MASK]", "[PAD]",
                                                           "[UNK]"};

// Deeper than kMaxConfigDepth: refused before the parser (which recurses) sees it.
bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      escaped = !escaped && c == '\\';
      if (c == '"' && !escaped) in_string = false;
      if (c != '\\') escaped = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') {
      if (++depth > kMaxConfigDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// The code point at `at` and its length (an invalid byte: U+FFFD, one byte).
char32_t next_character(std::string_view text, std::size_t at, std::size_t& length) {
  length = utf8_character_length(text, at);
  if (length == 0) {
    length = 1;
    return 0xFFFD;
  }
  return decode_code_point(text.substr(at, length));
}

// The code points of a UTF-8 string (valid: the tokenizer's own output).
std::vector<char32_t> code_points(std::string_view text) {
  std::vector<char32_t> out;
  for (std::size_t at = 0, length = 0; at < text.size(); at += length)
    out.push_back(next_character(text, at, length));
  return out;
}

}  // namespace

Result<BertTokenizer> BertTokenizer::load_folder(const std::string& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error))
    return Status::error(folder + ": not a folder (a BERT tokenizer is a folder with vocab.txt)");
  const std::string vocab_path = (fs::path(folder) / "vocab.txt").string();
  const std::string config_path = (fs::path(folder) / "tokenizer_config.json").string();
  if (!fs::exists(vocab_path, error)) return Status::error(folder + ": no vocab.txt");
  Result<std::string> vocab_text = read_capped(vocab_path, kMaxFileBytes);
  if (!vocab_text) return vocab_text.status();
  std::string config_text;
  if (fs::exists(config_path, error)) {
    Result<std::string> read = read_capped(config_path, kMaxConfigBytes);
    if (!read) return read.status();
    config_text = std::move(*read);
  }
  return parse(*vocab_text, config_text, vocab_path, config_path);
}

Result<BertTokenizer> BertTokenizer::parse(std::string_view vocab_text,
                                           std::string_view config_text,
                                           const std::string& vocab_path,
                                           const std::string& config_path) {
  if (vocab_text.size() > kMaxFileBytes)
    return Status::error(vocab_path + ": more than the " + std::to_string(kMaxFileBytes >> 20) +
                         " MiB a tokenizer file may have");
  BertTokenizer tokenizer;
  // One token a line, the newline not part of it; no line after a final newline (Python's
  // readlines()).
  std::size_t line_start = 0;
  while (line_start < vocab_text.size()) {
    const std::size_t newline = vocab_text.find('\n', line_start);
    const std::size_t line_end = newline == std::string_view::npos ? vocab_text.size() : newline;
    const std::string_view token = vocab_text.substr(line_start, line_end - line_start);
    const std::string line = "line " + std::to_string(tokenizer.tokens_.size() + 1);
    if (tokenizer.tokens_.size() >= kMaxTokens)
      return Status::error(vocab_path + ": more than " + std::to_string(kMaxTokens) + " tokens");
    if (token.size() > kMaxTokenBytes)
      return Status::error(vocab_path + " " + line + ": a token of " +
                           std::to_string(token.size()) + " bytes, more than " +
                           std::to_string(kMaxTokenBytes));
    for (std::size_t at = 0; at < token.size();) {
      const std::size_t length = utf8_character_length(token, at);
      if (length == 0)
        return Status::error(vocab_path + " " + line + ": not UTF-8 (byte " +
                             std::to_string(at + 1) + ")");
      at += length;
    }
    tokenizer.ids_[std::string(token)] = static_cast<int>(tokenizer.tokens_.size());
    tokenizer.tokens_.emplace_back(token);
    line_start = line_end + 1;
  }
  tokenizer.unk_ = tokenizer.find("[UNK]");
  tokenizer.cls_ = tokenizer.find("[CLS]");
  tokenizer.sep_ = tokenizer.find("[SEP]");
  tokenizer.pad_ = tokenizer.find("[PAD]");
  tokenizer.mask_ = tokenizer.find("[MASK]");
  for (const auto& [name, id] :
       {std::pair{"[UNK]", tokenizer.unk_}, std::pair{"[CLS]", tokenizer.cls_},
        std::pair{"[SEP]", tokenizer.sep_}})
    if (id < 0)
      return Status::error(vocab_path + ": no " + name +
                           " token (BERT's vocabulary has [UNK], [CLS] and [SEP])");

  if (!config_text.empty()) {
    const auto fail = [&](const std::string& why) {
      return Status::error(config_path + ": " + why);
    };
    if (too_deep(config_text))
      return fail("nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
    const Json config = Json::parse(config_text, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded()) return fail("not valid JSON");
    if (!config.is_object()) return fail("not a JSON object");
    const auto flag = [&](const char* key, bool& out) -> Status {
      if (!config.contains(key)) return Status::success();
      if (!config.at(key).is_boolean()) return fail(std::string(key) + ": expected true or false");
      out = config.at(key).get<bool>();
      return Status::success();
    };
    if (Status s = flag("do_lower_case", tokenizer.options_.lower_case); !s) return s;
    if (Status s = flag("tokenize_chinese_chars", tokenizer.options_.split_cjk); !s) return s;
    if (config.contains("strip_accents") && !config.at("strip_accents").is_null()) {
      if (!config.at("strip_accents").is_boolean())
        return fail("strip_accents: expected true, false or null");
      tokenizer.options_.strip_accents = config.at("strip_accents").get<bool>();
    }
  }
  return tokenizer;
}

int BertTokenizer::find(std::string_view token) const {
  const auto found = ids_.find(std::string(token));
  return found == ids_.end() ? -1 : found->second;
}

void BertTokenizer::basic_tokenize(std::string_view text, std::size_t begin, std::size_t end,
                                   std::vector<Word>& out) const {
  // 1. White-space-separated words of the cleaned text, CJK ideographs on their own, each with
  //    its code points and their byte offsets in `text`, in Unicode's NFC (as the reference
  //    normalizes the cleaned text: no white space composes with its neighbours, so word by word
  //    is the same).
  using Character = BertCharacter;
  std::vector<std::vector<Character>> words(1);
  for (std::size_t at = begin, length = 0; at < end; at += length) {
    const char32_t c = next_character(text, at, length);
    if (c == 0 || c == 0xFFFD || is_bert_control(c)) continue;
    const bool cjk = options_.split_cjk && is_cjk_ideograph(c);
    if (is_bert_whitespace(c) || cjk) {
      if (!words.back().empty()) words.emplace_back();
      if (!cjk) continue;
      words.back().push_back({c, at, at + length});
      words.emplace_back();
      continue;
    }
    words.back().push_back({c, at, at + length});
  }
  const bool strip = options_.strip_accents.value_or(options_.lower_case);
  std::string folded, lowered;
  for (std::vector<Character>& word : words) {
    if (word.empty()) continue;
    compose_nfc(word);
    // 2. Lower case (Python's final sigma: a cased letter before, none after, case-ignorable
    //    characters skipped), then accents stripped; punctuation split off. Each character's
    //    output keeps its byte range, for the words' ranges.
    std::vector<Character> shaped;  // the output's code points with their source bytes
    for (std::size_t i = 0; i < word.size(); ++i) {
      const char32_t c = word[i].code_point;
      lowered.clear();
      if (options_.lower_case) {
        bool ends_word = false;
        if (c == 0x03A3) {
          std::size_t j = i;
          while (j > 0 && is_case_ignorable(word[j - 1].code_point)) --j;
          ends_word = j > 0 && is_cased(word[j - 1].code_point);
          if (ends_word) {
            std::size_t k = i + 1;
            while (k < word.size() && is_case_ignorable(word[k].code_point)) ++k;
            ends_word = k == word.size() || !is_cased(word[k].code_point);
          }
        }
        append_bert_lowercase(lowered, c, ends_word);
      } else {
        append_code_point(lowered, c);
      }
      folded.clear();
      if (strip)
        for (const char32_t lower : code_points(lowered)) append_without_accents(folded, lower);
      else
        folded = lowered;
      for (const char32_t out_code_point : code_points(folded)) {
        // nonspacing marks are dropped by stripping, which the table already did
        shaped.push_back({out_code_point, word[i].byte_begin, word[i].byte_end});
      }
    }
    Word current;
    const auto flush = [&] {
      if (!current.text.empty()) out.push_back(current);
      current = Word{};
    };
    for (const Character& c : shaped) {
      if (is_bert_punctuation(c.code_point)) {
        flush();
        Word mark;
        append_code_point(mark.text, c.code_point);
        mark.byte_begin = c.byte_begin;
        mark.byte_end = c.byte_end;
        out.push_back(mark);
        continue;
      }
      if (current.text.empty()) current.byte_begin = c.byte_begin;
      append_code_point(current.text, c.code_point);
      current.byte_end = c.byte_end;
    }
    flush();
  }
}

void BertTokenizer::word_pieces(const std::string& word, std::size_t begin, std::size_t end,
                                std::vector<Piece>& out) const {
  const std::vector<char32_t> characters = code_points(word);
  if (characters.size() > kMaxWordCharacters) {
    out.push_back({unk_, begin, end, true});
    return;
  }
  // Byte offset of each character in `word`.
  std::vector<std::size_t> offsets;
  offsets.reserve(characters.size() + 1);
  for (std::size_t at = 0, length = 0; at < word.size(); at += length) {
    offsets.push_back(at);
    next_character(word, at, length);
  }
  offsets.push_back(word.size());
  const std::size_t first = out.size();
  std::size_t start = 0;
  std::string candidate;
  while (start < characters.size()) {
    std::size_t stop = characters.size();
    int found = -1;
    while (start < stop) {
      candidate = start == 0 ? std::string() : std::string("##");
      candidate.append(word, offsets[start], offsets[stop] - offsets[start]);
      found = find(candidate);
      if (found >= 0) break;
      --stop;
    }
    if (found < 0) {  // the word cannot be cut into the vocabulary's pieces: [UNK] for all of it
      out.resize(first);
      out.push_back({unk_, begin, end, true});
      return;
    }
    out.push_back({found, begin, end, start == 0});
    start = stop;
  }
}

std::vector<BertTokenizer::Piece> BertTokenizer::tokenize(std::string_view text) const {
  std::vector<Piece> out;
  std::vector<Word> words;
  std::size_t segment = 0;
  const auto words_of = [&](std::size_t begin, std::size_t end) {
    words.clear();
    basic_tokenize(text, begin, end, words);
    for (const Word& word : words) word_pieces(word.text, word.byte_begin, word.byte_end, out);
  };
  for (std::size_t at = 0; at < text.size();) {
    // A special token written in the text, the longest that starts here.
    std::string_view special;
    int special_id = -1;
    if (text[at] == '[')
      for (const std::string_view name : kSpecialNames) {
        const int id = find(name);
        if (id >= 0 && text.substr(at, name.size()) == name && name.size() > special.size()) {
          special = name;
          special_id = id;
        }
      }
    if (special_id < 0) {
      ++at;
      continue;
    }
    words_of(segment, at);
    out.push_back({special_id, at, at + special.size(), true});
    at += special.size();
    segment = at;
  }
  words_of(segment, text.size());
  return out;
}

std::vector<int> BertTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  for (const Piece& piece : tokenize(text)) ids.push_back(piece.id);
  return ids;
}

BertTokenizer::Input BertTokenizer::encode_for_model(std::string_view a,
                                                     std::optional<std::string_view> b) const {
  Input input;
  input.ids.push_back(cls_);
  for (const int id : encode(a)) input.ids.push_back(id);
  input.ids.push_back(sep_);
  input.types.assign(input.ids.size(), 0);
  if (b) {
    for (const int id : encode(*b)) input.ids.push_back(id);
    input.ids.push_back(sep_);
    input.types.resize(input.ids.size(), 1);
  }
  return input;
}

std::vector<std::string> BertTokenizer::basic_words(std::string_view text) const {
  std::vector<Word> words;
  basic_tokenize(text, 0, text.size(), words);
  std::vector<std::string> out;
  for (Word& word : words) out.push_back(std::move(word.text));
  return out;
}

}  // namespace attnviz
