// The plain reference of transformer_forward.hpp: the same model, one token at a time, in plain
// loops over floats (as llama2.c's run.c does it), with its own cache of keys and values and
// every intermediate of every position kept as vectors. No Eigen, no batching, no partial
// recomputes: the fast pass is tested against it (tests/core/models/), and stories260K's greedy
// text, which run.c prints, comes out of it exactly.
//
// For position i, per layer, in passes:
//   1. normalized = norm₁(x)                     (LayerNorm: (x − mean)/√(var + ε) · w + b;
//                                                 RMSNorm: x/√(mean(x²) + ε) · w)
//   2. q = normalized · W_Q + b_Q, k, v likewise; RoPE turns q and k (adjacent pairs) by i
//   3. per query head h with key/value head g: α_t = softmax_t(q_h · k_g,t / √d_head), t ≤ i
//      (or the intervention's pattern); out_h = scale_h · Σ_t α_t v_g,t
//   4. attention_output = out · W_O + b_O; x += attention_output
//   5. mlp_output = MLP(norm₂(x)); x += mlp_output
// then final = norm_f(x), logits = final · Eᵀ.
//
// An encoder (BERT) cannot go one token at a time: every position sees every other. encode()
// takes the whole text and goes layer by layer, each position in turn:
//   0. x = norm_e(token embedding + position embedding + token type embedding)
//   1.–3. as above, with normalized = x and α over every key t of the text
//   4. x = norm₁(x + attention_output)       5. x = norm₂(x + MLP(x))   (the norms after)
// then final = norm_f(gelu(x · head_transform + b)), logits = final · Eᵀ + bias (with the MLM
// head; without it, final = x and no logits).
//
// An encoder–decoder (Marian, BART): encode() runs the encoder (the token embedding × its
// scale, positions from row position_offset, the embedding norm when there is one); its final
// rows, given to the decoder's reference by set_memory(), are what step() attends to after each
// layer's self-attention (the norms after each sublayer, as the encoder's):
//   4c. c = norm_c(x + Σ_h softmax_t(q_h(x) · k_h(memory_t) / √d_head) v_h(memory_t) · W_Oc + b)
// and Marian's decoder has no final norm: final = x, logits = final · Eᵀ + final_logits_bias.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"
#include "core/models/transformer_forward.hpp"  // HeadIntervention

#include <vector>

namespace attnviz {

class ReferenceForward {
 public:
  explicit ReferenceForward(const Transformer& model);

  void set_intervention(int layer, int head, HeadIntervention intervention);
  void set_cross_intervention(int layer, int head, HeadIntervention intervention);
  // An encoder–decoder's decoder: the encoder's output rows (each d_model), what the
  // cross-attention reads; what was kept is dropped.
  void set_memory(std::vector<std::vector<float>> memory);

  // The logits for the token after `token`, the next position's (0, 1, 2, ...). An error past
  // the model's context, for an id outside the vocabulary, or for an encoder.
  Result<std::vector<float>> step(int token);
  // An encoder over the whole text (ids and their token types, empty: all 0), replacing what was
  // kept. An error for a decoder, or a text the model cannot read.
  Status encode(const std::vector<int>& tokens, const std::vector<int>& token_types);
  int positions() const { return static_cast<int>(kept_.size()); }

  // What position `position` computed at layer `layer`.
  struct LayerRow {
    std::vector<float> normalized;              // (d_model)
    std::vector<float> queries;                 // (n_heads · d_head), after RoPE
    std::vector<float> keys, values;            // (n_kv_heads · d_head), keys after RoPE
    std::vector<std::vector<float>> attention;  // per head: position + 1 weights (encoder: n)
    std::vector<float> head_outputs;            // (n_heads · d_head)
    std::vector<float> attention_output;        // (d_model)
    std::vector<float> residual_mid;            // (d_model)
    // An encoder–decoder's decoder: the cross-attention and the stream after it.
    std::vector<float> cross_queries;                 // (n_heads · d_head)
    std::vector<std::vector<float>> cross_attention;  // per head: n_source weights
    std::vector<float> cross_head_outputs;            // (n_heads · d_head)
    std::vector<float> cross_attention_output;        // (d_model)
    std::vector<float> residual_cross;                // (d_model)
    std::vector<float> mlp_output;                    // (d_model)
    std::vector<float> residual_out;                  // (d_model)
  };
  const LayerRow& row(int position, int layer) const;
  const std::vector<float>& final_normalized(int position) const;
  const std::vector<float>& logits(int position) const;

 private:
  const Transformer& model_;
  std::vector<HeadIntervention> interventions_;
  std::vector<HeadIntervention> cross_interventions_;
  std::vector<std::vector<float>> memory_;  // the encoder's output: n_source rows of d_model
  struct Kept {
    std::vector<LayerRow> layers;
    std::vector<float> final_normalized, logits;
  };
  std::vector<Kept> kept_;

  // Passes 3–4 of the query in `r` (its q, k and v computed) at position `position` of layer
  // `layer`, against the keys and values of `key_rows` (one per key, in order): α, the head
  // outputs and the attention output, into r.
  void attend(int layer, int position, const std::vector<const LayerRow*>& key_rows,
              LayerRow& r) const;
  // Pass 0: token `token`'s embedding at `position` (of token type `type`).
  std::vector<float> embed(int token, int position, int type = 0) const;
  // Pass 4c: the cross-attention of `r` (its residual_mid computed) to the memory.
  void attend_memory(int layer, LayerRow& r) const;
  // Pass 5's MLP of `input`.
  std::vector<float> mlp(int layer, const std::vector<float>& input) const;
  // The final vector and the logits of `x`, the last layer's output.
  void finish(const std::vector<float>& x, Kept& kept) const;
};

// The index of the largest logit (the first of equal ones), as run.c's greedy sampling picks.
int argmax(const std::vector<float>& logits);

}  // namespace attnviz
