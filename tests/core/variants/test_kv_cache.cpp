// Decoding with a KV cache (core/variants/kv_cache.hpp): fed the sentence one token at a time,
// each step's output is the engine's full causal output for that row; the work per step grows
// by a constant where recomputing grows with the cache; bad steps change nothing.
#include "core/engine/attention.hpp"
#include "core/variants/kv_cache.hpp"

#include "tests/support/random_matrix.hpp"

#include <doctest/doctest.h>

#include <cmath>

namespace attnviz {
namespace {

using testing::random_matrix;

}  // namespace

TEST_CASE("the cached decoder's rows are the full causal computation's") {
  AttentionConfig config;
  config.d_model = 8;
  config.heads = 2;
  config.d_k = 4;
  config.d_v = 3;
  config.d_att = 4;
  config.causal = true;
  const Matrix X = random_matrix(10, 8, 1, 1.0f);
  const Parameters parameters = seeded_parameters(config, 5);
  AttentionEngine engine;
  REQUIRE(engine.compute(X, X, parameters, config).is_ok());
  for (int head = 0; head < 2; ++head) {
    const HeadParameters& p = parameters.heads[static_cast<std::size_t>(head)];
    const HeadResult& full = engine.result().heads[static_cast<std::size_t>(head)];
    KvCacheDecoder decoder(p.W_Q, p.W_K, p.W_V, 0.5f);  // 1/√d_k
    std::int64_t previous_work = 0;
    for (int t = 0; t < 10; ++t) {
      CAPTURE(t);
      Result<DecodeStep> step = decoder.step(X.row(t));
      REQUIRE(step.ok());
      CHECK(step->cache_length == t + 1);
      CHECK((step->weights - full.weights.row(t).head(t + 1)).cwiseAbs().maxCoeff() < 1e-6f);
      CHECK((step->output - full.output.row(t)).cwiseAbs().maxCoeff() < 1e-5f);
      CHECK((decoder.keys() - full.K.topRows(t + 1)).cwiseAbs().maxCoeff() < 1e-6f);
      // One more key and value each step: d_k + d_v more multiply-adds with the cache, a whole
      // token's key and value more without it.
      if (t > 0) CHECK(step->work - previous_work == 4 + 3);
      CHECK(step->work_without_cache == (t + 1) * 8 * 7 + 8 * 4 + (t + 1) * 7);
      previous_work = step->work;
    }
  }
}

TEST_CASE("a bad step is refused and the cache stays as it was") {
  KvCacheDecoder decoder(random_matrix(4, 2, 2, 1.0f), random_matrix(4, 2, 3, 1.0f),
                         random_matrix(4, 2, 4, 1.0f), 1.0f);
  REQUIRE(decoder.step(random_matrix(1, 4, 5, 1.0f).row(0)).ok());
  CHECK(decoder.step(RowVector::Zero(3)).error() ==
        "the token's embedding has 3 numbers, the head reads 4");
  RowVector nan = RowVector::Zero(4);
  nan(1) = std::nanf("");
  CHECK_FALSE(decoder.step(nan).ok());
  RowVector huge = RowVector::Constant(4, 3e38f);
  CHECK_FALSE(decoder.step(huge).ok());
  CHECK(decoder.length() == 1);
  decoder.reset();
  CHECK(decoder.length() == 0);
}

}  // namespace attnviz
