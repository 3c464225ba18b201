// The forward pass of a Transformer (transformer.hpp) over a whole text, keeping everything the
// views show, and computing again only what changed:
//   - tokens: in a decoder, the positions after the longest prefix shared with the last run (a
//     KV cache: typing at the end of the text computes only the new positions; the keys and
//     values of the others are kept). In an encoder every token sees every other, so any change
//     of the tokens (or their types) computes every position again;
//   - interventions and weight edits at layer L: layers L and above, every position.
//
// 0. embedded = token embedding × embedding_scale (Marian, BART: √d) + position embedding
//    (learned or fixed positions, from row position_offset) + token type embedding (BERT); normed
//    when the model has an embedding norm (BERT, BART): the residual stream's start.
// Per layer ℓ, rows are positions (n of them), in passes:
//   1. normalized  = norm₁(residual_in); with the norm after (BERT): residual_in itself
//                                                                          (n, d_model)
//   2. queries     = normalized · W_Q + b_Q; keys, values likewise;       (n, heads · d_head)
//      under RoPE, queries and keys turned by position                   (n, kv_heads · d_head)
//   3. per query head h (reading key/value head g = h / (heads / kv_heads)):
//      scores      = queries_h · keys_gᵀ / √d_head; a decoder masks key t > query i   (n, n)
//      attention   = softmax(scores) per row — or the pattern an intervention sets
//      head_output = attention · values_g × the head's scale (0: ablated)   (n, d_head)
//   4. attention_output = head_outputs · W_O + b_O                        (n, d_model)
//      residual_mid     = residual_in + attention_output;  norm after: norm₁(that sum)
//   4c. an encoder–decoder's decoder (Marian, BART): cross-attention to the encoder's output
//      `memory` (n_source, d_model), as 1–4 with queries from the decoder and keys and values
//      from the memory, no mask:
//      cross_queries = norm_c(residual_mid) · W_Qc + b (norm after: residual_mid itself)
//                                                                         (n, heads · d_head)
//      cross_keys    = memory · W_Kc + b, cross_values likewise    (n_source, heads · d_head)
//      cross_attention = softmax(cross_queries_h · cross_keys_hᵀ / √d_head)     (n, n_source)
//      residual_cross = residual_mid + cross_head_outputs · W_Oc + b; norm after: norm_c(that)
//   5. mlp_output   = MLP(norm₂(x)); norm after: MLP(x), x = residual_mid (residual_cross in a
//      decoder with cross-attention)                                      (n, d_model)
//      residual_out = x + mlp_output;  norm after: norm₂(that sum)
//      (the next layer's residual_in)
// Then final (n, d_model) = norm_f(residual_out of the last layer), or with BERT's MLM head
// norm_f(gelu(residual_out · head_transform + b)); logits(i) = final_i · Eᵀ (+ its bias).
// reference_forward.hpp computes the same numbers plainly, one token at a time (a decoder) or
// one position at a time after the layer below (an encoder).
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/models/head_intervention.hpp"
#include "core/models/packed_gemm.hpp"
#include "core/models/transformer.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
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
  // Per head, the rows one after the other: a decoder's row i holds keys 0..i (from i(i+1)/2),
  // an encoder's keys 0..n−1 (from i·n).
  std::vector<std::vector<float>> attention;
  RowMatrix head_outputs;      // (n, n_heads · d_head): each head's attention · values, scaled
  RowMatrix attention_output;  // (n, d_model): after W_O and its bias
  RowMatrix residual_mid;      // (n, d_model): the residual stream after attention
  // An encoder–decoder's decoder only: the cross-attention to the encoder's output (n_source
  // rows), and the stream after it (the MLP's input).
  RowMatrix cross_queries;  // (n, n_heads · d_head)
  RowMatrix cross_keys;     // (n_source, n_heads · d_head)
  RowMatrix cross_values;   // (n_source, n_heads · d_head)
  // Per head, row i from i · n_source.
  std::vector<std::vector<float>> cross_attention;
  RowMatrix cross_head_outputs;      // (n, n_heads · d_head): each head's output, scaled
  RowMatrix cross_attention_output;  // (n, d_model): after W_Oc and its bias
  RowMatrix residual_cross;          // (n, d_model): the residual stream after cross-attention
  RowMatrix mlp_output;              // (n, d_model)
  RowMatrix residual_out;            // (n, d_model): after the MLP; the next layer's input
};

