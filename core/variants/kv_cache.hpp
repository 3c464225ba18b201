// Decoding with a KV cache: a causal head receives its tokens one at a time, as a decoder
// generates them. At step t, in passes:
//   1. q_t = x_t · W_Q, k_t = x_t · W_K, v_t = x_t · W_V        (d_k), (d_k), (d_v)
//   2. the cache grows by one key and one value: K = [K; k_t], V = [V; v_t]   (t + 1 rows)
//   3. α_t = softmax(scale · q_t · Kᵀ)                                       (t + 1)
//   4. out_t = α_t · V                                                       (d_v)
// Row t of the full causal computation is the same numbers: a query never sees a later key, so
// the keys and values of the earlier tokens never change and need not be computed again.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <cstdint>

namespace attnviz {

struct DecodeStep {
  int position = 0;      // t, from 0
  RowVector query;       // (d_k)
  RowVector weights;     // (t + 1): α over keys 0..t
  RowVector output;      // (d_v)
  int cache_length = 0;  // keys (and values) held after the step: t + 1
  // Multiply-adds of the step: with the cache, the new token's three projections and its row of
  // scores and weighted sum, d_model·(2·d_k + d_v) + (t + 1)·(d_k + d_v); without it, every
  // earlier token's key and value computed again too, (t + 1)·d_model·(d_k + d_v) + d_model·d_k
  // + (t + 1)·(d_k + d_v).
  std::int64_t work = 0;
  std::int64_t work_without_cache = 0;
};

class KvCacheDecoder {
 public:
  // W_Q, W_K (d_model, d_k) and W_V (d_model, d_v) of one head; scores are scale · q · k.
  KvCacheDecoder(Matrix W_Q, Matrix W_K, Matrix W_V, float scale);

  // The next token's embedding (d_model): an error, and nothing changed, for a row of the wrong
  // size, a number that is not finite, or a cache already Limits::kMaxTokens long.
  Result<DecodeStep> step(const RowVector& x);
  void reset();

  const Matrix& keys() const { return keys_; }      // (t + 1, d_k)
  const Matrix& values() const { return values_; }  // (t + 1, d_v)
  int length() const { return static_cast<int>(keys_.rows()); }

 private:
  Matrix W_Q_, W_K_, W_V_;
  float scale_;
  Matrix keys_, values_;
};

}  // namespace attnviz
