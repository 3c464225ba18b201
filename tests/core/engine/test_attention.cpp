// Attention engine tests (the reference they compare against is
// core/engine/reference_attention.hpp; test_reference_attention.cpp compares every intermediate).
// Index:
//   [SECTION] Hand-computed cases, one per compatibility function
//   [SECTION] Masks, hard attention, cross attention
//   [SECTION] Softmax properties
//   [SECTION] Numerics and bad input
//   [SECTION] Against the reference
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

Matrix matrix(std::initializer_list<std::initializer_list<float>> rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
  Eigen::Index r = 0;
  for (const auto& row : rows) {
    Eigen::Index c = 0;
    for (float x : row) m(r, c++) = x;
    ++r;
  }
  return m;
}

// One head, d_model = d_k = d_v = 2, identity projections; W_O = identity.
struct Tiny {
  AttentionConfig config;
  Parameters parameters;
  Tiny(Compatibility compatibility) {
    config.d_model = 2;
    config.heads = 1;
    config.d_k = 2;
    config.d_v = 2;
    config.d_att = 1;
    config.compatibility = compatibility;
    parameters = seeded_parameters(config, 1);
    HeadParameters& h = parameters.heads[0];
    h.W_Q = Matrix::Identity(2, 2);
    h.W_K = Matrix::Identity(2, 2);
    h.W_V = Matrix::Identity(2, 2);
    parameters.W_O = Matrix::Identity(2, 2);
  }
  const AttentionResult& run(const Matrix& X, const MaskMatrix* mask = nullptr) {
    REQUIRE(engine.compute(X, X, parameters, config, mask));
    return engine.result();
  }
  AttentionEngine engine;
};

double softmax_first(double a, double b) {
  return std::exp(a) / (std::exp(a) + std::exp(b));
}

// Whether this build's 16 lanes are one AVX-512 register (core/engine/lanes.hpp).
bool lanes_are_registers() {
  return ATTNVIZ_LANES_AVX512 != 0;
}

using MatrixD = ReferenceMatrix;

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Hand-computed cases, one per compatibility function
// -----------------------------------------------------------------------------

TEST_CASE("dot: scores are q·k and weights their softmax") {
  Tiny tiny(Compatibility::Dot);
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 2}}));
  CHECK(r.heads[0].raw_scores == matrix({{1, 0}, {0, 4}}));
  CHECK(r.heads[0].weights(0, 0) == doctest::Approx(softmax_first(1, 0)));
  CHECK(r.heads[0].weights(1, 1) == doctest::Approx(softmax_first(4, 0)));
}

TEST_CASE("scaled_dot divides the scores by sqrt(d_k)") {
  Tiny tiny(Compatibility::ScaledDot);
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 2}}));
  CHECK(r.heads[0].raw_scores(1, 1) == doctest::Approx(4.0));
  CHECK(r.heads[0].scaled_scores(1, 1) == doctest::Approx(4.0 / std::sqrt(2.0)));
  CHECK(r.heads[0].weights(1, 1) == doctest::Approx(softmax_first(4.0 / std::sqrt(2.0), 0)));
}

TEST_CASE("general: scores are q·W_a·kᵀ") {
  Tiny tiny(Compatibility::General);
  tiny.parameters.heads[0].W_a = matrix({{2, 0}, {1, 3}});
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 1}}));
  // q0·W_a = [2, 0]; q1·W_a = [1, 3]
  CHECK(r.heads[0].raw_scores == matrix({{2, 0}, {1, 3}}));
}

