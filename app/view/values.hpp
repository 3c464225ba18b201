// Two questions the views ask of the engine's numbers: is this score masked, and how large is the
// largest number of a matrix (the end of its diverging colour scale)?
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace attnviz::view {

// A masked score is -inf (the engine's masked_scores): its weight is exactly 0.
inline bool is_masked(float score) {
  return std::isinf(score) && score < 0;
}

// The largest |x| over the finite entries (1 when there is none), for a diverging scale.
inline float largest_magnitude(const float* values, std::size_t count) {
  float limit = 0;
  for (std::size_t k = 0; k < count; ++k)
    if (std::isfinite(values[k])) limit = std::max(limit, std::abs(values[k]));
  return limit > 0 ? limit : 1.0f;
}

}  // namespace attnviz::view
