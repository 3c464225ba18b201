// FlashAttention's tiling and online softmax (Dao et al., 2022, Algorithm 1), on one head's
// Q, K and V: α·V computed tile by tile, a block of queries against a block of keys at a time,
// keeping for each query row only its running maximum m, its running sum ℓ and its running
// (unnormalized) output O, never the n_query × n_key matrix of scores or weights.
//
// For each query block, m = −∞, ℓ = 0, O = 0; then for each key block, in passes:
//   1. S = scale · Q_block · K_blockᵀ, −∞ where masked                  (block_q, block_k)
//   2. m_new = max(m, the row's largest score in S)
//   3. rescale = exp(m − m_new)   (what the earlier tiles' sum and output are worth now)
//   4. P = exp(S − m_new)                                                 (block_q, block_k)
//   5. ℓ = ℓ · rescale + Σ_j P,   O = O · rescale + P · V_block           (block_q, d_v)
// and at the end output = O / ℓ (0 for a row whose every key is masked, as the engine has it).
// A tile whose every pair is masked (under the causal mask, keys all after the block's queries)
// is skipped: nothing is loaded or computed.
//
// The scores held at once are block_q × block_k, whatever n is: that is the memory the method
// saves, and what the app's counter shows.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <vector>

namespace attnviz {

struct FlashSettings {
  int query_block = 4;  // queries per tile (B_r in the paper)
  int key_block = 4;    // keys per tile (B_c)
};

// An error naming the setting for a block size below 1 or above Limits::kMaxTokens.
Status validate(const FlashSettings& settings);

// One step of the tiling: a query block against a key block, with each of its rows' state
// before and after (index r: query query_begin + r).
struct FlashTile {
  int query_begin = 0, query_end = 0;        // the queries [begin, end)
  int key_begin = 0, key_end = 0;            // the keys [begin, end)
  bool skipped = false;                      // every pair masked: nothing loaded or computed
  int pairs = 0;                             // unmasked scores computed in this tile
  std::vector<float> max_before, max_after;  // m (−∞ before any unmasked key)
  std::vector<float> sum_before, sum_after;  // ℓ
  std::vector<float> rescale;                // exp(m_before − m_after); 0 while m was −∞
  Matrix output_after;  // (query_end − query_begin, d_v): O after the tile, not yet divided by ℓ
};

struct FlashResult {
  Matrix output;                 // (n_query, d_v): O / ℓ
  std::vector<float> row_max;    // (n_query) the final m: the row's largest unmasked score
  std::vector<float> row_sum;    // (n_query) the final ℓ: Σ_j exp(s_ij − m)
  std::vector<FlashTile> tiles;  // every tile in order (query blocks, then key blocks), if traced
  std::int64_t pairs_computed = 0;  // unmasked scores computed over all tiles
  std::int64_t scores_held = 0;     // the most scores held at once: one tile's (block_q × block_k)
  bool overflow = false;  // a score past float's range was clamped (as AttentionEngine does)
};

// Q (n_query, d_k), K (n_key, d_k), V (n_key, d_v); the score of (i, j) is scale · q_i · k_j,
// masked where `causal` and j > i, or where `mask` (n_query, n_key; 1 = allowed) is 0. With
// `trace`, every tile's states are kept in `tiles`. An error for bad settings, shapes that do not
// match, a scale or an input that is not finite.
Result<FlashResult> flash_attention(const Matrix& Q, const Matrix& K, const Matrix& V, float scale,
                                    bool causal, const MaskMatrix* mask,
                                    const FlashSettings& settings, bool trace);

// Full attention with the same scores: one tile holding every query and key, no trace. What each
// cheaper method is compared with.
Result<FlashResult> full_attention(const Matrix& Q, const Matrix& K, const Matrix& V, float scale,
                                   bool causal, const MaskMatrix* mask);

}  // namespace attnviz
