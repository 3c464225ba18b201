// Google Benchmark micro benchmarks of the attention engine's stages
// (core/engine/attention_stages.hpp), of a full recompute (AttentionEngine::compute) and of a
// pipeline run (tokenize, embed, compute). Built only when libbenchmark-dev is installed; run by
// `make bench`, not by ctest.
//
// Shapes are (tokens, d_model, heads) with d_k = d_v = d_model / heads:
//   classroom (8, 32, 4) and (32, 64, 8), medium (128, 256, 4), large (1024, 768, 12).
// Timings are per call, on one thread.
#include "core/base/rng.hpp"
#include "core/document/scenario.hpp"
#include "core/engine/attention.hpp"
#include "core/engine/attention_stages.hpp"
#include "core/engine/parameters.hpp"
#include "core/models/encoder_decoder.hpp"
#include "core/models/model.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/pipeline/product_workers.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace attnviz;

// One shape's inputs, computed once: X, the parameters, and a full result to take heads from.
struct Fixture {
  AttentionConfig config;
  Parameters parameters;
  Matrix X;  // (tokens, d_model)
  AttentionEngine engine;

  Fixture(const benchmark::State& state, Compatibility compatibility = Compatibility::ScaledDot) {
    const auto tokens = static_cast<Eigen::Index>(state.range(0));
    config.d_model = static_cast<int>(state.range(1));
    config.heads = static_cast<int>(state.range(2));
    config.d_k = config.d_v = config.d_att = config.d_model / config.heads;
    config.compatibility = compatibility;
    parameters = seeded_parameters(config, 1);
    X.resize(tokens, config.d_model);
    const std::uint64_t stream = rng::hash("micro benchmark X");
    for (Eigen::Index i = 0; i < X.size(); ++i)
      X.data()[i] = rng::value(stream, static_cast<std::uint64_t>(i));
    if (!engine.compute(X, X, parameters, config)) throw std::runtime_error("compute failed");
  }
  // A copy of head 0 of the result: every buffer of the right shape and filled.
  HeadResult head() const { return engine.result().heads[0]; }
};

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"tokens", "d_model", "heads"});
  b->Args({8, 32, 4})->Args({32, 64, 8})->Args({128, 256, 4})->Args({1024, 768, 12});
}

// Step 1: every head's Q, K and V, as the engine makes them: when the heads are 8 (in pairs) or a
// multiple of 16 wide and the product is small (stages::projects_directly; every shape here but
// the large one), the weights checked, those of heads 8 wide paired (two heads' rows side by side),
// and each head's Q, K and V made in place from them; else the weights packed side by side (checked
// on the way) and one product X · packed.
void BM_Projections(benchmark::State& state) {
  Fixture f(state);
  std::vector<HeadResult> heads = f.engine.result().heads;
  const bool in_place = stages::projects_directly(f.config, f.X.rows(), f.X.rows());
  state.SetLabel(in_place ? "in place" : "packed");
  Matrix paired(in_place ? stages::paired_weights_rows(f.config) : 0, 16);
  Matrix packed(f.config.d_model,
                static_cast<Eigen::Index>(f.config.heads) * (2 * f.config.d_k + f.config.d_v));
  Matrix projections(f.X.rows(), packed.cols());
  for (auto _ : state) {
    if (in_place) {
      benchmark::DoNotOptimize(
          stages::check_and_pair_projection_weights(f.parameters, f.config, paired));
      stages::project_directly(heads, f.parameters, paired, f.config, f.X, f.X, 0, f.config.heads);
    } else {
      benchmark::DoNotOptimize(stages::pack_projection_weights(f.parameters, f.config, packed));
      stages::multiply(f.X, packed, projections);
    }
    benchmark::DoNotOptimize(heads[0].Q.data());
    benchmark::DoNotOptimize(projections.data());
  }
}
BENCHMARK(BM_Projections)->Apply(shapes);

// Step 1's check and copy of the weights alone: paired when heads are 8 wide (in place), packed, as
// above.
void BM_CopyProjectionWeights(benchmark::State& state) {
  Fixture f(state);
  const bool in_place = stages::projects_directly(f.config, f.X.rows(), f.X.rows());
  state.SetLabel(in_place ? "paired" : "packed");
  Matrix paired(in_place ? stages::paired_weights_rows(f.config) : 0, 16);
  Matrix packed(f.config.d_model,
                static_cast<Eigen::Index>(f.config.heads) * (2 * f.config.d_k + f.config.d_v));
  for (auto _ : state) {
    if (in_place)
      benchmark::DoNotOptimize(
          stages::check_and_pair_projection_weights(f.parameters, f.config, paired));
    else
      benchmark::DoNotOptimize(stages::pack_projection_weights(f.parameters, f.config, packed));
    benchmark::DoNotOptimize(paired.data());
    benchmark::DoNotOptimize(packed.data());
  }
}
BENCHMARK(BM_CopyProjectionWeights)->Apply(shapes);

// Step 2 for one head, per compatibility function (scaled_dot is dot's product; the scale is step
// 3).
void BM_Scores(benchmark::State& state, Compatibility compatibility) {
  Fixture f(state, compatibility);
  HeadResult head = f.head();
  for (auto _ : state) {
    stages::compatibility_scores(head, f.parameters.heads[0], f.config, 0, head.Q.rows());
    benchmark::DoNotOptimize(head.raw_scores.data());
  }
}
BENCHMARK_CAPTURE(BM_Scores, dot, Compatibility::Dot)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Scores, general, Compatibility::General)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Scores, additive, Compatibility::Additive)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Scores, cosine, Compatibility::Cosine)->Apply(shapes);

