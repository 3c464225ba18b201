// attnviz-cli bench (see bench.hpp).
#include "cli/bench.hpp"

#include "cli/allocation_counter.hpp"
#include "core/base/rng.hpp"
#include "core/engine/attention.hpp"
#include "core/engine/parameters.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

namespace attnviz::cli {

namespace {

// The engine is measured beyond a scenario's token limit: the PyTorch comparison's large shape
// (1024 tokens, d_model 768, 12 heads) is the size of BERT's and GPT-2's contexts.
constexpr int kMaxBenchTokens = 1024;
constexpr int kMaxThreads = AttentionEngine::kMaxThreads;
constexpr int kMaxRepeat = 10'000'000;
constexpr int kMinRepeat = 20;
constexpr double kTargetSeconds = 1.0;
constexpr std::uint64_t kSeed = 1;

bool parse_int(const std::string& text, int low, int high, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= low && out <= high;
}

// Deterministic embeddings in [-1, 1), from the project's counter-based generator.
void random_embeddings(Matrix& X, Eigen::Index rows, Eigen::Index cols, std::string_view name) {
  const std::uint64_t stream = rng::combine(rng::hash(name), kSeed);
  X.resize(rows, cols);  // (rows, d_model)
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c)
      X(r, c) = rng::value(stream, static_cast<std::uint64_t>(r * cols + c));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The q-quantile (0..1) of sorted samples, by the nearest rank.
double quantile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

Status parse_bench_options(int argc, char** argv, BenchOptions& options) {
  bool have_tokens = false, have_d_model = false, have_heads = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    const std::string value = has_value ? argv[i + 1] : std::string();
    // An integer option: "--name needs a number from LOW to HIGH" when missing or out of range.
    const auto integer = [&](int low, int high, int& out) -> Status {
      if (!has_value || !parse_int(value, low, high, out))
        return Status::error(arg + " needs a number from " + std::to_string(low) + " to " +
                             std::to_string(high) + (has_value ? ", got '" + value + "'" : ""));
      ++i;
      return Status::success();
    };
    Status problem = Status::success();
    if (arg == "--tokens") {
      problem = integer(1, kMaxBenchTokens, options.tokens);
      have_tokens = true;
    } else if (arg == "--d-model") {
      problem = integer(1, Limits::kMaxDModel, options.d_model);
      have_d_model = true;
    } else if (arg == "--heads") {
      problem = integer(1, Limits::kMaxHeads, options.heads);
      have_heads = true;
    } else if (arg == "--d-k") {
      problem = integer(1, Limits::kMaxHeadDim, options.d_k);
    } else if (arg == "--d-v") {
      problem = integer(1, Limits::kMaxHeadDim, options.d_v);
    } else if (arg == "--cross") {
      problem = integer(1, kMaxBenchTokens, options.cross);
    } else if (arg == "--threads") {
      problem = integer(1, kMaxThreads, options.threads);
    } else if (arg == "--repeat") {
      problem = integer(1, kMaxRepeat, options.repeat);
    } else if (arg == "--compat") {
      const std::optional<Compatibility> c = has_value ? parse_compatibility(value) : std::nullopt;
      if (!c)
        return Status::error("--compat needs dot, scaled_dot, general, additive or cosine" +
                             (has_value ? ", got '" + value + "'" : ""));
      options.compatibility = *c;
      ++i;
    } else if (arg == "--causal") {
      options.causal = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return Status::error("unknown option '" + arg + "' (see --help)");
    } else {
      return Status::error("unexpected argument '" + arg + "' (see --help)");
    }
    if (!problem) return problem;
  }
  if (!have_tokens) return Status::error("bench needs --tokens N");
  if (!have_d_model) return Status::error("bench needs --d-model D");
  if (!have_heads) return Status::error("bench needs --heads H");
  if (options.d_k == 0) {
    if (options.d_model % options.heads != 0)
      return Status::error("--heads " + std::to_string(options.heads) +
                           " does not divide --d-model " + std::to_string(options.d_model) +
                           ": give --d-k (and --d-v)");
    options.d_k = options.d_model / options.heads;
  }
  if (options.d_v == 0) options.d_v = options.d_k;
  // The rest of the Limits (heads x d_k at most 1024, say) are usage errors too.
  return validate(bench_config(options));
}

AttentionConfig bench_config(const BenchOptions& options) {
  AttentionConfig config;
  config.d_model = options.d_model;
  config.heads = options.heads;
  config.d_k = options.d_k;
  config.d_v = options.d_v;
  config.d_att = options.d_k;
  config.compatibility = options.compatibility;
  config.causal = options.causal;
  return config;
}

Result<BenchResult> run_bench(const BenchOptions& options) {
  const AttentionConfig config = bench_config(options);
  if (Status status = validate(config); !status) return status;

  const Parameters parameters = seeded_parameters(config, kSeed);
  Matrix X_query, X_key;
  random_embeddings(X_query, options.tokens, options.d_model, "bench X_query");
  if (options.cross > 0) random_embeddings(X_key, options.cross, options.d_model, "bench X_key");
  const Matrix& X_keys = options.cross > 0 ? X_key : X_query;

  AttentionEngine engine;
  engine.set_threads(options.threads);  // the engine's own helper threads (core/engine/workers.hpp)
  // Warm-up: the first compute allocates the buffers; a few more warm the caches.
  const auto warm_start = std::chrono::steady_clock::now();
  int warm_runs = 0;
  do {
    if (Status status = engine.compute(X_query, X_keys, parameters, config); !status) return status;
    ++warm_runs;
  } while (warm_runs < 3 || (warm_runs < 1000 && seconds_since(warm_start) < 0.05));
  const double warm_seconds = seconds_since(warm_start) / warm_runs;

  int repeat = options.repeat;
  if (repeat == 0)
    repeat = static_cast<int>(std::clamp(kTargetSeconds / std::max(warm_seconds, 1e-9),
                                         static_cast<double>(kMinRepeat), 1e6));
  std::vector<double> samples(static_cast<std::size_t>(repeat));  // µs, allocated before counting

  BenchResult result;
  bool ok = true;
  start_counting_allocations();
  for (double& sample : samples) {
    const auto start = std::chrono::steady_clock::now();
    ok = engine.compute(X_query, X_keys, parameters, config).is_ok() && ok;
    sample = seconds_since(start) * 1e6;
  }
  result.allocations = stop_counting_allocations();
  if (!ok) return Status::error("a recompute failed");

  std::sort(samples.begin(), samples.end());
  result.median_us = quantile(samples, 0.5);
  result.p90_us = quantile(samples, 0.9);
  result.repeat = repeat;
  return result;
}

}  // namespace attnviz::cli
