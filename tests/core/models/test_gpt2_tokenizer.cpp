// GPT-2's byte-level BPE (core/models/gpt2_tokenizer.hpp) on small vocabulary and merges files
// the tests write, with every expected piece and id worked out by hand from encoder.py's
// algorithm (the pre-tokenizer's pieces also checked once with Python's `regex` module);
// damaged files refused with messages naming the file and the line or key; and the tokens as
// a person reads them (model_tokens.hpp), for GPT-2 and for llama2.c's tokenizer.
// The pre-tokenizer is also compared with PCRE2 on random texts.
// GPT-2's real files are compared with the reference encoder by tests/reference/gpt2-tokenizer/.
#include "core/base/rng.hpp"
#include "core/models/gpt2_tokenizer.hpp"
#include "core/models/llama2c_tokenizer.hpp"
#include "core/models/model_tokens.hpp"
#include "tests/support/temp_dir.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <doctest/doctest.h>
#include <pcre2.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Pieces = std::vector<std::string>;

// encoder.py's bytes_to_unicode(), written out here: the printable bytes stand for themselves,
// the others for U+0100, U+0101, ... in byte order.
std::string byte_symbol(unsigned byte) {
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> all(256);
    unsigned next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const unsigned code_point = printable ? b : next++;
      std::string utf8;
      if (code_point < 0x80) {
        utf8 += static_cast<char>(code_point);
      } else {
        utf8 += static_cast<char>(0xC0 | (code_point >> 6));
        utf8 += static_cast<char>(0x80 | (code_point & 0x3F));
      }
      all[b] = utf8;
    }
    return all;
  }();
  return symbols[byte];
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The 256 byte tokens (id = the byte), then `extra` tokens (written in the byte alphabet) from
// id 256 on, then <|endoftext|>.
std::string vocabulary(const std::vector<std::string>& extra) {
  std::string json = "{";
  int id = 0;
  const auto add = [&](const std::string& symbols) {
    if (id > 0) json += ", ";
    json += json_string(symbols) + ": " + std::to_string(id);
    ++id;
  };
  for (unsigned b = 0; b < 256; ++b) add(byte_symbol(b));
  for (const std::string& token : extra) add(token);
  add("<|endoftext|>");
  return json + "}";
}

// Ids of the extra tokens of the hand vocabulary below (those the tests name: "ll" is 257,
// "hell" 258, "Ġw" 260, "or" 261).
constexpr int kHe = 256, kHello = 259, kSpaceWor = 262, kAb = 263, kAba = 264, kAa = 265,
              kAaaa = 266, kCopyrightA = 267, kEndOfText = 268;
const std::vector<std::string> kHandTokens = {"he",   "ll", "hell", "hello", "Ġw",   "or",
                                              "Ġwor", "ab", "aba",  "aa",    "aaaa", "©a"};
// In order of rank. "ab a" ranks before "a b": a rank order no trained file has, which tells
// encoder.py's rounds (merge every occurrence of the best pair, then look again) from a
// merge-one-at-a-time shortcut.
const std::string kHandMerges =
    "#version: 0.2\nh e\nl l\nhe ll\nhell o\nĠ w\no r\nĠw or\nab a\na b\na a\naa aa\n© a\n";

struct Files {
  testing::TempDir dir;
  fs::path vocab = dir.path / "vocab.json";
  fs::path merges = dir.path / "merges.txt";
  Files(const std::string& vocab_text, const std::string& merges_text) {
    std::ofstream(vocab, std::ios::binary) << vocab_text;
    std::ofstream(merges, std::ios::binary) << merges_text;
  }
};

Gpt2Tokenizer hand_tokenizer() {
  Files files(vocabulary(kHandTokens), kHandMerges);
  Result<Gpt2Tokenizer> tokenizer =
      Gpt2Tokenizer::load(files.vocab.string(), files.merges.string());
  REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.error());
  return std::move(*tokenizer);
}

std::string load_error(const std::string& vocab_text, const std::string& merges_text) {
  Files files(vocab_text, merges_text);
  Result<Gpt2Tokenizer> tokenizer =
      Gpt2Tokenizer::load(files.vocab.string(), files.merges.string());
  REQUIRE_FALSE(tokenizer.ok());
  return tokenizer.error();
}

