#include "core/text/tokenizer.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace attnviz {
namespace {

std::vector<std::string> texts(std::string_view sentence, std::size_t max_tokens = 256) {
  std::vector<std::string> out;
  for (const Token& token : tokenize(sentence, max_tokens).tokens) out.push_back(token.text);
  return out;
}

using Texts = std::vector<std::string>;

// True when every code point of text decodes, treating a literal U+FFFD as valid.
bool valid_utf8(std::string_view text) {
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 0;
    const char32_t cp = decode_utf8(text, offset, length);
    if (cp == 0xFFFD && text.substr(offset, 3) != "\xEF\xBF\xBD") return false;
    offset += length;
  }
  return true;
}

}  // namespace

TEST_CASE("words and punctuation: the course example is 9 tokens") {
  CHECK(texts("I like Natural Language Processing, a lot!") ==
        Texts{"I", "like", "Natural", "Language", "Processing", ",", "a", "lot", "!"});
}

TEST_CASE("a plain sentence splits on spaces") {
  CHECK(texts("i like to eat apple") == Texts{"i", "like", "to", "eat", "apple"});
}

TEST_CASE("display keeps the typed case and the key is lower case") {
  const Tokenization t = tokenize("Apple ÉCOLE Ωμέγα", 256);
  REQUIRE(t.tokens.size() == 3);
  CHECK(t.tokens[0].text == "Apple");
  CHECK(t.tokens[0].key == "apple");
  CHECK(t.tokens[1].key == "école");
  CHECK(t.tokens[2].key == "ωμέγα");
}

TEST_CASE("each punctuation mark is its own token") {
  CHECK(texts("Hello, world... (yes)?") ==
        Texts{"Hello", ",", "world", ".", ".", ".", "(", "yes", ")", "?"});
}

TEST_CASE("an apostrophe or hyphen between letters stays inside the word") {
  CHECK(texts("don't stop well-known l’homme") == Texts{"don't", "stop", "well-known", "l’homme"});
}

TEST_CASE("Hebrew's maqaf joins two words into one, as a hyphen does") {
  CHECK(texts("\xd7\x91\xd7\x99\xd7\xaa\xd6\xbe\xd7\xa1\xd7\xa4\xd7\xa8 "
              "\xd7\x92\xd7\x93\xd7\x95\xd7\x9c") ==
        Texts{"\xd7\x91\xd7\x99\xd7\xaa\xd6\xbe\xd7\xa1\xd7\xa4\xd7\xa8",
              "\xd7\x92\xd7\x93\xd7\x95\xd7\x9c"});  // בית־ספר גדול
}

TEST_CASE("quotes and dashes around words are separate tokens") {
  CHECK(texts("'hi' - end-") == Texts{"'", "hi", "'", "-", "end", "-"});
}

TEST_CASE("a decimal point or thousands comma between digits stays in the number") {
  CHECK(texts("pi is 3.14, not 1,000.") == Texts{"pi", "is", "3.14", ",", "not", "1,000", "."});
}

TEST_CASE("accented letters survive precomposed or combining") {
  CHECK(texts("café naïve") == Texts{"café", "naïve"});
  CHECK(texts("cafe\xCC\x81 ok") == Texts{"cafe\xCC\x81", "ok"});  // e + U+0301
}

TEST_CASE("a combining mark at the start of the text is kept and not dropped") {
  CHECK(texts("\xCC\x81x") == Texts{"\xCC\x81x"});
}

TEST_CASE("each CJK ideograph is a token, kana runs stay together") {
  CHECK(texts("我喜欢吃苹果") == Texts{"我", "喜", "欢", "吃", "苹", "果"});
  CHECK(texts("すし。") == Texts{"すし", "。"});
}

TEST_CASE("emoji are tokens with ZWJ sequences and skin tones and flags kept whole") {
  CHECK(texts("I ❤️ 👩‍💻") == Texts{"I", "❤️", "👩‍💻"});
  CHECK(texts("👍🏽👍") == Texts{"👍🏽", "👍"});
  CHECK(texts("🇫🇷🇩🇪") == Texts{"🇫🇷", "🇩🇪"});
}

TEST_CASE("right-to-left words are tokens like any other") {
  CHECK(texts("שלום עולם") == Texts{"שלום", "עולם"});
  CHECK(texts("مرحبا، عالم") == Texts{"مرحبا", "،", "عالم"});
}

TEST_CASE("a zero-width space separates, bidi controls and soft hyphens are dropped") {
  CHECK(texts("a\u200Bb") == Texts{"a", "b"});
  CHECK(texts("\u202Eabc\u202C") == Texts{"abc"});
  CHECK(texts("co\u00ADop") == Texts{"coop"});
}

TEST_CASE("empty and blank text give no tokens") {
  CHECK(tokenize("", 256).total_tokens == 0);
  CHECK(tokenize("  \t\n\u00A0\u3000 ", 256).total_tokens == 0);
}

TEST_CASE("invalid UTF-8 becomes U+FFFD and is counted") {
  const Tokenization t = tokenize("a\xFF b\xC3", 256);
  CHECK(t.invalid_utf8_bytes == 2);
  REQUIRE(t.tokens.size() == 2);
  CHECK(t.tokens[0].text == "a\xEF\xBF\xBD");
  CHECK(t.tokens[1].text == "b\xEF\xBF\xBD");
}

TEST_CASE("overlong encodings and surrogates are invalid") {
  CHECK(tokenize("\xC0\xAF", 256).invalid_utf8_bytes == 2);      // overlong '/'
  CHECK(tokenize("\xED\xA0\x80", 256).invalid_utf8_bytes == 3);  // U+D800
}

TEST_CASE("no token ever holds a broken code point whatever the bytes") {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(static_cast<std::size_t>(random() % 40), '\0');
    for (char& c : bytes) c = static_cast<char>(random() % 256);
    for (const Token& token : tokenize(bytes, 256).tokens) {
      REQUIRE(valid_utf8(token.text));
      REQUIRE(!token.text.empty());
    }
  }
}

TEST_CASE("byte ranges point at the token in the input") {
  const std::string input = "  Hi, café!";
  for (const Token& token : tokenize(input, 256).tokens)
    CHECK(input.substr(token.byte_begin, token.byte_end - token.byte_begin) == token.text);
}

TEST_CASE("truncation keeps the first max_tokens and reports the rest") {
  const Tokenization t = tokenize("one two three four five", 3);
  CHECK(t.tokens.size() == 3);
  CHECK(t.total_tokens == 5);
  CHECK(t.truncated());
  CHECK(t.dropped_tokens() == 2);
  CHECK(t.tokens.back().text == "three");
}

TEST_CASE("a 100000-character paste is truncated at the default limit with all tokens counted") {
  std::string paste;
  while (paste.size() < 100000) paste += "word ";
  const Tokenization t = tokenize(paste, 256);
  CHECK(t.tokens.size() == 256);
  CHECK(t.total_tokens == 20000);
}

TEST_CASE("utf8_prefix never cuts a code point") {
  CHECK(utf8_prefix("héllo", 2) == "hé");
  CHECK(utf8_prefix("👩‍💻x", 1) == "👩");
  CHECK(utf8_length("héllo") == 5);
}

}  // namespace attnviz
