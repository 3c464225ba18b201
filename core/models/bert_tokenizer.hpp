// BERT's tokenizer, as Hugging Face's BertTokenizer (tokenization_bert.py) does it.
//
// Files: `vocab.txt`, one token a line, its id its line's number from 0 (a token on two lines
// takes the later id, as the reference's dictionary does), and optionally
// `tokenizer_config.json`: do_lower_case (default true), strip_accents (null, true or false;
// null follows do_lower_case), tokenize_chinese_chars (default true). Everything is checked
// before use: the sizes (files of at most 64 MiB, at most 2^20 tokens of at most 1,024 bytes),
// UTF-8, and the special tokens [UNK], [CLS] and [SEP], which the vocabulary must hold ([PAD]
// and [MASK] may be missing). Errors name the file and the line or key.
//
// Encoding:
//   1. The special tokens the vocabulary holds ([CLS], [SEP], [MASK], [PAD], [UNK]) are cut out
//      of the text where they are written exactly so ("let there be [MASK]."), each that token.
//   2. The rest, by BERT's basic tokenizer (core/models/bert_text.hpp): NUL, U+FFFD and control
//      characters dropped, white space separating words, CJK ideographs each a word, the text
//      in Unicode's NFC (transformers 4.29 and later: "e" + U+0301 is "é"); then each
//      word lower-cased (with do_lower_case; a capital sigma by Python's final-sigma rule) and
//      its accents stripped (NFD less nonspacing marks, unless strip_accents is false), and
//      punctuation split off as words of their own.
//   3. Each word by WordPiece: the longest piece of the vocabulary from its start, then the
//      longest "##" piece from where that ended, and so on; a word of more than 100 characters,
//      or one that cannot be cut so, is [UNK].
#pragma once

#include "core/base/status.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnviz {

class BertTokenizer {
 public:
  static constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;
  static constexpr std::size_t kMaxTokens = std::size_t{1} << 20;
  static constexpr std::size_t kMaxTokenBytes = 1024;
  static constexpr std::size_t kMaxWordCharacters =
      100;  // the reference's max_input_chars_per_word

  struct Options {
    bool lower_case = true;
    std::optional<bool> strip_accents;  // none: as lower_case
    bool split_cjk = true;
  };

  // `folder` holds vocab.txt and, optionally, tokenizer_config.json.
  static Result<BertTokenizer> load_folder(const std::string& folder);
  // The same from the files' contents (`config_text` "" when there is none); the paths only name
  // them in messages.
  static Result<BertTokenizer> parse(std::string_view vocab_text, std::string_view config_text,
                                     const std::string& vocab_path, const std::string& config_path);

  int size() const { return static_cast<int>(tokens_.size()); }
  const std::string& token(int id) const { return tokens_[static_cast<std::size_t>(id)]; }
  int find(std::string_view token) const;  // its id, or -1
  int unk() const { return unk_; }
  int cls() const { return cls_; }
  int sep() const { return sep_; }
  int pad() const { return pad_; }    // -1 when the vocabulary has none
  int mask() const { return mask_; }  // -1 when the vocabulary has none
  bool special(int id) const {
    return id == unk_ || id == cls_ || id == sep_ || id == pad_ || id == mask_;
  }
  const Options& options() const { return options_; }

  // A token with the bytes of the text it came from: a word's pieces share its word's bytes
  // (`first_piece` on the first), a special token written in the text its own.
  struct Piece {
    int id = 0;
    std::size_t byte_begin = 0, byte_end = 0;
    bool first_piece = true;
  };
  // The text's tokens, without [CLS] and [SEP] around them.
  std::vector<Piece> tokenize(std::string_view text) const;
  std::vector<int> encode(std::string_view text) const;

  // What the model reads: [CLS] a [SEP], or [CLS] a [SEP] b [SEP] with token type 1 on b and its
  // [SEP].
  struct Input {
    std::vector<int> ids;
    std::vector<int> types;
  };
  Input encode_for_model(std::string_view a, std::optional<std::string_view> b = {}) const;

  // The words of the basic tokenizer (step 2 above): for the tests and the CLI's `tokens`.
  std::vector<std::string> basic_words(std::string_view text) const;

 private:
  BertTokenizer() = default;
  // Appends the pieces of one basic word (`word`, from text bytes [begin, end)).
  void word_pieces(const std::string& word, std::size_t begin, std::size_t end,
                   std::vector<Piece>& out) const;
  // The basic tokenizer's words of text[begin, end), with their byte ranges in `text`.
  struct Word {
    std::string text;
    std::size_t byte_begin = 0, byte_end = 0;
  };
  void basic_tokenize(std::string_view text, std::size_t begin, std::size_t end,
                      std::vector<Word>& out) const;

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> ids_;
  Options options_;
  int unk_ = -1, cls_ = -1, sep_ = -1, pad_ = -1, mask_ = -1;
};

}  // namespace attnviz
