#include "core/models/bert_text.hpp"

#include "core/base/unicode_classes.hpp"
#include "core/models/model_tokens.hpp"

#include <algorithm>

namespace attnviz {

namespace bert_table {
extern const char kUnicodeVersion[];
extern const std::size_t kLowerCount;
extern const BertCharacterMap kLower[];
extern const std::size_t kStrippedCount;
extern const BertCharacterMap kStripped[];
extern const std::size_t kCasedCount;
extern const BertCodeRange kCased[];
extern const std::size_t kCaseIgnorableCount;
extern const BertCodeRange kCaseIgnorable[];
}  // namespace bert_table

namespace {

// The row of a sorted table for `code_point`, or null.
const BertCharacterMap* find(const BertCharacterMap* table, std::size_t count,
                             char32_t code_point) {
  const BertCharacterMap* end = table + count;
  const BertCharacterMap* found = std::lower_bound(
      table, end, code_point,
      [](const BertCharacterMap& row, char32_t value) { return row.code_point < value; });
  return found != end && found->code_point == code_point ? found : nullptr;
}

bool in_ranges(const BertCodeRange* ranges, std::size_t count, char32_t code_point) {
  const BertCodeRange* end = ranges + count;
  const BertCodeRange* found = std::lower_bound(
      ranges, end, code_point,
      [](const BertCodeRange& range, char32_t value) { return range.last < value; });
  return found != end && found->first <= code_point;
}

// Unicode's Hangul syllables: a leading consonant, a vowel and an optional trailing consonant,
// composed by arithmetic (Unicode's chapter 3.12).
constexpr char32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;
constexpr char32_t kLeadFirst = 0x1100, kVowelFirst = 0x1161, kTrailFirst = 0x11A7;
constexpr char32_t kVowelCount = 21, kTrailCount = 28;

}  // namespace

bool is_bert_whitespace(char32_t code_point) {
  // The line and paragraph separators are no white space to BERT's _is_whitespace, but Python's
  // str.split(), which cuts the words, takes them for it.
  return code_point == U'\t' || code_point == U'\n' || code_point == U'\r' ||
         code_point == 0x2028 || code_point == 0x2029 || is_space_separator(code_point);
}

bool is_bert_control(char32_t code_point) {
  if (code_point == U'\t' || code_point == U'\n' || code_point == U'\r') return false;
  switch (unicode_class(code_point)) {
    case UnicodeClass::kControl:
    case UnicodeClass::kFormat:
    case UnicodeClass::kOther:  // unassigned, private use
      return true;
    default:
      return false;
  }
}

bool is_bert_punctuation(char32_t code_point) {
  if ((code_point >= 33 && code_point <= 47) || (code_point >= 58 && code_point <= 64) ||
      (code_point >= 91 && code_point <= 96) || (code_point >= 123 && code_point <= 126))
    return true;
  return unicode_class(code_point) == UnicodeClass::kPunctuation;
}

bool is_cjk_ideograph(char32_t code_point) {
  return (code_point >= 0x4E00 && code_point <= 0x9FFF) ||
         (code_point >= 0x3400 && code_point <= 0x4DBF) ||
         (code_point >= 0x20000 && code_point <= 0x2A6DF) ||
         (code_point >= 0x2A700 && code_point <= 0x2B73F) ||
         (code_point >= 0x2B740 && code_point <= 0x2B81F) ||
         (code_point >= 0x2B820 && code_point <= 0x2CEAF) ||
         (code_point >= 0xF900 && code_point <= 0xFAFF) ||
         (code_point >= 0x2F800 && code_point <= 0x2FA1F);
}

void append_bert_lowercase(std::string& out, char32_t code_point, bool ends_word) {
  if (code_point == 0x03A3) {  // capital sigma: final or not by the characters around
    append_code_point(out, ends_word ? 0x03C2 : 0x03C3);
    return;
  }
  if (code_point < 0x80) {
    out += static_cast<char>(code_point >= 'A' && code_point <= 'Z' ? code_point + 32 : code_point);
    return;
  }
  if (const BertCharacterMap* row = find(bert_table::kLower, bert_table::kLowerCount, code_point))
    out.append(row->text, row->size);
  else
    append_code_point(out, code_point);
}

void append_without_accents(std::string& out, char32_t code_point) {
  if (code_point < 0xC0) {  // nothing below U+00C0 decomposes
    append_code_point(out, code_point);
    return;
  }
  if (code_point >= kHangulFirst && code_point <= kHangulLast) {
    const char32_t index = code_point - kHangulFirst;
    append_code_point(out, kLeadFirst + index / (kVowelCount * kTrailCount));
    append_code_point(out, kVowelFirst + (index % (kVowelCount * kTrailCount)) / kTrailCount);
    if (index % kTrailCount != 0) append_code_point(out, kTrailFirst + index % kTrailCount);
    return;
  }
  if (const BertCharacterMap* row =
          find(bert_table::kStripped, bert_table::kStrippedCount, code_point))
    out.append(row->text, row->size);
  else
    append_code_point(out, code_point);
}

bool is_cased(char32_t code_point) {
  return in_ranges(bert_table::kCased, bert_table::kCasedCount, code_point);
}

bool is_case_ignorable(char32_t code_point) {
  return in_ranges(bert_table::kCaseIgnorable, bert_table::kCaseIgnorableCount, code_point);
}

const char* bert_text_unicode_version() {
  return bert_table::kUnicodeVersion;
}

}  // namespace attnviz
