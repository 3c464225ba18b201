// Fuzz target: the tokenizer on arbitrary bytes.
// The first byte is the token limit (0..255); the rest is the sentence. Invariants:
//   - at most max_tokens tokens, and total_tokens >= tokens.size();
//   - every token's text and key are non-empty, valid UTF-8 (invalid input bytes appear as
//     U+FFFD, itself valid UTF-8);
//   - byte ranges are non-empty, inside the input, and increasing without overlap;
//   - a smaller limit gives a prefix of the tokens of a larger one, with the same total.
#include "core/text/tokenizer.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace {

void check_tokenization(const attnviz::Tokenization& t, std::string_view text,
                        std::size_t max_tokens) {
  FUZZ_CHECK(t.tokens.size() <= max_tokens);
  FUZZ_CHECK(t.total_tokens >= t.tokens.size());
  FUZZ_CHECK(t.invalid_utf8_bytes <= text.size());
  std::size_t previous_end = 0;
  for (const attnviz::Token& token : t.tokens) {
    FUZZ_CHECK(!token.text.empty());
    FUZZ_CHECK(!token.key.empty());
    FUZZ_CHECK(attnviz::fuzz::valid_utf8(token.text));
    FUZZ_CHECK(attnviz::fuzz::valid_utf8(token.key));
    FUZZ_CHECK(token.byte_begin < token.byte_end);
    FUZZ_CHECK(token.byte_end <= text.size());
    FUZZ_CHECK(token.byte_begin >= previous_end);
    previous_end = token.byte_end;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t max_tokens = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  const attnviz::Tokenization limited = attnviz::tokenize(text, max_tokens);
  check_tokenization(limited, text, max_tokens);

  const attnviz::Tokenization all =
      attnviz::tokenize(text, std::numeric_limits<std::size_t>::max());
  check_tokenization(all, text, std::numeric_limits<std::size_t>::max());
  FUZZ_CHECK(all.total_tokens == all.tokens.size());
  FUZZ_CHECK(limited.total_tokens == all.total_tokens);
  FUZZ_CHECK(limited.invalid_utf8_bytes == all.invalid_utf8_bytes);
  for (std::size_t i = 0; i < limited.tokens.size(); ++i) {
    FUZZ_CHECK(limited.tokens[i].text == all.tokens[i].text);
    FUZZ_CHECK(limited.tokens[i].byte_begin == all.tokens[i].byte_begin);
    FUZZ_CHECK(limited.tokens[i].byte_end == all.tokens[i].byte_end);
  }
  FUZZ_CHECK(limited.tokens.size() == std::min(max_tokens, all.tokens.size()));

  // The UTF-8 helpers the tokenizer is built on.
  FUZZ_CHECK(attnviz::fuzz::valid_utf8(attnviz::lowercase_key(text)));
  const std::string_view prefix = attnviz::utf8_prefix(text, max_tokens);
  FUZZ_CHECK(prefix.size() <= text.size());
  FUZZ_CHECK(attnviz::utf8_length(prefix) ==
             std::min<std::size_t>(max_tokens, attnviz::utf8_length(text)));
  return 0;
}