TEST_CASE("additive: scores are v·tanh(q·W_1 + k·W_2)") {
  Tiny tiny(Compatibility::Additive);
  tiny.parameters.heads[0].W_1 = matrix({{1}, {0}});
  tiny.parameters.heads[0].W_2 = matrix({{0}, {1}});
  tiny.parameters.heads[0].v_a = RowVector::Constant(1, 2.0f);
  const AttentionResult& r = tiny.run(matrix({{0.5f, 0.25f}, {-1, 1}}));
  // score(i, j) = 2·tanh(q_i[0] + k_j[1])
  CHECK(r.heads[0].raw_scores(0, 0) == doctest::Approx(2 * std::tanh(0.5 + 0.25)));
  CHECK(r.heads[0].raw_scores(0, 1) == doctest::Approx(2 * std::tanh(0.5 + 1.0)));
  CHECK(r.heads[0].raw_scores(1, 0) == doctest::Approx(2 * std::tanh(-1.0 + 0.25)));
  CHECK(r.heads[0].raw_scores(1, 1) == doctest::Approx(2 * std::tanh(-1.0 + 1.0)));
}

TEST_CASE("cosine: scores are q·k / (|q||k|)") {
  Tiny tiny(Compatibility::Cosine);
  const AttentionResult& r = tiny.run(matrix({{3, 4}, {1, 0}}));
  CHECK(r.heads[0].raw_scores(0, 0) == doctest::Approx(1.0));
  CHECK(r.heads[0].raw_scores(0, 1) == doctest::Approx(0.6));
}

TEST_CASE("cosine with a zero vector is 0 and not NaN") {
  Tiny tiny(Compatibility::Cosine);
  const AttentionResult& r = tiny.run(matrix({{0, 0}, {1, 0}}));
  CHECK(r.heads[0].raw_scores(0, 1) == 0.0f);
  CHECK(r.heads[0].weights.allFinite());
}

TEST_CASE("temperature divides the scores before the softmax") {
  Tiny tiny(Compatibility::Dot);
  tiny.config.temperature = 2.0f;
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 2}}));
  CHECK(r.heads[0].scaled_scores(1, 1) == doctest::Approx(2.0));
  CHECK(r.heads[0].weights(1, 1) == doctest::Approx(softmax_first(2, 0)));
}

TEST_CASE("the output of a head is the weighted sum of the values") {
  Tiny tiny(Compatibility::Dot);
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 2}}));
  const double a = softmax_first(1, 0);  // query 0: weight a on value [1, 0], 1-a on [0, 2]
  CHECK(r.heads[0].output(0, 0) == doctest::Approx(a));
  CHECK(r.heads[0].output(0, 1) == doctest::Approx(2 * (1 - a)));
}

// Step 6 has two ways (stages::weighted_sum): over the rows of V, or, for a head whose d_v divides
// 16, over V's rows grouped 16 / d_v keys at a time (the engine's way with AVX-512; sizing
// value_groups selects it on any build). Both against a double-precision product, for every
// remainder of keys per group, blocks of 8, 4, 2 and 1 rows, and bands that start past row 0.
TEST_CASE("the weighted sum over groups of keys and over rows of V agree with the product") {
  std::mt19937 random(23);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f), weight(0.0f, 1.0f);
  double worst = 0;
  for (Eigen::Index d_v : {1, 2, 4, 8}) {
    for (Eigen::Index n_key : {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 40}) {
      for (Eigen::Index n_query : {1, 3, 8, 15, 23}) {
        for (bool grouped : {false, true}) {
          CAPTURE(d_v);
          CAPTURE(n_key);
          CAPTURE(n_query);
          CAPTURE(grouped);
          HeadResult head;
          head.V.resize(n_key, d_v);
          head.weights.resize(n_query, n_key);
          head.output.setConstant(n_query, d_v, std::numeric_limits<float>::quiet_NaN());
          for (Eigen::Index i = 0; i < head.V.size(); ++i) head.V.data()[i] = value(random);
          for (Eigen::Index i = 0; i < head.weights.size(); ++i)
            head.weights.data()[i] = weight(random);
          const Eigen::Index keys = 16 / d_v;
          if (grouped) head.value_groups.resize((n_key + keys - 1) / keys, 16);
          // Two bands: rows [0, n_query / 2) then the rest, as compute_head() runs them.
          const Eigen::Index half = n_query / 2;
          if (half > 0) stages::weighted_sum(head, 0, half);
          stages::weighted_sum(head, half, n_query - half);
          const MatrixD expected = head.weights.cast<double>() * head.V.cast<double>();
          const double difference = (head.output.cast<double>() - expected).cwiseAbs().maxCoeff();
          CHECK(difference < 1e-5 * std::max<double>(1, n_key));
          CHECK(!head.overflow);
          worst = std::max(worst, difference);
        }
      }
    }
  }
  MESSAGE("weighted sum: max |Δ| against the double product " << worst);
}