Pieces pieces(const Gpt2Tokenizer& tokenizer, const std::string& text) {
  Pieces out;
  for (const auto& [begin, end] : tokenizer.split(text))
    out.push_back(text.substr(begin, end - begin));
  return out;
}

std::vector<int> ids_of(const std::string& text) {
  std::vector<int> ids;
  for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

void check_tiles(const std::vector<ModelToken>& tokens, std::size_t text_size) {
  int at = 0;
  for (const ModelToken& token : tokens) {
    CHECK(token.byte_begin == at);
    CHECK(token.byte_end >= token.byte_begin);
    at = token.byte_end;
  }
  CHECK(at == static_cast<int>(text_size));
}

}  // namespace

TEST_CASE("GPT-2's pre-tokenizer: contractions, letters, numbers, symbols, white space") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  CHECK(pieces(tokenizer, "I'm here's") == Pieces{"I", "'m", " here", "'s"});
  CHECK(pieces(tokenizer, "we'll've") == Pieces{"we", "'ll", "'ve"});
  CHECK(pieces(tokenizer, "IT'S") == Pieces{"IT", "'", "S"});  // contractions are lower case
  CHECK(pieces(tokenizer, "Hello  world") == Pieces{"Hello", " ", " world"});
  CHECK(pieces(tokenizer, "a\n\nb") == Pieces{"a", "\n", "\n", "b"});
  CHECK(pieces(tokenizer, "x  ") == Pieces{"x", "  "});
  CHECK(pieces(tokenizer, "  x") == Pieces{" ", " x"});
  CHECK(pieces(tokenizer, "123 4567") == Pieces{"123", " 4567"});
  CHECK(pieces(tokenizer, "caf\xC3\xA9 2024!!") == Pieces{"caf\xC3\xA9", " 2024", "!!"});
  // A combining accent (category Mn) is neither a letter nor a number.
  CHECK(pieces(tokenizer, "e\xCC\x81te") == Pieces{"e", "\xCC\x81", "te"});
  CHECK(pieces(tokenizer, "").empty());
}

TEST_CASE("GPT-2's pre-tokenizer: \\s is Unicode's White_Space, as in encoder.py") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  // U+0085 (NEL) is white space: the space before it stays alone.
  CHECK(pieces(tokenizer,
               "a \xC2\x85"
               "b") == Pieces{"a", " ", "\xC2\x85", "b"});
  // U+FEFF (BOM) is not: it is a symbol, after an optional space.
  CHECK(pieces(tokenizer,
               "a \xEF\xBB\xBF"
               "b") == Pieces{"a", " \xEF\xBB\xBF", "b"});
  // U+3000, the ideographic space, is.
  CHECK(pieces(tokenizer,
               "a\xE3\x80\x80\xE3\x80\x80"
               "b") == Pieces{"a", "\xE3\x80\x80", "\xE3\x80\x80", "b"});
}

TEST_CASE("GPT-2's pre-tokenizer: invalid UTF-8 splits as U+FFFD would, and nothing is lost") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  CHECK(pieces(tokenizer,
               "ab\xFF"
               "cd") == Pieces{"ab", "\xFF", "cd"});
  CHECK(pieces(tokenizer, " \xFF\xFE!") == Pieces{" \xFF\xFE!"});
  CHECK(pieces(tokenizer, "a\xE2\x82") == Pieces{"a", "\xE2\x82"});  // a cut character
  CHECK(pieces(tokenizer, "\xC0\xAF") == Pieces{"\xC0\xAF"});        // an overlong '/'
  for (const std::string text : {"ab\xFF"
                                 "cd",
                                 " \xFF\xFE!", "a\xE2\x82", "\xED\xA0\x80 x", "\xF4\x90\x80\x80"}) {
    const std::vector<int> ids = tokenizer.encode(text);
    Result<std::string> back = tokenizer.decode(ids);
    REQUIRE(back.ok());
    CHECK(*back == text);
  }
}