class TransformerForward {
 public:
  // `model` must outlive the forward pass. After a weight edit (Transformer::set_head_weight),
  // call weights_changed with its layer.
  explicit TransformerForward(const Transformer& model);

  // Runs the model on `tokens` (ids; at most the model's context) with their token types (BERT's
  // sentence A, 0, and B, 1; empty: all 0), computing only what changed since the last run. An
  // error (and nothing changed) for an id outside the vocabulary, too many tokens, or types that
  // are not one per token in the model's range.
  // An encoder–decoder's decoder reads `memory`, the encoder's output (n_source, d_model: its
  // forward pass's final_normalized()); when it differs from the last run's, every position is
  // computed again. An error when a decoder with cross-attention has none, or a model without
  // it is given one.
  Status run(std::span<const int> tokens, std::span<const int> token_types = {},
             const RowMatrix* memory = nullptr);

  // Interventions take effect at the next run. An error (nothing changed) for a layer or head
  // the model does not have, or a scale that is not a finite number.
  Status set_intervention(int layer, int head, HeadIntervention intervention);
  const HeadIntervention& intervention(int layer, int head) const;
  void clear_interventions();
  // The same for the cross-attention heads of an encoder–decoder's decoder (a pattern: computed
  // or uniform over the source; the previous token means nothing across two texts).
  Status set_cross_intervention(int layer, int head, HeadIntervention intervention);
  const HeadIntervention& cross_intervention(int layer, int head) const;
  void weights_changed(int layer);
  // After Transformer::set_token_embedding: every position is embedded and computed again.
  void embeddings_changed();

  const Transformer& model() const { return model_; }
  const std::vector<int>& tokens() const { return tokens_; }
  const std::vector<int>& token_types() const { return token_types_; }  // one per token
  int size() const { return static_cast<int>(tokens_.size()); }

  // The kept intermediates of the last run.
  // (n, d_model): tokens + positions (+ types), normed under a norm after each sublayer (BERT)
  const RowMatrix& embedded() const { return embedded_; }
  const LayerActivations& layer(int layer) const;
  // Row `query` of head `head`'s attention over the keys it sees: a decoder's query + 1 weights
  // over keys 0..query, an encoder's n over every key.
  std::span<const float> attention_row(int layer, int head, int query) const;
  // The whole pattern, masked entries 0.                                      (n_query, n_key)
  Matrix attention(int layer, int head) const;
  // An encoder–decoder's decoder: the source's length, and head `head`'s cross-attention
  // weights of query `query` (n_source), or all of them.                   (n_query, n_source)
  int source_size() const { return memory_.rows(); }
  // The encoder's output the last run read (n_source, d_model); empty without an encoder.
  const RowMatrix& memory() const { return memory_; }
  std::span<const float> cross_attention_row(int layer, int head, int query) const;
  Matrix cross_attention(int layer, int head) const;
  // Its scores before the softmax (q · k), and divided by √d_head.          (n_query, n_source)
  Matrix cross_raw_scores(int layer, int head) const;
  // The scores before the softmax (q · k, not yet divided by √d_head); masked entries −inf.
  // Computed on request from the kept queries and keys.                      (n_query, n_key)
  Matrix raw_scores(int layer, int head) const;
  // The same divided by √d_head: what the softmax takes (masked entries −inf).   (n_query, n_key)
  Matrix scaled_scores(int layer, int head) const;
  // (n, d_model): what the unembedding multiplies (see above); a model that predicts no tokens:
  // the last layer's output.
  const RowMatrix& final_normalized() const { return final_; }
  // The logits at position `position` (the last by default): a decoder's for the next token,
  // BERT's for the token at that position. Zeros when the model predicts no tokens. (vocab_size)
  RowVector logits(int position) const;
  RowVector last_logits() const { return logits(size() - 1); }
  // The same into `out` (vocab_size floats), allocating nothing.
  void logits(int position, float* out) const;
  // Every position's logits into `out` (size() × vocab_size, row-major), in one product.
  void all_logits(float* out) const;
  // Any residual row (d_model floats) read out as logits (vocab_size floats) the way the model
  // reads its last layer's: its final norm (a decoder), or its MLM head (BERT: LayerNorm(gelu(x ·
  // head_transform + b))), then the unembedding and its bias. Zeros when the model predicts no
  // tokens. The logit lens reads every layer's stream through it.
  void read_out(const float* residual, float* out) const;

