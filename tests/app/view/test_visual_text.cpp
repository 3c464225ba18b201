// Hebrew and Arabic in the order they are seen, Arabic letters joined (app/view/visual_text.hpp).
// The expected forms are Unicode's presentation forms, from its charts (FE70-FEFF, FB50-FDFF).
#include "app/view/visual_text.hpp"

#include "core/text/tokenizer.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz::view {
namespace {

std::string utf8(std::u32string_view code_points) {
  std::string out;
  for (const char32_t c : code_points) append_utf8(out, c);
  return out;
}

}  // namespace

TEST_CASE("text without Hebrew or Arabic comes back as it is") {
  for (const std::string text :
       {"", "apple", "caf\xc3\xa9 (x) 12.5", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x8d\x95"}) {
    CHECK_FALSE(may_need_visual_order(text));
    CHECK(visual_order(text) == text);
  }
  // Other scripts of the same UTF-8 lead bytes (Armenian, Syriac) are left as they are too.
  const std::string armenian = utf8(U"\u0562\u0561\u0580\u0587");
  CHECK(visual_order(armenian) == armenian);
}

TEST_CASE("a Hebrew word is drawn last letter first") {
  CHECK(visual_order(utf8(U"\u05E9\u05DC\u05D5\u05DD")) ==
        utf8(U"\u05DD\u05D5\u05DC\u05E9"));  // שלום
}

TEST_CASE("Hebrew points come just before the letter they sit on") {
  // שָׁלוֹם: shin + qamats + shin dot, lamed, vav + holam, final mem. DejaVu draws a point
  // (zero advance) to the right of where it stands, over the glyph drawn next.
  const std::string logical = utf8(U"\u05E9\u05B8\u05C1\u05DC\u05D5\u05B9\u05DD");
  CHECK(visual_order(logical) == utf8(U"\u05DD\u05B9\u05D5\u05DC\u05B8\u05C1\u05E9"));
}

TEST_CASE("Arabic letters take the forms their neighbours call for") {
  // كتاب: kaf initial, teh medial, alef final; beh after alef (which joins nothing after it)
  // stands alone. Seen right to left: beh, alef, teh, kaf.
  CHECK(visual_order(utf8(U"\u0643\u062A\u0627\u0628")) == utf8(U"\uFE8F\uFE8E\uFE98\uFEDB"));
  // A letter alone is in its isolated form.
  CHECK(visual_order(utf8(U"\u0645")) == utf8(U"\uFEE1"));
  // بيت: beh initial, yeh medial, teh final.
  CHECK(visual_order(utf8(U"\u0628\u064A\u062A")) == utf8(U"\uFE96\uFEF4\uFE91"));
  // A hamza joins nothing: the letters on its sides take the forms they take at a word's edge.
  // سماء: seen as hamza, alef final, meem medial, seen initial.
  CHECK(visual_order(utf8(U"\u0633\u0645\u0627\u0621")) == utf8(U"\uFE80\uFE8E\uFEE4\uFEB3"));
}

TEST_CASE("lam and alef make one ligature") {
  CHECK(visual_order(utf8(U"\u0644\u0627")) == utf8(U"\uFEFB"));  // لا alone
  // سلام: seen initial, then lam + alef joined to it (the ligature's final form), meem alone.
  CHECK(visual_order(utf8(U"\u0633\u0644\u0627\u0645")) == utf8(U"\uFEE1\uFEFC\uFEB3"));
  // لأن: lam + alef with hamza above.
  CHECK(visual_order(utf8(U"\u0644\u0623\u0646")) == utf8(U"\uFEE5\uFEF7"));
}

TEST_CASE("Arabic marks are passed over when letters join, and stay with their letter") {
  // كَتَبَ: each letter carries a fatha (U+064E); kaf initial, teh medial, beh final; each fatha
  // just before its letter, as Hebrew points.
  const std::string logical = utf8(U"\u0643\u064E\u062A\u064E\u0628\u064E");
  CHECK(visual_order(logical) == utf8(U"\u064E\uFE90\u064E\uFE98\u064E\uFEDB"));
}

TEST_CASE("Persian letters are joined too") {
  // پدر: peh initial, dal final (joined to peh), reh alone. Seen: reh, dal, peh.
  CHECK(visual_order(utf8(U"\u067E\u062F\u0631")) == utf8(U"\uFEAD\uFEAA\uFB58"));
}

TEST_CASE("a zero-width non-joiner keeps two letters apart") {
  // می‌خواهم, first part: meem + yeh (Persian) + ZWNJ: yeh is final, not medial.
  const std::string logical = utf8(U"\u0645\u06CC\u200C\u062E");
  CHECK(visual_order(logical) == utf8(U"\uFEA5\u200C\uFBFD\uFEE3"));
}

TEST_CASE("digits keep their order inside right-to-left text") {
  // كتاب 2024 (a right-to-left line): the number stands left of the word and reads 2024.
  const std::string logical = utf8(U"\u0643\u062A\u0627\u0628 2024");
  CHECK(visual_order(logical) == "2024 " + utf8(U"\uFE8F\uFE8E\uFE98\uFEDB"));
  // A decimal point between digits stays in the number.
  CHECK(visual_order(utf8(U"\u05D0 3.14")) == utf8(U"3.14 \u05D0"));
  // Arabic-Indic digits alone: left as they are.
  const std::string digits = utf8(U"\u0661\u0662\u0663");
  CHECK(visual_order(digits) == digits);
}

TEST_CASE("a left-to-right line keeps its words in place and turns only the Hebrew") {
  // key "שלום": the label reads left to right, the word inside the quotes right to left.
  CHECK(visual_order(utf8(U"key \"\u05E9\u05DC\u05D5\u05DD\"")) ==
        utf8(U"key \"\u05DD\u05D5\u05DC\u05E9\""));
  // Two Hebrew words in a left-to-right line: the pair is turned, the space between them with it.
  CHECK(visual_order(utf8(U"a \u05D0\u05D1 \u05D2\u05D3 b")) ==
        utf8(U"a \u05D3\u05D2 \u05D1\u05D0 b"));
  // A number after a Hebrew word in a left-to-right line belongs to the Hebrew run.
  CHECK(visual_order(utf8(U"a \u05D0\u05D1 12 b")) == utf8(U"a 12 \u05D1\u05D0 b"));
  // After a Latin letter a number is left to right.
  CHECK(visual_order(utf8(U"x 12 \u05D0")) == utf8(U"x 12 \u05D0"));
}

TEST_CASE("Latin inside a right-to-left line keeps its own order") {
  // אני AI טוב: seen as טוב, AI, אני from the right.
  CHECK(visual_order(utf8(U"\u05D0\u05E0\u05D9 AI \u05D8\u05D5\u05D1")) ==
        utf8(U"\u05D1\u05D5\u05D8 AI \u05D9\u05E0\u05D0"));
}

TEST_CASE("brackets in right-to-left text are mirrored") {
  // (שלום): the opening bracket is at the right, drawn as ")" turned: "(" on the left is ")"
  // mirrored, so the picture reads (םולש).
  CHECK(visual_order(utf8(U"(\u05E9\u05DC\u05D5\u05DD)")) == utf8(U"(\u05DD\u05D5\u05DC\u05E9)"));
}

TEST_CASE("invalid UTF-8 beside Hebrew does not break the line") {
  const std::string logical = utf8(U"\u05D0\u05D1") + "\xff";
  const std::string visual = visual_order(logical);
  CHECK(visual == "\xef\xbf\xbd" + utf8(U"\u05D1\u05D0"));  // U+FFFD, at the line's end: its left
}

TEST_CASE("the cache gives the text itself when nothing is to be done") {
  VisualText shown;
  const std::string latin = "apple";
  CHECK(shown(latin) == latin.c_str());  // the same pointer: no copy
  CHECK(shown.kept() == 0);
  const std::string hebrew = utf8(U"\u05D0\u05D1");
  CHECK(std::string(shown(hebrew)) == utf8(U"\u05D1\u05D0"));
  CHECK(shown(hebrew) == shown(hebrew));  // computed once, kept
  CHECK(shown.kept() == 1);
}

TEST_CASE("a word piece's \"##\" is not taken for an ImGui ID: a zero-width space splits it") {
  VisualText shown;
  const std::string zwsp = kZeroWidthSpace;
  CHECK(std::string(shown("##ing")) == "#" + zwsp + "#ing");
  CHECK(std::string(shown("a##b##")) == "a#" + zwsp + "#b#" + zwsp + "#");
  CHECK(std::string(shown("###")) == "#" + zwsp + "#" + zwsp + "#");  // no "##" left
  CHECK(std::string(shown("#x")) == "#x");                            // one mark alone is no ID
  // What ImGui shows of the label: everything before a "##" (none is left).
  const std::string label = shown("##ud");
  CHECK(label.find("##") == std::string::npos);
}

TEST_CASE("a label's emoji take the stand-ins the text fields give them") {
  VisualText shown;
  const std::string label = "I \xf0\x9f\x8d\x95";  // I 🍕
  std::string expected = "I ";
  append_utf8(expected, shown.escapes().stand_in(0x1F355));
  CHECK(std::string(shown(label)) == expected);
  CHECK(shown.escapes().escape(label) == expected);  // the field shows the same
}

TEST_CASE("an emoji in a right-to-left line stays where it is read") {
  // שלום 🍕: the line is right to left; the emoji, last, is drawn leftmost.
  VisualText shown;
  std::string expected;
  append_utf8(expected, shown.escapes().stand_in(0x1F355));
  expected += " " + utf8(U"\u05DD\u05D5\u05DC\u05E9");
  CHECK(std::string(shown(utf8(U"\u05E9\u05DC\u05D5\u05DD \U0001F355"))) == expected);
}

TEST_CASE("the cache is dropped between frames only when it has grown too large") {
  VisualText shown;
  std::string word = utf8(U"\u05D0");
  shown(word);
  shown.new_frame();
  CHECK(shown.kept() == 1);
  for (std::size_t i = 0; i <= VisualText::kMaxKept; ++i) shown(word + std::to_string(i));
  CHECK(shown.kept() > VisualText::kMaxKept);
  shown.new_frame();
  CHECK(shown.kept() == 0);
}

}  // namespace attnviz::view
