// UTF-8, the one decoder and encoder of AttnViz: the tokenizer, the SVG writer, the terminal
// heatmap, the app's text escapes and right-to-left drawing all read text through it, so that an
// invalid byte is the same U+FFFD everywhere.
//
// Strict (RFC 3629): an overlong form, a surrogate (U+D800 to U+DFFF), a code point past
// U+10FFFF, a sequence cut short or a byte that cannot start one decodes as U+FFFD of length 1,
// so that the next decode starts at the next byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnviz {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

// Decodes one code point at text[offset] (offset < text.size()). Returns the code point, or
// U+FFFD for an invalid sequence, and sets `length` to the bytes consumed (1 to 4; 1 when
// invalid).
char32_t decode_utf8(std::string_view text, std::size_t offset, std::size_t& length);

// Whether decode_utf8() gave U+FFFD for an invalid byte, rather than for a U+FFFD written in the
// text (three bytes).
inline bool is_invalid_byte(char32_t code_point, std::size_t length) {
  return code_point == kReplacementCharacter && length == 1;
}

// Appends the 1 to 4 bytes of a code point (at most U+10FFFF).
void append_utf8(std::string& out, char32_t code_point);

// The first max_code_points code points of text (never splits a code point).
std::string_view utf8_prefix(std::string_view text, std::size_t max_code_points);
// The number of code points in text (an invalid byte counts as one).
std::size_t utf8_length(std::string_view text);

}  // namespace attnviz
