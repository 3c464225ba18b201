// Attention engine tests, the paths of the products and the threads: every path the engine takes
// for a product (the small-product kernels, Eigen's GEMM, packed weights, both mixed in a
// recompute) and every split across threads against the double-precision reference
// (core/engine/reference_attention.hpp). The hand-computed cases are in test_attention.cpp.
#include "core/engine/attention.hpp"
#include "core/engine/attention_stages.hpp"
#include "core/engine/lanes.hpp"
#include "core/engine/reference_attention.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace attnviz {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
using MatrixD = ReferenceMatrix;

}  // namespace
}  // namespace attnviz

namespace attnviz {

// A shape to compute, with random inputs and seeded weights, and the engine that computed it.
struct ShapeCase {
  Eigen::Index n_query, n_key;
  int d_model, heads, d_k, d_v;
  bool self;
};

struct ComputedCase {
  AttentionConfig config;
  Parameters parameters;
  Matrix Xq, Xk;
  AttentionEngine engine;

  ComputedCase(const ShapeCase& c, Compatibility compatibility, std::mt19937& random) {
    config.compatibility = compatibility;
    config.d_model = c.d_model;
    config.heads = c.heads;
    config.d_k = config.d_att = c.d_k;
    config.d_v = c.d_v;
    parameters = seeded_parameters(config, random());
    Xq = Matrix::Random(c.n_query, c.d_model);
    Xk = c.self ? Xq : Matrix::Random(c.n_key, c.d_model);
    REQUIRE(engine.compute(Xq, c.self ? Xq : Xk, parameters, config));
    REQUIRE(engine.compute(Xq, c.self ? Xq : Xk, parameters, config));  // a recompute, buffers kept
  }

