// What a text field of Dear ImGui 1.86 cannot hold, held for it.
//
// Debian's ImGui stores a character in 16 bits: editing a sentence with an emoji (past U+FFFF)
// turned it into U+FFFD, and a typed emoji arrived as U+FFFD. So while a field shows a text, each
// character it cannot hold (past U+FFFF, and invalid UTF-8 bytes, kept byte for byte) stands in
// it for a character of the private-use area, one per distinct character, and is put back when
// the text leaves the field. Private-use characters already in the text take stand-ins too, so a
// stand-in is never mistaken for one. The same character always has the same stand-in, so the
// labels the views draw take them too (app/view/visual_text.hpp), and the backend draws the
// stand-in of a character past U+FFFF with that character's glyph, from a font that has it
// (Symbola, for emoji); any other stand-in is drawn as ImGui's missing-glyph mark.
//
// No ImGui here (unit-tested); the sentence fields and the window's typed characters use it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnviz::view {

class TextEscapes {
 public:
  static constexpr char32_t kFirst = 0xE000, kLast = 0xF8FF;  // the BMP's private-use area

  // The text with stand-ins for what ImGui cannot hold.
  std::string escape(std::string_view text);
  // The text with every stand-in put back (other characters as they are).
  std::string unescape(std::string_view text) const;
  // The stand-in for a typed character (the character itself when ImGui can hold it; U+FFFD
  // when every stand-in is taken).
  char32_t stand_in(char32_t code_point);
  // ImGui's queue of typed characters (16 bits each: U+FFFD for an emoji) ends with the ones the
  // window reported, `typed` (code points, in order). Each that needs a stand-in leaves the queue
  // (ImGui's text field drops a typed private-use character) and its stand-in waits, in order,
  // for the text field being typed into to insert it (take_typed()). Returns the queue's new
  // length: the entries kept, moved to its front in order.
  std::size_t take_from_queue(std::span<std::uint16_t> queue, std::span<const unsigned> typed);
  // The stand-ins typed since the last call, as UTF-8 (the text field inserts them at its cursor;
  // the app drops what no field took by the end of the frame).
  std::string take_typed();

  // Whether the text may hold a character that needs a stand-in (a byte test, no decoding):
  // false means escape() would give the text back unchanged, unless it has invalid bytes.
  static bool may_need_stand_ins(std::string_view text);

  // The characters past U+FFFF that have stand-ins, with them: (stand-in, character), in the
  // order they were given one. wide_count() is how many, without building the list.
  std::vector<std::pair<char32_t, char32_t>> wide_characters() const;
  std::size_t wide_count() const { return wide_count_; }

 private:
  static bool needs_stand_in(char32_t code_point) {
    return code_point > 0xFFFF || (code_point >= kFirst && code_point <= kLast);
  }
  // Keys: a code point, or kRawByte + b for an invalid UTF-8 byte b.
  static constexpr char32_t kRawByte = 0x110000;
  char32_t slot(char32_t key);
  std::unordered_map<char32_t, char32_t> slots_;  // key -> stand-in
  std::vector<char32_t> keys_;                    // stand-in - kFirst -> key
  std::size_t wide_count_ = 0;                    // keys past U+FFFF
  std::string typed_;                             // see take_typed()
};

}  // namespace attnviz::view
