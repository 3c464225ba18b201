// A plain, readable reference of multi-head attention, beside the fast engine (attention.hpp).
//
// It computes everything AttentionEngine::compute keeps (every compatibility function, the
// scaling, the causal and custom masks, softmax or hardmax, the weighted sum, the concatenation
// and the output projection), in numbered passes of simple loops, in double precision, with no
// SIMD, no threads and no buffer reuse: the formulas as a textbook writes them. The tests compare
// the engine against it, intermediate by intermediate; a reader can learn attention from it
// before reading the fast code, which computes the same numbers in another order.
//
// It checks nothing: give it what compute() accepts (finite inputs, shapes that match `config`,
// a mask of (n_query, n_key) or none).
#pragma once

#include "core/base/types.hpp"
#include "core/engine/parameters.hpp"

#include <vector>

namespace attnviz {

// Double precision, so that the engine's float rounding is the only difference.
using ReferenceMatrix = Eigen::MatrixXd;

struct ReferenceHead {
  ReferenceMatrix Q;              // (n_query, d_k)
  ReferenceMatrix K;              // (n_key, d_k)
  ReferenceMatrix V;              // (n_key, d_v)
  ReferenceMatrix raw_scores;     // (n_query, n_key)  compat(q_i, k_j)
  ReferenceMatrix scaled_scores;  // (n_query, n_key)  raw · s / T
  ReferenceMatrix masked_scores;  // (n_query, n_key)  -inf where masked; past float's range clamped
  ReferenceMatrix weights;        // (n_query, n_key)  α
  ReferenceMatrix output;         // (n_query, d_v)    α · V
  std::vector<bool> fully_masked_rows;  // (n_query) true where every key is masked
  bool overflow = false;  // a score, a value or an output past float's range, as the engine flags
};

struct ReferenceResult {
  std::vector<ReferenceHead> heads;
  ReferenceMatrix concat;          // (n_query, heads · d_v)
  ReferenceMatrix output;          // (n_query, d_model)
  int fully_masked_row_count = 0;  // summed over heads
  bool overflow = false;           // some head overflowed, or the output is past float's range
};

// What AttentionEngine::compute(X_query, X_key, parameters, config, custom_mask) computes.
// X_query is (n_query, d_model), X_key (n_key, d_model); custom_mask is 1 where allowed.
ReferenceResult reference_attention(const Matrix& X_query, const Matrix& X_key,
                                    const Parameters& parameters, const AttentionConfig& config,
                                    const MaskMatrix* custom_mask = nullptr);

}  // namespace attnviz
