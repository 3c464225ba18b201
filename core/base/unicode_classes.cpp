#include "core/base/unicode_classes.hpp"

#include <algorithm>

namespace attnviz {

namespace unicode_table {
extern const char kUnicodeVersion[];
extern const std::size_t kRangeCount;
extern const UnicodeRange kRanges[];
}  // namespace unicode_table

UnicodeClass unicode_class(char32_t code_point) {
  const UnicodeRange* begin = unicode_table::kRanges;
  const UnicodeRange* end = begin + unicode_table::kRangeCount;
  // The first range that ends at or after the code point; it holds it if it starts at or before.
  const UnicodeRange* found = std::lower_bound(
      begin, end, code_point,
      [](const UnicodeRange& range, char32_t value) { return range.last < value; });
  if (found == end || found->first > code_point) return UnicodeClass::kOther;
  return found->kind;
}

bool is_space_separator(char32_t code_point) {
  return code_point == 0x20 || code_point == 0xA0 || code_point == 0x1680 ||
         (code_point >= 0x2000 && code_point <= 0x200A) || code_point == 0x202F ||
         code_point == 0x205F || code_point == 0x3000;
}

bool is_white_space(char32_t code_point) {
  switch (code_point) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return code_point >= 0x2000 && code_point <= 0x200A;
  }
}

const char* unicode_version() {
  return unicode_table::kUnicodeVersion;
}

}  // namespace attnviz
