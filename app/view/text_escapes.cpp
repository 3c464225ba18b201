#include "app/view/text_escapes.hpp"

#include "core/text/utf8.hpp"

#include <algorithm>

namespace attnviz::view {

char32_t TextEscapes::slot(char32_t key) {
  if (const auto found = slots_.find(key); found != slots_.end()) return found->second;
  if (keys_.size() > static_cast<std::size_t>(kLast - kFirst)) return 0xFFFD;  // all taken
  const char32_t stand_in = kFirst + static_cast<char32_t>(keys_.size());
  keys_.push_back(key);
  slots_.emplace(key, stand_in);
  if (key > 0xFFFF && key < kRawByte) ++wide_count_;
  return stand_in;
}

bool TextEscapes::may_need_stand_ins(std::string_view text) {
  // Invalid bytes are not looked for: a text that has them and nothing else is drawn by ImGui,
  // which shows U+FFFD for each.
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0xF0 || byte == 0xEE) return true;  // past U+FFFF; U+E000 to U+EFFF
    if (byte == 0xEF && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0xA3)
      return true;  // to U+F8FF
  }
  return false;
}

std::vector<std::pair<char32_t, char32_t>> TextEscapes::wide_characters() const {
  std::vector<std::pair<char32_t, char32_t>> wide;
  wide.reserve(wide_count_);
  for (std::size_t k = 0; k < keys_.size(); ++k)
    if (keys_[k] > 0xFFFF && keys_[k] < kRawByte)
      wide.emplace_back(kFirst + static_cast<char32_t>(k), keys_[k]);
  return wide;
}

char32_t TextEscapes::stand_in(char32_t code_point) {
  return needs_stand_in(code_point) ? slot(code_point) : code_point;
}

std::size_t TextEscapes::take_from_queue(std::span<std::uint16_t> queue,
                                         std::span<const unsigned> typed) {
  const std::size_t count = std::min(queue.size(), typed.size());
  const std::size_t first = queue.size() - count;  // the last `count` of each, in the same order
  std::size_t kept = first;
  for (std::size_t k = 0; k < count; ++k) {
    const char32_t code_point = typed[typed.size() - count + k];
    if (needs_stand_in(code_point))
      append_utf8(typed_, slot(code_point));
    else
      queue[kept++] = queue[first + k];
  }
  return kept;
}

std::string TextEscapes::take_typed() {
  std::string typed;
  typed.swap(typed_);
  return typed;
}

std::string TextEscapes::escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 0;
    const char32_t code_point = decode_utf8(text, offset, length);
    if (is_invalid_byte(code_point, length)) {  // an invalid byte: kept as it is, by a stand-in
      for (std::size_t b = 0; b < length; ++b)
        append_utf8(out, slot(kRawByte + static_cast<unsigned char>(text[offset + b])));
    } else if (needs_stand_in(code_point)) {
      append_utf8(out, slot(code_point));
    } else {
      out.append(text.substr(offset, length));
    }
    offset += length;
  }
  return out;
}

std::string TextEscapes::unescape(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 0;
    const char32_t code_point = decode_utf8(text, offset, length);
    const std::size_t index = code_point - kFirst;
    if (code_point >= kFirst && code_point <= kLast && index < keys_.size()) {
      const char32_t key = keys_[index];
      if (key >= kRawByte)
        out.push_back(static_cast<char>(key - kRawByte));
      else
        append_utf8(out, key);
    } else {
      out.append(text.substr(offset, length));
    }
    offset += length;
  }
  return out;
}

}  // namespace attnviz::view