TEST_CASE("a value that is not finite makes the weighted sum over groups of keys overflow") {
  for (float bad : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), 3e38f}) {
    CAPTURE(bad);
    HeadResult head;
    head.V.setConstant(9, 8, 1.0f);
    head.V(8, 7) = bad;                                      // in the last, partial group
    if (std::isfinite(bad)) head.V.col(7).setConstant(bad);  // finite values whose sum is not
    head.weights.setConstant(4, 9, 1.0f);
    head.output.resize(4, 8);
    head.value_groups.resize(5, 16);
    stages::weighted_sum(head, 0, 4);
    CHECK(head.overflow);
    CHECK(!std::isfinite(head.output(3, 7)));
    CHECK(head.output(3, 6) == 9.0f);  // the other columns are the plain sums
  }
}

TEST_CASE(
    "the weighted sum goes over groups of keys only for small products whose d_v divides 16") {
  AttentionConfig config;
  config.d_model = 64;
  config.heads = 8;
  config.d_k = config.d_v = 8;
  const Eigen::Index expected = lanes_are_registers() ? 2 : 0;
  CHECK(stages::keys_per_value_group(config, 32, 32) == expected);
  config.d_v = 4;
  CHECK(stages::keys_per_value_group(config, 32, 32) == (expected ? 4 : 0));
  config.d_v = 6;
  CHECK(stages::keys_per_value_group(config, 32, 32) == 0);
  config.d_v = 16;
  CHECK(stages::keys_per_value_group(config, 32, 32) == 0);
  config.d_v = 8;
  CHECK(stages::keys_per_value_group(config, 1024, 1024) == 0);  // 2^23 multiply-adds: Eigen's GEMM
  AttentionEngine engine;
  const Parameters parameters = seeded_parameters(config, 3);
  const Matrix X = Matrix::Random(32, 64);
  REQUIRE(engine.compute(X, X, parameters, config));
  CHECK(engine.result().heads[0].value_groups.rows() == (expected ? 16 : 0));
}

TEST_CASE("concat joins the head outputs and the output is concat·W_O") {
  AttentionConfig config;
  config.d_model = 4;
  config.heads = 3;
  config.d_k = 2;
  config.d_v = 3;  // d_k != d_v
  const Parameters p = seeded_parameters(config, 11);
  Matrix X = Matrix::Random(5, 4);
  AttentionEngine engine;
  REQUIRE(engine.compute(X, X, p, config));
  const AttentionResult& r = engine.result();
  CHECK(r.concat.cols() == 9);
  for (int h = 0; h < 3; ++h) CHECK(r.concat.middleCols(3 * h, 3) == r.heads[size_t(h)].output);
  const Matrix expected = r.concat * p.W_O;
  CHECK((r.output - expected).cwiseAbs().maxCoeff() < 1e-6f);
}

// -----------------------------------------------------------------------------
// [SECTION] Masks, hard attention, cross attention
// -----------------------------------------------------------------------------

TEST_CASE("causal: a query sees only itself and earlier keys") {
  Tiny tiny(Compatibility::Dot);
  tiny.config.causal = true;
  const AttentionResult& r = tiny.run(Matrix::Random(4, 2));
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) {
      CHECK(r.heads[0].weights(i, j) == 0.0f);
      CHECK(r.heads[0].masked_scores(i, j) == -kInf);
    }
  CHECK(r.heads[0].weights(0, 0) == 1.0f);
}

