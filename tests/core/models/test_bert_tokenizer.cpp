// BERT's tokenizer on cases worked out by hand from tokenization_bert.py; the comparison with an
// independent implementation on thousands of generated lines is tests/reference/bert-tokenizer/.
#include "core/models/bert_text.hpp"
#include "core/models/bert_tokenizer.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace attnviz {
namespace {

// A small vocabulary: the special tokens, then words and pieces (ids from 0, a line each).
const char* kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"             // 0-4
    "the\ngod\nsaid\n,\nlet\nthere\nbe\n.\nlight\n"    // 5-13
    "un\n##want\n##ed\nrun\n##ning\nnaive\nοδος\n!\n"  // 14-21
    "中\n国\nhello\n";                                 // 22-24

BertTokenizer tokenizer(const std::string& config = "") {
  Result<BertTokenizer> loaded = BertTokenizer::parse(kVocab, config, "vocab.txt", "config.json");
  REQUIRE(loaded.ok());
  return *loaded;
}

std::vector<std::string> tokens(const BertTokenizer& t, const std::string& text) {
  std::vector<std::string> out;
  for (const int id : t.encode(text)) out.push_back(t.token(id));
  return out;
}

using Tokens = std::vector<std::string>;

}  // namespace

TEST_CASE("BERT tokenizer: lower case, punctuation split off, greedy longest pieces") {
  const BertTokenizer t = tokenizer();
  CHECK(t.size() == 25);
  CHECK(t.cls() == 2);
  CHECK(t.sep() == 3);
  CHECK(t.mask() == 4);
  CHECK(tokens(t, "God said, let there be light.") ==
        Tokens{"god", "said", ",", "let", "there", "be", "light", "."});
  CHECK(tokens(t, "unwanted running") == Tokens{"un", "##want", "##ed", "run", "##ning"});
  // A word that cannot be cut into the vocabulary's pieces is one [UNK], not part of one.
  CHECK(tokens(t, "unwantedx hello") == Tokens{"[UNK]", "hello"});
}

TEST_CASE("BERT tokenizer: [MASK] written in the text is the mask token") {
  const BertTokenizer t = tokenizer();
  CHECK(tokens(t, "God said, let there be [MASK].") ==
        Tokens{"god", "said", ",", "let", "there", "be", "[MASK]", "."});
  CHECK(tokens(t, "be[MASK]light") == Tokens{"be", "[MASK]", "light"});
  CHECK(tokens(t, "[mask]") == Tokens{"[UNK]", "[UNK]", "[UNK]"});  // "[", "mask", "]": as text
}

TEST_CASE("BERT tokenizer: accents stripped, Greek's final sigma, CJK characters apart") {
  const BertTokenizer t = tokenizer();
  CHECK(tokens(t, "NAÏVE") == Tokens{"naive"});
  CHECK(tokens(t, "nai\xcc\x88ve") == Tokens{"naive"});                    // a combining diaeresis
  CHECK(tokens(t, "\xce\x9f\xce\x94\xce\x9f\xce\xa3") == Tokens{"οδος"});  // ΟΔΟΣ: final ς
  CHECK(tokens(t, "中国hello") == Tokens{"中", "国", "hello"});
  // Controls and U+FFFD dropped; a no-break space separates words.
  CHECK(tokens(t, "hel\x01lo\xc2\xa0hello\xef\xbf\xbd") == Tokens{"hello", "hello"});
}

TEST_CASE("BERT tokenizer: a word of more than 100 characters is [UNK]") {
  const BertTokenizer t = tokenizer();
  CHECK(tokens(t, std::string(101, 'a')) == Tokens{"[UNK]"});
}

TEST_CASE("BERT tokenizer: a sentence pair, [CLS] a [SEP] b [SEP], b's token type 1") {
  const BertTokenizer t = tokenizer();
  const BertTokenizer::Input input = t.encode_for_model("Hello!", std::string_view("the light"));
  CHECK(input.ids == std::vector<int>{2, 24, 21, 3, 5, 13, 3});
  CHECK(input.types == std::vector<int>{0, 0, 0, 0, 1, 1, 1});
}

TEST_CASE("BERT tokenizer: a cased vocabulary keeps case and accents") {
  const BertTokenizer t = tokenizer(R"({"do_lower_case": false})");
  CHECK(tokens(t, "the Light") == Tokens{"the", "[UNK]"});
  const BertTokenizer strip = tokenizer(R"({"do_lower_case": false, "strip_accents": true})");
  CHECK(tokens(strip, "naïve") == Tokens{"naive"});
}

