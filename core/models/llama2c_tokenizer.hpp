// llama2.c's tokenizer (tokenizer.bin): a vocabulary of byte strings with merge scores.
//   int32 max_token_length, then per token: float32 score, int32 length, the bytes.
// Encoding: BOS (id 1) first, a leading space, the text's characters as tokens where the
// vocabulary has them and as byte tokens ("<0xHH>", id = byte + 3) where it does not, then the
// adjacent pair whose merge scores best merged again and again. Every length is checked
// against the file before it is read, and tokens 3 ... 258 must be the 256 byte tokens.
#pragma once

#include "core/base/status.hpp"
#include "core/models/model_tokens.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

class Llama2cTokenizer {
 public:
  static constexpr int kBos = 1;
  static constexpr int kEos = 2;
  static constexpr int kMinVocabSize = 259;      // <unk>, BOS, EOS and the 256 byte tokens
  static constexpr int kMaxVocabSize = 1 << 22;  // as llama2c.cpp's limit on the header

  // `vocab_size`: the model's, which the file must hold exactly.
  static Result<Llama2cTokenizer> load(const std::string& path, int vocab_size);
  // The same from the file's bytes; `path` only names it in messages.
  static Result<Llama2cTokenizer> parse(std::string_view file, const std::string& path,
                                        int vocab_size);

  int size() const { return static_cast<int>(pieces_.size()); }
  const std::string& piece(int id) const { return pieces_[static_cast<std::size_t>(id)]; }

  // The ids of `text`, BOS first.
  std::vector<int> encode(std::string_view text) const;
  // What `token` adds to the text after `previous`, as run.c prints it: a raw byte for
  // "<0xHH>", the leading space dropped right after BOS.
  std::string decode(int previous, int token) const;
  // encode(), with each token's bytes, the text bytes it covers and how it reads
  // (model_tokens.hpp): BOS is special ("<s>") with an empty range at 0; the leading space
  // encode() adds is part of the first token's bytes but covers no text byte; a byte token
  // "<0xHH>" is its one byte. An error only for a text longer than kMaxTokenizedTextBytes.
  Result<std::vector<ModelToken>> tokenize(std::string_view text) const;

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  int lookup(std::string_view piece) const;  // -1 when absent
  // encode(), and for each token the number of text bytes it covers.
  void encode_covering(std::string_view text, std::vector<int>& ids,
                       std::vector<std::size_t>& covered) const;
  std::vector<int> sorted_;  // ids by piece, for lookup
};

}  // namespace attnviz
