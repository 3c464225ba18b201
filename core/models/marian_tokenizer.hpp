// Marian's tokenizer, as Hugging Face's MarianTokenizer (tokenization_marian.py) does it, with
// Debian's SentencePiece library (libsentencepiece) cutting the text.
//
// Files (a Marian model's folder): source.spm and target.spm, SentencePiece models of the source
// and target languages (the same file twice for a joint vocabulary), and vocab.json, one
// vocabulary for both sides: {"piece": id, ...}, holding "</s>" and "<unk>" ("<pad>" too, or
// config.json's pad token id is the pad). Everything is checked before use: sizes (at most
// 64 MiB a file, 2^22 pieces of at most 1,024 bytes), ids (0 .. size − 1, each once), valid UTF-8,
// and that SentencePiece reads each model. Errors name the file.
//
// Encoding a source text: a language code the text starts with (">>es<<", for the multilingual
// opus-mt models) is one token when the vocabulary holds it; the rest cut into pieces by
// source.spm, each piece's id from vocab.json (<unk> when it has none), then </s>. A target text
// is cut by target.spm, and ends with no </s> (what a class types is a translation begun).
// Decoding: pieces joined, "▁" read as a space, the first one dropped.
// Moses' punctuation normalizer, which MarianTokenizer applies when sacremoses is installed, is
// not applied (the shipped model was trained without it).
#pragma once

#include "core/base/status.hpp"
#include "core/models/model_tokens.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnviz {

class MarianTokenizer {
 public:
  static constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;
  static constexpr std::size_t kMaxTokens = std::size_t{1} << 22;
  static constexpr std::size_t kMaxTokenBytes = 1024;

  enum class Side { Source, Target };

  MarianTokenizer();
  ~MarianTokenizer();
  MarianTokenizer(MarianTokenizer&&) noexcept;
  MarianTokenizer& operator=(MarianTokenizer&&) noexcept;

  // Whether this build reads SentencePiece models (the native build with libsentencepiece, the
  // browser build with the same version compiled from Debian's source package).
  static bool available();
  // `folder` holds source.spm, target.spm and vocab.json; `pad` is config.json's pad_token_id
  // (-1: the vocabulary's "<pad>").
  static Result<MarianTokenizer> load_folder(const std::string& folder, int pad = -1);

  // The text's tokens as the model reads them: a source ends with </s>; a target does not.
  Result<std::vector<ModelToken>> tokenize(std::string_view text, Side side) const;
  // The ids SentencePiece and vocab.json give, as tokenize's (for the reference test).
  Result<std::vector<int>> encode(std::string_view text, Side side) const;

  int size() const { return static_cast<int>(pieces_.size()); }
  const std::string& piece(int id) const { return pieces_[static_cast<std::size_t>(id)]; }
  int find(std::string_view piece) const;   // its id, or -1
  int end() const { return end_; }          // </s>
  int unknown() const { return unknown_; }  // <unk>
  int pad() const { return pad_; }
  bool special(int id) const { return id == end_ || id == pad_ || id == unknown_; }
  // The text token `id` adds after `previous` (-1: the first): its piece, "▁" as a space (none
  // before the first word).
  std::string text_of(int previous, int id) const;

 private:
  struct Processors;
  std::unique_ptr<Processors> processors_;
  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int> id_of_;
  int end_ = -1, unknown_ = -1, pad_ = -1;
};

}  // namespace attnviz