// Steps 3 to 5 for one head: scale, mask (causal here) and softmax.
void BM_ScaleMaskSoftmax(benchmark::State& state) {
  Fixture f(state);
  f.config.causal = true;
  HeadResult head = f.head();
  for (auto _ : state) {
    stages::scale_mask_softmax(head, f.config, nullptr, 0, head.Q.rows());
    benchmark::DoNotOptimize(head.weights.data());
  }
}
BENCHMARK(BM_ScaleMaskSoftmax)->Apply(shapes);

// The softmax alone, row by row through the public function.
void BM_SoftmaxRows(benchmark::State& state) {
  Fixture f(state);
  HeadResult head = f.head();
  for (auto _ : state) {
    for (Eigen::Index i = 0; i < head.masked_scores.rows(); ++i)
      softmax_row(head.masked_scores.row(i).data(), head.weights.row(i).data(),
                  head.masked_scores.cols());
    benchmark::DoNotOptimize(head.weights.data());
  }
}
BENCHMARK(BM_SoftmaxRows)->Apply(shapes);

// Step 6 for one head: output = weights · V.
void BM_WeightedSum(benchmark::State& state) {
  Fixture f(state);
  HeadResult head = f.head();
  for (auto _ : state) {
    stages::weighted_sum(head, 0, head.Q.rows());
    benchmark::DoNotOptimize(head.output.data());
  }
}
BENCHMARK(BM_WeightedSum)->Apply(shapes);

// The output projection: concat · W_O.
void BM_OutputProjection(benchmark::State& state) {
  Fixture f(state);
  const Matrix concat = f.engine.result().concat;
  Matrix output(concat.rows(), f.config.d_model);
  for (auto _ : state) {
    stages::multiply(concat, f.parameters.W_O, output);
    benchmark::DoNotOptimize(output.data());
  }
}
BENCHMARK(BM_OutputProjection)->Apply(shapes);

// A full recompute: every intermediate of every head, concat and W_O (what `attnviz-cli bench`
// times).
void BM_Compute(benchmark::State& state) {
  Fixture f(state);
  for (auto _ : state) {
    if (!f.engine.compute(f.X, f.X, f.parameters, f.config)) state.SkipWithError("compute failed");
    benchmark::DoNotOptimize(f.engine.result().output.data());
  }
}
BENCHMARK(BM_Compute)->Apply(shapes);

// A pipeline run as the app makes on an edit of the sentence: tokenize (two sentences of the
// same length in turn, so the tokenizer's cache never hits), embed, compute.
void BM_PipelineRun(benchmark::State& state) {
  const auto tokens = static_cast<int>(state.range(0));
  AttentionConfig config;
  config.d_model = static_cast<int>(state.range(1));
  config.heads = static_cast<int>(state.range(2));
  config.d_k = config.d_v = config.d_att = config.d_model / config.heads;
  std::string a, b;
  for (int i = 0; i < tokens; ++i) {
    a += (i % 3 == 0 ? "the " : i % 3 == 1 ? "cat " : "sat ");
    b += (i % 3 == 0 ? "a " : i % 3 == 1 ? "dog " : "ran ");
  }
  Scenario scenario = make_scenario(a, config, 7);
  scenario.max_tokens = Limits::kMaxTokens;
  Pipeline pipeline;
  if (!pipeline.run(scenario)) state.SkipWithError("run failed");
  bool flip = false;
  for (auto _ : state) {
    scenario.target = (flip = !flip) ? b : a;
    if (!pipeline.run(scenario)) state.SkipWithError("run failed");
    benchmark::DoNotOptimize(pipeline.result().output.data());
  }
}
// A pipeline runs a scenario, whose sentences hold at most Limits::kMaxTokens (512) tokens.
BENCHMARK(BM_PipelineRun)
    ->Args({8, 32, 4})
    ->Args({32, 64, 8})
    ->Args({128, 256, 4})
    ->Args({512, 768, 12});

// What a keystroke in the source costs the shipped translation model: the encoder over the
// source, then the greedy translation, as the app makes it (0: the rows of the logits it may
// write read first, the translation before the keystroke checked first as a draft) or plainly
// (1: every row, one token a step), or as the app makes it on its UI thread with the weight
// products split over two threads (2: blas::SplitProducts); the keystroke types a letter at the
// end and takes it back, as the app's --bench-frames does.
void BM_GreedyTranslation(benchmark::State& state) {
  static const Result<Model> model = open_model("marian-web-es");
  if (!model) {
    state.SkipWithError(model.error().c_str());
    return;
  }
  std::vector<int> ids[2];
  const char* texts[2] = {"God gives eternal life to those who believe.",
                          "God gives eternal life to those who believe.x"};
  for (int t = 0; t < 2; ++t) {
    const Result<std::vector<ModelToken>> source = read_text(*model, texts[t]);
    if (!source) {
      state.SkipWithError(source.error().c_str());
      return;
    }
    for (const ModelToken& token : *source) ids[t].push_back(token.id);
  }
  const int start = model->tokenizer.start_token(), stop = model->tokenizer.stop_token();
  EncoderDecoderForward forward(model->transformer);
  ProductWorkers two(2);
  const blas::SplitProducts split(state.range(0) == 2 ? &two : nullptr);
  std::size_t translated = 0;
  int keystroke = 0;
  for (auto _ : state) {
    const std::vector<int>& source = ids[keystroke++ % 2];
    const int limit = 2 * static_cast<int>(source.size()) + 10;
    const Result<std::vector<int>> target =
        state.range(0) != 1 ? greedy_translation(forward, source, start, stop, limit)
                            : greedy_translation_reference(forward, source, start, stop, limit);
    if (!target) state.SkipWithError(target.error().c_str());
    translated = target ? target->size() : 0;
  }
  state.counters["target_tokens"] = static_cast<double>(translated);
}
BENCHMARK(BM_GreedyTranslation)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