  // The weights of every head and the output against the double-precision reference.
  void check_against_reference() const {
    const ReferenceResult ref = reference_attention(Xq, Xk, parameters, config, nullptr);
    for (int h = 0; h < config.heads; ++h)
      CHECK((engine.result().heads[size_t(h)].weights.cast<double>() - ref.heads[size_t(h)].weights)
                .cwiseAbs()
                .maxCoeff() < 1e-5);
    CHECK((engine.result().output.cast<double>() - ref.output).cwiseAbs().maxCoeff() < 1e-4);
  }
};

// Classroom sizes take the small-product path (rows of 16 floats at a time, blocks of 8 rows (4
// without AVX-512) by panels of up to 3 groups, the last partial group masked; Kᵀ copied for the
// scores); products past its size limit take Eigen's GEMM, and a recompute can mix both. Either
// must give the reference numbers.
TEST_CASE("small products and mixed small and GEMM products agree with the reference") {
  std::mt19937 random(13);
  const ShapeCase cases[] = {
      {32, 32, 64, 8, 8, 8, true},     // (32, 64, 8): the classroom shape, d_v = 8 < 16
      {32, 32, 64, 1, 64, 64, true},   // 4 full groups of 16 columns per score row
      {17, 33, 48, 3, 16, 20, false},  // cross attention, rows not a multiple of 4, d_v = 16 + 4
      {64, 64, 64, 1, 64, 64, true},   // projections by GEMM, the head's products small
      {96, 96, 128, 2, 64, 64, true},  // everything by GEMM
  };
  for (const ShapeCase& c : cases) {
    for (Compatibility compatibility : {Compatibility::ScaledDot, Compatibility::General,
                                        Compatibility::Additive, Compatibility::Cosine}) {
      CAPTURE(c.n_query);
      CAPTURE(c.d_model);
      CAPTURE(to_string(compatibility));
      ComputedCase(c, compatibility, random).check_against_reference();
    }
  }
}

// A shape and the projection path it must take: in place, or through packed weights.
struct PathCase {
  ShapeCase shape;
  bool in_place;  // what projects_directly() must say
};

// Small products whose heads are 8 wide (an even number of them) or a multiple of 16 wide make
// each head's Q, K and V in place from its own weights (stages::project_directly); the others
// pack every head's weights into one matrix and copy each head's part out of one product. Both
// must give the reference: Q, K and V themselves, then the weights and the output.
TEST_CASE("projections made in place and through packed weights agree with the reference") {
  std::mt19937 random(17);
  const PathCase cases[] = {
      {{32, 32, 64, 8, 8, 8, true}, true},    // pairs of heads 8 wide: Q, K and V in one list
      {{13, 13, 64, 4, 16, 16, true}, true},  // one head per group of 16
      {{9, 21, 40, 2, 8, 32, false}, true},   // cross: Q from X_query, K and V (8 and 32) apart
      {{32, 48, 64, 8, 8, 8, false}, true},   // cross: each product small, not the two together
      {{12, 12, 24, 2, 32, 8, true}, true},   // d_k 32, d_v 8
      {{20, 20, 48, 3, 8, 8, true}, false},   // 3 heads 8 wide: one has no pair, packed
      {{16, 16, 32, 4, 4, 4, true}, false},   // 4 wide, packed
      {{7, 7, 30, 2, 24, 16, true}, false},   // 24 wide, packed
  };
  for (const PathCase& c : cases) {
    CAPTURE(c.shape.d_model);
    CAPTURE(c.shape.heads);
    CAPTURE(c.shape.d_k);
    CAPTURE(c.shape.d_v);
    const ComputedCase computed(c.shape, Compatibility::ScaledDot, random);
    CHECK(stages::projects_directly(computed.config, c.shape.n_query, c.shape.n_key) == c.in_place);
    double worst_projection = 0;
    for (int h = 0; h < c.shape.heads; ++h) {
      const HeadResult& head = computed.engine.result().heads[size_t(h)];
      const HeadParameters& hp = computed.parameters.heads[size_t(h)];
      const MatrixD Q = computed.Xq.cast<double>() * hp.W_Q.cast<double>();
      const MatrixD K = computed.Xk.cast<double>() * hp.W_K.cast<double>();
      const MatrixD V = computed.Xk.cast<double>() * hp.W_V.cast<double>();
      worst_projection =
          std::max({worst_projection, (head.Q.cast<double>() - Q).cwiseAbs().maxCoeff(),
                    (head.K.cast<double>() - K).cwiseAbs().maxCoeff(),
                    (head.V.cast<double>() - V).cwiseAbs().maxCoeff()});
    }
    MESSAGE("max |Δ| of Q, K and V vs double: " << worst_projection);
    CHECK(worst_projection < 1e-5);
    computed.check_against_reference();
  }
}

// W_Q, W_K and W_V are checked as the engine copies them for the projections (paired for heads 8
// wide on the in-place path, packed on the other) or where they are (wider heads in place), not by
// check_parameters(): a bad entry in any of them, in any head, on either path, must still be an
// error that names it and keeps the last result.
TEST_CASE(
    "a non-finite W_Q W_K or W_V entry on either projection path is an error that keeps the last "
    "result") {
  std::mt19937 random(23);
  const PathCase cases[] = {
      {{8, 8, 32, 4, 8, 8, true}, true},    // heads 8 wide in pairs
      {{6, 6, 32, 2, 16, 32, true}, true},  // 16 and 32 wide
      {{5, 7, 32, 4, 8, 8, false}, true},   // cross attention
      {{6, 6, 24, 3, 8, 8, true}, false},   // 3 heads 8 wide
      {{6, 6, 24, 2, 4, 12, true}, false},  // 4 and 12 wide
  };
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf};
  for (const PathCase& c : cases) {
    const ShapeCase& shape = c.shape;
    CAPTURE(shape.heads);
    CAPTURE(shape.d_k);
    CAPTURE(shape.d_v);
    ComputedCase computed(shape, Compatibility::ScaledDot, random);
    CHECK(stages::projects_directly(computed.config, shape.n_query, shape.n_key) == c.in_place);
    const Matrix& X_key = shape.self ? computed.Xq : computed.Xk;
    const AttentionResult before = computed.engine.result();
    int bad_count = 0;
    for (ParameterName name : {ParameterName::W_Q, ParameterName::W_K, ParameterName::W_V}) {
      for (int h = 0; h < shape.heads; ++h) {
        Parameters bad = computed.parameters;
        Matrix& weights = parameter(bad, name, h);
        const Eigen::Index row = (h * 5 + 3) % weights.rows(), col = (h * 3 + 1) % weights.cols();
        weights(row, col) = bad_values[bad_count++ % 3];
        const Status status = computed.engine.compute(computed.Xq, X_key, bad, computed.config);
        CAPTURE(status.message());
        CHECK_FALSE(status);
        const std::string entry = std::string(to_string(name)) + "[" + std::to_string(h) + "][" +
                                  std::to_string(row) + "][" + std::to_string(col) + "]";
        CHECK(status.message().rfind(entry, 0) == 0);
        CHECK(computed.engine.result().version == before.version);
        CHECK(computed.engine.result().output == before.output);
        CHECK(computed.engine.result().heads[size_t(h)].Q == before.heads[size_t(h)].Q);
        CHECK(computed.engine.result().heads[size_t(h)].V == before.heads[size_t(h)].V);
      }
    }
    // The good parameters again: the same result as before the errors.
    REQUIRE(computed.engine.compute(computed.Xq, X_key, computed.parameters, computed.config));
    CHECK(computed.engine.result().output == before.output);
  }
}

