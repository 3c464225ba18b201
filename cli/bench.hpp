// attnviz-cli bench: times a full recompute of attention (AttentionEngine::compute from X: every
// intermediate the app shows, all heads, W_O) on deterministic random inputs, after warm-up.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <string>

namespace attnviz::cli {

struct BenchOptions {
  int tokens = 0;  // n_query (and n_key in self-attention)
  int d_model = 0;
  int heads = 0;
  int d_k = 0;    // 0: d_model / heads
  int d_v = 0;    // 0: d_k
  int cross = 0;  // n_key of a separate source sentence; 0: self-attention
  int threads = 1;
  int repeat = 0;  // 0: enough for about a second, and at least 20
  Compatibility compatibility = Compatibility::ScaledDot;
  bool causal = false;
};

struct BenchResult {
  double median_us = 0;
  double p90_us = 0;
  long allocations = 0;  // heap allocations made by the timed (steady-state) recomputes
  int repeat = 0;
};

// Parses the arguments after "bench" into options; an error is a one-line message (a usage
// error: a shape outside the Limits too).
Status parse_bench_options(int argc, char** argv, BenchOptions& options);

// The engine's configuration for the options' shape.
AttentionConfig bench_config(const BenchOptions& options);

// Runs the benchmark. An error is the engine's.
Result<BenchResult> run_bench(const BenchOptions& options);

}  // namespace attnviz::cli