TEST_CASE("a custom mask zeroes its cells and the rest renormalize") {
  Tiny tiny(Compatibility::Dot);
  MaskMatrix mask = MaskMatrix::Ones(2, 2);
  mask(0, 0) = 0;
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 2}}), &mask);
  CHECK(r.heads[0].weights(0, 0) == 0.0f);
  CHECK(r.heads[0].weights(0, 1) == 1.0f);
  CHECK(r.heads[0].weights(1, 1) == doctest::Approx(softmax_first(4, 0)));
}

TEST_CASE("a query whose every key is masked gets weights 0 and output 0 and a flag") {
  Tiny tiny(Compatibility::Dot);
  MaskMatrix mask = MaskMatrix::Ones(2, 2);
  mask.row(1).setZero();
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0, 2}}), &mask);
  CHECK(r.heads[0].weights.row(1).isZero());
  CHECK(r.heads[0].output.row(1).isZero());
  CHECK(r.heads[0].fully_masked_rows[1] == 1);
  CHECK(r.heads[0].fully_masked_rows[0] == 0);
  CHECK(r.fully_masked_row_count == 1);
  CHECK(r.output.allFinite());
}

TEST_CASE("hard attention puts all weight on the best key") {
  Tiny tiny(Compatibility::Dot);
  tiny.config.hard = true;
  const AttentionResult& r = tiny.run(matrix({{1, 0.5f}, {0, 2}, {3, 0}}));
  CHECK(r.heads[0].weights.row(0) == RowVector{{0, 0, 1}});  // 1·3 beats 0.5·2 and 1
  CHECK(r.heads[0].weights.row(1) == RowVector{{0, 1, 0}});
}

TEST_CASE("hard attention breaks ties toward the first key") {
  Tiny tiny(Compatibility::Dot);
  tiny.config.hard = true;
  const AttentionResult& r = tiny.run(matrix({{1, 1}, {1, 1}}));
  CHECK(r.heads[0].weights.row(0) == RowVector{{1, 0}});
}

TEST_CASE("hard attention over one-hot keys is an exact lookup") {
  // A key-value store: keys are names (one-hot), values are incomes; a query equal to a key
  // must return exactly that key's value.
  AttentionConfig config;
  config.d_model = 3;
  config.heads = 1;
  config.d_k = 3;
  config.d_v = 1;
  config.hard = true;
  Parameters p = seeded_parameters(config, 1);
  p.heads[0].W_Q = Matrix::Identity(3, 3);
  p.heads[0].W_K = Matrix::Identity(3, 3);
  p.W_O = Matrix::Identity(1, 3);
  const Matrix keys = Matrix::Identity(3, 3);
  const Matrix incomes = matrix({{52000}, {71000}, {38000}});  // (n_key, 1)
  // Values: V = keys · W_V; choose W_V so that V = incomes.
  p.heads[0].W_V = incomes;
  const Matrix queries = matrix({{0, 1, 0}, {0, 0, 1}});
  AttentionEngine engine;
  REQUIRE(engine.compute(queries, keys, p, config));
  CHECK(engine.result().heads[0].output(0, 0) == 71000.0f);
  CHECK(engine.result().heads[0].output(1, 0) == 38000.0f);
}

TEST_CASE("cross attention: queries and keys may have different lengths") {
  AttentionConfig config;
  config.d_model = 4;
  config.heads = 2;
  config.d_k = 3;
  config.d_v = 2;
  const Parameters p = seeded_parameters(config, 2);
  const Matrix target = Matrix::Random(2, 4), source = Matrix::Random(5, 4);
  AttentionEngine engine;
  REQUIRE(engine.compute(target, source, p, config));
  const AttentionResult& r = engine.result();
  CHECK(r.heads[1].Q.rows() == 2);
  CHECK(r.heads[1].K.rows() == 5);
  CHECK(r.heads[1].weights.rows() == 2);
  CHECK(r.heads[1].weights.cols() == 5);
  CHECK(r.output.rows() == 2);
  CHECK(r.output.cols() == 4);
}

// -----------------------------------------------------------------------------
// [SECTION] Softmax properties
// -----------------------------------------------------------------------------

