// Tokenizer implementation. Index:
//   [SECTION] Character classes
//   [SECTION] Tokenize
#include "core/text/tokenizer.hpp"

namespace attnviz {

namespace {

char32_t lowercase(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;     // Latin-1
  if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 32;  // Greek
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;                 // Cyrillic
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;                 // Ѐ..Џ
  return cp;
}

}  // namespace

std::string lowercase_key(std::string_view text) {
  std::string key;
  key.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 0;
    const char32_t cp = decode_utf8(text, offset, length);
    append_utf8(key, lowercase(cp));
    offset += length;
  }
  return key;
}

// -----------------------------------------------------------------------------
// [SECTION] Character classes
// -----------------------------------------------------------------------------
namespace {

enum class CharClass {
  Space,       // separates tokens
  Ignorable,   // dropped: bidi controls, soft hyphen, BOM
  Joiner,      // ZWJ, ZWNJ: kept inside a token
  Extend,      // combining marks, variation selectors, skin tones: stay with their base
  Word,        // letters and digits of any script
  Digit,       // ASCII digits (a Word character that also joins "3.14")
  Apostrophe,  // ' and U+2019: inside a word when between word characters
  Hyphen,      // - U+2010 U+2011: likewise
  NumberDot,   // . and , : inside a number when between digits
  Punctuation,
  Symbol,     // emoji and pictographs
  Regional,   // regional indicator letters: pairs form flags
  Ideograph,  // CJK ideographs: one token each
};

bool in(char32_t cp, char32_t low, char32_t high) {
  return cp >= low && cp <= high;
}

CharClass classify(char32_t cp) {
  if (cp < 0x80) {
    if (cp == ' ' || (cp >= '\t' && cp <= '\r')) return CharClass::Space;
    if (cp < 0x20 || cp == 0x7F) return CharClass::Ignorable;
    if (cp >= '0' && cp <= '9') return CharClass::Digit;
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_') return CharClass::Word;
    if (cp == '\'') return CharClass::Apostrophe;
    if (cp == '-') return CharClass::Hyphen;
    if (cp == '.' || cp == ',') return CharClass::NumberDot;
    return CharClass::Punctuation;
  }
  if (cp == 0x85 || cp == 0xA0 || cp == 0x1680 || in(cp, 0x2000, 0x200B) || cp == 0x2028 ||
      cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000)
    return CharClass::Space;
  if (cp == 0x200C || cp == 0x200D) return CharClass::Joiner;
  if (cp == 0xAD || in(cp, 0x80, 0x9F) || cp == 0x200E || cp == 0x200F || in(cp, 0x202A, 0x202E) ||
      in(cp, 0x2060, 0x2064) || in(cp, 0x2066, 0x206F) || cp == 0xFEFF || cp == 0xFFFE ||
      cp == 0xFFFF)
    return CharClass::Ignorable;
  if (in(cp, 0x300, 0x36F) || in(cp, 0x483, 0x489) || in(cp, 0x591, 0x5BD) ||
      in(cp, 0x610, 0x61A) || in(cp, 0x64B, 0x65F) || in(cp, 0x1AB0, 0x1AFF) ||
      in(cp, 0x1DC0, 0x1DFF) || in(cp, 0x20D0, 0x20FF) || in(cp, 0xFE00, 0xFE0F) ||
      in(cp, 0xFE20, 0xFE2F) || in(cp, 0x1F3FB, 0x1F3FF) || in(cp, 0xE0020, 0xE007F) ||
      in(cp, 0xE0100, 0xE01EF))
    return CharClass::Extend;
  if (cp == 0x2019) return CharClass::Apostrophe;
  if (cp == 0x2010 || cp == 0x2011 || cp == 0x05BE)
    return CharClass::Hyphen;  // ‐ ‑ and Hebrew's maqaf
  if (in(cp, 0x1F1E6, 0x1F1FF)) return CharClass::Regional;
  if (in(cp, 0x1F000, 0x1FAFF) || in(cp, 0x2600, 0x27BF) || in(cp, 0x2B00, 0x2BFF) ||
      in(cp, 0x2190, 0x21FF) || in(cp, 0x2300, 0x23FF) || in(cp, 0x25A0, 0x25FF))
    return CharClass::Symbol;
  if (in(cp, 0x4E00, 0x9FFF) || in(cp, 0x3400, 0x4DBF) || in(cp, 0xF900, 0xFAFF) ||
      in(cp, 0x20000, 0x2FFFF) || in(cp, 0x30000, 0x3134F))
    return CharClass::Ideograph;
  if (in(cp, 0xA1, 0xBF) || cp == 0xD7 || cp == 0xF7 || cp == 0x37E || cp == 0x387 ||
      in(cp, 0x55A, 0x55F) || cp == 0x589 || cp == 0x5BE || cp == 0x5C0 || cp == 0x5C3 ||
      cp == 0x5F3 || cp == 0x5F4 || in(cp, 0x60C, 0x60D) || cp == 0x61B || cp == 0x61F ||
      in(cp, 0x66A, 0x66D) || cp == 0x6D4 || in(cp, 0x964, 0x965) || in(cp, 0x2012, 0x2027) ||
      in(cp, 0x2030, 0x205E) || in(cp, 0x2200, 0x22FF) || in(cp, 0x2E00, 0x2E7F) ||
      in(cp, 0x3001, 0x3003) || in(cp, 0x3008, 0x3011) || in(cp, 0x3014, 0x301F) ||
      in(cp, 0xFF01, 0xFF0F) || in(cp, 0xFF1A, 0xFF20) || in(cp, 0xFF3B, 0xFF40) ||
      in(cp, 0xFF5B, 0xFF65))
    return CharClass::Punctuation;
  return CharClass::Word;  // letters of every script, and U+FFFD in place of invalid bytes
}

bool is_word_class(CharClass c) {
  return c == CharClass::Word || c == CharClass::Digit;
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Tokenize
// -----------------------------------------------------------------------------
namespace {

struct CodePoint {
  char32_t value;
  CharClass char_class;
  std::size_t begin, end;
  bool invalid;
};

std::vector<CodePoint> decode_all(std::string_view text, std::size_t& invalid_bytes) {
  std::vector<CodePoint> code_points;
  code_points.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 0;
    const char32_t cp = decode_utf8(text, offset, length);
    const bool invalid = is_invalid_byte(cp, length);
    if (invalid) ++invalid_bytes;
    code_points.push_back({cp, classify(cp), offset, offset + length, invalid});
    offset += length;
  }
  return code_points;
}

// Builds tokens one at a time; `open` is true while the last token may still grow.
class TokenBuilder {
 public:
  TokenBuilder(std::string_view text, std::size_t max_tokens, Tokenization& out)
      : text_(text), max_tokens_(max_tokens), out_(out) {}

  bool open() const { return open_; }
  TokenKind open_kind() const { return kind_; }
  char32_t last_code_point() const { return last_; }
  int regional_count() const { return regional_count_; }

  void start(const CodePoint& cp, TokenKind kind) {
    close();
    open_ = true;
    kind_ = kind;
    text_buffer_.clear();
    begin_ = cp.begin;
    regional_count_ = 0;
    append(cp);
  }
  void append(const CodePoint& cp) {
    if (cp.invalid)
      append_utf8(text_buffer_, kReplacementCharacter);
    else
      text_buffer_.append(text_.substr(cp.begin, cp.end - cp.begin));
    end_ = cp.end;
    last_ = cp.value;
    if (cp.char_class == CharClass::Regional) ++regional_count_;
  }
  void close() {
    if (!open_) return;
    open_ = false;
    ++out_.total_tokens;
    if (out_.tokens.size() >= max_tokens_) return;
    Token token;
    token.key = lowercase_key(text_buffer_);
    token.text = text_buffer_;
    token.byte_begin = begin_;
    token.byte_end = end_;
    token.kind = kind_;
    out_.tokens.push_back(std::move(token));
  }

 private:
  std::string_view text_;
  std::size_t max_tokens_;
  Tokenization& out_;
  bool open_ = false;
  TokenKind kind_ = TokenKind::Word;
  std::string text_buffer_;
  std::size_t begin_ = 0, end_ = 0;
  char32_t last_ = 0;
  int regional_count_ = 0;
};

}  // namespace

Tokenization tokenize(std::string_view text, std::size_t max_tokens) {
  Tokenization result;
  const std::vector<CodePoint> cps = decode_all(text, result.invalid_utf8_bytes);
  TokenBuilder builder(text, max_tokens, result);
  const auto next_class = [&](std::size_t i) {
    return i + 1 < cps.size() ? cps[i + 1].char_class : CharClass::Space;
  };

  for (std::size_t i = 0; i < cps.size(); ++i) {
    const CodePoint& cp = cps[i];
    const bool word_open = builder.open() && builder.open_kind() == TokenKind::Word;
    switch (cp.char_class) {
      case CharClass::Space:
        builder.close();
        break;
      case CharClass::Ignorable:
        break;
      case CharClass::Joiner:
        if (builder.open()) builder.append(cp);
        break;
      case CharClass::Extend:
        if (builder.open())
          builder.append(cp);
        else
          builder.start(cp, TokenKind::Word);
        break;
      case CharClass::Word:
      case CharClass::Digit:
        if (word_open)
          builder.append(cp);
        else
          builder.start(cp, TokenKind::Word);
        break;
      case CharClass::Apostrophe:
      case CharClass::Hyphen:
        if (word_open && is_word_class(next_class(i)))
          builder.append(cp);
        else
          builder.start(cp, TokenKind::Punctuation);
        break;
      case CharClass::NumberDot: {
        const char32_t last = builder.last_code_point();
        if (word_open && last >= '0' && last <= '9' && next_class(i) == CharClass::Digit)
          builder.append(cp);
        else
          builder.start(cp, TokenKind::Punctuation);
        break;
      }
      case CharClass::Punctuation:
        builder.start(cp, TokenKind::Punctuation);
        break;
      case CharClass::Symbol:
        if (builder.open() && builder.open_kind() == TokenKind::Symbol &&
            builder.last_code_point() == 0x200D)
          builder.append(cp);  // ZWJ sequence: 👩‍💻 is one token
        else
          builder.start(cp, TokenKind::Symbol);
        break;
      case CharClass::Regional:
        if (builder.open() && builder.open_kind() == TokenKind::Symbol &&
            builder.regional_count() == 1)
          builder.append(cp);  // the second letter of a flag
        else
          builder.start(cp, TokenKind::Symbol);
        break;
      case CharClass::Ideograph:
        builder.start(cp, TokenKind::Ideograph);
        break;
    }
  }
  builder.close();
  return result;
}

}  // namespace attnviz
