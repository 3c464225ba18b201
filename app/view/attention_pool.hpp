// A head's attention, made small for the Model view's tiles: with more tokens than a tile has
// pixels, nearest sampling would drop rows and columns, and with them the strong weights a
// teacher looks for (the diagonal of a previous-token head). Each cell of the picture is the
// largest weight of its block of queries and keys instead. GL-free: unit-tested.
#pragma once

#include "core/base/types.hpp"

#include <algorithm>
#include <span>

namespace attnviz::view {

// Tokens per block, so that n tokens make at most `most` blocks across.
inline int pool_factor(int n, int most) {
  return std::max(1, (n + most - 1) / std::max(1, most));
}

// α (n queries by n keys, causal: row i holds keys 0..i, the rest 0), given by its rows
// (`row(i)`: a span of i + 1 weights), max-pooled into `out`, (ceil(n / factor), ceil(n / factor)).
template <typename RowOf>
void max_pool_causal(int n, int factor, const RowOf& row, Matrix& out) {
  const int blocks = (n + factor - 1) / factor;
  out.setZero(blocks, blocks);  // (blocks, blocks)
  for (int i = 0; i < n; ++i) {
    const std::span<const float> weights = row(i);
    float* pooled = out.row(i / factor).data();
    for (int j = 0; j < static_cast<int>(weights.size()); ++j)
      pooled[j / factor] = std::max(pooled[j / factor], weights[static_cast<std::size_t>(j)]);
  }
}

}  // namespace attnviz::view
