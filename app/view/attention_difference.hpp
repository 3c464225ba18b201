// Two attention maps compared cell by cell, as the Compare view shows them: the difference, its
// largest cell and its mean, a signed number's text, and the line under the heatmaps that says
// what changed. GL-free (unit-tested in tests/app/view/test_attention_difference.cpp).
#pragma once

#include "core/base/types.hpp"
#include "core/engine/attention.hpp"
#include "core/text/tokenizer.hpp"

#include <cstdint>
#include <ctime>
#include <vector>

namespace attnviz::view {

// A − B (or, with `b_minus_a`, B − A) cell by cell, each non-finite difference as 0. A cell
// masked in both (masked scores −∞; a null mask masks nothing) is no difference of weights but no
// weight at all: it is marked in `masked` (−∞) and left out of the largest and the mean, which
// are over the cells a query can see. Buffers are reused: no allocation when the shape stays.
struct AttentionDifference {
  Matrix values;               // (n_query, n_key)
  Matrix masked;               // (n_query, n_key): −∞ where both are masked, else 0
  float largest = 0;           // the largest |difference|
  float mean = 0;              // the mean |difference|
  int largest_at[2] = {0, 0};  // its cell (query, key); the first of equal ones
};
void compute_difference(const Matrix& a, const Matrix* masked_a, const Matrix& b,
                        const Matrix* masked_b, bool b_minus_a, AttentionDifference& out);

// A weight difference with its sign: "+0.42", "-0.050", "+0.0031" (differences of a few
// thousandths keep two significant digits), "0". Written into `out` (`size` bytes).
void format_signed(char* out, int size, float value);

// Every `stride`-th label fits where a label needs `label` pixels and a cell is `cell` wide.
int label_stride(float cell, float label);

// The parts of the line under the heatmaps (at most 3, each flagged when it is a warning): that
// the words changed since the snapshot, then the largest difference and the mean; or that A and
// B are the same in every cell. `query` and `key` name the largest difference's cell;
// `a_value` and `b_value` are its weights. Two heads (`snapshot` false): A − B; a snapshot: the
// change from it (A) to now (B).
// Written into fixed buffers: composing it every frame allocates nothing.
struct DifferenceSummary {
  static constexpr int kSize = 192;
  int parts = 0;
  char text[3][kSize] = {};
  bool warning[3] = {};
};
DifferenceSummary summarize_difference(const AttentionDifference& difference, bool same_words,
                                       bool snapshot, const char* query, const char* key,
                                       float a_value, float b_value);

// A snapshot of every head's weights and of the tokens, and what it was of ("Take snapshot"):
// the A of the Compare view against now.
struct AttentionSnapshot {
  bool taken = false;
  std::uint64_t id = 0;               // increases with every snapshot (its texture's version)
  std::vector<Matrix> weights;        // per head (n_query, n_key)
  std::vector<Matrix> masked_scores;  // per head, −∞ where masked
  std::vector<Matrix> shown_weights;  // the weights with masked cells marked, for the texture
  std::vector<Token> query_tokens, key_tokens;
  AttentionConfig config;
  bool cross = false;
  char time[16] = "";         // "16:02:11"
  char label[160] = "";       // "snapshot of 16:02:11, 2 heads, 5 × 5 tokens"
  char short_label[48] = "";  // "snapshot of 16:02:11"
};
// Takes one of `result` (its tokens: `queries`, `keys`) at the local time `local`.
void take_snapshot(const AttentionResult& result, const Tokenization& queries,
                   const Tokenization& keys, bool cross, const std::tm& local,
                   AttentionSnapshot& snapshot);

}  // namespace attnviz::view
