#include "core/variants/kv_cache.hpp"

#include <cmath>
#include <string>
#include <utility>

namespace attnviz {

KvCacheDecoder::KvCacheDecoder(Matrix W_Q, Matrix W_K, Matrix W_V, float scale)
    : W_Q_(std::move(W_Q)), W_K_(std::move(W_K)), W_V_(std::move(W_V)), scale_(scale) {
  keys_.resize(0, W_K_.cols());
  values_.resize(0, W_V_.cols());
}

void KvCacheDecoder::reset() {
  keys_.resize(0, W_K_.cols());
  values_.resize(0, W_V_.cols());
}

Result<DecodeStep> KvCacheDecoder::step(const RowVector& x) {
  if (x.size() != W_Q_.rows())
    return Status::error("the token's embedding has " + std::to_string(x.size()) +
                         " numbers, the head reads " + std::to_string(W_Q_.rows()));
  if (!all_finite(x) || !std::isfinite(scale_))
    return Status::error("the token's embedding must be finite numbers");
  if (length() >= Limits::kMaxTokens)
    return Status::error("the cache holds " + std::to_string(Limits::kMaxTokens) +
                         " tokens, the most a sentence has");
  const Eigen::Index t = keys_.rows();
  DecodeStep out;
  out.position = static_cast<int>(t);
  // 1. The new token's query, key and value.
  out.query = x * W_Q_;              // (d_k)
  const RowVector key = x * W_K_;    // (d_k)
  const RowVector value = x * W_V_;  // (d_v)
  // 2. The cache grows by one row.
  keys_.conservativeResize(t + 1, Eigen::NoChange);
  values_.conservativeResize(t + 1, Eigen::NoChange);
  keys_.row(t) = key;
  values_.row(t) = value;
  // 3. The new query against every key so far (none later: there is none yet).
  RowVector scores = out.query * keys_.transpose();  // (t + 1)
  scores *= scale_;
  const float largest = scores.maxCoeff();
  out.weights = (scores.array() - largest).exp().matrix();
  out.weights /= out.weights.sum();
  // 4. The weighted sum of the values.
  out.output = out.weights * values_;  // (d_v)
  out.cache_length = static_cast<int>(t + 1);
  const std::int64_t d_model = W_Q_.rows(), d_k = W_K_.cols(), d_v = W_V_.cols(), n = t + 1;
  out.work = d_model * (2 * d_k + d_v) + n * (d_k + d_v);
  out.work_without_cache = n * d_model * (d_k + d_v) + d_model * d_k + n * (d_k + d_v);
  if (!all_finite(out.output)) {  // undo the step: nothing changed
    keys_.conservativeResize(t, Eigen::NoChange);
    values_.conservativeResize(t, Eigen::NoChange);
    return Status::error("the numbers overflowed: the embedding or the weights are too large");
  }
  return out;
}

}  // namespace attnviz
