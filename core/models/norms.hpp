// The two norms of the models, on one row of d_model values (the fast forward pass and the
// logit lens use this; reference_forward.cpp keeps its own, as a reference should):
//   LayerNorm  y = (x − mean) / √(variance + ε) · weight + bias   (variance with 1/d)
//   RMSNorm    y = weight · x / √(mean(x²) + ε)
#pragma once

#include "core/models/transformer.hpp"

#include <cmath>

namespace attnviz {

inline void normalize_row(const TransformerConfig& c, const float* x, const VectorView& weight,
                          const VectorView& bias, float* y) {
  const int d = c.d_model;
  if (c.norm == NormKind::LayerNorm) {
    float mean = 0.0f;
    for (int j = 0; j < d; ++j) mean += x[j];
    mean /= static_cast<float>(d);
    float variance = 0.0f;
    for (int j = 0; j < d; ++j) variance += (x[j] - mean) * (x[j] - mean);
    variance /= static_cast<float>(d);
    const float inverse = 1.0f / std::sqrt(variance + c.norm_epsilon);
    for (int j = 0; j < d; ++j) y[j] = (x[j] - mean) * inverse * weight.data[j] + bias.data[j];
  } else {
    float mean_square = 0.0f;
    for (int j = 0; j < d; ++j) mean_square += x[j] * x[j];
    mean_square /= static_cast<float>(d);
    const float inverse = 1.0f / std::sqrt(mean_square + c.norm_epsilon);
    for (int j = 0; j < d; ++j) y[j] = weight.data[j] * (inverse * x[j]);
  }
}

}  // namespace attnviz