TEST_CASE("GPT-2's merges: the best-ranked pair first, each word as encoder.py merges it") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  CHECK(tokenizer.size() == 269);
  CHECK(tokenizer.merge_count() == 12);
  CHECK(tokenizer.end_of_text() == kEndOfText);
  // hello: h e -> he; l l -> ll; he ll -> hell; hell o -> hello.
  // " world": Ġ w -> Ġw; o r -> or; Ġw or -> Ġwor; then l and d have no merge.
  CHECK(tokenizer.encode("hello world") == std::vector<int>{kHello, kSpaceWor, 'l', 'd'});
  // "abab": "ab a" ranks first but is no pair yet; "a b" is merged at both places in one round,
  // and "ab ab" is no merge: ab ab (a one-at-a-time shortcut would reach aba b).
  CHECK(tokenizer.encode("abab") == std::vector<int>{kAb, kAb});
  // "aba": a b -> ab, then ab a -> aba.
  CHECK(tokenizer.encode("aba") == std::vector<int>{kAba});
  // Overlapping pairs merge from the left: aaa -> aa a; aaaa -> aa aa -> aaaa.
  CHECK(tokenizer.encode("aaa") == std::vector<int>{kAa, 'a'});
  CHECK(tokenizer.encode("aaaa") == std::vector<int>{kAaaa});
  CHECK(tokenizer.encode("aaaaa") == std::vector<int>{kAaaa, 'a'});
  // Pieces never merge across: "he he" is he, Ġ h e -> Ġ, he.
  CHECK(tokenizer.encode("he he") == std::vector<int>{kHe, ' ', kHe});
  CHECK(tokenizer.encode("").empty());
  // A second encoding of the same words (from the cache) is the same.
  CHECK(tokenizer.encode("hello hello") == std::vector<int>{kHello, ' ', kHello});
  CHECK(tokenizer.encode("hello") == std::vector<int>{kHello});
}

TEST_CASE("GPT-2's <|endoftext|>: text as the reference reads it, or the special token") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  const std::string text = "a<|endoftext|>b";
  // As text: a, then the symbols <|, endoftext, |> as pieces of bytes, then b.
  std::vector<int> as_text = ids_of("a<|endoftext|>b");
  CHECK(tokenizer.encode(text) == as_text);
  CHECK(tokenizer.encode(text, Gpt2Tokenizer::SpecialText::kAsSpecial) ==
        std::vector<int>{'a', kEndOfText, 'b'});
  Result<std::string> back = tokenizer.decode({'a', kEndOfText, 'b'});
  REQUIRE(back.ok());
  CHECK(*back == text);
  Result<std::string> wrong = tokenizer.decode({'a', 269});
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().find("269") != std::string::npos);
  CHECK_FALSE(tokenizer.decode({-1}).ok());
}

