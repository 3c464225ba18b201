// Fuzz target: llama2.c's tokenizer (core/models/llama2c_tokenizer.hpp), its file and its
// encoding. Input: a little-endian u16 vocabulary size (taken modulo 1,024, plus 1), a u16
// length L, L bytes of tokenizer.bin, then the text (cut at 512 bytes: the encoding is
// quadratic in the characters, as llama2.c's). Invariants: a file is refused with a message
// naming it, or read with exactly that many tokens; then encode() starts with BOS and gives ids
// of the vocabulary, decode() takes each of them, and tokenize() has encode()'s ids, BOS
// special and empty, byte ranges tiling the text, and every token showing as valid UTF-8.
#include "core/models/llama2c_tokenizer.hpp"

#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/fuzz_model_tokens.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t kMaxTextBytes = 512;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const int vocab_size = (data[0] | data[1] << 8) % 1024 + 1;
  std::size_t length = static_cast<std::size_t>(data[2] | data[3] << 8);
  const std::string_view rest(reinterpret_cast<const char*>(data + 4), size - 4);
  if (length > rest.size()) length = rest.size();
  attnviz::Result<attnviz::Llama2cTokenizer> tokenizer =
      attnviz::Llama2cTokenizer::parse(rest.substr(0, length), "tok.bin", vocab_size);
  if (!tokenizer.ok()) {
    FUZZ_CHECK(tokenizer.error().find("tok.bin") != std::string::npos);
    return 0;
  }
  FUZZ_CHECK(tokenizer->size() == vocab_size);
  std::string_view text = rest.substr(length);
  if (text.size() > kMaxTextBytes) text = text.substr(0, kMaxTextBytes);
  const std::vector<int> ids = tokenizer->encode(text);
  FUZZ_CHECK(!ids.empty());
  FUZZ_CHECK(ids.front() == attnviz::Llama2cTokenizer::kBos);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    FUZZ_CHECK(ids[i] >= 0 && ids[i] < tokenizer->size());
    if (i > 0) (void)tokenizer->decode(ids[i - 1], ids[i]);
  }
  attnviz::Result<std::vector<attnviz::ModelToken>> tokens = tokenizer->tokenize(text);
  FUZZ_CHECK(tokens.ok());
  FUZZ_CHECK(tokens->front().special);
  FUZZ_CHECK(tokens->front().byte_end == 0);
  attnviz::fuzz::check_model_tokens(*tokens, text, ids, false);
  return 0;
}
