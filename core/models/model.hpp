// A model as the CLI and the app open it: the Transformer, its tokenizer, and its name.
//   llama2.c: the checkpoint's folder holds tokenizer.bin, or tok<vocab_size>.bin (stories260K's
//             tok512.bin); a text starts with BOS, and generation stops when BOS comes again
//             (as llama2.c's run.c).
//   GPT-2:    the folder holds vocab.json + merges.txt (or encoder.json + vocab.bpe); an empty
//             text starts with <|endoftext|>, which also ends generation.
//   BERT:     the folder holds vocab.txt (and tokenizer_config.json); a text is read as
//             [CLS] text [SEP], a pair as [CLS] a [SEP] b [SEP] (token type 1 on b's part).
//   Marian:   the folder holds source.spm, target.spm and vocab.json; the text is the source,
//             read as pieces then </s>; the decoder reads its start token (config.json's
//             decoder_start_token_id), then the target's pieces (read_target), and a translation
//             ends with </s>.
//   BART:     the folder holds GPT-2's vocab.json + merges.txt with <s> and </s>: the source is
//             <s> text </s>; the decoder reads its start token (</s>), then <s> and the target.
#pragma once

#include "core/base/status.hpp"
#include "core/models/bert_tokenizer.hpp"
#include "core/models/gpt2_tokenizer.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/hf_encoder_decoder.hpp"
#include "core/models/llama2c_tokenizer.hpp"
#include "core/models/marian_tokenizer.hpp"
#include "core/models/model_files.hpp"
#include "core/models/model_tokens.hpp"
#include "core/models/transformer.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attnviz {

class ModelTokenizer {
 public:
  // The tokenizer beside the model at `location`, checked against its vocabulary size (an
  // encoder–decoder's: with the tokens its config.json names).
  static Result<ModelTokenizer> load(const ModelLocation& location, int vocab_size,
                                     const EncoderDecoderTokens& special = {});

  // The text's tokens as the model reads them (llama2.c: BOS first; GPT-2: "<|endoftext|>" in
  // the text is the special token; BERT: [CLS] text [SEP], special tokens written in the text
  // read as such). A second text makes a pair, which only BERT reads (an error otherwise).
  Result<std::vector<ModelToken>> tokenize(std::string_view text,
                                           std::optional<std::string_view> second = {}) const;
  // The token an empty text starts with, and the one that ends a generated text (-1: none).
  int start_token() const;
  int stop_token() const;
  // BERT's [MASK] (-1 for the other tokenizers, or a vocabulary without it).
  int mask_token() const;
  // Whether the tokenizer reads sentence pairs (BERT).
  bool reads_pairs() const { return std::holds_alternative<BertTokenizer>(tokenizer_); }
  // Whether it reads a source and a target (an encoder–decoder's: Marian): tokenize() reads the
  // source, tokenize_target() the target (without the start token read_target puts first).
  bool reads_targets() const {
    return std::holds_alternative<MarianTokenizer>(tokenizer_) || sequence_end_ >= 0;
  }
  Result<std::vector<ModelToken>> tokenize_target(std::string_view text) const;
  // The bytes token `id` adds to a text after `previous` (llama2.c drops the space it puts
  // before a text, as run.c prints).
  std::string text_of(int previous, int id) const;
  // Token `id` alone, as a person reads it (model_tokens.hpp).
  std::string shown(int id) const;
  int size() const;
  // "GPT-2 byte-level BPE: 512 tokens, 255 merges (vocab.json, merges.txt)", ...
  std::string description() const;

 private:
  using Variant = std::variant<Llama2cTokenizer, Gpt2Tokenizer, BertTokenizer, MarianTokenizer>;
  Variant tokenizer_;
  std::string files_;
  int decoder_start_ = -1;  // an encoder–decoder's
  // BART's <s> and </s> around a text (GPT-2's tokenizer in an encoder–decoder); -1 otherwise.
  int sequence_begin_ = -1, sequence_end_ = -1;
  // A special token standing at byte `at` of the text (it covers none of it).
  ModelToken special_token(int id, int at) const;
  explicit ModelTokenizer(Variant tokenizer, std::string files)
      : tokenizer_(std::move(tokenizer)), files_(std::move(files)) {}
};

struct Model {
  std::string name;  // what a person calls it: the folder's or file's name ("stories260K")
  ModelLocation location;
  Transformer transformer;
  ModelTokenizer tokenizer;
};

// The model `path_or_name` names (model_files.hpp) with its tokenizer, or an error saying what
// is missing or wrong.
Result<Model> open_model(const std::string& path_or_name);

// The tokens the model reads for `text` (and `second`, a pair's second text: BERT): an empty text
// is the start token alone (when the tokenizer has one). No limit is applied: the caller keeps
// to the context.
Result<std::vector<ModelToken>> read_text(const Model& model, std::string_view text,
                                          std::optional<std::string_view> second = {});
// An encoder–decoder's target as its decoder reads it: the start token, then the text's pieces
// (teacher forcing: the translation so far). An error for a model that reads no target.
Result<std::vector<ModelToken>> read_target(const Model& model, std::string_view text);
// An encoder–decoder's generated target (greedy_translation's ids, the start token first) as the
// views list it: the start token special, each other token's bytes as the translation's text
// has them (ModelTokenizer::text_of) and its byte range in that text.
std::vector<ModelToken> target_tokens_of(const Model& model, std::span<const int> ids);
// The token types of `tokens` (BERT's: each token's sentence), for TransformerForward::run.
std::vector<int> token_types(std::span<const ModelToken> tokens);

// The text head roles are measured on when none is given: a children's story for llama2.c
// models (stories260K was trained on such), verses of the King James Bible for GPT-2's, a verse
// of Mark in the World English Bible for BERT's (bert-web never saw Mark; one sentence of a
// class's length, as an encoder reads in the app).
std::string_view default_role_text(const Model& model);
// detect_head_roles' probe for `text`: its tokens, 48 random tokens written twice (fewer in a
// short context), drawn from past llama2.c's special tokens.
Result<HeadRoleProbe> role_probe(const Model& model, std::string_view text);

}  // namespace attnviz