TEST_CASE("GPT-2's tokens as a person reads them, with byte ranges tiling the text") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  SUBCASE("a space is ␣; bytes, ranges and ids as encode() gives them") {
    const std::string text = "hello world";
    Result<std::vector<ModelToken>> tokens = tokenizer.tokenize(text);
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 4);
    const std::vector<std::string> bytes = {"hello", " wor", "l", "d"};
    const std::vector<std::string> shown = {"hello", "\xE2\x90\xA3wor", "l", "d"};
    const std::vector<std::pair<int, int>> ranges = {{0, 5}, {5, 9}, {9, 10}, {10, 11}};
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK((*tokens)[i].id == tokenizer.encode(text)[i]);
      CHECK((*tokens)[i].bytes == bytes[i]);
      CHECK((*tokens)[i].shown == shown[i]);
      CHECK((*tokens)[i].byte_begin == ranges[i].first);
      CHECK((*tokens)[i].byte_end == ranges[i].second);
      CHECK_FALSE((*tokens)[i].special);
    }
  }
  SUBCASE("newlines, tabs and control characters are visible") {
    Result<std::vector<ModelToken>> tokens = tokenizer.tokenize("a\tb\nc\r\x01\x7F");
    REQUIRE(tokens.ok());
    std::vector<std::string> shown;
    for (const ModelToken& token : *tokens) shown.push_back(token.shown);
    CHECK(shown == std::vector<std::string>{"a", "\xE2\x86\x92", "b", "\xE2\x86\xB5", "c",
                                            "\xE2\x90\x8D", "\xE2\x90\x81", "\xE2\x90\xA1"});
    check_tiles(*tokens, 8);
  }
  SUBCASE("a character split across tokens: whole on its first byte's token, ⋯ on the others") {
    // é is C3 A9 and no merge joins them; 🤗 is F0 9F A4 97.
    const std::string text = "\xC3\xA9\xF0\x9F\xA4\x97";
    Result<std::vector<ModelToken>> tokens = tokenizer.tokenize(text);
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 6);
    const std::string ellipsis = "\xE2\x8B\xAF";
    const std::vector<std::string> shown = {"\xC3\xA9", ellipsis, "\xF0\x9F\xA4\x97",
                                            ellipsis,   ellipsis, ellipsis};
    for (std::size_t i = 0; i < 6; ++i) {
      CHECK((*tokens)[i].shown == shown[i]);
      CHECK((*tokens)[i].bytes.size() == 1);
      CHECK((*tokens)[i].byte_begin == static_cast<int>(i));
    }
    check_tiles(*tokens, text.size());
  }
  SUBCASE("a token holding the end of one character and more: ⋯ then the rest") {
    // "éa": C3, then "©a" (A9 61) is a token.
    Result<std::vector<ModelToken>> tokens = tokenizer.tokenize(
        "\xC3\xA9"
        "a");
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 2);
    CHECK((*tokens)[0].shown == "\xC3\xA9");
    CHECK((*tokens)[1].id == kCopyrightA);
    CHECK((*tokens)[1].shown ==
          "\xE2\x8B\xAF"
          "a");
    CHECK((*tokens)[1].byte_begin == 1);
    CHECK((*tokens)[1].byte_end == 3);
  }
  SUBCASE("a byte of no character is <0xHH>") {
    Result<std::vector<ModelToken>> tokens = tokenizer.tokenize("a\xFF");
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 2);
    CHECK((*tokens)[1].shown == "<0xFF>");
    CHECK((*tokens)[1].bytes == "\xFF");
  }
  SUBCASE("<|endoftext|> as the special token: one token over its 13 bytes") {
    Result<std::vector<ModelToken>> tokens =
        tokenizer.tokenize("hello<|endoftext|>he", Gpt2Tokenizer::SpecialText::kAsSpecial);
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 3);
    CHECK((*tokens)[1].special);
    CHECK((*tokens)[1].id == kEndOfText);
    CHECK((*tokens)[1].shown == "<|endoftext|>");
    CHECK((*tokens)[1].byte_begin == 5);
    CHECK((*tokens)[1].byte_end == 18);
    CHECK((*tokens)[2].shown == "he");
    check_tiles(*tokens, 20);
  }
}

TEST_CASE("GPT-2's files: the folder's two layouts, and the #version line optional") {
  testing::TempDir dir;
  const std::string vocab = vocabulary(kHandTokens);
  SUBCASE("Hugging Face's names") {
    std::ofstream(dir.path / "vocab.json") << vocab;
    std::ofstream(dir.path / "merges.txt") << kHandMerges;
  }
  SUBCASE("OpenAI's names, no #version line, no final newline") {
    std::ofstream(dir.path / "encoder.json") << vocab;
    std::string merges = kHandMerges.substr(kHandMerges.find('\n') + 1);
    merges.pop_back();
    std::ofstream(dir.path / "vocab.bpe") << merges;
  }
  Result<Gpt2Tokenizer> tokenizer = Gpt2Tokenizer::load_folder(dir.path.string());
  REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.error());
  CHECK(tokenizer->merge_count() == 12);
  CHECK(tokenizer->encode("hello") == std::vector<int>{kHello});
}

TEST_CASE("GPT-2's files: an empty merges file is a vocabulary of bytes alone") {
  Files files(vocabulary({}), "");
  Result<Gpt2Tokenizer> tokenizer =
      Gpt2Tokenizer::load(files.vocab.string(), files.merges.string());
  REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.error());
  CHECK(tokenizer->merge_count() == 0);
  CHECK(tokenizer->encode("hi") == std::vector<int>{'h', 'i'});
}

