// Reformer's LSH attention (Kitaev et al., 2020): each query attends only to the keys that hash
// into its bucket, so that similar vectors meet and the n² pairs are not all computed. Per hash
// round, in passes:
//   1. shared query-key vectors: the keys are the queries made unit length, k_j = q_j / |q_j|
//   2. the hash: random rotations R (d_k, b/2); bucket(x) = argmax over [x·R, −x·R] (b buckets;
//      b = 1: one bucket), so that vectors at a small angle share a bucket most often
//   3. sort the positions by (bucket, position), cut the sorted order into chunks of c
//   4. query i may see key j when they share the bucket and j's chunk is i's or the one before;
//      not itself when it has another key (a vector's dot product with itself is the largest,
//      and would take all the attention); with the causal mask, no later key
//   5. α over those keys (the softmax), output = α·V, and the log of the softmax's sum z
// The rounds' outputs are combined by their sums: output = Σ_r exp(z_r − logsumexp_r z_r) · out_r
// (so is α, for display). Keys counted in several rounds are not corrected for (the paper's
// duplicate-count refinement is left out).
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <vector>

namespace attnviz {

struct ReformerSettings {
  int buckets = 4;  // b: 1, or an even number up to 64 (the hash takes argmax of b/2 and −b/2)
  int chunk = 4;    // c: positions per chunk of the sorted order
  int rounds = 1;   // hash rounds, 1 to 8, each with its own rotations
  std::uint64_t seed = 7;    // draws the rotations
  bool exclude_self = true;  // a query does not see itself unless it has no other key
  bool operator==(const ReformerSettings&) const = default;
};

// An error naming the setting for buckets that are not 1 or an even number in 2..64, a chunk
// below 1, or rounds outside 1..8.
Status validate(const ReformerSettings& settings);

struct ReformerRound {
  std::vector<int> bucket;  // (n): each position's bucket
  std::vector<int> order;   // (n): the positions sorted by (bucket, position)
};

struct ReformerResult {
  std::vector<ReformerRound> rounds;
  Matrix keys;                      // (n, d_k): the shared keys, the queries made unit length
  MaskMatrix pairs;                 // (n, n): 1 where a round computed the score of (i, j)
  Matrix weights;                   // (n, n): α combined over the rounds; rows sum to 1
  Matrix output;                    // (n, d_v)
  std::int64_t pairs_computed = 0;  // scores computed, over every round
};

// Self-attention of Q (n, d_k) on V (n, d_v); scores are scale · q_i · k_j.
Result<ReformerResult> reformer_attention(const Matrix& Q, const Matrix& V, float scale,
                                          bool causal, const ReformerSettings& settings);

}  // namespace attnviz
