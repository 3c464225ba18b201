#include "core/models/sampling.hpp"

#include "core/base/rng.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnviz {

Status check(const SamplingSettings& settings) {
  if (!std::isfinite(settings.temperature) || settings.temperature < 0.0f)
    return Status::error("temperature: expected a number of 0 or more (0 picks the most likely)");
  if (settings.top_k < 0) return Status::error("top-k: expected 0 (every token) or more");
  if (!(settings.top_p > 0.0f && settings.top_p <= 1.0f))
    return Status::error("top-p: expected a number above 0 and at most 1");
  return Status::success();
}

std::vector<float> next_token_probabilities(std::span<const float> logits,
                                            const SamplingSettings& settings) {
  const int vocab = static_cast<int>(logits.size());
  std::vector<float> probabilities(logits.size(), 0.0f);
  if (vocab == 0) return probabilities;
  // Ids from the most likely down (ties: the lower id first).
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return logits[static_cast<std::size_t>(a)] > logits[static_cast<std::size_t>(b)];
  });
  if (settings.temperature == 0.0f) {
    probabilities[static_cast<std::size_t>(order[0])] = 1.0f;
    return probabilities;
  }
  // 1. The softmax of logits / T, in double (a small T makes large exponents).
  const double largest = logits[static_cast<std::size_t>(order[0])];
  std::vector<double> weights(logits.size());
  for (int v = 0; v < vocab; ++v)
    weights[static_cast<std::size_t>(v)] =
        std::exp((logits[static_cast<std::size_t>(v)] - largest) / settings.temperature);
  // 2. Top-k, then top-p over what stays: how many of `order` are kept.
  int kept = settings.top_k > 0 ? std::min(settings.top_k, vocab) : vocab;
  double kept_mass = 0.0;
  for (int i = 0; i < kept; ++i) kept_mass += weights[static_cast<std::size_t>(order[i])];
  if (settings.top_p < 1.0f) {
    double reached = 0.0;
    int needed = 0;
    while (needed < kept) {
      reached += weights[static_cast<std::size_t>(order[needed])] / kept_mass;
      ++needed;
      if (reached >= settings.top_p) break;
    }
    kept = needed;
    kept_mass = 0.0;
    for (int i = 0; i < kept; ++i) kept_mass += weights[static_cast<std::size_t>(order[i])];
  }
  // 3. What stays, scaled to sum to 1.
  for (int i = 0; i < kept; ++i)
    probabilities[static_cast<std::size_t>(order[i])] =
        static_cast<float>(weights[static_cast<std::size_t>(order[i])] / kept_mass);
  return probabilities;
}

std::vector<Candidate> top_candidates(std::span<const float> probabilities, int count) {
  std::vector<Candidate> all;
  all.reserve(probabilities.size());
  for (std::size_t v = 0; v < probabilities.size(); ++v)
    all.push_back({static_cast<int>(v), probabilities[v]});
  count = std::clamp(count, 0, static_cast<int>(all.size()));
  std::partial_sort(all.begin(), all.begin() + count, all.end(),
                    [](const Candidate& a, const Candidate& b) {
                      return a.probability > b.probability ||
                             (a.probability == b.probability && a.token < b.token);
                    });
  all.resize(static_cast<std::size_t>(count));
  return all;
}

int sample(std::span<const float> probabilities, std::uint64_t seed, std::uint64_t draw) {
  // u uniform in [0, 1) from the top 53 bits of the draw's random word.
  const double u = static_cast<double>(rng::combine(seed, draw) >> 11) * (1.0 / 9007199254740992.0);
  double total = 0.0;
  for (const float p : probabilities) total += p;
  if (!(total > 0.0)) return top_candidates(probabilities, 1).at(0).token;
  double cumulative = 0.0;
  int last_possible = 0;
  for (std::size_t v = 0; v < probabilities.size(); ++v) {
    if (probabilities[v] <= 0.0f) continue;
    cumulative += probabilities[v] / total;
    last_possible = static_cast<int>(v);
    if (u < cumulative) return static_cast<int>(v);
  }
  return last_possible;  // rounding left u above the last sum
}

Result<std::vector<int>> generate(TransformerForward& forward, int count,
                                  const SamplingSettings& settings, std::uint64_t seed, int stop) {
  if (Status checked = check(settings); !checked) return checked;
  if (forward.size() == 0) return Status::error("generation needs a prompt of at least one token");
  std::vector<int> tokens = forward.tokens();
  std::vector<int> added;
  const int context = forward.model().config().context;
  for (int step = 0; step < count && static_cast<int>(tokens.size()) < context; ++step) {
    const RowVector logits = forward.last_logits();
    const std::vector<float> probabilities =
        next_token_probabilities(std::span(logits.data(), logits.size()), settings);
    const int next = sample(probabilities, seed, static_cast<std::uint64_t>(tokens.size()));
    if (next == stop) break;
    tokens.push_back(next);
    added.push_back(next);
    if (Status ran = forward.run(tokens); !ran) return ran;
  }
  return added;
}

}  // namespace attnviz
