// The Model view's tiles: α max-pooled by blocks (app/view/attention_pool.hpp).
#include "app/view/attention_pool.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace attnviz::view {

TEST_CASE("pool_factor: at most `most` blocks across") {
  CHECK(pool_factor(64, 64) == 1);
  CHECK(pool_factor(65, 64) == 2);
  CHECK(pool_factor(256, 64) == 4);
  CHECK(pool_factor(1, 64) == 1);
}

TEST_CASE("max pooling keeps a previous-token diagonal that nearest sampling would drop") {
  const int n = 8;
  // Row i: all on key i − 1 (the first on itself).
  std::vector<std::vector<float>> rows(n);
  for (int i = 0; i < n; ++i) {
    rows[static_cast<std::size_t>(i)].assign(static_cast<std::size_t>(i + 1), 0.0f);
    rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(i == 0 ? 0 : i - 1)] = 1.0f;
  }
  Matrix pooled;
  max_pool(
      n, n, 2, [&](int i) { return std::span<const float>(rows[static_cast<std::size_t>(i)]); },
      pooled);
  REQUIRE(pooled.rows() == 4);
  REQUIRE(pooled.cols() == 4);
  for (int b = 0; b < 4; ++b) {
    CHECK(pooled(b, b) == 1.0f);                 // rows 2b, 2b+1 reach keys 2b−1, 2b
    if (b > 0) CHECK(pooled(b, b - 1) == 1.0f);  // key 2b − 1 lies in block b − 1
    for (int c = b + 1; c < 4; ++c) CHECK(pooled(b, c) == 0.0f);  // masked: nothing
  }
  // Nearest sampling of rows 0, 2, 4, 6 and keys 0, 2, 4, 6 would see only key 0 of row 0.
}

TEST_CASE("an odd number of tokens: the last block is partial") {
  const int n = 5;
  std::vector<std::vector<float>> rows(n);
  for (int i = 0; i < n; ++i)
    rows[static_cast<std::size_t>(i)].assign(static_cast<std::size_t>(i + 1), 1.0f / (i + 1));
  Matrix pooled;
  max_pool(
      n, n, 2, [&](int i) { return std::span<const float>(rows[static_cast<std::size_t>(i)]); },
      pooled);
  REQUIRE(pooled.rows() == 3);
  CHECK(pooled(0, 0) == 1.0f);  // row 0: all on key 0
  CHECK(pooled(2, 2) == 0.2f);  // row 4 (alone in its block): 1/5 on key 4
  CHECK(pooled(2, 0) == 0.2f);
  CHECK(pooled(1, 0) == doctest::Approx(1.0f / 3));  // rows 2 and 3 on keys 0, 1: 1/3 and 1/4
}

TEST_CASE("an encoder's full rows, and a pair filter's rectangle of queries by keys") {
  // 3 queries by 5 keys, row i all on key 4 − i (a look ahead that a causal pooling would drop).
  std::vector<std::vector<float>> rows(3, std::vector<float>(5, 0.0f));
  for (int i = 0; i < 3; ++i)
    rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(4 - i)] = 1;
  Matrix pooled;
  max_pool(
      3, 5, 2, [&](int i) { return std::span<const float>(rows[static_cast<std::size_t>(i)]); },
      pooled);
  REQUIRE(pooled.rows() == 2);
  REQUIRE(pooled.cols() == 3);
  CHECK(pooled(0, 2) == 1.0f);  // row 0 on key 4
  CHECK(pooled(0, 1) == 1.0f);  // row 1 on key 3
  CHECK(pooled(1, 1) == 1.0f);  // row 2 on key 2
  CHECK(pooled(1, 2) == 0.0f);
  CHECK(pooled(0, 0) == 0.0f);
  // A row longer than n_key is read only up to n_key.
  std::vector<float> long_row(9, 0.5f);
  max_pool(
      1, 2, 1, [&](int) { return std::span<const float>(long_row); }, pooled);
  CHECK(pooled.cols() == 2);
}

}  // namespace attnviz::view
