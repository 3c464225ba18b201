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

  // The logits for the token after `token`, the next position's (0, 1, 2, ...). An error past
  // the model's context or for an id outside the vocabulary.
  Result<std::vector<float>> step(int token);
  int positions() const { return static_cast<int>(kept_.size()); }

  // What position `position` computed at layer `layer`.
  struct LayerRow {
    std::vector<float> normalized;              // (d_model)
    std::vector<float> queries;                 // (n_heads · d_head), after RoPE
    std::vector<float> keys, values;            // (n_kv_heads · d_head), keys after RoPE
    std::vector<std::vector<float>> attention;  // per head: position + 1 weights
    std::vector<float> head_outputs;            // (n_heads · d_head)
    std::vector<float> attention_output;        // (d_model)
    std::vector<float> residual_mid;            // (d_model)
    std::vector<float> mlp_output;              // (d_model)
    std::vector<float> residual_out;            // (d_model)
  };
  const LayerRow& row(int position, int layer) const;
  const std::vector<float>& final_normalized(int position) const;
  const std::vector<float>& logits(int position) const;

 private:
  const Transformer& model_;
  std::vector<HeadIntervention> interventions_;
  struct Kept {
    std::vector<LayerRow> layers;
    std::vector<float> final_normalized, logits;
  };
  std::vector<Kept> kept_;
};

// The index of the largest logit (the first of equal ones), as run.c's greedy sampling picks.
int argmax(const std::vector<float>& logits);

}  // namespace attnviz