TEST_CASE(
    "BERT text: NFC as Python's unicodedata.normalize gives it, with each character's bytes") {
  // Each case: the code points given, the ones Python 3.11's normalize("NFC", ...) gives.
  struct Case {
    std::u32string given, expected;
  };
  const Case cases[] = {
      {U"e\u0301", U"\u00e9"},              // a letter and its accent: one character
      {U"a\u0307\u0323", U"\u1ea1\u0307"},  // marks put in order (220 before 230) first
      {U"\u1100\u1161\u11a8", U"\uac01"},   // Hangul jamo: a syllable, by arithmetic
      {U"\uac00\u11a8", U"\uac01"},         // an LV syllable and a trailing consonant
      {U"\u212b", U"\u00c5"},               // ANGSTROM SIGN: a singleton, decomposed
      {U"\u0958", U"\u0915\u093c"},         // excluded from composition: stays apart
      {U"a\u0301\u0301", U"\u00e1\u0301"},  // the second acute is blocked by the first
      {U"\u1e9b\u0323", U"\u1e9b\u0323"},   // long s with dot above, and dot below
      {U"plain", U"plain"},
  };
  for (const Case& c : cases) {
    std::vector<BertCharacter> text;
    for (std::size_t i = 0; i < c.given.size(); ++i)
      text.push_back({c.given[i], i * 10, i * 10 + 3});
    compose_nfc(text);
    std::u32string got;
    for (const BertCharacter& character : text) got += character.code_point;
    CHECK(got == c.expected);
  }
  // A composed character spans the bytes of what it came from.
  std::vector<BertCharacter> text = {{U'x', 0, 1}, {U'e', 1, 2}, {0x301, 2, 4}};
  compose_nfc(text);
  REQUIRE(text.size() == 2);
  CHECK(text[1].code_point == 0xE9);
  CHECK(text[1].byte_begin == 1);
  CHECK(text[1].byte_end == 4);
  CHECK(canonical_combining_class(0x301) == 230);
  CHECK(canonical_combining_class(0x323) == 220);
  CHECK(canonical_combining_class(U'a') == 0);
}

TEST_CASE("BERT tokenizer: a cased vocabulary reads a decomposed accent as the composed one") {
  Result<BertTokenizer> loaded =
      BertTokenizer::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ncaf\xc3\xa9\n",
                           R"({"do_lower_case": false})", "vocab.txt", "config.json");
  REQUIRE(loaded.ok());
  const std::string text = "un cafe\xcc\x81";  // "cafe" + U+0301
  const std::vector<BertTokenizer::Piece> pieces = loaded->tokenize(text);
  REQUIRE(pieces.size() == 2);
  CHECK(loaded->token(pieces[1].id) == "caf\xc3\xa9");  // "café", one token
  CHECK(pieces[1].byte_begin == 3);
  CHECK(pieces[1].byte_end == text.size());  // the accent's bytes too
}

TEST_CASE("BERT tokenizer: each piece knows the bytes of the word it came from") {
  const BertTokenizer t = tokenizer();
  const std::string text = "  Unwanted, [MASK]";
  const std::vector<BertTokenizer::Piece> pieces = t.tokenize(text);
  REQUIRE(pieces.size() == 5);
  CHECK(text.substr(pieces[0].byte_begin, pieces[0].byte_end - pieces[0].byte_begin) == "Unwanted");
  CHECK(pieces[0].first_piece);
  CHECK_FALSE(pieces[1].first_piece);
  CHECK(pieces[2].byte_end == pieces[0].byte_end);
  CHECK(text.substr(pieces[3].byte_begin, 1) == ",");
  CHECK(text.substr(pieces[4].byte_begin) == "[MASK]");
}

TEST_CASE("BERT tokenizer: bad files are refused with the file and the line named") {
  CHECK(BertTokenizer::parse("[UNK]\n[CLS]\n", "", "v.txt", "c.json").status().message() ==
        "v.txt: no [SEP] token (BERT's vocabulary has [UNK], [CLS] and [SEP])");
  const Result<BertTokenizer> invalid =
      BertTokenizer::parse("[UNK]\n[CLS]\n[SEP]\nok\n\xff\xfe\n", "", "v.txt", "c.json");
  REQUIRE_FALSE(invalid.ok());
  CHECK(invalid.status().message() == "v.txt line 5: not UTF-8 (byte 1)");
  const std::string long_token(2000, 'a');
  CHECK_FALSE(BertTokenizer::parse("[UNK]\n[CLS]\n[SEP]\n" + long_token, "", "v", "c").ok());
  CHECK(BertTokenizer::parse(kVocab, R"({"do_lower_case": "yes"})", "v", "c.json")
            .status()
            .message() == "c.json: do_lower_case: expected true or false");
  CHECK(BertTokenizer::parse(kVocab, std::string(40, '[') + std::string(40, ']'), "v", "c.json")
            .status()
            .message() == "c.json: nested deeper than 32 levels");
  CHECK_FALSE(BertTokenizer::parse(kVocab, "{", "v", "c.json").ok());
}

TEST_CASE("BERT text: what the basic tokenizer asks of characters") {
  CHECK(std::string(bert_text_unicode_version()) == "14.0.0");
  CHECK(is_bert_punctuation(U'$'));  // ASCII symbols count as punctuation
  CHECK(is_bert_punctuation(U'\u00bf'));
  CHECK_FALSE(is_bert_punctuation(U'\u00a9'));  // © is a symbol (So)
  CHECK(is_bert_control(U'\u200d'));            // Cf
  CHECK_FALSE(is_bert_control(U'\t'));
  CHECK(is_bert_whitespace(U'\u3000'));
  CHECK(is_bert_whitespace(U'\u2028'));        // Zl: Python's split() cuts words there
  CHECK_FALSE(is_bert_whitespace(U'\u200b'));  // a zero-width space is a format character
  std::string out;
  append_without_accents(out, U'\ud55c');  // 한: its jamo
  CHECK(out == "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab");
  out.clear();
  append_bert_lowercase(out, U'\u0130', false);  // İ: i and a combining dot
  CHECK(out == "i\xcc\x87");
}

}  // namespace attnviz
