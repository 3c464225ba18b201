// The tokenizer: a sentence becomes words and punctuation marks.
//
// "I like Natural Language Processing, a lot!" -> I | like | Natural | Language | Processing
// | , | a | lot | ! (9 tokens). UTF-8 safe: a token never splits a code point, and combining
// marks, variation selectors, skin-tone modifiers and ZWJ emoji sequences stay with the
// character they modify. Rules, in order:
//   - white space (including U+00A0, U+2000..U+200B, U+3000) separates tokens;
//   - invisible format characters (bidi controls, soft hyphen, BOM) are dropped;
//   - letters and digits of any script form words; an apostrophe or hyphen between two word
//     characters stays inside the word ("don't", "well-known"), as does a '.' or ',' between
//     two digits ("3.14", "1,000");
//   - each punctuation mark, each CJK ideograph and each emoji (with its modifiers, flags as
//     pairs) is a token of its own;
//   - invalid UTF-8 bytes become U+FFFD and are counted.
// Display keeps the typed case; `key` is the lower-cased form used for lookups.
#pragma once

#include "core/text/utf8.hpp"  // tokens are UTF-8; callers of the tokenizer use both

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

enum class TokenKind { Word, Punctuation, Symbol, Ideograph };

struct Token {
  std::string text;  // as typed (U+FFFD in place of invalid bytes)
  std::string key;   // lower-cased (Latin, Greek, Cyrillic) for lexicon and override lookups
  std::size_t byte_begin = 0;  // [byte_begin, byte_end) in the input
  std::size_t byte_end = 0;
  TokenKind kind = TokenKind::Word;
};

struct Tokenization {
  std::vector<Token> tokens;     // at most max_tokens
  std::size_t total_tokens = 0;  // how many the text holds; > tokens.size() when truncated
  std::size_t invalid_utf8_bytes = 0;

  bool truncated() const { return total_tokens > tokens.size(); }
  std::size_t dropped_tokens() const { return total_tokens - tokens.size(); }
};

Tokenization tokenize(std::string_view text, std::size_t max_tokens);

// Lower-cases Latin (ASCII, Latin-1), Greek and Cyrillic capitals; leaves the rest unchanged.
std::string lowercase_key(std::string_view text);

}  // namespace attnviz
