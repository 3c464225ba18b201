// The forward pass of a Llama-architecture model (llama2.c's run.c, in plain passes), one token
// at a time with a cache of keys and values, keeping what the views show: each layer's and
// head's attention weights over the tokens so far.
//   x = embedding[token]
//   per layer: xb = rmsnorm(x) · rms_att; q = Wq·xb, k = Wk·xb, v = Wv·xb; RoPE on q and k
//              (adjacent pairs (i, i+1) of a head at frequency 10000^(-i/head_size) by position);
//              per query head h, its key/value head h / (n_heads / n_kv_heads):
//              α = softmax(q_h·k_t / √head_size over t ≤ pos), out_h = Σ_t α_t v_t;
//              x += Wo·out; xb = rmsnorm(x) · rms_ffn; x += W2·(silu(W1·xb) ⊙ W3·xb)
//   logits = classifier · (rmsnorm(x) · rms_final)
#pragma once

#include "core/models/llama2c.hpp"

#include <vector>

namespace attnviz {

class LlamaForward {
 public:
  explicit LlamaForward(const Llama2cModel& model);

  // The logits for the next token after `token` at `position` (0, 1, 2, ... in order; the keys
  // and values of the positions before are kept). An error past the model's context.
  Result<std::vector<float>> step(int token, int position);

  // α of layer `layer`, head `head`, for the query at `position` over keys 0..position.
  const std::vector<float>& attention(int layer, int head, int position) const;
  int positions() const { return positions_; }

 private:
  const Llama2cModel& model_;
  std::vector<float> key_cache_, value_cache_;  // (n_layers, seq_len, kv_dim)
  std::vector<std::vector<float>> attention_;  // [(position · n_layers + layer) · n_heads + head]
  int positions_ = 0;
};

// The index of the largest logit (the first of equal ones), as run.c's greedy sampling picks.
int argmax(const std::vector<float>& logits);

}  // namespace attnviz
