#include "core/models/model_tokens.hpp"

#include "core/base/unicode_classes.hpp"

#include <cstdint>
#include <cstdio>

namespace attnviz {

std::uint32_t decode_code_point(std::string_view character) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(character[k]); };
  switch (character.size()) {
    case 1:
      return byte(0);
    case 2:
      return (byte(0) & 0x1Fu) << 6 | (byte(1) & 0x3Fu);
    case 3:
      return (byte(0) & 0x0Fu) << 12 | (byte(1) & 0x3Fu) << 6 | (byte(2) & 0x3Fu);
    default:
      return (byte(0) & 0x07u) << 18 | (byte(1) & 0x3Fu) << 12 | (byte(2) & 0x3Fu) << 6 |
             (byte(3) & 0x3Fu);
  }
}

std::size_t utf8_character_length(std::string_view text, std::size_t at) {
  if (at >= text.size()) return 0;
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong below U+0800
    if (lead == 0xED) high = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong below U+10000
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[at + k]);
    if (byte < (k == 1 ? low : 0x80u) || byte > (k == 1 ? high : 0xBFu)) return 0;
  }
  return length;
}

void append_code_point(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

namespace {

// How a non-ASCII character is shown: characters that show no glyph of their own (format
// characters, spaces other than U+0020, line and paragraph separators, C1 controls, variation
// selectors) by name, combining marks on what precedes them.
enum class CharacterKind { kVisible, kInvisible, kCombining };

CharacterKind character_kind(std::uint32_t code_point) {
  if ((code_point >= 0xFE00 && code_point <= 0xFE0F) ||
      (code_point >= 0xE0100 && code_point <= 0xE01EF))
    return CharacterKind::kInvisible;  // variation selectors (marks, shown by name)
  switch (unicode_class(code_point)) {
    case UnicodeClass::kFormat:
    case UnicodeClass::kSeparator:
    case UnicodeClass::kControl:
      return CharacterKind::kInvisible;
    case UnicodeClass::kMark:
      return CharacterKind::kCombining;
    default:
      return CharacterKind::kVisible;
  }
}

// The name an invisible character is shown by: a short one people know, or its code point.
std::string invisible_name(std::uint32_t code_point) {
  switch (code_point) {
    case 0x00A0:
      return "<NBSP>";
    case 0x00AD:
      return "<SHY>";
    case 0x200B:
      return "<ZWSP>";
    case 0x200C:
      return "<ZWNJ>";
    case 0x200D:
      return "<ZWJ>";
    case 0x200E:
      return "<LRM>";
    case 0x200F:
      return "<RLM>";
    case 0xFE0E:
      return "<VS15>";
    case 0xFE0F:
      return "<VS16>";
    case 0xFEFF:
      return "<BOM>";
    default:
      break;
  }
  char name[16];
  std::snprintf(name, sizeof name, "<U+%04X>", static_cast<unsigned>(code_point));
  return name;
}

// One character (`length` bytes at `at`, valid UTF-8) as a person reads it.
void append_shown_character(std::string& out, std::string_view stream, std::size_t at,
                            std::size_t length) {
  if (length == 1) {
    const auto byte = static_cast<unsigned char>(stream[at]);
    if (byte == ' ') return append_code_point(out, 0x2423);         // ␣
    if (byte == '\n') return append_code_point(out, 0x21B5);        // ↵
    if (byte == '\t') return append_code_point(out, 0x2192);        // →
    if (byte < 0x20) return append_code_point(out, 0x2400 + byte);  // ␀ … ␟ (␍ for '\r')
    if (byte == 0x7F) return append_code_point(out, 0x2421);        // ␡
    out += static_cast<char>(byte);
    return;
  }
  const std::string_view character = stream.substr(at, length);
  const std::uint32_t code_point = decode_code_point(character);
  switch (character_kind(code_point)) {
    case CharacterKind::kInvisible:
      out += invisible_name(code_point);
      return;
    case CharacterKind::kCombining:
      if (out.empty()) append_code_point(out, 0x25CC);  // ◌: the mark has nothing to sit on
      break;
    case CharacterKind::kVisible:
      break;
  }
  out.append(character);
}

constexpr const char* kContinuation = "\xE2\x8B\xAF";  // ⋯ U+22EF

// Shows the tokens [first, last): none special, their bytes one stream.
void show_run(std::vector<ModelToken>& tokens, std::size_t first, std::size_t last) {
  std::string stream;
  std::vector<std::size_t> starts;  // each token's first byte in the stream
  for (std::size_t t = first; t < last; ++t) {
    starts.push_back(stream.size());
    stream += tokens[t].bytes;
    tokens[t].shown.clear();
  }
  starts.push_back(stream.size());
  // Characters in order; `owner` is the token holding the current character's first byte.
  std::size_t owner = 0;  // index into starts, relative to `first`
  for (std::size_t at = 0; at < stream.size();) {
    while (starts[owner + 1] <= at) ++owner;
    const std::size_t length = utf8_character_length(stream, at);
    std::string& shown = tokens[first + owner].shown;
    if (length == 0) {  // a byte of no valid character
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(stream[at]));
      shown += name;
      ++at;
      continue;
    }
    append_shown_character(shown, stream, at, length);
    // The tokens that hold later bytes of this character (and start inside it) show ⋯.
    for (std::size_t later = owner + 1; later < last - first && starts[later] < at + length;
         ++later)
      if (starts[later + 1] > starts[later]) tokens[first + later].shown += kContinuation;
    at += length;
  }
}

}  // namespace

void show_tokens(std::vector<ModelToken>& tokens) {
  std::size_t run_begin = 0;
  for (std::size_t t = 0; t <= tokens.size(); ++t) {
    if (t < tokens.size() && !tokens[t].special) continue;
    if (run_begin < t) show_run(tokens, run_begin, t);
    run_begin = t + 1;
  }
}

}  // namespace attnviz