// A recompute whose shapes change between the two paths reuses the engine: each result must be
// the reference's, with nothing left over from the other path.
TEST_CASE(
    "an engine moving between in-place and packed projections gives the reference each time") {
  std::mt19937 random(19);
  AttentionEngine engine;
  for (int heads : {8, 3, 8, 1, 2}) {
    CAPTURE(heads);
    AttentionConfig config;
    config.d_model = 24;
    config.heads = heads;
    config.d_k = config.d_v = config.d_att = 8;
    const Parameters p = seeded_parameters(config, random());
    const Matrix X = Matrix::Random(10, config.d_model);
    REQUIRE(engine.compute(X, X, p, config));
    const ReferenceResult ref = reference_attention(X, X, p, config, nullptr);
    CHECK((engine.result().output.cast<double>() - ref.output).cwiseAbs().maxCoeff() < 1e-4);
  }
}

}  // namespace attnviz

namespace attnviz {

// With threads, compute() splits each step with enough work (2^20 multiply-adds) into one task
// per thread (the projections by bands of columns or ranges of heads, the heads by ranges, W_O by
// bands of rows); every number is computed by the same code as on one thread. Where the products
// are small (every classroom size) every intermediate is bit for bit the same; where Eigen's GEMM
// does them, its blocking depends on the width of the band, so they agree to float rounding.
// Each shape here has enough work to be split.
TEST_CASE("two and three threads give the results of one") {
  std::mt19937 random(23);
  struct Case {
    ShapeCase shape;
    bool exact;
  };
  const Case cases[] = {
      {{64, 64, 64, 8, 8, 8, true}, true},      // projections made in place, 4 heads per thread
      {{96, 96, 64, 3, 8, 8, true}, true},      // packed projections by the small kernel, 3 heads
      {{64, 80, 64, 4, 16, 8, false}, true},    // cross attention, d_k 16 and d_v 8, in place
      {{96, 96, 128, 2, 64, 64, true}, false},  // products by Eigen's GEMM, W_O in bands of rows
  };
  for (const Case& c : cases) {
    for (bool causal : {false, true}) {
      CAPTURE(c.shape.d_model);
      CAPTURE(c.shape.heads);
      CAPTURE(causal);
      AttentionConfig config;
      config.d_model = c.shape.d_model;
      config.heads = c.shape.heads;
      config.d_k = config.d_att = c.shape.d_k;
      config.d_v = c.shape.d_v;
      config.causal = causal && c.shape.self;
      const Parameters p = seeded_parameters(config, random());
      const Matrix Xq = Matrix::Random(c.shape.n_query, c.shape.d_model);
      const Matrix Xk = c.shape.self ? Xq : Matrix::Random(c.shape.n_key, c.shape.d_model);
      AttentionEngine one;
      REQUIRE(one.compute(Xq, c.shape.self ? Xq : Xk, p, config));
      const auto same = [&](const Matrix& a, const Matrix& b) {
        return c.exact ? a == b : (a - b).cwiseAbs().maxCoeff() <= 1e-5f;
      };
      for (int threads : {2, 3}) {
        AttentionEngine many;
        many.set_threads(threads);
        CHECK(many.threads() == threads);
        REQUIRE(many.compute(Xq, c.shape.self ? Xq : Xk, p, config));
        REQUIRE(many.compute(Xq, c.shape.self ? Xq : Xk, p, config));  // a recompute, helpers warm
        const AttentionResult& a = one.result();
        const AttentionResult& b = many.result();
        for (int h = 0; h < config.heads; ++h) {
          const HeadResult& x = a.heads[size_t(h)];
          const HeadResult& y = b.heads[size_t(h)];
          CHECK(same(x.Q, y.Q));
          CHECK(same(x.K, y.K));
          CHECK(same(x.V, y.V));
          CHECK(same(x.raw_scores, y.raw_scores));
          CHECK(x.masked_scores.array().isInf().cast<int>().sum() ==
                y.masked_scores.array().isInf().cast<int>().sum());
          CHECK(same(x.weights, y.weights));
          CHECK(same(x.output, y.output));
        }
        CHECK(same(a.concat, b.concat));
        CHECK(same(a.output, b.output));
        CHECK(a.fully_masked_row_count == b.fully_masked_row_count);
      }
    }
  }
}

TEST_CASE("an error with threads keeps the last result as with one") {
  const AttentionConfig config{.d_model = 16, .heads = 2, .d_k = 8, .d_v = 8, .d_att = 8};
  const Parameters p = seeded_parameters(config, 3);
  const Matrix X = Matrix::Random(6, config.d_model);
  AttentionEngine engine;
  engine.set_threads(2);
  REQUIRE(engine.compute(X, X, p, config));
  const Matrix output = engine.result().output;
  Parameters bad = p;
  bad.heads[1].W_V(3, 2) = std::numeric_limits<float>::infinity();
  const Status status = engine.compute(X, X, bad, config);
  CHECK_FALSE(status);
  CHECK(status.message().find("W_V[1][3][2]") != std::string::npos);
  CHECK(engine.result().output == output);
}

}  // namespace attnviz
