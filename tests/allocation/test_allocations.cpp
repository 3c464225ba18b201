// A recompute with unchanged shapes must not touch the heap: the app recomputes on every frame
// of a drag, and allocation is the first thing that makes a frame stutter.
#include "allocation_counter.hpp"
#include "core/pipeline/pipeline.hpp"

#include <doctest/doctest.h>

namespace attnviz {
namespace {

using testing::count_allocations;

Scenario scenario_of(int words, int d_model, int heads, int d_k, Compatibility compatibility,
                     Mode mode = Mode::Self) {
  std::string sentence;
  for (int i = 0; i < words; ++i) sentence += "w" + std::to_string(i) + " ";
  AttentionConfig config;
  config.d_model = d_model;
  config.heads = heads;
  config.d_k = d_k;
  config.d_v = d_k;
  config.d_att = d_k;
  config.compatibility = compatibility;
  Scenario scenario = make_scenario(sentence, config, 3);
  scenario.edit_one_layer()->mode = mode;
  scenario.edit_one_layer()->source = std::string(sentence) + "extra words here";
  return scenario;
}

long steady_state_allocations(Scenario scenario, int threads = 1) {
  Pipeline pipeline;
  pipeline.set_threads(threads);
  REQUIRE(pipeline.run(scenario));  // the first run allocates the buffers
  scenario.edit_one_layer()->parameters.heads[0].W_Q(0, 0) += 0.5f;  // an edit, as a drag makes
  return count_allocations([&] { REQUIRE(pipeline.run(scenario)); });
}

}  // namespace

TEST_CASE("the allocation counter sees allocations") {
  CHECK(count_allocations([] {
          Matrix m(100, 100);
          m.setZero();
        }) >= 1);
}

TEST_CASE("a classroom recompute allocates nothing (scaled dot with 32 tokens and 8 heads)") {
  CHECK(steady_state_allocations(scenario_of(32, 64, 8, 8, Compatibility::ScaledDot)) == 0);
}

TEST_CASE("a recompute on two threads allocates nothing (the helper's share is counted too)") {
  CHECK(steady_state_allocations(scenario_of(32, 64, 8, 8, Compatibility::ScaledDot), 2) == 0);
  CHECK(steady_state_allocations(scenario_of(20, 48, 3, 8, Compatibility::ScaledDot), 2) == 0);
}

TEST_CASE("every compatibility function recomputes without allocating") {
  for (Compatibility c : {Compatibility::Dot, Compatibility::General, Compatibility::Additive,
                          Compatibility::Cosine}) {
    CAPTURE(to_string(c));
    CHECK(steady_state_allocations(scenario_of(12, 16, 2, 4, c)) == 0);
  }
}

TEST_CASE("cross attention recomputes without allocating") {
  CHECK(steady_state_allocations(
            scenario_of(10, 16, 2, 4, Compatibility::ScaledDot, Mode::Cross)) == 0);
}

TEST_CASE("causal masking and hard attention recompute without allocating") {
  Scenario scenario = scenario_of(16, 32, 4, 8, Compatibility::ScaledDot);
  scenario.edit_one_layer()->config.causal = true;
  CHECK(steady_state_allocations(scenario) == 0);
  scenario.edit_one_layer()->config.hard = true;
  CHECK(steady_state_allocations(scenario) == 0);
}

TEST_CASE("a larger recompute allocates nothing (128 tokens with d_model 256 and 4 heads)") {
  CHECK(steady_state_allocations(scenario_of(128, 256, 4, 64, Compatibility::ScaledDot)) == 0);
}

// Past Eigen's stack limit for packed blocks the engine splits products into bands of columns,
// and a head's scores into bands of queries: neither may reach the heap.
TEST_CASE("a large recompute allocates nothing (600 tokens with d_model 512 and 8 heads)") {
  AttentionConfig config;
  config.d_model = 512;
  config.heads = 8;
  config.d_k = config.d_v = config.d_att = 64;
  const Parameters parameters = seeded_parameters(config, 5);
  const Matrix X = Matrix::Random(600, config.d_model);
  AttentionEngine engine;
  REQUIRE(engine.compute(X, X, parameters, config));
  CHECK(count_allocations([&] { REQUIRE(engine.compute(X, X, parameters, config)); }) == 0);
}

}  // namespace attnviz
