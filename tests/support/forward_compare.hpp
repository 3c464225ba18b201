// The fast forward pass (transformer_forward.hpp) against the plain reference
// (reference_forward.hpp): every intermediate of every position and layer, as a difference
// relative to the reference's scale. For the decoder's tests, the encoder's and the
// encoder–decoder's (its cross-attention too).
#pragma once

#include "core/base/rng.hpp"
#include "core/models/reference_forward.hpp"
#include "core/models/transformer_forward.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::testing {

inline std::vector<int> seeded_tokens(int count, int vocab, std::uint64_t seed) {
  std::vector<int> tokens;
  tokens.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    tokens.push_back(static_cast<int>(rng::combine(seed, static_cast<std::uint64_t>(i)) %
                                      static_cast<std::uint64_t>(vocab)));
  return tokens;
}

// The largest |a − b| over the largest |b| (1 when b is all zeros): a difference relative to the
// vector's scale, as the issue asks.
inline double relative_difference(const float* a, const float* b, int count) {
  double largest_difference = 0.0, scale = 0.0;
  for (int i = 0; i < count; ++i) {
    largest_difference = std::max(largest_difference, std::fabs(double{a[i]} - double{b[i]}));
    scale = std::max(scale, std::fabs(double{b[i]}));
  }
  return largest_difference / std::max(scale, 1e-30);
}

// Every intermediate of `fast` against `reference`, position by position, layer by layer;
// returns the largest relative difference and prints where it was.
inline double compare(const TransformerForward& fast, const ReferenceForward& reference) {
  const TransformerConfig& c = fast.model().config();
  double worst = 0.0;
  std::string where;
  const auto check = [&](const std::string& name, const float* a, const std::vector<float>& b) {
    const double difference = relative_difference(a, b.data(), static_cast<int>(b.size()));
    if (difference > worst) {
      worst = difference;
      where = name;
    }
  };
  for (int i = 0; i < fast.size(); ++i) {
    for (int l = 0; l < c.n_layers; ++l) {
      const LayerActivations& a = fast.layer(l);
      const ReferenceForward::LayerRow& r = reference.row(i, l);
      const std::string at = "position " + std::to_string(i) + " layer " + std::to_string(l);
      check(at + " normalized", a.normalized.row(i), r.normalized);
      check(at + " queries", a.queries.row(i), r.queries);
      check(at + " keys", a.keys.row(i), r.keys);
      check(at + " values", a.values.row(i), r.values);
      for (int h = 0; h < c.n_heads; ++h)
        check(at + " attention of head " + std::to_string(h), fast.attention_row(l, h, i).data(),
              r.attention[static_cast<std::size_t>(h)]);
      check(at + " head outputs", a.head_outputs.row(i), r.head_outputs);
      check(at + " attention output", a.attention_output.row(i), r.attention_output);
      check(at + " residual after attention", a.residual_mid.row(i), r.residual_mid);
      if (c.cross_attention) {  // an encoder–decoder's decoder
        check(at + " cross queries", a.cross_queries.row(i), r.cross_queries);
        for (int h = 0; h < c.n_heads; ++h)
          check(at + " cross-attention of head " + std::to_string(h),
                fast.cross_attention_row(l, h, i).data(),
                r.cross_attention[static_cast<std::size_t>(h)]);
        check(at + " cross head outputs", a.cross_head_outputs.row(i), r.cross_head_outputs);
        check(at + " cross-attention output", a.cross_attention_output.row(i),
              r.cross_attention_output);
        check(at + " residual after cross-attention", a.residual_cross.row(i), r.residual_cross);
      }
      check(at + " MLP output", a.mlp_output.row(i), r.mlp_output);
      check(at + " residual after the MLP", a.residual_out.row(i), r.residual_out);
    }
    check("position " + std::to_string(i) + " final norm", fast.final_normalized().row(i),
          reference.final_normalized(i));
    if (fast.model().predicts_tokens())
      check("position " + std::to_string(i) + " logits", fast.logits(i).data(),
            reference.logits(i));
  }
  MESSAGE("largest relative difference " << worst << " (" << where << ")");
  return worst;
}

}  // namespace attnviz::testing
