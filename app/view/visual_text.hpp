// Hebrew and Arabic as they are read: what Dear ImGui 1.86 draws from left to right, one glyph
// per code point, in the order it is stored.
//
// A word typed in Hebrew or Arabic is stored first letter first, and its first letter is read
// at the right. ImGui draws the stored order from left to right, so "שלום" came out as "םולש",
// and Arabic letters, which join their neighbours in a shape that depends on them, came out
// apart, each in its stand-alone form. visual_order() gives the text in the order it is seen,
// left to right, with every Arabic letter in the joined form its neighbours call for:
//
//   - Arabic shaping: each letter of the basic Arabic alphabet (and the Persian and Urdu letters
//     DejaVu Sans draws) becomes its isolated, final, initial or medial presentation form, from
//     Unicode's joining types; marks (harakat) are transparent; lam + alef is one ligature.
//   - Reordering: a simplified Unicode bidirectional algorithm (UAX #9) for one line: the line's
//     direction is that of its first strong letter (left to right without one); letters are
//     left-to-right (L) or right-to-left (R); digits keep their order, and count as
//     right-to-left after a right-to-left letter; spaces and punctuation between two of one
//     direction take it, and the line's direction otherwise; then runs are reversed by level
//     (rule L2), and brackets in right-to-left runs are mirrored. A mark in a right-to-left run
//     comes before its letter: fonts draw Hebrew and Arabic marks over the glyph that follows.
//     Explicit embeddings and isolates (which the tokenizer drops) are not handled.
//
// Text without Hebrew or Arabic comes back as it is. No ImGui here (unit-tested).
//
// VisualText gives a label as ImGui is to draw it: in visual order, and with TextEscapes'
// stand-ins for the characters ImGui cannot hold (emoji), which the backend draws with their
// glyphs. It owns the app's one TextEscapes, which the text fields use too: a character has the
// same stand-in everywhere.
#pragma once

#include "app/view/text_escapes.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace attnviz::view {

// Whether the text may hold right-to-left letters (a byte test, no decoding): false means
// visual_order() would give the text back unchanged.
bool may_need_visual_order(std::string_view text);

// The text as it is seen, left to right (see above).
std::string visual_order(std::string_view logical);

// "##" in an ImGui label starts its hidden ID: a label that holds it (BERT's word pieces,
// "##ing") showed nothing after it. Each "##" gets a zero-width space between its two marks,
// which ImGui draws as nothing.
inline constexpr const char* kZeroWidthSpace = "\xe2\x80\x8b";  // U+200B
std::string without_id_marks(std::string label);

// A label as ImGui is to draw it: the text itself when it needs nothing (no copy, no
// allocation), else its visual order with stand-ins and without "##", kept until the cache is
// dropped.
class VisualText {
 public:
  // The stand-ins: the text fields' and the labels'.
  TextEscapes& escapes() { return escapes_; }
  const TextEscapes& escapes() const { return escapes_; }

  // Valid until the next new_frame() that drops the cache. (A const call: what it keeps is a
  // cache, not state.)
  const char* operator()(const std::string& logical) const;
  // Between frames: drops what is kept when it has grown past kMaxKept texts.
  void new_frame();
  std::size_t kept() const { return shown_.size(); }

  static constexpr std::size_t kMaxKept = 4096;

 private:
  mutable std::unordered_map<std::string, std::string> shown_;  // logical -> as drawn
  mutable TextEscapes escapes_;  // a stand-in is given when first needed, by a const call too
};

}  // namespace attnviz::view