TEST_CASE("GPT-2's folder: missing files are named") {
  testing::TempDir dir;
  Result<Gpt2Tokenizer> none = Gpt2Tokenizer::load_folder(dir.path.string());
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().find("vocab.json and merges.txt") != std::string::npos);
  std::ofstream(dir.path / "vocab.json") << vocabulary({});
  Result<Gpt2Tokenizer> half = Gpt2Tokenizer::load_folder(dir.path.string());
  REQUIRE_FALSE(half.ok());
  CHECK(half.error().find("has vocab.json but not merges.txt") != std::string::npos);
  Result<Gpt2Tokenizer> file = Gpt2Tokenizer::load_folder((dir.path / "vocab.json").string());
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().find("not a folder") != std::string::npos);
}

TEST_CASE("a damaged vocabulary is refused, naming the file and the key") {
  const std::string merges = "#version: 0.2\n";
  const auto error_of = [&](const std::string& vocab) { return load_error(vocab, merges); };
  const auto has = [](const std::string& message, const std::string& part) {
    INFO(message);
    CHECK(message.find(part) != std::string::npos);
  };
  has(error_of("{\"a\": 1,"), "vocab.json: not valid JSON");
  has(error_of("[1, 2]"), "not a JSON object");
  has(error_of("{\"a\": \"b\"}"), "the value of \"a\" is a string");
  has(error_of("{\"a\": 1.5}"), "the value of \"a\" is the number 1.5");
  has(error_of("{\"a\": {\"b\": 1}}"), "the value of \"a\" is an object");
  has(error_of("{}"), "no tokens");
  std::string vocab = vocabulary({"ab"});
  // An id past the end, an id twice, a key twice, an empty key.
  const auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  has(error_of(replace(vocab, "\"ab\": 256", "\"ab\": 300")),
      "\"ab\" has the id 300, outside 0 ... 257");
  has(error_of(replace(vocab, "\"ab\": 256", "\"ab\": -1")), "\"ab\" has the id -1");
  has(error_of(replace(vocab, "\"ab\": 256", "\"ab\": 99999999999999999999")),
      "the value of \"ab\" is the number 99999999999999999999, not a whole number");
  has(error_of(replace(vocab, "\"ab\": 256", "\"ab\": 5")),
      "\"\xC4\x85\" and \"ab\" both have the id 5");
  has(error_of(replace(vocab, "\"ab\": 256", "\"a\": 256")), "\"a\" is in the file twice");
  has(error_of(replace(vocab, "\"ab\": 256", "\"\": 256")), "an empty token");
  // A character outside the byte alphabet (U+0200), and a byte without its token.
  has(error_of(replace(vocab, "\"ab\": 256", "\"a\xC8\x80\": 256")),
      "U+0200 is not one of GPT-2's 256 byte symbols");
  has(error_of(replace(vocab, "\"\xC4\x8A\": 10", "\"\xC4\x8A\xC4\x8A\": 10")),
      "no token for the byte 0x0A");
  // Not a file, an empty file.
  testing::TempDir dir;
  Result<Gpt2Tokenizer> missing =
      Gpt2Tokenizer::load((dir.path / "nothing.json").string(), (dir.path / "m.txt").string());
  REQUIRE_FALSE(missing.ok());
  has(missing.error(), "nothing.json: cannot open");
  has(error_of(""), "vocab.json: not valid JSON");
}

TEST_CASE("a damaged merges file is refused, naming the file and the line") {
  const std::string vocab = vocabulary(kHandTokens);
  const auto error_of = [&](const std::string& merges) { return load_error(vocab, merges); };
  const auto has = [](const std::string& message, const std::string& part) {
    INFO(message);
    CHECK(message.find(part) != std::string::npos);
  };
  has(error_of("#version: 0.2\nh e\nh e l\n"),
      "merges.txt line 3: \"h e l\" is not two tokens separated by one space");
  has(error_of("h e\nhe\n"), "merges.txt line 2: \"he\" is not two tokens");
  has(error_of("h  e\n"), "line 1: \"h  e\" is not two tokens");
  has(error_of("h\te\n"), "line 1: \"h\\te\" is not two tokens");
  has(error_of("h e\n\nl l\n"), "merges.txt line 2: empty");
  has(error_of("h e\nhe xyz\n"), "line 2: \"xyz\" is not a token of");
  has(error_of("h e\nh l\n"), "line 2: the merge of \"h l\", \"hl\", is not a token of");
  has(error_of("h e\nl l\nh e\n"), "line 3: \"h e\" repeats line 1");
  has(error_of("h \xC8\x80\n"), "line 1: \"\xC8\x80\": its character U+0200 is not one of");
  // "#version" only on the first line.
  has(error_of("h e\n#version: 0.2\n"), "line 2: \"#version:\" is not a token of");
}