TEST_CASE("every row of weights sums to 1") {
  AttentionConfig config;
  config.d_model = 16;
  config.heads = 4;
  config.d_k = 5;
  config.d_v = 3;
  const Parameters p = seeded_parameters(config, 5);
  const Matrix X = Matrix::Random(9, 16) * 3.0f;
  AttentionEngine engine;
  REQUIRE(engine.compute(X, X, p, config));
  for (const HeadResult& head : engine.result().heads)
    for (Eigen::Index i = 0; i < 9; ++i) CHECK(head.weights.row(i).sum() == doctest::Approx(1.0));
}

TEST_CASE("adding a constant to a row of scores changes no weight") {
  const RowVector scores{{0.5f, -1.0f, 2.0f, 0.0f}};
  RowVector shifted = scores.array() + 1000.0f;
  RowVector a(4), b(4);
  softmax_row(scores.data(), a.data(), 4);
  softmax_row(shifted.data(), b.data(), 4);
  CHECK((a - b).cwiseAbs().maxCoeff() < 1e-6f);
}

TEST_CASE("softmax of a fully masked row is all zeros and says so") {
  const RowVector scores = RowVector::Constant(3, -kInf);
  RowVector alpha = RowVector::Constant(3, 7.0f);
  CHECK_FALSE(softmax_row(scores.data(), alpha.data(), 3));
  CHECK(alpha.isZero());
}

TEST_CASE("self-attention without positions is permutation-equivariant") {
  AttentionConfig config;
  config.d_model = 8;
  config.heads = 2;
  config.d_k = 4;
  config.d_v = 4;
  const Parameters p = seeded_parameters(config, 21);
  const Matrix X = Matrix::Random(6, 8);
  Eigen::PermutationMatrix<Eigen::Dynamic> permutation(6);
  permutation.indices() << 3, 0, 5, 1, 4, 2;
  const Matrix X_permuted = permutation * X;
  AttentionEngine original, permuted;
  REQUIRE(original.compute(X, X, p, config));
  REQUIRE(permuted.compute(X_permuted, X_permuted, p, config));
  const Matrix expected = permutation * original.result().output;
  CHECK((permuted.result().output - expected).cwiseAbs().maxCoeff() < 1e-5f);
}

// -----------------------------------------------------------------------------
// [SECTION] Numerics and bad input
// -----------------------------------------------------------------------------

TEST_CASE("1e38 in W_Q and W_K overflows the scores but never the weights") {
  Tiny tiny(Compatibility::Dot);
  tiny.parameters.heads[0].W_Q(0, 0) = 1e38f;
  tiny.parameters.heads[0].W_K(0, 0) = 1e38f;
  tiny.parameters.heads[0].W_K(1, 0) = -1e38f;
  const AttentionResult& r = tiny.run(matrix({{1, 1}, {1, -1}, {0, 1}}));
  CHECK_FALSE(r.heads[0].scaled_scores.allFinite());
  CHECK(r.heads[0].overflow);
  CHECK(r.overflow);
  CHECK(r.heads[0].weights.allFinite());
  for (Eigen::Index i = 0; i < 3; ++i)
    CHECK(r.heads[0].weights.row(i).sum() == doctest::Approx(1.0));
}

TEST_CASE("1e38 in a single weight gives finite and sharp weights") {
  Tiny tiny(Compatibility::ScaledDot);
  tiny.parameters.heads[0].W_Q(0, 0) = 1e38f;
  const AttentionResult& r = tiny.run(matrix({{1, 0}, {0.5f, 1}}));
  CHECK(r.heads[0].weights.allFinite());
  CHECK_FALSE(r.overflow);
  CHECK(r.heads[0].weights(0, 0) == doctest::Approx(1.0));
}

TEST_CASE("a NaN embedding is rejected with the entry named and the last result is kept") {
  Tiny tiny(Compatibility::Dot);
  tiny.run(matrix({{1, 0}, {0, 2}}));
  const std::uint64_t version = tiny.engine.result().version;
  const Matrix weights = tiny.engine.result().heads[0].weights;
  Matrix X = matrix({{1, 0}, {0, std::numeric_limits<float>::quiet_NaN()}, {1, 1}});
  const Status status = tiny.engine.compute(X, X, tiny.parameters, tiny.config);
  CHECK_FALSE(status);
  CHECK(status.message().rfind("X_query[1][1] is NaN", 0) == 0);
  CHECK(tiny.engine.result().version == version);
  CHECK(tiny.engine.result().heads[0].weights == weights);
}

