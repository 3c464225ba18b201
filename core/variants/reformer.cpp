#include "core/variants/reformer.hpp"

#include "core/base/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

namespace attnviz {

Status validate(const ReformerSettings& settings) {
  if (!(settings.buckets == 1 ||
        (settings.buckets >= 2 && settings.buckets <= 64 && settings.buckets % 2 == 0)))
    return Status::error("the number of buckets must be 1 or an even number from 2 to 64, got " +
                         std::to_string(settings.buckets));
  if (settings.chunk < 1 || settings.chunk > Limits::kMaxTokens)
    return Status::error("the chunk must be between 1 and " + std::to_string(Limits::kMaxTokens) +
                         " positions, got " + std::to_string(settings.chunk));
  if (settings.rounds < 1 || settings.rounds > 8)
    return Status::error("the hash rounds must be between 1 and 8, got " +
                         std::to_string(settings.rounds));
  return Status::success();
}

Result<ReformerResult> reformer_attention(const Matrix& Q, const Matrix& V, float scale,
                                          bool causal, const ReformerSettings& settings) {
  if (Status status = validate(settings); !status) return status;
  const Eigen::Index n = Q.rows(), d_k = Q.cols();
  if (V.rows() != n) return Status::error("Q and V do not have the same number of rows");
  if (n == 0) return Status::error("Reformer needs at least one token");
  if (!std::isfinite(scale) || !all_finite(Q) || !all_finite(V))
    return Status::error("the inputs of Reformer must be finite numbers");

  ReformerResult out;
  // 1. The shared keys: the queries at unit length (a zero query stays zero).
  out.keys = Q;
  for (Eigen::Index i = 0; i < n; ++i)
    if (const float norm = Q.row(i).norm(); norm > 0) out.keys.row(i) /= norm;
  // A score, computed only for the pairs a round lets meet (never the n × n matrix).
  const auto score = [&](Eigen::Index i, Eigen::Index j) {
    return double{scale} * static_cast<double>(Q.row(i).dot(out.keys.row(j)));
  };
  out.pairs = MaskMatrix::Zero(n, n);
  out.weights = Matrix::Zero(n, n);
  std::vector<Matrix> round_weights;           // per round (n, n)
  std::vector<std::vector<double>> round_log;  // per round (n): z = log Σ exp over its keys
  const int half = std::max(1, settings.buckets / 2);

  for (int r = 0; r < settings.rounds; ++r) {
    ReformerRound round;
    round.bucket.assign(static_cast<std::size_t>(n), 0);
    // 2. The hash: random rotations, then the largest of x·R and −x·R.
    if (settings.buckets > 1) {
      Matrix R(d_k, half);  // (d_k, b/2)
      const std::uint64_t stream =
          rng::combine(rng::combine(settings.seed, rng::hash("reformer")), r);
      for (Eigen::Index a = 0; a < d_k; ++a)
        for (int b = 0; b < half; ++b)
          R(a, b) = rng::value(stream, static_cast<std::uint64_t>(a) * 131u + b);
      const Matrix rotated = out.keys * R;  // (n, b/2)
      for (Eigen::Index i = 0; i < n; ++i) {
        int best = 0;
        float largest = -std::numeric_limits<float>::infinity();
        for (int b = 0; b < half; ++b) {
          if (rotated(i, b) > largest) largest = rotated(i, b), best = b;
          if (-rotated(i, b) > largest) largest = -rotated(i, b), best = b + half;
        }
        round.bucket[static_cast<std::size_t>(i)] = best;
      }
    }
    // 3. Sorted by (bucket, position); each position's chunk in that order.
    round.order.resize(static_cast<std::size_t>(n));
    std::iota(round.order.begin(), round.order.end(), 0);
    std::stable_sort(round.order.begin(), round.order.end(), [&](int a, int b) {
      return round.bucket[static_cast<std::size_t>(a)] < round.bucket[static_cast<std::size_t>(b)];
    });
    std::vector<int> chunk_of(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < round.order.size(); ++k)
      chunk_of[static_cast<std::size_t>(round.order[k])] = static_cast<int>(k) / settings.chunk;
    // 4, 5. Each query over the keys it may see.
    Matrix alpha = Matrix::Zero(n, n);
    std::vector<double> log_sum(static_cast<std::size_t>(n),
                                -std::numeric_limits<double>::infinity());
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto qi = static_cast<std::size_t>(i);
      std::vector<Eigen::Index> keys;
      for (Eigen::Index j = 0; j < n; ++j) {
        const auto kj = static_cast<std::size_t>(j);
        const int gap = chunk_of[qi] - chunk_of[kj];
        if (round.bucket[qi] == round.bucket[kj] && (gap == 0 || gap == 1) && !(causal && j > i))
          keys.push_back(j);
      }
      if (settings.exclude_self && keys.size() > 1)
        keys.erase(std::remove(keys.begin(), keys.end(), i), keys.end());
      if (keys.empty()) continue;  // (only with the causal mask and no earlier key in the bucket)
      std::vector<double> row(keys.size());
      for (std::size_t k = 0; k < keys.size(); ++k) row[k] = score(i, keys[k]);
      const double largest = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (const double s : row) sum += std::exp(s - largest);
      for (std::size_t k = 0; k < keys.size(); ++k) {
        alpha(i, keys[k]) = static_cast<float>(std::exp(row[k] - largest) / sum);
        out.pairs(i, keys[k]) = 1;
      }
      log_sum[qi] = largest + std::log(sum);
      out.pairs_computed += static_cast<std::int64_t>(keys.size());
    }
    round_weights.push_back(std::move(alpha));
    round_log.push_back(std::move(log_sum));
    out.rounds.push_back(std::move(round));
  }
  // The rounds combined by their softmax sums.
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto qi = static_cast<std::size_t>(i);
    double largest = -std::numeric_limits<double>::infinity();
    for (const auto& z : round_log) largest = std::max(largest, z[qi]);
    if (largest == -std::numeric_limits<double>::infinity()) continue;  // no key in any round
    double total = 0;
    for (const auto& z : round_log) total += std::exp(z[qi] - largest);
    for (std::size_t r = 0; r < round_log.size(); ++r)
      out.weights.row(i) += static_cast<float>(std::exp(round_log[r][qi] - largest) / total) *
                            round_weights[r].row(i);
  }
  out.output = out.weights * V;  // (n, d_v)
  if (!all_finite(out.output))
    return Status::error("Reformer's numbers overflowed: the inputs are too large");
  return out;
}

}  // namespace attnviz
