// A model's tokens as the app and the CLI show them, the same for every tokenizer
// (Gpt2Tokenizer, Llama2cTokenizer): each token's id, its raw bytes, the bytes of the input
// text it covers, and the token written as a person reads it.
//
// Byte ranges: the tokens' ranges tile the input text in order, every text byte covered by
// exactly one token; a token that covers no text byte has an empty range where it stands
// (llama2.c's BOS; a leading space llama2.c adds on its own).
//
// `shown`, as a person reads a token:
//   - a space is "␣" (U+2423), a newline "↵" (U+21B5), a tab "→" (U+2192), a carriage return
//     "␍" (U+240D); the other control characters are their Control Pictures (U+2400 + code,
//     DEL "␡"), so that no token looks empty or runs into the next line;
//   - byte-level vocabularies store bytes as stand-in characters (GPT-2's "Ġ" is a space, "Ã©"
//     the two bytes of "é"): `shown` is written from the raw bytes, so those read as the text;
//   - a character whose UTF-8 bytes are split across tokens (an emoji or a CJK character that
//     the vocabulary holds no whole token for) is shown whole on the token that holds its first
//     byte; a token holding later bytes of a character begun in an earlier token shows "⋯"
//     (U+22EF) once in their place. No token shows a replacement character for a split
//     character;
//   - a character that shows no glyph of its own (format characters, spaces other than U+0020,
//     line separators, C1 controls, variation selectors) is named in angle brackets: "<NBSP>",
//     "<ZWJ>", "<ZWSP>", "<ZWNJ>", "<LRM>", "<RLM>", "<SHY>", "<BOM>", "<VS15>", "<VS16>", or
//     its code point ("<U+3000>"); a combining mark that begins what a token shows is put on
//     a dotted circle ("◌́"), as typography shows a mark alone;
//   - a byte that is part of no valid UTF-8 character (the input was not valid UTF-8) is
//     "<0xHH>", as llama2.c names its byte tokens;
//   - a special token (BOS, <|endoftext|>) is shown by its name ("<s>", "<|endoftext|>").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

struct ModelToken {
  int id = 0;
  std::string bytes;   // the token's raw bytes (a byte-fallback token: its one byte)
  std::string shown;   // as a person reads it (see above)
  int byte_begin = 0;  // the bytes [byte_begin, byte_end) of the input text it covers
  int byte_end = 0;
  bool special = false;  // BOS, <|endoftext|>, [CLS], [SEP], [MASK], ...
  // BERT's sentence pairs: 0 for the first text (and [CLS]), 1 for the second; the byte range is
  // in the text the token came from. BERT's token type is this.
  int sentence = 0;
};

// The longest text the tokenizers' tokenize() takes (byte ranges are ints).
inline constexpr std::size_t kMaxTokenizedTextBytes = std::size_t{1} << 30;

// The length of the valid UTF-8 character (RFC 3629: no overlong forms, surrogates or code
// points past U+10FFFF) that starts at `at`, or 0 when the bytes there are not one.
std::size_t utf8_character_length(std::string_view text, std::size_t at);
// The code point of a valid UTF-8 character (1 to 4 bytes, as utf8_character_length found).
std::uint32_t decode_code_point(std::string_view character);
// Appends a code point (at most U+10FFFF, no surrogate) as UTF-8.
void append_code_point(std::string& out, std::uint32_t code_point);

// Writes each non-special token's `shown` from the `bytes` of the tokens in order (see above).
// Special tokens keep the `shown` they have, and a character never spans one.
void show_tokens(std::vector<ModelToken>& tokens);

}  // namespace attnviz