TEST_CASE("tokenizer files past the size limits are refused before they are read") {
  testing::TempDir dir;
  const fs::path huge = dir.path / "huge.json";
  std::ofstream(huge).put('{');
  fs::resize_file(huge, Gpt2Tokenizer::kMaxFileBytes + 1);  // sparse: nothing is written
  std::ofstream(dir.path / "merges.txt") << "";
  Result<Gpt2Tokenizer> tokenizer =
      Gpt2Tokenizer::load(huge.string(), (dir.path / "merges.txt").string());
  REQUIRE_FALSE(tokenizer.ok());
  CHECK(tokenizer.error().find("huge.json: 67108865 bytes, more than the 64 MiB") !=
        std::string::npos);
  // A token longer than 1,024 bytes.
  const std::string long_token(1025, 'a');
  CHECK(load_error(vocabulary({long_token}), "").find("is longer than 1024 bytes") !=
        std::string::npos);
}

TEST_CASE("llama2.c's tokens as a person reads them: BOS, the leading space, byte tokens") {
  const fs::path model_dir = fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/stories260K";
  Result<Llama2cTokenizer> tokenizer =
      Llama2cTokenizer::load((model_dir / "tok512.bin").string(), 512);
  REQUIRE_MESSAGE(tokenizer.ok(), tokenizer.error());
  SUBCASE("BOS is special and covers nothing; the leading space covers no text byte") {
    const std::string text = "Once upon a time";
    Result<std::vector<ModelToken>> tokens = tokenizer->tokenize(text);
    REQUIRE(tokens.ok());
    const std::vector<int> ids = tokenizer->encode(text);
    REQUIRE(tokens->size() == ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK((*tokens)[i].id == ids[i]);
    CHECK(tokens->front().special);
    CHECK(tokens->front().shown == "<s>");
    CHECK(tokens->front().byte_begin == 0);
    CHECK(tokens->front().byte_end == 0);
    // The first word carries the added space: " Once" reads "␣Once" and covers "Once".
    const ModelToken& first = (*tokens)[1];
    REQUIRE(!first.bytes.empty());
    CHECK(first.bytes.front() == ' ');
    CHECK(first.shown.rfind("\xE2\x90\xA3", 0) == 0);
    CHECK(first.byte_end - first.byte_begin == static_cast<int>(first.bytes.size()) - 1);
    std::string joined;
    for (std::size_t i = 1; i < tokens->size(); ++i) {
      CHECK_FALSE((*tokens)[i].special);
      joined += (*tokens)[i].bytes;
    }
    CHECK(joined == " " + text);
    check_tiles(*tokens, text.size());
  }
  SUBCASE("a character without a token is its bytes: whole on the first, ⋯ on the others") {
    const std::string text = "\xE2\x9C\x93";  // ✓, not in stories260K's 512 tokens
    Result<std::vector<ModelToken>> tokens = tokenizer->tokenize(text);
    REQUIRE(tokens.ok());
    // BOS, the leading space, then E2 9C 93 as byte tokens (id = byte + 3).
    REQUIRE(tokens->size() == 5);
    CHECK((*tokens)[1].bytes == " ");
    CHECK((*tokens)[1].byte_begin == 0);
    CHECK((*tokens)[1].byte_end == 0);
    CHECK((*tokens)[2].id == 0xE2 + 3);
    CHECK((*tokens)[2].bytes == "\xE2");
    CHECK((*tokens)[2].shown == text);
    CHECK((*tokens)[3].shown == "\xE2\x8B\xAF");
    CHECK((*tokens)[4].shown == "\xE2\x8B\xAF");
    CHECK((*tokens)[4].byte_begin == 2);
    check_tiles(*tokens, text.size());
  }
  SUBCASE("an empty text is BOS alone") {
    Result<std::vector<ModelToken>> tokens = tokenizer->tokenize("");
    REQUIRE(tokens.ok());
    REQUIRE(tokens->size() == 1);
    CHECK(tokens->front().special);
  }
}

TEST_CASE("llama2.c's tokenizer file: a vocabulary too small or without its byte tokens") {
  const fs::path path = fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/stories260K/tok512.bin";
  std::string bytes = testing::read_whole_file(path);
  Result<Llama2cTokenizer> small = Llama2cTokenizer::parse(bytes, "tok.bin", 100);
  REQUIRE_FALSE(small.ok());
  CHECK(small.error().find("tok.bin: a vocabulary of 100 tokens") != std::string::npos);
  // Token 3 must be the byte 0x00, where byte fallback looks for it.
  const std::size_t at = bytes.find("<0x00>");
  REQUIRE(at != std::string::npos);
  bytes.replace(at, 6, "<0xZZ>");
  Result<Llama2cTokenizer> moved = Llama2cTokenizer::parse(bytes, "tok.bin", 512);
  REQUIRE_FALSE(moved.ok());
  CHECK(moved.error().find("tok.bin: token 3 is not the byte <0x00>") != std::string::npos);
}

TEST_CASE("show_tokens: the convention on its own") {
  const auto token = [](std::string bytes) {
    ModelToken t;
    t.bytes = std::move(bytes);
    return t;
  };
  // A character split over three tokens, the middle holding nothing else; a special token
  // between two runs keeps its name.
  std::vector<ModelToken> tokens = {token("x\xE4"), token("\xBD"), token("\xA0y"), token("!")};
  ModelToken special;
  special.special = true;
  special.shown = "<|endoftext|>";
  tokens.insert(tokens.begin() + 3, special);
  show_tokens(tokens);
  CHECK(tokens[0].shown == "x\xE4\xBD\xA0");  // x 你
  CHECK(tokens[1].shown == "\xE2\x8B\xAF");
  CHECK(tokens[2].shown ==
        "\xE2\x8B\xAF"
        "y");
  CHECK(tokens[3].shown == "<|endoftext|>");
  CHECK(tokens[4].shown == "!");
  // Characters that show no glyph are named; a combining mark alone sits on a dotted circle.
  std::vector<ModelToken> invisible = {token("a\xC2\xA0"),
                                       token("\xE2\x80\x8D"),
                                       token("\xE3\x80\x80"),
                                       token("\xC2\x85"),
                                       token("\xEF\xBB\xBF\xF3\xA0\x84\x80"),
                                       token("\xCC\x81"),
                                       token("e\xCC\x81")};
  show_tokens(invisible);
  CHECK(invisible[0].shown == "a<NBSP>");
  CHECK(invisible[1].shown == "<ZWJ>");
  CHECK(invisible[2].shown == "<U+3000>");        // the ideographic space
  CHECK(invisible[3].shown == "<U+0085>");        // a C1 control
  CHECK(invisible[4].shown == "<BOM><U+E0100>");  // a variation selector of the last plane
  CHECK(invisible[5].shown == "\xE2\x97\x8C\xCC\x81");
  CHECK(invisible[6].shown == "e\xCC\x81");
  // A character cut by the end of the run is bytes of no character.
  std::vector<ModelToken> cut = {token("\xE4\xBD")};
  show_tokens(cut);
  CHECK(cut[0].shown == "<0xE4><0xBD>");
}

namespace {

// The pre-tokenizer's reference: GPT-2's pattern compiled by PCRE2 (which split() used before it
// was matched by hand, so that the browser build needs no regular expression library).
using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

// The length of the valid UTF-8 character at `at`, or 0 (RFC 3629), written again here.
std::size_t valid_length(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  std::uint32_t low = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2, low = 0x80;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3, low = 0x800;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4, low = 0x10000;
  else
    return 0;
  if (at + length > text.size()) return 0;
  std::uint32_t code_point = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(at + k) & 0xC0) != 0x80) return 0;
    code_point = code_point << 6 | (byte(at + k) & 0x3F);
  }
  if (code_point < low || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
    return 0;
  return length;
}

