#include "core/training/optimizer.hpp"

#include <cmath>
#include <numbers>

namespace attnviz {

float learning_rate_at(const AdamWSettings& s, int step) {
  if (step < s.warmup_steps)
    return s.learning_rate * static_cast<float>(step + 1) / static_cast<float>(s.warmup_steps);
  const float floor = s.learning_rate / 10.0f;
  if (step >= s.total_steps || s.total_steps <= s.warmup_steps) return floor;
  const double progress = static_cast<double>(step - s.warmup_steps) /
                          static_cast<double>(s.total_steps - s.warmup_steps);
  const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));  // 1 → 0
  return floor + static_cast<float>(cosine) * (s.learning_rate - floor);
}

double gradient_norm(const float* gradient, std::size_t count) {
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i)
    sum += static_cast<double>(gradient[i]) * static_cast<double>(gradient[i]);
  return std::sqrt(sum);
}

AdamW::AdamW(AdamWSettings settings, const ParameterTable& table)
    : settings_(settings), first_moment_(table.size(), 0.0f), second_moment_(table.size(), 0.0f) {}

double AdamW::step(const ParameterTable& table, float* values, float* gradient,
                   const std::vector<bool>& frozen) {
  const double norm = gradient_norm(gradient, table.size());
  if (settings_.clip_norm > 0.0f && norm > settings_.clip_norm) {
    const auto shrink = static_cast<float>(settings_.clip_norm / norm);
    const std::size_t count = table.size();
    for (std::size_t i = 0; i < count; ++i) gradient[i] *= shrink;
  }
  const float lr = learning_rate_at(settings_, steps_);
  ++steps_;
  const float b1 = settings_.beta1, b2 = settings_.beta2;
  const auto bias1 = static_cast<float>(1.0 - std::pow(static_cast<double>(b1), steps_));
  const auto bias2 = static_cast<float>(1.0 - std::pow(static_cast<double>(b2), steps_));
  const auto& tensors = table.tensors();
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (k < frozen.size() && frozen[k]) continue;
    const ParameterTensor& tensor = tensors[k];
    const float decay = tensor.decays() ? settings_.weight_decay : 0.0f;
    const float epsilon = settings_.epsilon;
    // One pass over the tensor's four arrays, which the compiler vectorizes (its bounds and
    // pointers held in locals; the same operations in the same order as one at a time, so the
    // same floats).
    const std::size_t count = tensor.count();
    float* value = values + tensor.offset;
    const float* grad = gradient + tensor.offset;
    float* first = first_moment_.data() + tensor.offset;
    float* second = second_moment_.data() + tensor.offset;
    for (std::size_t i = 0; i < count; ++i) {
      const float g = grad[i];
      first[i] = b1 * first[i] + (1.0f - b1) * g;
      second[i] = b2 * second[i] + (1.0f - b2) * g * g;
      const float m = first[i] / bias1, v = second[i] / bias2;
      value[i] -= lr * (m / (std::sqrt(v) + epsilon) + decay * value[i]);
    }
  }
  return norm;
}

}  // namespace attnviz
