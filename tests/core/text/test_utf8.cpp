// The one UTF-8 decoder (core/text/utf8.hpp) at its edges: every length, the first and last code
// point of each, and every way a sequence is invalid (overlong, surrogate, past U+10FFFF,
// truncated, a stray continuation byte), each a U+FFFD of one byte.
#include "core/text/utf8.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace attnviz {
namespace {

struct Decoded {
  char32_t code_point;
  std::size_t length;
};

Decoded decode(std::string_view text, std::size_t offset = 0) {
  std::size_t length = 0;
  const char32_t code_point = decode_utf8(text, offset, length);
  return {code_point, length};
}

std::string encode(char32_t code_point) {
  std::string out;
  append_utf8(out, code_point);
  return out;
}

void check_invalid(std::string_view text) {
  CAPTURE(text);
  const Decoded d = decode(text);
  CHECK(d.code_point == kReplacementCharacter);
  CHECK(d.length == 1);
  CHECK(is_invalid_byte(d.code_point, d.length));
}

}  // namespace

TEST_CASE("utf8: the first and last code point of each length decode and encode back") {
  const struct {
    char32_t code_point;
    std::string_view bytes;
  } cases[] = {
      {0x00, std::string_view("\0", 1)},
      {0x7F, "\x7F"},
      {0x80, "\xC2\x80"},
      {0x7FF, "\xDF\xBF"},
      {0x800, "\xE0\xA0\x80"},
      {0xD7FF, "\xED\x9F\xBF"},
      {0xE000, "\xEE\x80\x80"},
      {0xFFFF, "\xEF\xBF\xBF"},
      {0x10000, "\xF0\x90\x80\x80"},
      {0x10FFFF, "\xF4\x8F\xBF\xBF"},
  };
  for (const auto& c : cases) {
    CAPTURE(static_cast<unsigned>(c.code_point));
    const Decoded d = decode(c.bytes);
    CHECK(d.code_point == c.code_point);
    CHECK(d.length == c.bytes.size());
    CHECK(encode(c.code_point) == c.bytes);
  }
}

TEST_CASE("utf8: U+FFFD written in the text is a character, not an invalid byte") {
  const Decoded d = decode("\xEF\xBF\xBD");
  CHECK(d.code_point == kReplacementCharacter);
  CHECK(d.length == 3);
  CHECK_FALSE(is_invalid_byte(d.code_point, d.length));
}

TEST_CASE("utf8: overlong forms are invalid") {
  check_invalid("\xC0\x80");          // U+0000 in two bytes
  check_invalid("\xC1\xBF");          // U+007F in two bytes
  check_invalid("\xE0\x80\x80");      // U+0000 in three
  check_invalid("\xE0\x9F\xBF");      // U+07FF in three
  check_invalid("\xF0\x80\x80\x80");  // U+0000 in four
  check_invalid("\xF0\x8F\xBF\xBF");  // U+FFFF in four
}

TEST_CASE("utf8: surrogates are invalid") {
  check_invalid("\xED\xA0\x80");  // U+D800
  check_invalid("\xED\xB0\x80");  // U+DC00
  check_invalid("\xED\xBF\xBF");  // U+DFFF
}

TEST_CASE("utf8: code points past U+10FFFF and bytes that start nothing are invalid") {
  check_invalid("\xF4\x90\x80\x80");  // U+110000
  check_invalid("\xF5\x80\x80\x80");
  check_invalid("\xF7\xBF\xBF\xBF");  // U+1FFFFF
  check_invalid("\xF8\x88\x80\x80\x80");
  check_invalid("\xFE");
  check_invalid("\xFF");
  check_invalid("\x80");  // a continuation byte as a lead
  check_invalid("\xBF");
}

TEST_CASE("utf8: a sequence cut short or broken by another byte is invalid, one byte at a time") {
  check_invalid("\xC3");
  check_invalid("\xE2\x82");      // € without its last byte
  check_invalid("\xF0\x9F\x98");  // 😀 without its last byte
  check_invalid("\xE2\x28\xA1");  // '(' where a continuation byte should be
  check_invalid("\xF0\x9F\x98 ");
  // After an invalid lead, decoding resumes at the very next byte.
  const std::string_view text = "\xE2\x82x";
  CHECK(decode(text, 1).code_point == kReplacementCharacter);  // the stray continuation byte
  CHECK(decode(text, 2).code_point == U'x');
  CHECK(utf8_length(text) == 3);
}

TEST_CASE("utf8: every scalar value encodes and decodes back") {
  int failures = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const std::string bytes = encode(c);
    const Decoded d = decode(bytes);
    if (d.code_point != c || d.length != bytes.size()) ++failures;
  }
  CHECK(failures == 0);
}

TEST_CASE("utf8: length and prefix count code points, an invalid byte as one") {
  CHECK(utf8_length("") == 0);
  CHECK(utf8_length("h\xC3\xA9llo") == 5);
  CHECK(utf8_length("a\xFF\xFE"
                    "b") == 4);
  CHECK(utf8_prefix("h\xC3\xA9llo", 2) == "h\xC3\xA9");
  CHECK(utf8_prefix("\xF0\x9F\x98\x80x", 1) == "\xF0\x9F\x98\x80");
  CHECK(utf8_prefix("ab", 5) == "ab");
}

}  // namespace attnviz
