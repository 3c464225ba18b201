// Sparse and local attention patterns as masks (1 = query i may see key j), the presets of the
// scenario's custom mask (Child et al., 2019; Longformer, Beltagy et al., 2020):
//   window w         each query sees the w keys around its own position: ⌊(w − 1)/2⌋ before it,
//                    the rest after (with the causal mask, only those up to it)
//   dilated w, d     the same w keys, d positions apart (d = 1: the window)
//   global tokens    chosen positions see every key, and every query sees them (added to a mask)
//   block b          queries and keys cut into blocks of b positions; a query sees its own block
// Positions are indices: in cross attention query i's "position" meets key i's.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <vector>

namespace attnviz {

// Each an error naming the setting for a width, a dilation or a block below 1, or a global token
// outside the sentence.
Result<MaskMatrix> window_mask(int n_query, int n_key, int width);
Result<MaskMatrix> dilated_mask(int n_query, int n_key, int width, int dilation);
Result<MaskMatrix> block_mask(int n_query, int n_key, int block);
// `mask` with the rows and the columns of `tokens` allowed throughout.
Result<MaskMatrix> with_global_tokens(MaskMatrix mask, const std::vector<int>& tokens);

// The pairs a mask (and the causal mask, when on) leaves to compute, and how many a full
// attention computes (n_query · n_key, or the causal triangle).
struct PairCount {
  std::int64_t computed = 0;
  std::int64_t full = 0;
};
PairCount count_pairs(const MaskMatrix& mask, bool causal);

}  // namespace attnviz
