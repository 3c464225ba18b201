// The Neuron view's history of a cell: one entry per new result, a new history for a new cell.
#include "app/view/cell_history.hpp"

#include <doctest/doctest.h>

namespace attnviz::view {

TEST_CASE("a cell's history adds one entry per new result and starts again for another cell") {
  CellHistory history;
  history.record(1, 0, 2, 1, Compatibility::ScaledDot, 4.0f, 2.0f, 0.5f);
  history.record(1, 0, 2, 1, Compatibility::ScaledDot, 4.0f, 2.0f, 0.5f);  // the same result
  CHECK(history.scores.count() == 1);
  history.record(2, 0, 2, 1, Compatibility::ScaledDot, 6.0f, 3.0f, 0.7f);
  REQUIRE(history.weights.count() == 2);
  CHECK(history.scores.at(0) == 4.0f);  // oldest first
  CHECK(history.scaled.at(1) == 3.0f);
  CHECK(history.weights.at(1) == 0.7f);
  history.record(2, 0, 2, 0, Compatibility::ScaledDot, 1.0f, 0.5f, 0.3f);  // another key
  CHECK(history.scores.count() == 1);
  CHECK(history.scores.at(0) == 1.0f);
  history.record(2, 0, 2, 0, Compatibility::Dot, 1.0f, 1.0f, 0.3f);  // another score function
  CHECK(history.scaled.count() == 1);
}

TEST_CASE("a series keeps its last values, oldest first, in a ring of fixed size") {
  Series series;
  for (int k = 0; k < Series::kCapacity + 5; ++k) series.push(static_cast<float>(k));
  CHECK(series.count() == Series::kCapacity);
  CHECK(series.at(0) == 5.0f);
  CHECK(series.at(Series::kCapacity - 1) == static_cast<float>(Series::kCapacity + 4));
  series.clear();
  CHECK(series.count() == 0);
}

}  // namespace attnviz::view
