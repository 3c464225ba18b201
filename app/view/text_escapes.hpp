// What a text field of Dear ImGui 1.86 cannot hold, held for it.
//
// Debian's ImGui stores a character in 16 bits: editing a sentence with an emoji (past U+FFFF)
// turned it into U+FFFD, and a typed emoji arrived as U+FFFD. So while a field shows a text, each
// character it cannot hold (past U+FFFF, and invalid UTF-8 bytes, kept byte for byte) stands in
// it for a character of the private-use area, one per distinct character, and is put back when
// the text leaves the field. Private-use characters already in the text take stand-ins too, so a
// stand-in is never mistaken for one. ImGui draws a stand-in as its missing-glyph mark, as it
// draws an emoji the font lacks anyway.
//
// No ImGui here (unit-tested); the sentence fields and the window's typed characters use it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
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
  // window reported, `typed` (code points, in order): each gets its stand-in.
  void stand_in_queued(std::span<std::uint16_t> queue, std::span<const unsigned> typed);

 private:
  static bool needs_stand_in(char32_t code_point) {
    return code_point > 0xFFFF || (code_point >= kFirst && code_point <= kLast);
  }
  // Keys: a code point, or kRawByte + b for an invalid UTF-8 byte b.
  static constexpr char32_t kRawByte = 0x110000;
  char32_t slot(char32_t key);
  std::unordered_map<char32_t, char32_t> slots_;  // key -> stand-in
  std::vector<char32_t> keys_;                     // stand-in - kFirst -> key
};

}  // namespace attnviz::view
