// The next token: probabilities from logits with a temperature, top-k and top-p (nucleus)
// filtering, and greedy or seeded sampling. Deterministic: the same seed picks the same tokens
// on every machine (core/base/rng.hpp, no std::*_distribution).
//   p_v = exp(logit_v / T) / Σ exp(logit_u / T)   (T = 0: all on the largest logit, greedy)
//   top-k: only the k most likely stay (k = 0: all);
//   top-p: only the fewest most likely whose probabilities reach p stay (p = 1: all);
//   what stays is scaled to sum to 1.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer_forward.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace attnviz {

struct SamplingSettings {
  float temperature = 1.0f;  // 0: greedy
  int top_k = 0;             // 0: every token
  float top_p = 1.0f;        // in (0, 1]
};

// An error for a temperature that is negative or not finite, a negative k, or p outside (0, 1].
Status check(const SamplingSettings& settings);

// The distribution the next token is drawn from (vocab_size entries; those filtered out are 0).
// `settings` must pass check().
std::vector<float> next_token_probabilities(std::span<const float> logits,
                                            const SamplingSettings& settings);

struct Candidate {
  int token = 0;
  float probability = 0.0f;
};
// The `count` most likely tokens, most likely first (ties: the lower id first).
std::vector<Candidate> top_candidates(std::span<const float> probabilities, int count);

// A token drawn from `probabilities` with draw number `draw` of `seed`: the same pair, the same
// token. The largest probability when every entry is 0.
int sample(std::span<const float> probabilities, std::uint64_t seed, std::uint64_t draw);

// Continues `forward`'s tokens by `count` tokens (fewer at the model's context or when `stop`,
// if not negative, comes), each drawn by `settings` with `seed`, the cache reused each step.
// The tokens added, or an error from check() or the forward pass.
Result<std::vector<int>> generate(TransformerForward& forward, int count,
                                  const SamplingSettings& settings, std::uint64_t seed,
                                  int stop = -1);

}  // namespace attnviz
