#include "core/variants/linformer.hpp"

#include "core/base/rng.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace attnviz {

Matrix linformer_projection(int k, int n, std::uint64_t seed) {
  Matrix projection(k, n);  // (k, n)
  const float spread = std::sqrt(3.0f / static_cast<float>(std::max(k, 1)));
  const std::uint64_t stream = rng::combine(seed, rng::hash("linformer"));
  for (int r = 0; r < k; ++r)
    for (int c = 0; c < n; ++c)
      projection(r, c) = spread * rng::value(stream, static_cast<std::uint64_t>(r) * 1000003u +
                                                         static_cast<std::uint64_t>(c));
  return projection;
}

Result<LinformerResult> linformer_attention(const Matrix& Q, const Matrix& K, const Matrix& V,
                                            const Matrix& E, const Matrix& F, float scale) {
  const Eigen::Index n_key = K.rows(), k = E.rows();
  if (K.cols() != Q.cols() || V.rows() != n_key) return Status::error("Q, K and V do not match");
  if (n_key == 0) return Status::error("Linformer needs at least one key");
  if (k < 1 || k > n_key)
    return Status::error("k, the number of summary keys, must be between 1 and n = " +
                         std::to_string(n_key) + ", got " + std::to_string(k));
  if (E.cols() != n_key || F.rows() != k || F.cols() != n_key)
    return Status::error("E and F must both be k × n = " + std::to_string(k) + " × " +
                         std::to_string(n_key));
  if (!std::isfinite(scale) || !all_finite(Q) || !all_finite(K) || !all_finite(V) ||
      !all_finite(E) || !all_finite(F))
    return Status::error("the inputs of Linformer must be finite numbers");

  LinformerResult out;
  // 1, 2. The summaries of the keys and the values.
  out.summary_keys.noalias() = E * K;    // (k, d_k)
  out.summary_values.noalias() = F * V;  // (k, d_v)
  // 3. Every query against the k summaries.
  out.scores.noalias() = Q * out.summary_keys.transpose();  // (n_query, k)
  out.scores *= scale;
  // 4. The softmax of each row (its largest subtracted first).
  out.weights.resize(out.scores.rows(), out.scores.cols());
  for (Eigen::Index i = 0; i < out.scores.rows(); ++i) {
    const float largest = out.scores.row(i).maxCoeff();
    out.weights.row(i) = (out.scores.row(i).array() - largest).exp().matrix();
    out.weights.row(i) /= out.weights.row(i).sum();
  }
  // 5. The output.
  out.output.noalias() = out.weights * out.summary_values;  // (n_query, d_v)
  out.pairs = static_cast<std::int64_t>(Q.rows()) * k;
  if (!all_finite(out.output))
    return Status::error("Linformer's numbers overflowed: the inputs are too large");
  return out;
}

Result<LinformerResult> seeded_linformer(const Matrix& Q, const Matrix& K, const Matrix& V,
                                         float scale, int k, std::uint64_t seed, bool share) {
  const auto n = static_cast<int>(K.rows());
  if (k < 1 || k > n)
    return Status::error("k, the number of summary keys, must be between 1 and n = " +
                         std::to_string(n) + ", got " + std::to_string(k));
  const Matrix E = linformer_projection(k, n, seed);                  // (k, n)
  const Matrix F = share ? E : linformer_projection(k, n, seed + 1);  // (k, n)
  return linformer_attention(Q, K, V, E, F, scale);
}

}  // namespace attnviz