TEST_CASE("an infinite weight is rejected with the entry named") {
  Tiny tiny(Compatibility::Dot);
  tiny.parameters.heads[0].W_V(1, 0) = kInf;
  const Matrix X = matrix({{1, 0}});
  const Status status = tiny.engine.compute(X, X, tiny.parameters, tiny.config);
  CHECK(status.message().rfind("W_V[0][1][0] is +infinity", 0) == 0);
}

TEST_CASE(
    "a non-finite weight that the compatibility function does not use is no error until it is "
    "used") {
  Tiny dot(Compatibility::ScaledDot);
  dot.parameters.heads[0].W_a(1, 0) = std::numeric_limits<float>::quiet_NaN();
  dot.parameters.heads[0].v_a[0] = kInf;
  const Matrix X = matrix({{1, 0}, {0, 1}});
  CHECK(dot.engine.compute(X, X, dot.parameters, dot.config));
  dot.config.compatibility = Compatibility::General;
  const Status general = dot.engine.compute(X, X, dot.parameters, dot.config);
  CHECK(general.message().rfind("W_a[0][1][0] is NaN", 0) == 0);
  dot.config.compatibility = Compatibility::Additive;
  const Status additive = dot.engine.compute(X, X, dot.parameters, dot.config);
  CHECK(additive.message().rfind("v_a[0][0] is +infinity", 0) == 0);
}

TEST_CASE("no tokens or a wrong embedding width or a wrong mask shape are errors") {
  Tiny tiny(Compatibility::Dot);
  CHECK_FALSE(tiny.engine.compute(Matrix(0, 2), Matrix(0, 2), tiny.parameters, tiny.config));
  CHECK_FALSE(
      tiny.engine.compute(Matrix::Zero(2, 3), Matrix::Zero(2, 3), tiny.parameters, tiny.config));
  const MaskMatrix mask = MaskMatrix::Ones(3, 2);
  const Status status = tiny.engine.compute(Matrix::Zero(2, 2), Matrix::Zero(2, 2), tiny.parameters,
                                            tiny.config, &mask);
  CHECK(status.message() == "the mask is 3x2 but attention is 2x2");
}

// -----------------------------------------------------------------------------
// [SECTION] Against the reference
// -----------------------------------------------------------------------------

TEST_CASE("every compatibility function agrees with the double-precision reference") {
  std::mt19937 random(7);
  double worst_weights = 0, worst_output = 0;
  for (Compatibility compatibility :
       {Compatibility::Dot, Compatibility::ScaledDot, Compatibility::General,
        Compatibility::Additive, Compatibility::Cosine}) {
    for (int trial = 0; trial < 25; ++trial) {
      AttentionConfig config;
      config.compatibility = compatibility;
      config.d_model = 1 + int(random() % 24);
      config.heads = 1 + int(random() % 4);
      config.d_k = 1 + int(random() % 8);
      config.d_v = 1 + int(random() % 8);
      config.d_att = 1 + int(random() % 8);
      config.temperature = 0.5f + float(random() % 4);
      config.causal = random() % 3 == 0;
      config.hard = random() % 7 == 0;
      const Parameters p = seeded_parameters(config, random());
      const Eigen::Index nq = 1 + random() % 12, nk = trial % 2 ? nq : 1 + random() % 12;
      const Matrix Xq = Matrix::Random(nq, config.d_model),
                   Xk = trial % 2 ? Xq : Matrix::Random(nk, config.d_model);
      MaskMatrix mask = MaskMatrix::Ones(nq, nk);
      for (Eigen::Index i = 0; i < nq; ++i)
        for (Eigen::Index j = 0; j < nk; ++j) mask(i, j) = random() % 5 != 0;
      const bool use_mask = trial % 4 == 0;
      AttentionEngine engine;
      REQUIRE(engine.compute(Xq, Xk, p, config, use_mask ? &mask : nullptr));
      const ReferenceResult ref =
          reference_attention(Xq, Xk, p, config, use_mask ? &mask : nullptr);
      for (int h = 0; h < config.heads; ++h) {
        const double dw =
            (engine.result().heads[size_t(h)].weights.cast<double>() - ref.heads[size_t(h)].weights)
                .cwiseAbs()
                .maxCoeff();
        if (config.hard && dw > 0) continue;  // float vs double can break a near-tie
        worst_weights = std::max(worst_weights, dw);
      }
      if (!config.hard)
        worst_output =
            std::max(worst_output,
                     (engine.result().output.cast<double>() - ref.output).cwiseAbs().maxCoeff());
    }
  }
  MESSAGE("max |Δ| vs double reference: weights " << worst_weights << ", output " << worst_output);
  CHECK(worst_weights < 1e-5);
  CHECK(worst_output < 1e-4);
}

