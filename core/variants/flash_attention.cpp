#include "core/variants/flash_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attnviz {

namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

Status check_block(int size, const char* name) {
  if (size < 1 || size > Limits::kMaxTokens)
    return Status::error(std::string(name) + " must be between 1 and " +
                         std::to_string(Limits::kMaxTokens) + " tokens, got " +
                         std::to_string(size));
  return Status::success();
}

}  // namespace

Status validate(const FlashSettings& settings) {
  if (Status status = check_block(settings.query_block, "the query block"); !status) return status;
  return check_block(settings.key_block, "the key block");
}

Result<FlashResult> flash_attention(const Matrix& Q, const Matrix& K, const Matrix& V, float scale,
                                    bool causal, const MaskMatrix* mask,
                                    const FlashSettings& settings, bool trace) {
  if (Status status = validate(settings); !status) return status;
  const Eigen::Index n_query = Q.rows(), n_key = K.rows(), d_v = V.cols();
  if (K.cols() != Q.cols() || V.rows() != n_key)
    return Status::error("Q, K and V do not match: Q has " + std::to_string(Q.cols()) +
                         " columns and K " + std::to_string(K.cols()) + "; K has " +
                         std::to_string(n_key) + " rows and V " + std::to_string(V.rows()));
  if (mask && (mask->rows() != n_query || mask->cols() != n_key))
    return Status::error("the mask is not n_query × n_key");
  if (!std::isfinite(scale) || !all_finite(Q) || !all_finite(K) || !all_finite(V))
    return Status::error("the inputs of FlashAttention must be finite numbers");
  const auto allowed = [&](Eigen::Index i, Eigen::Index j) {
    return !(causal && j > i) && (!mask || (*mask)(i, j) != 0);
  };

  FlashResult out;
  out.output.setZero(n_query, d_v);
  out.row_max.assign(static_cast<std::size_t>(n_query), kMinusInfinity);
  out.row_sum.assign(static_cast<std::size_t>(n_query), 0.0f);
  const int block_q = settings.query_block, block_k = settings.key_block;
  out.scores_held =
      std::min<std::int64_t>(block_q, n_query) * std::min<std::int64_t>(block_k, n_key);
  Matrix scores, weights, running;  // (block_q, block_k), (block_q, block_k), (block_q, d_v)

  for (Eigen::Index q0 = 0; q0 < n_query; q0 += block_q) {
    const Eigen::Index rows = std::min<Eigen::Index>(block_q, n_query - q0);
    running.setZero(rows, d_v);  // O
    std::vector<float> m(static_cast<std::size_t>(rows), kMinusInfinity),
        l(static_cast<std::size_t>(rows), 0.0f);
    for (Eigen::Index k0 = 0; k0 < n_key; k0 += block_k) {
      const Eigen::Index cols = std::min<Eigen::Index>(block_k, n_key - k0);
      FlashTile tile;
      tile.query_begin = static_cast<int>(q0);
      tile.query_end = static_cast<int>(q0 + rows);
      tile.key_begin = static_cast<int>(k0);
      tile.key_end = static_cast<int>(k0 + cols);
      if (trace) {
        tile.max_before = m;
        tile.sum_before = l;
      }
      int pairs = 0;
      for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) pairs += allowed(q0 + i, k0 + j) ? 1 : 0;
      tile.skipped = pairs == 0;
      tile.pairs = pairs;
      std::vector<float> rescale(static_cast<std::size_t>(rows), 1.0f);
      if (!tile.skipped) {
        // 1. The tile's scores, −∞ where masked.                          (rows, cols)
        scores.noalias() = Q.middleRows(q0, rows) * K.middleRows(k0, cols).transpose();
        scores *= scale;
        for (Eigen::Index i = 0; i < rows; ++i)
          for (Eigen::Index j = 0; j < cols; ++j) {
            float& s = scores(i, j);
            if (!allowed(q0 + i, k0 + j)) {
              s = kMinusInfinity;
            } else if (!std::isfinite(s)) {  // past float's range: clamped, as the engine does
              s = s > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
              out.overflow = true;
            }
          }
        weights.resize(rows, cols);
        for (Eigen::Index i = 0; i < rows; ++i) {
          const auto r = static_cast<std::size_t>(i);
          // 2. The new running maximum; 3. what the earlier tiles are worth now.
          const float m_new = std::max(m[r], scores.row(i).maxCoeff());
          if (m_new == kMinusInfinity) {  // no unmasked key yet in this row: nothing changes
            weights.row(i).setZero();
            continue;
          }
          rescale[r] = m[r] == kMinusInfinity ? 0.0f : std::exp(m[r] - m_new);
          // 4. The tile's weights against the new maximum (exp(−∞) = 0 where masked).
          for (Eigen::Index j = 0; j < cols; ++j) weights(i, j) = std::exp(scores(i, j) - m_new);
          // 5. The running sum and output, the earlier part rescaled.
          l[r] = l[r] * rescale[r] + weights.row(i).sum();
          running.row(i) *= rescale[r];
          m[r] = m_new;
        }
        running.noalias() += weights * V.middleRows(k0, cols);  // (rows, d_v)
        out.pairs_computed += pairs;
      }
      if (trace) {
        tile.max_after = m;
        tile.sum_after = l;
        tile.rescale = rescale;
        tile.output_after = running;
        out.tiles.push_back(std::move(tile));
      }
    }
    // The rows' outputs: O / ℓ (0 where every key was masked).
    for (Eigen::Index i = 0; i < rows; ++i) {
      const auto r = static_cast<std::size_t>(i);
      out.row_max[static_cast<std::size_t>(q0 + i)] = m[r];
      out.row_sum[static_cast<std::size_t>(q0 + i)] = l[r];
      if (l[r] > 0.0f) out.output.row(q0 + i) = running.row(i) / l[r];
    }
  }
  return out;
}

Result<FlashResult> full_attention(const Matrix& Q, const Matrix& K, const Matrix& V, float scale,
                                   bool causal, const MaskMatrix* mask) {
  return flash_attention(Q, K, V, scale, causal, mask, {Limits::kMaxTokens, Limits::kMaxTokens},
                         false);
}

}  // namespace attnviz
