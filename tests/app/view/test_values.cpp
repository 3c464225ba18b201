// The engine's numbers as the views read them (app/view/values.hpp).
#include "app/view/values.hpp"

#include <doctest/doctest.h>

#include <limits>

namespace attnviz::view {

TEST_CASE("a heatmap's weights mark the masked cells, and only those") {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  Matrix weights(2, 3), masked(2, 3), shown;
  weights << 1.0f, 0.0f, 0.0f,                     // query 1 sees key 1 only (causal)
      0.25f, 0.0f, 0.75f;                          // a weight of 0 that is not masked
  masked << 2.0f, kMinusInfinity, kMinusInfinity,  //
      1.0f, -3.0e38f, 2.0f;                        // a large negative score is not a mask
  mark_masked_cells(weights, masked, shown);
  Matrix expected(2, 3);
  expected << 1.0f, kMaskedCell, kMaskedCell, 0.25f, 0.0f, 0.75f;
  CHECK(shown == expected);
  // Scores of another shape (a result being recomputed): the weights as they are.
  mark_masked_cells(weights, Matrix::Constant(1, 1, kMinusInfinity), shown);
  CHECK(shown == weights);
}

}  // namespace attnviz::view
