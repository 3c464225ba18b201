// Rotary positions (RoPE) on one row of queries or keys, as llama2.c does it: the fast forward
// pass (transformer_forward.cpp) and training's backward pass use this one; the plain references
// (reference_forward.cpp, reference_training.cpp) keep their own, as a reference should.
#pragma once

#include <cmath>

namespace attnviz {

// Turns each adjacent pair (2i, 2i + 1) of every head of `row` (`width` numbers, heads of
// `d_head`) by position · θ^(−2i / d_head). `direction` −1 turns it back by the same angle: the
// rotation's transpose, which is RoPE's backward pass.
inline void rotate_pairs(float* row, int width, int d_head, int position, float theta,
                         float direction = 1.0f) {
  for (int i = 0; i < width; i += 2) {
    const int within_head = i % d_head;
    const float frequency =
        1.0f / std::pow(theta, static_cast<float>(within_head) / static_cast<float>(d_head));
    const float angle = static_cast<float>(position) * frequency;
    const float cos_a = std::cos(angle), sin_a = direction * std::sin(angle);
    const float v0 = row[i], v1 = row[i + 1];
    row[i] = v0 * cos_a - v1 * sin_a;
    row[i + 1] = v0 * sin_a + v1 * cos_a;
  }
}

}  // namespace attnviz
