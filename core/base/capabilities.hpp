// What a run of a model can do (core/pipeline/run.hpp), which views and commands ask before
// they show or offer anything: the table of views (core/figures/views.hpp) names what each view
// needs, so that no view asks which kind of model is loaded. Here, in the bottom room, so that
// every room may name them.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace attnviz {

// -----------------------------------------------------------------------------
// Capabilities: what a view may ask of a run
// -----------------------------------------------------------------------------
enum class Capability : std::uint32_t {
  // The scenario's own W_Q, W_K, W_V, W_O and settings, edited in the Weights panel
  // (Scenario::parameters); the Cheaper attention view's methods run on them.
  EditableParameters = 1u << 0,
  // X comes from the teaching lexicon: named dimensions, embedding sources (Geometry's flat and
  // space plots, the Neuron view's features).
  LexiconEmbeddings = 1u << 1,
  // A second sentence may give the keys and values (cross-attention of the one-layer scenario).
  SourceSentence = 1u << 2,
  // Trained weights (trained_model()): a tokenizer with ids, the transformer's config and weights.
  TrainedWeights = 1u << 3,
  // Per-head weight blocks and token embeddings changed by hand (ModelSpec::weight_edits).
  EditableModelWeights = 1u << 4,
  // Heads can be knocked out, scaled or given a pattern (ModelSpec::interventions).
  HeadInterventions = 1u << 5,
  // Logits for the next token at every position (trained_forward()->logits).
  PredictsNextToken = 1u << 6,
  // A block with norms, an MLP and a residual stream (stream_of()); the logit lens.
  ResidualStream = 1u << 7,
  // Every head's detected role (roles()).
  HeadRoles = 1u << 8,
  // Special tokens may be hidden from the attention views.
  HidesSpecialTokens = 1u << 9,
  // Its weights can be trained in the app (none yet: issue 41).
  Trainable = 1u << 10,
  // An encoder's masked-language-model head: the likeliest tokens at any position, a [MASK]
  // among them (trained_forward()->logits at that position).
  FillsMask = 1u << 11,
  // A second sentence read with the first (BERT's pairs: ModelSpec::text_b, token types).
  SentencePairs = 1u << 12,
  // Logits at every position from the model's read-out (a decoder's next token, or an encoder's
  // MLM head): what the logit lens reads every layer's stream through.
  ReadsOutTokens = 1u << 13,
  // An encoder–decoder (a translation model): the scenario's text is the source its encoder
  // reads, the decoder reads a target (ModelSpec::decoder_text, or its own greedy translation:
  // translation()), and the views show one of its three kinds of attention (ModelSpec::part).
  SourceAndTarget = 1u << 14,
};

class Capabilities {
 public:
  constexpr Capabilities() = default;
  constexpr Capabilities(std::initializer_list<Capability> list) {
    for (const Capability c : list) bits_ |= static_cast<std::uint32_t>(c);
  }
  constexpr bool has(Capability c) const { return (bits_ & static_cast<std::uint32_t>(c)) != 0; }
  constexpr bool has_all(Capabilities other) const { return (bits_ & other.bits_) == other.bits_; }
  constexpr bool has_any(Capabilities other) const { return (bits_ & other.bits_) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(const Capabilities&) const = default;

 private:
  std::uint32_t bits_ = 0;
};

}  // namespace attnviz
