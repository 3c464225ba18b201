// What BERT's basic tokenizer (Hugging Face's tokenization_bert.py) does to characters, with
// Python's unicodedata and str.lower at Unicode 14.0, the version of the generated table
// (core/models/make_bert_text_tables.py): which characters are white space, controls,
// punctuation and CJK ideographs, a character lower-cased, and its accents stripped.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnviz {

// One row of the generated table: a code point and the UTF-8 text it becomes.
struct BertCharacterMap {
  char32_t code_point;
  unsigned char size;  // bytes of `text`
  char text[13];
};

// A range of code points, both ends included.
struct BertCodeRange {
  char32_t first, last;
};
struct BertClassRange {  // first..last have canonical combining class `combining_class`
  char32_t first, last;
  unsigned char combining_class;
};
struct BertComposition {  // NFC composes `first` `second` into `composite`
  char32_t first, second, composite;
};

// What separates words: space, tab, line feed, carriage return, a space separator (Zs), and the
// line and paragraph separators U+2028 and U+2029 (the reference's str.split() cuts there).
bool is_bert_whitespace(char32_t code_point);
// Dropped from the text: Unicode's category C (Cc, Cf, Cn, Co, Cs) but tab, line feed and
// carriage return.
bool is_bert_control(char32_t code_point);
// Split off as a word of its own: ASCII's non-alphanumeric printable characters (so "$", "^",
// "`" too) and Unicode's category P.
bool is_bert_punctuation(char32_t code_point);
// A CJK ideograph of the blocks BERT lists: written as a word of its own.
bool is_cjk_ideograph(char32_t code_point);

// Appends `code_point` lower-cased as Python's str.lower() does. A capital sigma becomes the
// final form (ς) when `ends_word`: the caller decides by Python's rule (a cased letter before it,
// none after it, case-ignorable characters skipped), which is_cased and is_case_ignorable give.
void append_bert_lowercase(std::string& out, char32_t code_point, bool ends_word);
// Appends `code_point`'s canonical decomposition (NFD) less its nonspacing marks (Mn): "é" is
// "e"; a Hangul syllable its jamo.
void append_without_accents(std::string& out, char32_t code_point);
// Python's notion of a cased character and of a case-ignorable one, for the final sigma (read
// from Python's str.lower() by the generator).
bool is_cased(char32_t code_point);
bool is_case_ignorable(char32_t code_point);

// A character of a text with the bytes it came from.
struct BertCharacter {
  char32_t code_point;
  std::size_t byte_begin, byte_end;
};
// Unicode's canonical composition (NFC), which the reference applies to the text before it cuts
// it into words (transformers 4.29 and later): each character decomposed canonically (a Hangul
// syllable by arithmetic), the marks of each run put in canonical order, then composed again
// (Unicode's chapter 3.11). An output character keeps the byte range of those it came from (a
// composed one: the first's start to the last's end). Text below U+0300 is returned as it is.
void compose_nfc(std::vector<BertCharacter>& text);
// The canonical combining class (0 for a starter).
int canonical_combining_class(char32_t code_point);

// The Unicode version of the table.
const char* bert_text_unicode_version();

}  // namespace attnviz