  // What the last run computed (for the tests of the cache and of partial recomputes).
  struct Work {
    int first_position = 0;      // of the layers below first_layer_redone
    int first_layer_redone = 0;  // from here up, every position was computed again
  };
  const Work& last_work() const { return work_; }

 private:
  const Transformer& model_;
  std::vector<int> tokens_;
  std::vector<int> token_types_;
  std::vector<HeadIntervention> interventions_;        // (n_layers · n_heads)
  std::vector<HeadIntervention> cross_interventions_;  // (n_layers · n_heads), with an encoder
  RowMatrix memory_;               // the encoder's output the last run read (n_source, d_model)
  int dirty_layer_;                // the lowest layer changed since the last run
  bool embeddings_dirty_ = false;  // the embeddings changed since the last run
  RowMatrix embedded_;
  std::vector<LayerActivations> layers_;
  RowMatrix final_;
  Work work_;
  Matrix block_scores_;  // scratch: (a block of at most 128 query rows, n)
  Matrix hidden_;        // scratch: (rows computed, d_ff)
  Matrix gate_;          // scratch: (rows computed, d_ff)
  Matrix transformed_;   // scratch: (rows computed, d_model), BERT's MLM head
  // The model's large weight matrices packed for blas::gemm_packed, each the first time it is
  // multiplied (at most kMostPackedBytes in all; the rest go to the library): keyed by their
  // data, dropped when the model's weights_version() moves (an edit, a reset).
  static constexpr std::size_t kMostPackedBytes = std::size_t{3} << 30;
  static constexpr int kMostPackedRows = 512;  // products of more rows go to the library
  // With the AVX2 kernel, products of more rows than this go to the library: OpenBLAS's own
  // Haswell kernels (A packed too) ran 128 rows of bert-base's and GPT-2's shapes 15 to 30 %
  // faster than it, 32 rows as fast, and 12 rows (a keystroke's translation) 35 % slower, on the
  // AMD EPYC it was written on.
  static constexpr int kMostPackedRowsAvx2 = 32;
  // A matrix narrower than this goes to the library (a head's 64-wide product: its packing is
  // cheap there; d_model 192's projections are packed).
  static constexpr int kLeastPackedWidth = 128;
  mutable std::unordered_map<const float*, blas::PackedMatrix> packed_;
  mutable std::size_t packed_bytes_ = 0;
  mutable std::uint64_t packed_version_ = 0;
  // W packed (Wᵀ when `transposed`: the unembedding) for a product of `rows` rows, or null when
  // the library multiplies it (one row or more than kMostPackedRows, a small matrix, a machine
  // without the kernel, the budget spent).
  const blas::PackedMatrix* packed(const MatrixView& w, bool transposed, int rows) const;
  // out (rows, w.cols) = in (rows, w.rows) · w (+ bias), through the packed kernel when it can.
  void multiply_weights(const float* in, std::ptrdiff_t in_stride, int rows, const MatrixView& w,
                        float* out, std::ptrdiff_t out_stride, const VectorView& bias) const;

  // Where row `query` of a head's kept attention starts, and how many keys it holds.
  std::size_t row_start(int query) const;
  int row_length(int query) const;

  void compute_layer(int layer, int first_row);
  // 4c of compute_layer: rows first.. of the cross-attention (the keys and values of the memory
  // too when first is 0).
  void compute_cross_attention(int layer, int first_row);
  // An error for a layer or head the model does not have, or a scale that is not finite.
  Status check_intervention(int layer, int head, const HeadIntervention& intervention) const;
};

}  // namespace attnviz
