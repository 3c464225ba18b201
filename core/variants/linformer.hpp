// Linformer (Wang et al., 2020): attention in O(n·k) rather than O(n²), by projecting the n keys
// and values along the sequence to k "summary" rows with E and F, each (k, n_key):
//   1. K̄ = E · K                                                          (k, d_k)
//   2. V̄ = F · V                                                          (k, d_v)
//   3. scores = scale · Q · K̄ᵀ                                            (n_query, k)
//   4. weights = softmax of each row                                      (n_query, k)
//   5. output = weights · V̄                                               (n_query, d_v)
// With k = n and E = F = I it is full attention (without a mask: a summary row mixes keys from
// every position, so there is no causal Linformer here). The projections are drawn from a seed
// (each entry uniform with mean 0 and variance 1/k: the random projection of the paper's
// argument, which needs no more than that), or E is shared as F (the paper's "key-value
// sharing"), or given.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <cstdint>

namespace attnviz {

// E (or F) for `k` summaries of `n` keys from `seed`: entries uniform in ±√(3/k) (variance 1/k),
// the same on every machine (core/base/rng.hpp).                                  (k, n)
Matrix linformer_projection(int k, int n, std::uint64_t seed);

struct LinformerResult {
  Matrix summary_keys;     // (k, d_k): E · K
  Matrix summary_values;   // (k, d_v): F · V
  Matrix scores;           // (n_query, k)
  Matrix weights;          // (n_query, k): rows sum to 1
  Matrix output;           // (n_query, d_v)
  std::int64_t pairs = 0;  // scores computed: n_query · k (full attention: n_query · n_key)
};

// Q (n_query, d_k), K (n_key, d_k), V (n_key, d_v); E and F (k, n_key). An error naming what is
// wrong for k outside 1..n_key, shapes that do not match, or inputs that are not finite.
Result<LinformerResult> linformer_attention(const Matrix& Q, const Matrix& K, const Matrix& V,
                                            const Matrix& E, const Matrix& F, float scale);

// The seed the app, the CLI and the lessons draw E and F from unless told otherwise.
inline constexpr std::uint64_t kLinformerSeed = 7;

// Linformer with k summaries and the seeded projections: E from `seed`, F from seed + 1, or
// F = E with `share` (the paper's key-value sharing). An error for k outside 1..n_key.
Result<LinformerResult> seeded_linformer(const Matrix& Q, const Matrix& K, const Matrix& V,
                                         float scale, int k, std::uint64_t seed, bool share);

}  // namespace attnviz
