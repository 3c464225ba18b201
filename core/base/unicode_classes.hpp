// Unicode's general categories, as far as AttnViz's text code asks: GPT-2's pre-tokenizer
// (letters, numbers, white space), BERT's basic tokenizer (punctuation, controls, space
// separators) and the way a model's token is shown (marks, separators, controls, format
// characters). A table generated from Unicode's data
// (make_unicode_classes.py), so that no regular expression library is needed (the browser
// build has none); the tests compare it with PCRE2's classes code point by code point.
#pragma once

#include <cstddef>

namespace attnviz {

enum class UnicodeClass : unsigned char {
  kOther,        // Cn Co Cs: unassigned, private use (and surrogates)
  kLetter,       // L: Lu Ll Lt Lm Lo
  kNumber,       // N: Nd Nl No
  kMark,         // M: Mn Mc Me
  kSeparator,    // Z: Zs Zl Zp
  kControl,      // Cc
  kFormat,       // Cf
  kPunctuation,  // P: Pc Pd Ps Pe Pi Pf Po
  kSymbol,       // S: Sm Sc Sk So
};

struct UnicodeRange {
  char32_t first;  // inclusive
  char32_t last;   // inclusive
  UnicodeClass kind;
};

// The class of a code point (kOther past U+10FFFF).
UnicodeClass unicode_class(char32_t code_point);

// Unicode's White_Space property: what \s means in Python's `regex` module, and so in GPT-2's
// encoder.py (tab, line feed, U+000B, form feed, carriage return, space, U+0085, U+00A0,
// U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool is_white_space(char32_t code_point);

// Unicode's Zs, space separators: what BERT's tokenizer takes for white space besides tab, line
// feed and carriage return (U+0020, U+00A0, U+1680, U+2000 to U+200A, U+202F, U+205F, U+3000).
bool is_space_separator(char32_t code_point);

// The Unicode version of the table.
const char* unicode_version();

}  // namespace attnviz
