// GPT-2's tokenizer, exactly: byte-level BPE as OpenAI's encoder.py (and npm's gpt-3-encoder,
// its port to JavaScript) does it.
//
// Files: the vocabulary, a JSON object from token to id (Hugging Face's `vocab.json`, OpenAI's
// `encoder.json`), and the merges, one "left right" pair a line in order of rank
// (`merges.txt`, `vocab.bpe`), after an optional first line "#version ...". Tokens are
// written in GPT-2's byte alphabet: each of the 256 bytes is one character (the 188 printable
// bytes themselves, the others U+0100 upward: "Ġ" is a space, "Ċ" a newline). Everything is
// checked before use: the JSON, every id (in 0 … n−1, none twice), every token (written in the
// byte alphabet, a token for each of the 256 bytes), every merge line (two tokens of the
// vocabulary whose joining is one too, no line twice) and the sizes (files of at most 64 MiB,
// at most 2^20 tokens and merges, tokens of at most 1,024 bytes). Errors name the file and the
// key or line.
//
// Encoding:
//   1. The text is split into pieces by GPT-2's pattern
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      (PCRE2, UTF and UCP). \s is Unicode's White_Space, as in encoder.py (Python's `regex`):
//      U+0085 is white space and U+FEFF is not. (JavaScript's \s, and so gpt-3-encoder, has
//      it the other way round: the one known difference from that port on valid UTF-8.)
//   2. Each piece's bytes start as one token each; the adjacent pair whose merge ranks first
//      is merged wherever it occurs (left to right), again and again, as encoder.py's bpe().
// Text that is not valid UTF-8 is encoded all the same, nothing dropped: each invalid byte is
// split as U+FFFD would be (a symbol: it joins a run of punctuation, after an optional space),
// and the piece's own bytes are then merged, so that decode(encode(text)) == text for any
// bytes. On valid UTF-8 the ids are the reference's.
//
// <|endoftext|> (id 50256 in GPT-2) is a special token. encode() reads the text "<|endoftext|>"
// as text, as the reference does; with SpecialText::kAsSpecial it is that one token instead.
#pragma once

#include "core/base/status.hpp"
#include "core/models/model_tokens.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnviz {

class Gpt2Tokenizer {
 public:
  static constexpr std::string_view kEndOfText = "<|endoftext|>";
  // Limits on the files, checked before anything is sized from them.
  static constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;
  static constexpr std::size_t kMaxTokens = std::size_t{1} << 20;
  static constexpr std::size_t kMaxMerges = std::size_t{1} << 20;
  static constexpr std::size_t kMaxTokenBytes = 1024;

  enum class SpecialText { kAsText, kAsSpecial };

  // `folder` holds vocab.json and merges.txt (Hugging Face), or encoder.json and vocab.bpe
  // (OpenAI); the first pair when it has both.
  static Result<Gpt2Tokenizer> load_folder(const std::string& folder);
  static Result<Gpt2Tokenizer> load(const std::string& vocab_path, const std::string& merges_path);
  // The same from the files' contents; the paths only name them in messages.
  static Result<Gpt2Tokenizer> parse(std::string_view vocab_text, std::string_view merges_text,
                                     const std::string& vocab_path, const std::string& merges_path);

  int size() const { return static_cast<int>(token_bytes_.size()); }
  int merge_count() const { return static_cast<int>(merges_.size()); }
  // The id of <|endoftext|>, or -1 when the vocabulary has none.
  int end_of_text() const { return end_of_text_; }
  // The raw bytes of token `id` (0 <= id < size()).
  const std::string& token_bytes(int id) const {
    return token_bytes_[static_cast<std::size_t>(id)];
  }
  // The id of the token whose raw bytes are `bytes`, or -1.
  int find(std::string_view bytes) const;

  // The pre-tokenizer's pieces: byte ranges [begin, end) tiling `text`.
  std::vector<std::pair<std::size_t, std::size_t>> split(std::string_view text) const;
  std::vector<int> encode(std::string_view text, SpecialText special = SpecialText::kAsText) const;
  // The bytes of `ids`, or an error naming an id outside the vocabulary.
  Result<std::string> decode(const std::vector<int>& ids) const;
  // encode(), with each token's bytes, the text bytes it covers and how it reads
  // (model_tokens.hpp). An error only for a text longer than kMaxTokenizedTextBytes.
  Result<std::vector<ModelToken>> tokenize(std::string_view text,
                                           SpecialText special = SpecialText::kAsText) const;

  // GPT-2's byte alphabet: the character (a code point) that stands for `byte`.
  static std::uint32_t byte_symbol(unsigned char byte);

 private:
  Gpt2Tokenizer() = default;  // only load() and parse() make one, complete

  struct Merge {
    int rank;
    int merged;  // the id of the two tokens joined
  };
  struct Cache;

  std::vector<std::string> token_bytes_;             // by id
  std::unordered_map<std::string, int> id_of_;       // raw bytes -> id
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
  int byte_ids_[256] = {};
  int end_of_text_ = -1;
  std::shared_ptr<Cache> cache_;  // pieces already merged (shared by copies: same vocabulary)

  // The ids of one piece's bytes, merged.
  void merge_piece(std::string_view piece, std::vector<int>& out) const;
  // Calls `emit(id, text_begin, text_end, special)` for each token of `text`.
  template <class Emit>
  void encode_into(std::string_view text, SpecialText special, Emit&& emit) const;
};

}  // namespace attnviz
