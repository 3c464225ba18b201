#include "app/view/attention_difference.hpp"

#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace attnviz::view {

void compute_difference(const Matrix& a, const Matrix* masked_a, const Matrix& b,
                        const Matrix* masked_b, bool b_minus_a, AttentionDifference& out) {
  out.values.resize(a.rows(), a.cols());  // no allocation when the shape is unchanged
  out.masked.resize(a.rows(), a.cols());
  const auto masked_in = [](const Matrix* masked, Eigen::Index i, Eigen::Index j) {
    return masked && i < masked->rows() && j < masked->cols() && is_masked((*masked)(i, j));
  };
  double largest = 0, total = 0;
  Eigen::Index counted = 0;
  out.largest_at[0] = out.largest_at[1] = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const bool masked = masked_in(masked_a, i, j) && masked_in(masked_b, i, j);
      out.masked(i, j) = masked ? -std::numeric_limits<float>::infinity() : 0.0f;
      const float v = masked ? 0.0f : (b_minus_a ? b(i, j) - a(i, j) : a(i, j) - b(i, j));
      out.values(i, j) = std::isfinite(v) ? v : 0.0f;
      if (masked) continue;
      const double m = std::abs(static_cast<double>(out.values(i, j)));
      total += m;
      ++counted;
      if (m > largest) {
        largest = m;
        out.largest_at[0] = static_cast<int>(i);
        out.largest_at[1] = static_cast<int>(j);
      }
    }
  out.largest = static_cast<float>(largest);
  out.mean = counted > 0 ? static_cast<float>(total / static_cast<double>(counted)) : 0.0f;
}

void format_signed(char* out, int size, float value) {
  if (size < 2) {
    if (size == 1) out[0] = '\0';
    return;
  }
  format_significant_into(out + 1, size - 1, value, 2);
  const bool positive = std::isfinite(value) && value > 0;
  if (positive)
    out[0] = '+';
  else
    std::memmove(out, out + 1, std::strlen(out + 1) + 1);
}

int label_stride(float cell, float label) {
  if (cell <= 0 || cell >= label) return 1;
  return static_cast<int>(std::ceil(label / cell));
}

DifferenceSummary summarize_difference(const AttentionDifference& difference, bool same_words,
                                       bool snapshot, const char* query, const char* key,
                                       float a_value, float b_value) {
  DifferenceSummary summary;
  const auto add = [&](bool warning) -> char* {
    summary.warning[summary.parts] = warning;
    return summary.text[summary.parts++];
  };
  constexpr int size = DifferenceSummary::kSize;
  if (!same_words)
    std::snprintf(add(true), size,
                  "some words changed since the snapshot: the cells pair up by position");
  if (!(difference.largest > 0)) {
    std::snprintf(add(false), size, "A and B are the same in every cell.");
    return summary;
  }
  char largest[32], mean[32], va[32], vb[32];
  const int i = difference.largest_at[0], j = difference.largest_at[1];
  format_signed(largest, sizeof largest, difference.values(i, j));
  format_significant_into(mean, sizeof mean, difference.mean, 3);
  format_significant_into(va, sizeof va, a_value, 2);
  format_significant_into(vb, sizeof vb, b_value, 2);
  if (!snapshot)  // A − B, as the difference heatmap
    std::snprintf(add(false), size, "largest difference: %s \xe2\x86\x92 %s, %s (A %s, B %s)",
                  query, key, largest, va, vb);
  else  // B − A, as the difference heatmap: from the snapshot (A) to now (B), a fall reads as one
    std::snprintf(add(false), size,
                  "largest change since the snapshot: %s \xe2\x86\x92 %s, %s \xe2\x86\x92 %s (%s)",
                  query, key, va, vb, largest);
  std::snprintf(add(false), size, "mean |A \xe2\x88\x92 B| = %s", mean);
  return summary;
}

void take_snapshot(const AttentionResult& result, const Tokenization& queries,
                   const Tokenization& keys, bool cross, const std::tm& local,
                   AttentionSnapshot& snapshot) {
  const std::size_t heads = result.heads.size();
  snapshot.weights.resize(heads);
  snapshot.masked_scores.resize(heads);
  snapshot.shown_weights.resize(heads);
  for (std::size_t h = 0; h < heads; ++h) {
    snapshot.weights[h] = result.heads[h].weights;
    snapshot.masked_scores[h] = result.heads[h].masked_scores;
    mark_masked_cells(result.heads[h].weights, result.heads[h].masked_scores,
                      snapshot.shown_weights[h]);
  }
  snapshot.query_tokens = queries.tokens;
  snapshot.key_tokens = keys.tokens;
  snapshot.config = result.config;
  snapshot.cross = cross;
  snapshot.taken = true;
  ++snapshot.id;
  std::strftime(snapshot.time, sizeof snapshot.time, "%H:%M:%S", &local);
  std::snprintf(snapshot.short_label, sizeof snapshot.short_label, "snapshot of %s", snapshot.time);
  std::snprintf(snapshot.label, sizeof snapshot.label,
                "snapshot of %s, %d head%s, %d \xc3\x97 %d tokens", snapshot.time,
                static_cast<int>(heads), heads == 1 ? "" : "s", static_cast<int>(result.n_query),
                static_cast<int>(result.n_key));
}

}  // namespace attnviz::view