// The engine computes a head's scores a band of queries at a time when there are many keys
// (1 MiB of scores a band), and does large products a band of columns at a time (so that
// Eigen's packed blocks stay on the stack): both must give the same numbers as one pass.
TEST_CASE("many keys (several bands of queries) and wide products agree with the reference") {
  std::mt19937 random(11);
  struct Case {
    Eigen::Index n_query, n_key;
    int d_model, heads, d_k;
    bool self;
    bool every_compatibility;
  };
  const Case cases[] = {
      {150, 2100, 16, 2, 4, false, true},   // 2 bands of 124 queries, cross attention
      {520, 520, 8, 1, 3, true, false},     // 2 bands of 504 queries, self-attention, causal
      {230, 230, 900, 4, 32, true, false},  // X · packed weights (900, 384) in bands of columns
  };
  for (const Case& c : cases) {
    for (Compatibility compatibility : {Compatibility::ScaledDot, Compatibility::General,
                                        Compatibility::Additive, Compatibility::Cosine}) {
      if (!c.every_compatibility && compatibility != Compatibility::ScaledDot) continue;
      CAPTURE(c.n_query);
      CAPTURE(c.n_key);
      CAPTURE(to_string(compatibility));
      AttentionConfig config;
      config.compatibility = compatibility;
      config.d_model = c.d_model;
      config.heads = c.heads;
      config.d_k = config.d_v = config.d_att = c.d_k;
      config.causal = c.self;
      const Parameters p = seeded_parameters(config, random());
      const Matrix Xq = Matrix::Random(c.n_query, c.d_model);
      const Matrix Xk = c.self ? Xq : Matrix::Random(c.n_key, c.d_model);
      MaskMatrix mask = MaskMatrix::Ones(c.n_query, c.n_key);
      for (Eigen::Index i = 0; i < c.n_query; ++i)
        for (Eigen::Index j = 0; j < c.n_key; ++j) mask(i, j) = random() % 5 != 0;
      AttentionEngine engine;
      REQUIRE(engine.compute(Xq, c.self ? Xq : Xk, p, config, &mask));
      const ReferenceResult ref = reference_attention(Xq, Xk, p, config, &mask);
      for (int h = 0; h < config.heads; ++h) {
        const HeadResult& head = engine.result().heads[size_t(h)];
        CHECK((head.weights.cast<double>() - ref.heads[size_t(h)].weights).cwiseAbs().maxCoeff() <
              1e-5);
        // Every query's row was computed: masked scores are -inf exactly where the mask says.
        for (Eigen::Index i = 0; i < c.n_query; i += 37)
          for (Eigen::Index j = 0; j < c.n_key; j += 13)
            CHECK((head.masked_scores(i, j) == -kInf) == (mask(i, j) == 0 || (c.self && j > i)));
      }
      CHECK((engine.result().output.cast<double>() - ref.output).cwiseAbs().maxCoeff() < 1e-4);
    }
  }
}

}  // namespace attnviz
