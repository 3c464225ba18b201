// The forward pass of a Transformer (transformer.hpp) over a whole text, keeping everything the
// views show, and computing again only what changed:
//   - tokens: the positions after the longest prefix shared with the last run (a KV cache:
//     typing at the end of the text computes only the new positions; the keys and values of the
//     others are kept);
//   - interventions and weight edits at layer L: layers L and above, every position.
//
// Per layer ℓ, rows are positions (n of them), in passes:
//   1. normalized  = norm₁(residual_in)                                  (n, d_model)
//   2. queries     = normalized · W_Q + b_Q; keys, values likewise;       (n, heads · d_head)
//      under RoPE, queries and keys turned by position                   (n, kv_heads · d_head)
//   3. per query head h (reading key/value head g = h / (heads / kv_heads)):
//      scores      = queries_h · keys_gᵀ / √d_head, key t > query i masked   (n, n)
//      attention   = softmax(scores) per row — or the pattern an intervention sets
//      head_output = attention · values_g × the head's scale (0: ablated)   (n, d_head)
//   4. attention_output = head_outputs · W_O + b_O                        (n, d_model)
//      residual_mid     = residual_in + attention_output
//   5. mlp_output   = MLP(norm₂(residual_mid))                            (n, d_model)
//      residual_out = residual_mid + mlp_output   (the next layer's residual_in)
// Then final = norm_f(residual_out of the last layer) (n, d_model); logits(i) = final_i · Eᵀ.
// reference_forward.hpp computes the same numbers plainly, one token at a time.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/models/head_intervention.hpp"
#include "core/models/transformer.hpp"

#include <span>
#include <vector>

namespace attnviz {

// A matrix that grows and shrinks by rows, keeping its rows (row-major, (rows, cols)).
class RowMatrix {
 public:
  void set_cols(int cols) { cols_ = cols; }
  void resize_rows(int rows) {
    rows_ = rows;
    values_.resize(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols_));
  }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  float* row(int i) { return values_.data() + static_cast<std::ptrdiff_t>(i) * cols_; }
  const float* row(int i) const { return values_.data() + static_cast<std::ptrdiff_t>(i) * cols_; }
  Eigen::Map<Matrix> rows_from(int first) { return {row(first), rows_ - first, cols_}; }
  Eigen::Map<const Matrix> matrix() const { return {values_.data(), rows_, cols_}; }

 private:
  std::vector<float> values_;
  int rows_ = 0, cols_ = 0;
};

// Everything kept of one layer (rows: positions).
struct LayerActivations {
  RowMatrix normalized;  // (n, d_model): norm₁ of the residual stream, attention's input
  RowMatrix queries;     // (n, n_heads · d_head), after RoPE
  RowMatrix keys;        // (n, n_kv_heads · d_head), after RoPE
  RowMatrix values;      // (n, n_kv_heads · d_head)
  std::vector<std::vector<float>> attention;  // per head: row i holds keys 0..i, at i(i+1)/2
  RowMatrix head_outputs;      // (n, n_heads · d_head): each head's attention · values, scaled
  RowMatrix attention_output;  // (n, d_model): after W_O and its bias
  RowMatrix residual_mid;      // (n, d_model): the residual stream after attention
  RowMatrix mlp_output;        // (n, d_model)
  RowMatrix residual_out;      // (n, d_model): after the MLP; the next layer's input
};

class TransformerForward {
 public:
  // `model` must outlive the forward pass. After a weight edit (Transformer::set_head_weight),
  // call weights_changed with its layer.
  explicit TransformerForward(const Transformer& model);

  // Runs the model on `tokens` (ids; at most the model's context), computing only what changed
  // since the last run. An error (and nothing changed) for an id outside the vocabulary or too
  // many tokens.
  Status run(std::span<const int> tokens);

  // Interventions take effect at the next run. An error (nothing changed) for a layer or head
  // the model does not have, or a scale that is not a finite number.
  Status set_intervention(int layer, int head, HeadIntervention intervention);
  const HeadIntervention& intervention(int layer, int head) const;
  void clear_interventions();
  void weights_changed(int layer);
  // After Transformer::set_token_embedding: every position is embedded and computed again.
  void embeddings_changed();

  const Transformer& model() const { return model_; }
  const std::vector<int>& tokens() const { return tokens_; }
  int size() const { return static_cast<int>(tokens_.size()); }

  // The kept intermediates of the last run.
  const RowMatrix& embedded() const { return embedded_; }  // (n, d_model): tokens + positions
  const LayerActivations& layer(int layer) const;
  // Row `query` of head `head`'s attention: query + 1 weights over keys 0..query.
  std::span<const float> attention_row(int layer, int head, int query) const;
  // The whole pattern, masked entries 0.                                      (n_query, n_key)
  Matrix attention(int layer, int head) const;
  // The scores before the softmax (q · k, not yet divided by √d_head); masked entries −inf.
  // Computed on request from the kept queries and keys.                      (n_query, n_key)
  Matrix raw_scores(int layer, int head) const;
  // The same divided by √d_head: what the softmax takes (masked entries −inf).   (n_query, n_key)
  Matrix scaled_scores(int layer, int head) const;
  const RowMatrix& final_normalized() const { return final_; }  // (n, d_model)
  // The next-token logits after position `position` (the last by default).     (vocab_size)
  RowVector logits(int position) const;
  RowVector last_logits() const { return logits(size() - 1); }
  // The same into `out` (vocab_size floats), allocating nothing.
  void logits(int position, float* out) const;
  // Every position's logits into `out` (size() × vocab_size, row-major), in one product.
  void all_logits(float* out) const;

  // What the last run computed (for the tests of the cache and of partial recomputes).
  struct Work {
    int first_position = 0;      // of the layers below first_layer_redone
    int first_layer_redone = 0;  // from here up, every position was computed again
  };
  const Work& last_work() const { return work_; }

 private:
  const Transformer& model_;
  std::vector<int> tokens_;
  std::vector<HeadIntervention> interventions_;  // (n_layers · n_heads)
  int dirty_layer_;                              // the lowest layer changed since the last run
  bool embeddings_dirty_ = false;                // the embeddings changed since the last run
  RowMatrix embedded_;
  std::vector<LayerActivations> layers_;
  RowMatrix final_;
  Work work_;
  Matrix block_scores_;  // scratch: (a block of at most 128 query rows, n)
  Matrix hidden_;        // scratch: (rows computed, d_ff)
  Matrix gate_;          // scratch: (rows computed, d_ff)

  void compute_layer(int layer, int first_row);
};

}  // namespace attnviz
