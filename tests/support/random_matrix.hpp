// Matrices of seeded random numbers for the tests, the same on every machine (core/base/rng.hpp:
// no std::*_distribution, whose numbers differ between standard libraries).
#pragma once

#include "core/base/rng.hpp"
#include "core/base/types.hpp"

#include <cstdint>

namespace attnviz::testing {

// (rows, cols) of numbers uniform in [−spread, spread), drawn from `seed`.
inline Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed,
                            float spread = 2.0f) {
  Matrix m(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c)
      m(r, c) = spread * rng::value(seed, static_cast<std::uint64_t>(r * cols + c));
  return m;
}

}  // namespace attnviz::testing
