// Multi-head attention with every intermediate kept, for display.
//
// Per head h (row-vector convention, as in "Attention Is All You Need"):
//   Q = X_query · W_Q            (n_query, d_k)
//   K = X_key · W_K              (n_key, d_k)
//   V = X_key · W_V              (n_key, d_v)
//   raw_scores    = compat(Q, K)                  (n_query, n_key)
//   scaled_scores = raw_scores · s / T            s = 1/√d_k for scaled_dot, else 1
//   masked_scores = scaled_scores, -inf where masked (causal: key j > query i; custom mask 0)
//   weights α     = softmax over each row (or one-hot argmax when hard)
//   output        = α · V                         (n_query, d_v)
// then concat = [output_0 | ... | output_{H-1}] (n_query, H·d_v) and
// output = concat · W_O (n_query, d_model).
// Grouped-query attention (config.kv_groups): the heads of a group use the W_K and W_V of the
// group's first head, so they share K and V (each head's HeadResult still holds its own copy).
//
// Numerics: the softmax subtracts the row maximum; a row whose every key is masked gets α = 0
// and output 0 and is flagged; scores that overflow float (|x| > 3.4e38) are clamped before the
// softmax and flagged, so α is never NaN or infinite. Non-finite inputs are rejected.
// Buffers are kept between calls: a recompute with unchanged shapes allocates nothing.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/engine/parameters.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace attnviz {

class Workers;

using RowFlags = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, 1>;

struct HeadResult {
  Matrix Q;                    // (n_query, d_k)
  Matrix K;                    // (n_key, d_k)
  Matrix V;                    // (n_key, d_v)
  Matrix raw_scores;           // (n_query, n_key)  compat(q_i, k_j)
  Matrix scaled_scores;        // (n_query, n_key)  raw · s / T
  Matrix masked_scores;        // (n_query, n_key)  -inf where masked; overflow clamped to ±3.4e38
  Matrix weights;              // (n_query, n_key)  α, rows sum to 1 (or 0 when fully masked)
  Matrix output;               // (n_query, d_v)    α · V
  RowFlags fully_masked_rows;  // (n_query) 1 where every key is masked
  bool overflow = false;       // some score was not finite and was clamped

  // Working buffers of the compatibility functions.
  Matrix query_projection;  // general: Q·W_a (n_query, d_k); additive: Q·W_1 (n_query, d_att)
  Matrix key_projection;    // additive: K·W_2 (n_key, d_att)
  Matrix key_projection_transposed;  // additive: (K·W_2)ᵀ (d_att, n_key)
  ColumnVector query_norms;          // cosine (n_query)
  ColumnVector key_norms;            // cosine (n_key)
  Matrix key_transposed;             // Kᵀ (d_k, n_key) for small score products; else empty
  Matrix value_groups;  // V by groups of 16 / d_v keys (stages::weighted_sum); else empty
};

struct AttentionResult {
  Eigen::Index n_query = 0;
  Eigen::Index n_key = 0;
  AttentionConfig config;
  std::vector<HeadResult> heads;
  Matrix concat;                   // (n_query, heads · d_v)
  Matrix output;                   // (n_query, d_model)
  int fully_masked_row_count = 0;  // summed over heads
  bool overflow = false;           // some score, output or the final output was not finite
  std::uint64_t version = 0;       // increases with every successful compute
};

class AttentionEngine {
 public:
  // Computes every intermediate. X_query is (n_query, d_model); X_key is (n_key, d_model) and
  // may be the same matrix (self-attention: pass the same object and the queries, keys and
  // values come from one product). custom_mask, when given, is (n_query, n_key) with
  // 1 = allowed. On error nothing in result() changes.
  Status compute(const Matrix& X_query, const Matrix& X_key, const Parameters& parameters,
                 const AttentionConfig& config, const MaskMatrix* custom_mask = nullptr);

  const AttentionResult& result() const { return result_; }

  // Threads for compute(), this one included (1 to kMaxThreads; default 1). A step is split over
  // them only when it has enough work to gain from it. Each number is computed by the same code
  // on any thread: the results are the same bit for bit where the products are small (every
  // classroom size), and to float rounding where Eigen's GEMM does them (its blocking depends on
  // the width of a thread's band of columns).
  static constexpr int kMaxThreads = 16;
  void set_threads(int threads);
  int threads() const;

  AttentionEngine();
  ~AttentionEngine();
  AttentionEngine(AttentionEngine&&) noexcept;
  AttentionEngine& operator=(AttentionEngine&&) noexcept;

 private:
  void prepare_buffers(Eigen::Index n_query, Eigen::Index n_key, const AttentionConfig& config,
                       bool self_attention);
  void project_packed(const Matrix& X_query, const Matrix& X_key, const AttentionConfig& config,
                      bool self_attention, int task, int tasks);
  void compute_head(int h, const HeadParameters& parameters, const AttentionConfig& config,
                    bool self_attention, const MaskMatrix* custom_mask);

  AttentionResult result_;
  // The projections of every head at once. packed_weights_ is [W_Q of heads 0..H-1 | W_K of
  // heads 0..H-1 | W_V of heads 0..H-1], (d_model, H·(2·d_k + d_v)). In self-attention
  // projections_ = X · packed_weights_ holds Q, K and V of every head side by side; in cross
  // attention query_projections_ = X_query · (the W_Q part) and projections_ = X_key · (the
  // W_K and W_V parts). Each head's Q, K and V are copied out of them.
  // Small products whose heads are 8 wide or a multiple of 16 skip all three: each head's Q, K
  // and V are made in place from its own weights, or, for heads 8 wide, from paired_weights_,
  // two heads' rows side by side in a (d_model, 16) block per pair (project_directly_). Only the
  // buffer of the path in use has a size.
  Matrix packed_weights_;
  Matrix paired_weights_;
  Parameters shared_parameters_;  // under grouped-query attention: W_K, W_V copied from the groups
  Matrix projections_;
  Matrix query_projections_;
  bool project_directly_ = false;
  std::unique_ptr<Workers> workers_;  // null: one thread
};

// The softmax of one row of masked scores (-inf = masked), in plain passes. Returns false, with
// the row of weights set to 0, when every entry is masked.
bool softmax_row(const float* masked_scores, float* weights, Eigen::Index n);
// One-hot at the first largest allowed score; false (all 0) when every entry is masked.
bool hardmax_row(const float* masked_scores, float* weights, Eigen::Index n);

}  // namespace attnviz
