#include "core/text/utf8.hpp"

namespace attnviz {

char32_t decode_utf8(std::string_view text, std::size_t offset, std::size_t& length) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[offset + i]); };
  const unsigned char lead = byte(0);
  length = 1;
  if (lead < 0x80) return lead;

  std::size_t count = 0;
  char32_t code_point = 0;
  char32_t minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    count = 2, code_point = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    count = 3, code_point = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    count = 4, code_point = lead & 0x07, minimum = 0x10000;
  } else {
    return kReplacementCharacter;  // continuation byte or 0xF8..0xFF as a lead
  }
  if (offset + count > text.size()) return kReplacementCharacter;
  for (std::size_t i = 1; i < count; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return kReplacementCharacter;
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF))
    return kReplacementCharacter;
  length = count;
  return code_point;
}

void append_utf8(std::string& out, char32_t code_point) {
  const char32_t cp = code_point;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_code_points) {
  std::size_t offset = 0;
  for (std::size_t count = 0; offset < text.size() && count < max_code_points; ++count) {
    std::size_t length = 0;
    decode_utf8(text, offset, length);
    offset += length;
  }
  return text.substr(0, offset);
}

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  for (std::size_t offset = 0; offset < text.size(); ++count) {
    std::size_t length = 0;
    decode_utf8(text, offset, length);
    offset += length;
  }
  return count;
}

}  // namespace attnviz
