// Questions the views ask of the engine's numbers: is this score masked, and how large is the
// largest number of a matrix (the end of its diverging colour scale)? And the weights as a heatmap
// texture holds them, masked cells marked.
#pragma once

#include "core/base/types.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace attnviz::view {

// A masked score is -inf (the engine's masked_scores): its weight is exactly 0.
inline bool is_masked(float score) {
  return std::isinf(score) && score < 0;
}

// In a heatmap's texture of weights, a masked cell: α is never negative, so the shader draws any
// value below -0.5 as masked (hatched) instead of through the colormap.
inline constexpr float kMaskedCell = -1.0f;

// The weights α as a heatmap shows them: `out` = `weights` with kMaskedCell where the score is
// masked (-inf in `masked_scores`). All three (n_query, n_key); `out` keeps its storage when the
// shape is unchanged.
inline void mark_masked_cells(const Matrix& weights, const Matrix& masked_scores, Matrix& out) {
  out = weights;
  if (masked_scores.rows() != weights.rows() || masked_scores.cols() != weights.cols()) return;
  for (Eigen::Index k = 0; k < out.size(); ++k)
    if (is_masked(masked_scores.data()[k])) out.data()[k] = kMaskedCell;
}

// The largest |x| over the finite entries (1 when there is none), for a diverging scale.
inline float largest_magnitude(const float* values, std::size_t count) {
  float limit = 0;
  for (std::size_t k = 0; k < count; ++k)
    if (std::isfinite(values[k])) limit = std::max(limit, std::abs(values[k]));
  return limit > 0 ? limit : 1.0f;
}

}  // namespace attnviz::view
