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

// α (n_query rows by n_key keys), given by its rows (`row(i)`: a span of at most n_key weights;
// a decoder's row i holds keys 0..i, the rest taken as 0), max-pooled into `out`,
// (ceil(n_query / factor), ceil(n_key / factor)).
template <typename RowOf>
void max_pool(int n_query, int n_key, int factor, const RowOf& row, Matrix& out) {
  out.setZero((n_query + factor - 1) / factor, (n_key + factor - 1) / factor);  // (blocks, blocks)
  for (int i = 0; i < n_query; ++i) {
    const std::span<const float> weights = row(i);
    float* pooled = out.row(i / factor).data();
    const int keys = std::min(n_key, static_cast<int>(weights.size()));
    for (int j = 0; j < keys; ++j)
      pooled[j / factor] = std::max(pooled[j / factor], weights[static_cast<std::size_t>(j)]);
  }
}

}  // namespace attnviz::view
