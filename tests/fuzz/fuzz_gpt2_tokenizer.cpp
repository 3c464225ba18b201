// Fuzz target: GPT-2's tokenizer (core/models/gpt2_tokenizer.hpp), its files and its encoding.
// Input: VOCAB \0 MERGES \0 TEXT: a vocabulary and merges of the fuzzer's own, read with
// Gpt2Tokenizer::parse (refused with a message, or read), then TEXT encoded with them when they
// were read. An input without two NUL bytes is TEXT alone, for a fixed tokenizer: the 256
// bytes and merges that spell a few words (and half an emoji, so that characters split across
// tokens). Invariants on every encoding:
//   - every id is in the vocabulary, and decode(encode(text)) == text, whatever the bytes;
//   - the pre-tokenizer's pieces tile the text;
//   - tokenize() has encode()'s ids, its byte ranges tile the text, each token's bytes are the
//     text it covers, and each shows as non-empty valid UTF-8; likewise with <|endoftext|> read
//     as the special token.
#include "core/models/gpt2_tokenizer.hpp"

#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/fuzz_model_tokens.hpp"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using attnviz::Gpt2Tokenizer;

// Texts longer than this are cut: the invariants do not depend on length, and every run stays
// fast.
constexpr std::size_t kMaxTextBytes = 4096;

std::string symbols(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const std::uint32_t code_point = Gpt2Tokenizer::byte_symbol(static_cast<unsigned char>(c));
    if (code_point < 0x80) {
      out += static_cast<char>(code_point);
    } else {
      out += static_cast<char>(0xC0 | (code_point >> 6));
      out += static_cast<char>(0x80 | (code_point & 0x3F));
    }
  }
  return out;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const Gpt2Tokenizer& fixed_tokenizer() {
  static const Gpt2Tokenizer tokenizer = [] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    std::string merges = "#version: 0.2\n";
    std::set<std::string> known(tokens.begin(), tokens.end());
    // Each word spelled by merging its prefix with its next byte.
    for (const std::string word : {"the", " the", "ing", " and", "hello", " world", "  ", "\n\n",
                                   "000", "'s", "\xC3\xA9t\xC3\xA9", "\xF0\x9F\x98"}) {
      for (std::size_t length = 2; length <= word.size(); ++length) {
        const std::string merged = word.substr(0, length);
        if (!known.insert(merged).second) continue;
        tokens.push_back(merged);
        merges +=
            symbols(word.substr(0, length - 1)) + " " + symbols(word.substr(length - 1, 1)) + "\n";
      }
    }
    std::string vocab = "{";
    for (std::size_t id = 0; id < tokens.size(); ++id)
      vocab += json_string(symbols(tokens[id])) + ": " + std::to_string(id) + ", ";
    vocab += "\"<|endoftext|>\": " + std::to_string(tokens.size()) + "}";
    attnviz::Result<Gpt2Tokenizer> parsed = Gpt2Tokenizer::parse(vocab, merges, "fixed", "fixed");
    FUZZ_CHECK(parsed.ok());
    return std::move(*parsed);
  }();
  return tokenizer;
}

void check_encoding(const Gpt2Tokenizer& tokenizer, std::string_view text) {
  if (text.size() > kMaxTextBytes) text = text.substr(0, kMaxTextBytes);
  std::size_t at = 0;
  for (const auto& [begin, end] : tokenizer.split(text)) {
    FUZZ_CHECK(begin == at);
    FUZZ_CHECK(end > begin);
    at = end;
  }
  FUZZ_CHECK(at == text.size());
  for (const auto special :
       {Gpt2Tokenizer::SpecialText::kAsText, Gpt2Tokenizer::SpecialText::kAsSpecial}) {
    const std::vector<int> ids = tokenizer.encode(text, special);
    for (const int id : ids) FUZZ_CHECK(id >= 0 && id < tokenizer.size());
    attnviz::Result<std::string> decoded = tokenizer.decode(ids);
    FUZZ_CHECK(decoded.ok());
    FUZZ_CHECK(*decoded == text);
    attnviz::Result<std::vector<attnviz::ModelToken>> tokens = tokenizer.tokenize(text, special);
    FUZZ_CHECK(tokens.ok());
    attnviz::fuzz::check_model_tokens(*tokens, text, ids, true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::optional<attnviz::fuzz::ThreeParts> parts = attnviz::fuzz::three_parts(input);
  if (!parts) {
    check_encoding(fixed_tokenizer(), input);
    return 0;
  }
  attnviz::Result<Gpt2Tokenizer> tokenizer =
      Gpt2Tokenizer::parse(parts->first, parts->second, "vocab.json", "merges.txt");
  if (!tokenizer.ok()) {
    FUZZ_CHECK(!tokenizer.error().empty());
    FUZZ_CHECK(tokenizer.error().find("vocab.json") != std::string::npos ||
               tokenizer.error().find("merges.txt") != std::string::npos);
    return 0;
  }
  FUZZ_CHECK(tokenizer->size() >= 256);
  check_encoding(*tokenizer, parts->rest);
  return 0;
}
