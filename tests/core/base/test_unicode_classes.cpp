// The generated table of Unicode's classes against PCRE2's own (Debian 12's PCRE2 10.42 and
// Python 3.11's unicodedata are both Unicode 14.0.0), code point by code point.
#include "core/base/unicode_classes.hpp"
#include "core/text/utf8.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <doctest/doctest.h>
#include <pcre2.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace attnviz {
namespace {

// A code point as UTF-8, by the project's own encoder (core/text/utf8.hpp).
std::string utf8(char32_t code_point) {
  std::string out;
  append_utf8(out, code_point);
  return out;
}

// PCRE2's class of one code point: the number of the group that matched.
class Pcre2Classes {
 public:
  Pcre2Classes() {
    const char* pattern =
        "\\A(?:(\\p{L})|(\\p{N})|(\\p{M})|(\\p{Z})|(\\p{Cc})|(\\p{Cf})|(\\p{P})|(\\p{S}))";
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
    REQUIRE(code_ != nullptr);
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
    match_ = pcre2_match_data_create_from_pattern(code_, nullptr);
  }
  ~Pcre2Classes() {
    pcre2_match_data_free(match_);
    pcre2_code_free(code_);
  }
  Pcre2Classes(const Pcre2Classes&) = delete;
  Pcre2Classes& operator=(const Pcre2Classes&) = delete;

  UnicodeClass kind(const std::string& character) const {
    const int found = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(character.data()),
                                  character.size(), 0, 0, match_, nullptr);
    switch (found) {
      case 2:
        return UnicodeClass::kLetter;
      case 3:
        return UnicodeClass::kNumber;
      case 4:
        return UnicodeClass::kMark;
      case 5:
        return UnicodeClass::kSeparator;
      case 6:
        return UnicodeClass::kControl;
      case 7:
        return UnicodeClass::kFormat;
      case 8:
        return UnicodeClass::kPunctuation;
      case 9:
        return UnicodeClass::kSymbol;
      default:
        return UnicodeClass::kOther;
    }
  }

 private:
  pcre2_code* code_ = nullptr;
  pcre2_match_data* match_ = nullptr;
};

}  // namespace

TEST_CASE("Unicode classes: every code point's class is PCRE2's") {
  CHECK(std::strcmp(unicode_version(), "14.0.0") == 0);
  const Pcre2Classes pcre2;
  int differences = 0;
  char32_t first_different = 0;
  int counts[9] = {};
  for (char32_t code_point = 0; code_point <= 0x10FFFF; ++code_point) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;  // surrogates: no UTF-8
    const UnicodeClass ours = unicode_class(code_point);
    ++counts[static_cast<int>(ours)];
    if (ours != pcre2.kind(utf8(code_point)) && differences++ == 0) first_different = code_point;
  }
  char first[16];
  std::snprintf(first, sizeof first, "U+%04X", static_cast<unsigned>(first_different));
  CHECK_MESSAGE(differences == 0, differences << " code points differ, the first " << first);
  // Unicode 14.0's counts: letters, numbers, marks.
  CHECK(counts[static_cast<int>(UnicodeClass::kLetter)] == 131756);
  CHECK(counts[static_cast<int>(UnicodeClass::kNumber)] == 1791);
  CHECK(counts[static_cast<int>(UnicodeClass::kMark)] == 2408);
  CHECK(counts[static_cast<int>(UnicodeClass::kPunctuation)] == 819);
  CHECK(counts[static_cast<int>(UnicodeClass::kSymbol)] == 7741);
  CHECK(unicode_class(0x110000) == UnicodeClass::kOther);
  CHECK(unicode_class(0xFFFFFFFF) == UnicodeClass::kOther);
}

TEST_CASE("Unicode classes: the space separators are PCRE2's Zs") {
  pcre2_code* zs = nullptr;
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  zs = pcre2_compile(reinterpret_cast<PCRE2_SPTR>("\\A\\p{Zs}"), PCRE2_ZERO_TERMINATED,
                     PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  REQUIRE(zs != nullptr);
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(zs, nullptr);
  int count = 0, differences = 0;
  for (char32_t code_point = 0; code_point <= 0x10FFFF; ++code_point) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    const std::string character = utf8(code_point);
    const bool theirs = pcre2_match(zs, reinterpret_cast<PCRE2_SPTR>(character.data()),
                                    character.size(), 0, 0, match, nullptr) > 0;
    count += is_space_separator(code_point);
    differences += theirs != is_space_separator(code_point);
  }
  pcre2_match_data_free(match);
  pcre2_code_free(zs);
  CHECK(differences == 0);
  CHECK(count == 17);
}

TEST_CASE("Unicode classes: White_Space is the 25 characters Unicode lists") {
  int count = 0;
  for (char32_t code_point = 0; code_point <= 0x10FFFF; ++code_point)
    if (is_white_space(code_point)) ++count;
  CHECK(count == 25);
  CHECK(is_white_space(U'\u0085'));
  CHECK(is_white_space(U'\u3000'));
  CHECK_FALSE(is_white_space(U'\u200B'));  // the zero-width space is a format character
  CHECK_FALSE(is_white_space(U'\uFEFF'));
  CHECK_FALSE(is_white_space(U'\u001C'));  // PCRE2's \s has it; Unicode's White_Space not
}

}  // namespace attnviz
