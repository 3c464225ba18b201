// Fuzz target: BERT's tokenizer (core/models/bert_tokenizer.hpp), its files and its encoding.
// Input: VOCAB \0 CONFIG \0 TEXT: a vocab.txt and a tokenizer_config.json of the fuzzer's own,
// read with BertTokenizer::parse (refused with a message naming the file, or read), then TEXT
// encoded with them. An input without two NUL bytes is TEXT alone, for a fixed vocabulary (the
// special tokens, the letters with their "##" forms, some words and accented letters). Invariants
// on every encoding:
//   - every id is in the vocabulary; encode() is tokenize()'s ids;
//   - every piece's bytes are inside the text, in order; a word's pieces share its bytes, the
//     first marked first; a special token's bytes are its name as written;
//   - a sentence pair is [CLS] a [SEP] b [SEP], token type 0 then 1.
#include "core/models/bert_tokenizer.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using attnviz::BertTokenizer;

constexpr std::size_t kMaxTextBytes = 4096;

const BertTokenizer& fixed_tokenizer() {
  static const BertTokenizer tokenizer = [] {
    std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    for (char c = 'a'; c <= 'z'; ++c)
      vocab += std::string(1, c) + "\n##" + std::string(1, c) + "\n";
    for (const char* piece :
         {"the", "god", "light", "##ing", "##ed", "un", "\xc3\xa9", "##\xc3\xa9",
          "\xce\xbf\xce\xb4\xce\xbf\xcf\x82", "\xe4\xb8\xad", ".", ",", "!"})
      vocab += std::string(piece) + "\n";
    attnviz::Result<BertTokenizer> parsed = BertTokenizer::parse(vocab, "", "fixed", "fixed");
    FUZZ_CHECK(parsed.ok());
    return std::move(*parsed);
  }();
  return tokenizer;
}

void check_encoding(const BertTokenizer& tokenizer, std::string_view text) {
  if (text.size() > kMaxTextBytes) text = text.substr(0, kMaxTextBytes);
  const std::vector<BertTokenizer::Piece> pieces = tokenizer.tokenize(text);
  const std::vector<int> ids = tokenizer.encode(text);
  FUZZ_CHECK(ids.size() == pieces.size());
  std::size_t previous_begin = 0;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const BertTokenizer::Piece& piece = pieces[k];
    FUZZ_CHECK(piece.id == ids[k]);
    FUZZ_CHECK(piece.id >= 0 && piece.id < tokenizer.size());
    FUZZ_CHECK(piece.byte_begin < piece.byte_end && piece.byte_end <= text.size());
    FUZZ_CHECK(piece.byte_begin >= previous_begin);
    if (!piece.first_piece) {
      FUZZ_CHECK(k > 0);
      FUZZ_CHECK(pieces[k - 1].byte_begin == piece.byte_begin);
      FUZZ_CHECK(pieces[k - 1].byte_end == piece.byte_end);
    }
    const std::string_view covered =
        text.substr(piece.byte_begin, piece.byte_end - piece.byte_begin);
    if (tokenizer.special(piece.id) && piece.id != tokenizer.unk())
      FUZZ_CHECK(covered == tokenizer.token(piece.id));
    previous_begin = piece.byte_begin;
  }
  const std::size_t half = text.size() / 2;
  const BertTokenizer::Input input =
      tokenizer.encode_for_model(text.substr(0, half), text.substr(half));
  FUZZ_CHECK(input.ids.size() == input.types.size());
  FUZZ_CHECK(input.ids.size() >= 3);
  FUZZ_CHECK(input.ids.front() == tokenizer.cls());
  FUZZ_CHECK(input.ids.back() == tokenizer.sep());
  FUZZ_CHECK(input.types.front() == 0 && input.types.back() == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::optional<attnviz::fuzz::ThreeParts> parts = attnviz::fuzz::three_parts(input);
  if (!parts) {
    check_encoding(fixed_tokenizer(), input);
    return 0;
  }
  attnviz::Result<BertTokenizer> tokenizer =
      BertTokenizer::parse(parts->first, parts->second, "vocab.txt", "tokenizer_config.json");
  if (!tokenizer.ok()) {
    FUZZ_CHECK(!tokenizer.error().empty());
    FUZZ_CHECK(tokenizer.error().find("vocab.txt") != std::string::npos ||
               tokenizer.error().find("tokenizer_config.json") != std::string::npos);
    return 0;
  }
  check_encoding(*tokenizer, parts->rest);
  return 0;
}
