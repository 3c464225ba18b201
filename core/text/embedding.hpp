// Token embeddings and positional encoding: the rows of X.
//
// A token's vector is, in order of precedence:
//   1. an explicit override from the scenario, matched by the token's exact text, then by its
//      lower-cased key;
//   2. its teaching-lexicon features (dimension f = feature f, e.g. 0 = person, 1 = food), with
//      the dimensions past the features filled by the word's own hashed values at 0.1 scale;
//   3. otherwise a deterministic vector derived from the word's key alone: uniform in
//      [-0.5, 0.5), the same on every run and machine, and the same prefix for every d_model.
#pragma once

#include "core/base/types.hpp"
#include "core/text/tokenizer.hpp"

#include <map>
#include <string>
#include <vector>

namespace attnviz {

using EmbeddingOverrides = std::map<std::string, std::vector<float>, std::less<>>;

enum class EmbeddingSource { Override, Lexicon, Hashed };
std::string_view to_string(EmbeddingSource source);

// Writes the default (lexicon or hashed) embedding of `key` into out[0..d_model).
EmbeddingSource default_embedding(std::string_view key, int d_model, float* out);

// Fills X (n_tokens, d_model), one row per token, and adds positional encoding if asked.
// `sources`, when given, receives where each row came from. Allocates only when the shape
// changes. An override shorter than d_model fills its leading dimensions only.
void embed_tokens(const std::vector<Token>& tokens, int d_model,
                  const EmbeddingOverrides& overrides, Positional positional,
                  Matrix& X /* (n_tokens, d_model) */,
                  std::vector<EmbeddingSource>* sources = nullptr);

// What a class should know about the words of a sentence that neither the teaching lexicon nor
// the scenario gives features: their embeddings are random (hashed), so whatever attends to them,
// or whatever they attend to, means nothing yet. "" when every word has features. Only words
// count (punctuation and symbols are hashed on purpose). Names up to four words, in order, once
// each: "\"le\", \"chat\" and \"mange\" are not in the teaching lexicon: they have random
// features ...".
std::string random_features_note(const std::vector<Token>& tokens,
                                 const std::vector<EmbeddingSource>& sources);

// X[pos, 2i] += sin(pos / 10000^(2i/d_model)); X[pos, 2i+1] += cos(pos / 10000^(2i/d_model)).
void add_sinusoidal_positions(Matrix& X /* (n_tokens, d_model) */);

}  // namespace attnviz