// GPT-2's pattern in PCRE2, \s spelled as Unicode's White_Space; an invalid byte replaced by
// U+FFFD before matching and the pieces mapped back to the text's bytes.
Ranges pcre2_pieces(const std::string& text) {
  const std::string ws =
      "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
      "\\x{202F}\\x{205F}\\x{3000}";
  const std::string pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + ws +
                              "\\p{L}\\p{N}]+|[" + ws + "]+(?![^" + ws + "])|[" + ws + "]+";
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  REQUIRE(code != nullptr);
  std::string subject;
  std::vector<std::size_t> original;  // subject offset -> text offset
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = valid_length(text, at);
    if (length == 0) {
      subject += "\xEF\xBF\xBD";
      original.insert(original.end(), 3, at);
      ++at;
    } else {
      subject.append(text, at, length);
      original.insert(original.end(), length, at);
      at += length;
    }
  }
  original.push_back(text.size());
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(code, nullptr);
  Ranges pieces;
  for (std::size_t at = 0; at < subject.size();) {
    const int found = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                                  subject.size(), at, 0, match, nullptr);
    REQUIRE(found > 0);
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    REQUIRE(ovector[0] == at);  // the matches tile the text
    REQUIRE(ovector[1] > at);
    pieces.emplace_back(original[ovector[0]], original[ovector[1]]);
    at = ovector[1];
  }
  pcre2_match_data_free(match);
  pcre2_code_free(code);
  return pieces;
}

