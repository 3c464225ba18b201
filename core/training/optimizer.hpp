// What moves the weights: AdamW (Loshchilov and Hutter's decoupled weight decay, as
// torch.optim.AdamW), the gradient clipped to a largest norm first, and a learning rate that
// warms up linearly and then falls along a cosine to a tenth (nanoGPT's schedule).
#pragma once

#include "core/training/parameters.hpp"

#include <vector>

namespace attnviz {

struct AdamWSettings {
  float learning_rate = 1e-3f;  // the largest, after the warm-up
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float epsilon = 1e-8f;
  float weight_decay = 0.1f;  // on matrices only (ParameterTensor::decays)
  float clip_norm = 1.0f;     // the gradient's largest norm (0: not clipped)
  int warmup_steps = 100;
  int total_steps = 1000;  // the cosine reaches its floor here
};

// The learning rate of step `step` (0-based): lr · (step + 1) / warmup during the warm-up, then
// from lr down to lr / 10 along half a cosine, and lr / 10 after total_steps.
float learning_rate_at(const AdamWSettings& settings, int step);

// The gradient's norm over every tensor (√Σ g²), summed in double.
double gradient_norm(const float* gradient, std::size_t count);

class AdamW {
 public:
  AdamW(AdamWSettings settings, const ParameterTable& table);
  // One step on `values` from `gradient` (both laid out by `table`, the one given when made;
  // the gradient clipped in place first). `frozen` tensors (an attention-only model's MLP) are
  // not moved. Returns the gradient's norm before clipping.
  double step(const ParameterTable& table, float* values, float* gradient,
              const std::vector<bool>& frozen = {});
  int steps_taken() const { return steps_; }
  const AdamWSettings& settings() const { return settings_; }

 private:
  AdamWSettings settings_;
  ParameterBuffer first_moment_, second_moment_;
  int steps_ = 0;
};

}  // namespace attnviz
