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
extern const std::size_t kDecomposedCount;
extern const BertCharacterMap kDecomposed[];
extern const std::size_t kCombiningClassCount;
extern const BertClassRange kCombiningClass[];
extern const std::size_t kComposedCount;
extern const BertComposition kComposed[];
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

int canonical_combining_class(char32_t code_point) {
  if (code_point < 0x300) return 0;
  const BertClassRange* end = bert_table::kCombiningClass + bert_table::kCombiningClassCount;
  const BertClassRange* found = std::lower_bound(
      bert_table::kCombiningClass, end, code_point,
      [](const BertClassRange& range, char32_t value) { return range.last < value; });
  return found != end && found->first <= code_point ? found->combining_class : 0;
}

namespace {

// What NFC composes `first` and `second` into; 0 when nothing.
char32_t composed(char32_t first, char32_t second) {
  // Hangul: a leading consonant and a vowel, or an LV syllable and a trailing consonant.
  if (first >= kLeadFirst && first < kLeadFirst + 19 && second >= kVowelFirst &&
      second < kVowelFirst + kVowelCount)
    return kHangulFirst +
           ((first - kLeadFirst) * kVowelCount + (second - kVowelFirst)) * kTrailCount;
  if (first >= kHangulFirst && first <= kHangulLast && (first - kHangulFirst) % kTrailCount == 0 &&
      second > kTrailFirst && second < kTrailFirst + kTrailCount)
    return first + (second - kTrailFirst);
  const BertComposition* end = bert_table::kComposed + bert_table::kComposedCount;
  const BertComposition* found =
      std::lower_bound(bert_table::kComposed, end, std::pair(first, second),
                       [](const BertComposition& row, std::pair<char32_t, char32_t> key) {
                         return std::pair(row.first, row.second) < key;
                       });
  return found != end && found->first == first && found->second == second ? found->composite : 0;
}

}  // namespace

void compose_nfc(std::vector<BertCharacter>& text) {
  if (std::all_of(text.begin(), text.end(),
                  [](const BertCharacter& c) { return c.code_point < 0x300; }))
    return;  // nothing below U+0300 decomposes, combines or composes differently
  // 1. Canonical decomposition, each piece with its character's bytes.
  std::vector<BertCharacter> decomposed;
  decomposed.reserve(text.size() * 2);
  for (const BertCharacter& c : text) {
    const char32_t cp = c.code_point;
    if (cp >= kHangulFirst && cp <= kHangulLast) {
      const char32_t index = cp - kHangulFirst;
      decomposed.push_back(
          {kLeadFirst + index / (kVowelCount * kTrailCount), c.byte_begin, c.byte_end});
      decomposed.push_back({kVowelFirst + (index % (kVowelCount * kTrailCount)) / kTrailCount,
                            c.byte_begin, c.byte_end});
      if (index % kTrailCount != 0)
        decomposed.push_back({kTrailFirst + index % kTrailCount, c.byte_begin, c.byte_end});
    } else if (const BertCharacterMap* row =
                   find(bert_table::kDecomposed, bert_table::kDecomposedCount, cp)) {
      const std::string_view pieces(row->text, row->size);  // UTF-8 the generator wrote
      for (std::size_t at = 0, length = 0; at < pieces.size(); at += length) {
        length = utf8_character_length(pieces, at);
        if (length == 0) break;
        decomposed.push_back(
            {decode_code_point(pieces.substr(at, length)), c.byte_begin, c.byte_end});
      }
    } else {
      decomposed.push_back(c);
    }
  }
  // 2. Canonical order: within each run of marks, by combining class (stable).
  for (std::size_t i = 1; i < decomposed.size(); ++i) {
    const int combining_class = canonical_combining_class(decomposed[i].code_point);
    if (combining_class == 0) continue;
    for (std::size_t j = i; j > 0; --j) {
      const int before = canonical_combining_class(decomposed[j - 1].code_point);
      if (before <= combining_class) break;
      std::swap(decomposed[j - 1], decomposed[j]);
    }
  }
  // 3. Canonical composition: each character joins the last starter when nothing between them
  //    blocks it (a starter, or a mark of its class or higher).
  text.clear();
  std::ptrdiff_t starter = -1;  // the last starter's place in `text`
  int last_class = -1;          // the class of the last character kept after it (-1: none)
  for (const BertCharacter& c : decomposed) {
    const int combining_class = canonical_combining_class(c.code_point);
    if (starter >= 0 && (last_class == -1 || last_class < combining_class)) {
      BertCharacter& into = text[static_cast<std::size_t>(starter)];
      if (const char32_t composite = composed(into.code_point, c.code_point)) {
        into.code_point = composite;
        into.byte_begin = std::min(into.byte_begin, c.byte_begin);
        into.byte_end = std::max(into.byte_end, c.byte_end);
        continue;
      }
    }
    if (combining_class == 0) {
      starter = static_cast<std::ptrdiff_t>(text.size());
      last_class = -1;
    } else {
      last_class = combining_class;
    }
    text.push_back(c);
  }
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
