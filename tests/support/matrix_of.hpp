// A matrix written out in a test, row by row: matrix_of(2, 3, {1, 2, 3, 4, 5, 6}).
#pragma once

#include "core/base/types.hpp"

#include <initializer_list>

namespace attnviz::testing {

inline Matrix matrix_of(Eigen::Index rows, Eigen::Index cols, std::initializer_list<float> values) {
  Matrix m(rows, cols);
  auto it = values.begin();
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) m(r, c) = *it++;
  return m;
}

}  // namespace attnviz::testing
