// What a 16-bit ImGui text field cannot hold goes through it unharmed (app/view/text_escapes.hpp).
#include "app/view/text_escapes.hpp"

#include "core/text/tokenizer.hpp"

#include <doctest/doctest.h>

namespace attnviz::view {
namespace {

// Whether every code point of the text fits in 16 bits (what ImGui 1.86 holds).
bool fits_16_bits(const std::string& text) {
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 0;
    const char32_t c = decode_utf8(text, offset, length);
    if (c > 0xFFFF || (c == 0xFFFD && text.compare(offset, length, "\xef\xbf\xbd") != 0))
      return false;
    offset += length;
  }
  return true;
}

}  // namespace

TEST_CASE("emoji go through a text field and come back") {
  TextEscapes escapes;
  const std::string sentence =
      "I \xe2\x9d\xa4\xef\xb8\x8f \xf0\x9f\x8d\x95 and \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd "
      "\xe6\x97\xa5\xe6\x9c\xac caf\xc3\xa9";  // I ❤️ 🍕 and 👍🏽 日本 café
  const std::string in_field = escapes.escape(sentence);
  CHECK(fits_16_bits(in_field));
  CHECK(in_field != sentence);
  CHECK(escapes.unescape(in_field) == sentence);
  // Edited in the field (a word typed at the end), the emoji are still there.
  CHECK(escapes.unescape(in_field + " x") == sentence + " x");
}

TEST_CASE("the same emoji takes the same stand-in") {
  TextEscapes escapes;
  const std::string pizza = "\xf0\x9f\x8d\x95";
  CHECK(escapes.escape(pizza + pizza) == escapes.escape(pizza) + escapes.escape(pizza));
  std::string typed;
  append_utf8(typed, escapes.stand_in(0x1F355));  // 🍕 typed in the field
  CHECK(typed == escapes.escape(pizza));
  CHECK(escapes.stand_in('a') == 'a');
}

TEST_CASE("invalid UTF-8 bytes and private-use characters come back byte for byte") {
  TextEscapes escapes;
  const std::string odd =
      std::string("a\xff b\xc3") + " \xee\x80\x80 \xef\xbf\xbd";  // bad bytes, U+E000, U+FFFD
  const std::string in_field = escapes.escape(odd);
  CHECK(fits_16_bits(in_field));
  CHECK(escapes.unescape(in_field) == odd);
}

TEST_CASE("an emoji typed into the window leaves ImGui's queue and waits as its stand-in") {
  TextEscapes escapes;
  // ImGui queued "a", U+FFFD for the emoji, "b" (and an earlier character it still holds).
  std::vector<std::uint16_t> queue = {'z', 'a', 0xFFFD, 'b'};
  const std::vector<unsigned> typed = {'a', 0x1F355, 'b'};
  const std::size_t kept = escapes.take_from_queue(queue, typed);
  REQUIRE(kept == 3);
  CHECK(queue[0] == 'z');
  CHECK(queue[1] == 'a');
  CHECK(queue[2] == 'b');
  const std::string waiting = escapes.take_typed();
  CHECK(escapes.unescape(waiting) == "\xf0\x9f\x8d\x95");  // 🍕
  CHECK(escapes.take_typed().empty());                     // taken once
}

TEST_CASE("a typed U+FFFD stays in ImGui's queue") {
  TextEscapes escapes;
  std::vector<std::uint16_t> queue = {0xFFFD};
  const std::vector<unsigned> typed = {0xFFFD};
  CHECK(escapes.take_from_queue(queue, typed) == 1);
  CHECK(escapes.take_typed().empty());
}

TEST_CASE("text without anything to hold is left alone") {
  TextEscapes escapes;
  const std::string plain = "the cat sat \xe2\x86\x92 \xce\xb1";  // → α
  CHECK_FALSE(TextEscapes::may_need_stand_ins(plain));
  CHECK(escapes.escape(plain) == plain);
  CHECK(escapes.unescape(plain) == plain);
}

TEST_CASE("the byte test finds every character that needs a stand-in") {
  CHECK(TextEscapes::may_need_stand_ins("a\xf0\x9f\x8d\x95"));  // 🍕
  CHECK(TextEscapes::may_need_stand_ins("\xee\x80\x80"));       // U+E000
  CHECK(TextEscapes::may_need_stand_ins("\xef\xa3\xbf"));       // U+F8FF
  CHECK_FALSE(
      TextEscapes::may_need_stand_ins("\xef\xa4\x80"));  // U+F900, a CJK compatibility ideograph
  CHECK_FALSE(TextEscapes::may_need_stand_ins("\xef\xbf\xbd"));  // U+FFFD
}

TEST_CASE("the characters past U+FFFF are listed with their stand-ins, for the glyphs") {
  TextEscapes escapes;
  escapes.escape(
      "\xee\x80\x80 \xf0\x9f\x8d\x95 \xff \xf0\x9f\xa4\x96");  // U+E000, 🍕, a bad byte, 🤖
  CHECK(escapes.wide_count() == 2);
  const std::vector<std::pair<char32_t, char32_t>> wide = escapes.wide_characters();
  REQUIRE(wide.size() == 2);
  CHECK(wide[0].second == 0x1F355);
  CHECK(wide[1].second == 0x1F916);
  CHECK(wide[0].first == escapes.stand_in(0x1F355));
  CHECK(wide[1].first == escapes.stand_in(0x1F916));
  CHECK(wide[0].first != wide[1].first);
}

}  // namespace attnviz::view