// Every kind of character the pattern tells apart, and the bytes that are none.
const std::vector<std::string> kParts = {
    "a",
    "Z",
    "\xC3\xA9",
    "\xCE\xB1",
    "\xE4\xB8\xAD",
    "\xF0\x9D\x90\x80",  // letters (𝐀)
    "1",
    "\xD9\xA3",
    "\xC2\xBD",
    "\xE2\x85\xA2",  // numbers: ٣ ½ Ⅲ
    " ",
    " ",
    " ",
    "\t",
    "\n",
    "\r",
    "\x0B",
    "\xC2\x85",
    "\xC2\xA0",  // white space
    "\xE2\x80\x80",
    "\xE3\x80\x80",
    "\xE2\x80\xA8",  // U+2000 U+3000 U+2028
    "'",
    "s",
    "t",
    "re",
    "ve",
    "m",
    "ll",
    "d",
    "S",  // contractions' parts
    "!",
    ".",
    "-",
    "\xE2\x80\x94",
    "\xF0\x9F\x98\x80",
    "\xE2\x82\xAC",  // symbols: — 😀 €
    "\xCC\x81",
    "\xE2\x80\x8B",
    "\xEF\xBB\xBF",
    "\x1C",
    std::string(1, '\0'),  // mark, ZWSP, BOM, FS, NUL
    "\xEF\xBF\xBD",
    "\xFF",
    "\xC0",
    "\xE2\x82",
    "\xED\xA0\x80",  // U+FFFD, invalid
};

}  // namespace

TEST_CASE("GPT-2's pre-tokenizer: the pieces of 20000 random texts are PCRE2's") {
  const Gpt2Tokenizer tokenizer = hand_tokenizer();
  int differences = 0;
  for (std::uint64_t text_index = 0; text_index < 20000; ++text_index) {
    std::string text;
    const std::uint64_t parts = 1 + rng::mix(text_index) % 12;
    for (std::uint64_t k = 0; k < parts; ++k)
      text += kParts[rng::mix(rng::combine(text_index, k)) % kParts.size()];
    const Ranges ours = tokenizer.split(text);
    const Ranges reference = pcre2_pieces(text);
    if (ours != reference && differences++ < 5) {
      std::string hex;
      for (const char c : text) hex += " " + std::to_string(static_cast<unsigned char>(c));
      FAIL_CHECK("the pieces differ for the bytes" << hex);
    }
  }
  CHECK(differences == 0);
}

}  // namespace attnviz
