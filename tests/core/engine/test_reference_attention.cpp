// The fast engine against the plain reference (core/engine/reference_attention.hpp), every
// intermediate: Q, K, V, the raw, scaled and masked scores, the weights, each head's output,
// concat and the output; every compatibility function, every kind of mask, soft and hard, shapes
// on both sides of the 16-lane boundary, one to four threads. A failure names the intermediate
// and its largest difference, with where it is.
#include "core/engine/attention.hpp"
#include "core/engine/reference_attention.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>

namespace attnviz {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The largest difference between the engine's matrix and the reference's, and where it is.
// With `relative`, a difference is divided by max(1, |reference|) (scores grow with d_k, and
// float keeps about seven digits of them). Masked scores (-inf) must be -inf in both.
struct Difference {
  double largest = 0;
  Eigen::Index row = -1, col = -1;
  double fast = 0, reference = 0;
  bool shapes_differ = false;

  std::string describe() const {
    std::ostringstream out;
    if (shapes_differ) return "the shapes differ";
    out << "largest |Δ| " << largest << " at (" << row << ", " << col << "): engine " << fast
        << ", reference " << reference;
    return out.str();
  }
};

Difference difference(const Matrix& fast, const ReferenceMatrix& reference, bool relative = false) {
  Difference d;
  if (fast.rows() != reference.rows() || fast.cols() != reference.cols()) {
    d.shapes_differ = true;
    d.largest = kInfinity;
    return d;
  }
  for (Eigen::Index r = 0; r < fast.rows(); ++r)
    for (Eigen::Index c = 0; c < fast.cols(); ++c) {
      const double x = fast(r, c), y = reference(r, c);
      double delta = 0;
      if (std::isinf(x) || std::isinf(y))
        delta = x == y ? 0 : kInfinity;
      else
        delta = std::abs(x - y) / (relative ? std::max(1.0, std::abs(y)) : 1.0);
      if (!(delta <= d.largest)) d = {delta, r, c, x, y, false};
    }
  return d;
}

// Tolerances as test_attention.cpp uses them: weights and projections 1e-5, outputs 1e-4;
// scores 1e-4 relative.
constexpr double kWeightTolerance = 1e-5, kOutputTolerance = 1e-4, kScoreTolerance = 1e-4;

#define CHECK_CLOSE(name, fast, reference, tolerance, relative)                      \
  do {                                                                               \
    const Difference found = difference((fast), (reference), (relative));            \
    CHECK_MESSAGE(found.largest <= (tolerance), (name) << ": " << found.describe()); \
    worst = std::max(worst, found.largest);                                          \
  } while (false)

// Hard attention in float and in double can pick different keys of a near-tie: a row of
// weights that differs must still put its 1 on a key whose score is the reference's largest,
// to float rounding.
void check_hard_weights(const HeadResult& head, const ReferenceHead& reference) {
  for (Eigen::Index i = 0; i < head.weights.rows(); ++i) {
    if ((head.weights.row(i).cast<double>() - reference.weights.row(i)).cwiseAbs().maxCoeff() == 0)
      continue;
    Eigen::Index chosen = 0;
    head.weights.row(i).maxCoeff(&chosen);
    const double largest = reference.masked_scores.row(i).maxCoeff();
    CAPTURE(i);
    CHECK_MESSAGE(std::abs(reference.masked_scores(i, chosen) - largest) <=
                      kScoreTolerance * std::max(1.0, std::abs(largest)),
                  "hard attention chose key " << chosen << " (reference score "
                                              << reference.masked_scores(i, chosen)
                                              << ") but the largest score is " << largest);
  }
}

// Every intermediate of the engine's last result against the reference; the largest difference
// seen (weights and outputs), for a message.
double compare(const AttentionResult& fast, const ReferenceResult& reference,
               const AttentionConfig& config) {
  double worst = 0;
  REQUIRE(fast.heads.size() == reference.heads.size());
  for (std::size_t h = 0; h < fast.heads.size(); ++h) {
    CAPTURE(h);
    const HeadResult& head = fast.heads[h];
    const ReferenceHead& expected = reference.heads[h];
    CHECK_CLOSE("Q", head.Q, expected.Q, kWeightTolerance, true);
    CHECK_CLOSE("K", head.K, expected.K, kWeightTolerance, true);
    CHECK_CLOSE("V", head.V, expected.V, kWeightTolerance, true);
    CHECK_CLOSE("raw scores", head.raw_scores, expected.raw_scores, kScoreTolerance, true);
    CHECK_CLOSE("scaled scores", head.scaled_scores, expected.scaled_scores, kScoreTolerance, true);
    CHECK_CLOSE("masked scores", head.masked_scores, expected.masked_scores, kScoreTolerance, true);
    for (Eigen::Index i = 0; i < head.fully_masked_rows.size(); ++i)
      CHECK((head.fully_masked_rows[i] != 0) ==
            expected.fully_masked_rows[static_cast<std::size_t>(i)]);
    CHECK(head.overflow == expected.overflow);
    if (config.hard) {
      check_hard_weights(head, expected);
      continue;  // a different key of a near-tie changes the output: compared when soft
    }
    CHECK_CLOSE("weights", head.weights, expected.weights, kWeightTolerance, false);
    CHECK_CLOSE("head output", head.output, expected.output, kOutputTolerance, false);
  }
  CHECK(fast.fully_masked_row_count == reference.fully_masked_row_count);
  CHECK(fast.overflow == reference.overflow);
  if (!config.hard) {
    CHECK_CLOSE("concat", fast.concat, reference.concat, kOutputTolerance, false);
    CHECK_CLOSE("output", fast.output, reference.output, kOutputTolerance, false);
  }
  return worst;
}

struct TestShape {
  Eigen::Index n_query, n_key;
  int d_model, heads, d_k, d_v;
  bool self;
};

enum class MaskKind { None, Causal, Custom, CausalAndCustom, FullyMaskedRow };

const char* to_string(MaskKind kind) {
  switch (kind) {
    case MaskKind::None:
      return "no mask";
    case MaskKind::Causal:
      return "causal";
    case MaskKind::Custom:
      return "custom mask";
    case MaskKind::CausalAndCustom:
      return "causal and custom mask";
    case MaskKind::FullyMaskedRow:
      return "a fully masked row";
  }
  return "";
}

}  // namespace

TEST_CASE("the engine agrees with the reference on every intermediate") {
  std::mt19937 random(29);
  const TestShape shapes[] = {
      {1, 1, 1, 1, 1, 1, true},        // the smallest
      {5, 5, 8, 2, 4, 4, true},        // the default scenario's shape
      {15, 16, 12, 3, 5, 7, false},    // just under and at the 16-lane boundary, odd widths
      {17, 33, 48, 3, 16, 20, false},  // just past it, two partial groups of keys
      {32, 32, 64, 8, 8, 8, true},     // the classroom shape: heads 8 wide in pairs
      {31, 47, 40, 2, 17, 9, false},   // odd everything
      {96, 96, 64, 3, 8, 8, true},     // enough work for the threads to split the heads
      {64, 80, 64, 4, 16, 8, false},   // cross attention, heads made in place, split
      {96, 96, 128, 2, 64, 64, true},  // Eigen's GEMM, W_O in bands of rows
  };
  const MaskKind masks[] = {MaskKind::None, MaskKind::Causal, MaskKind::Custom,
                            MaskKind::CausalAndCustom, MaskKind::FullyMaskedRow};
  double worst = 0;
  int compared = 0;
  for (const TestShape& shape : shapes) {
    for (Compatibility compatibility :
         {Compatibility::Dot, Compatibility::ScaledDot, Compatibility::General,
          Compatibility::Additive, Compatibility::Cosine}) {
      for (MaskKind mask_kind : masks) {
        const bool causal = mask_kind == MaskKind::Causal || mask_kind == MaskKind::CausalAndCustom;
        if (causal && !shape.self) continue;
        AttentionConfig config;
        config.compatibility = compatibility;
        config.d_model = shape.d_model;
        config.heads = shape.heads;
        config.d_k = shape.d_k;
        config.d_v = shape.d_v;
        config.d_att = std::min(shape.d_k, 8);
        config.causal = causal;
        config.hard = compared % 7 == 3;
        config.temperature = compared % 3 == 0 ? 0.5f : 1.0f;
        // Grouped-query attention on some: multi-query (1 group), or 2 groups where they divide.
        if (shape.heads > 1 && compared % 4 == 1) config.kv_groups = 1;
        if (shape.heads > 2 && shape.heads % 2 == 0 && compared % 4 == 2) config.kv_groups = 2;
        ++compared;
        const Parameters parameters = seeded_parameters(config, random());
        const Matrix Xq = Matrix::Random(shape.n_query, shape.d_model);
        const Matrix Xk = shape.self ? Xq : Matrix::Random(shape.n_key, shape.d_model);
        MaskMatrix mask = MaskMatrix::Ones(shape.n_query, shape.n_key);
        if (mask_kind == MaskKind::Custom || mask_kind == MaskKind::CausalAndCustom)
          for (Eigen::Index i = 0; i < shape.n_query; ++i)
            for (Eigen::Index j = 0; j < shape.n_key; ++j) mask(i, j) = random() % 4 != 0;
        if (mask_kind == MaskKind::FullyMaskedRow) mask.row(shape.n_query / 2).setZero();
        const MaskMatrix* custom_mask =
            mask_kind == MaskKind::None || mask_kind == MaskKind::Causal ? nullptr : &mask;
        const ReferenceResult reference =
            reference_attention(Xq, Xk, parameters, config, custom_mask);
        for (int threads : {1, 2, 4}) {
          CAPTURE(shape.n_query);
          CAPTURE(shape.n_key);
          CAPTURE(shape.d_model);
          CAPTURE(shape.heads);
          CAPTURE(shape.d_k);
          CAPTURE(shape.d_v);
          CAPTURE(to_string(compatibility));
          CAPTURE(to_string(mask_kind));
          CAPTURE(config.hard);
          CAPTURE(config.kv_groups);
          CAPTURE(threads);
          AttentionEngine engine;
          engine.set_threads(threads);
          // Self-attention passes one matrix twice, as the pipeline does (one product for Q, K, V).
          REQUIRE(engine.compute(Xq, shape.self ? Xq : Xk, parameters, config, custom_mask));
          worst = std::max(worst, compare(engine.result(), reference, config));
        }
      }
    }
  }
  MESSAGE(compared << " configurations; largest |Δ| against the reference " << worst);
}

TEST_CASE("the reference computes the hand-made case") {
  // One head, identity projections, X = [[1, 0], [0, 2]]: raw scores are X·Xᵀ.
  AttentionConfig config{.d_model = 2, .heads = 1, .d_k = 2, .d_v = 2, .d_att = 1};
  config.compatibility = Compatibility::Dot;
  Parameters parameters = seeded_parameters(config, 1);
  parameters.heads[0].W_Q = parameters.heads[0].W_K = parameters.heads[0].W_V =
      Matrix::Identity(2, 2);
  parameters.W_O = Matrix::Identity(2, 2);
  Matrix X(2, 2);
  X << 1, 0, 0, 2;
  const ReferenceResult reference = reference_attention(X, X, parameters, config);
  CHECK(reference.heads[0].raw_scores(1, 1) == 4.0);
  const double a = std::exp(1.0) / (std::exp(1.0) + 1.0);
  CHECK(reference.heads[0].weights(0, 0) == doctest::Approx(a));
  CHECK(reference.output(0, 1) == doctest::Approx(2 * (1 - a)));
  MaskMatrix mask = MaskMatrix::Ones(2, 2);
  mask.row(1).setZero();
  const ReferenceResult masked = reference_attention(X, X, parameters, config, &mask);
  CHECK(masked.heads[0].fully_masked_rows[1]);
  CHECK(masked.fully_masked_row_count == 1);
  CHECK(masked.heads[0].masked_scores(1, 0) == -kInfinity);
  CHECK(masked.output.row(1).isZero());
}

}  // namespace attnviz

namespace attnviz {

TEST_CASE("grouped-query attention: the heads of a group share the first head's K and V") {
  AttentionConfig config{.d_model = 8, .heads = 4, .d_k = 3, .d_v = 2, .causal = true};
  const Parameters parameters = seeded_parameters(config, 7);
  const Matrix X = Matrix::Random(6, 8);
  for (int groups : {1, 2}) {
    CAPTURE(groups);
    config.kv_groups = groups;
    const ReferenceResult reference = reference_attention(X, X, parameters, config);
    const int per_group = config.heads / groups;
    for (int h = 0; h < config.heads; ++h) {
      CAPTURE(h);
      const int first = h / per_group * per_group;
      // K and V written out from the first head's weights; Q from the head's own.
      const ReferenceMatrix K = X.cast<double>() * parameters.heads[first].W_K.cast<double>();
      const ReferenceMatrix V = X.cast<double>() * parameters.heads[first].W_V.cast<double>();
      const ReferenceMatrix Q = X.cast<double>() * parameters.heads[h].W_Q.cast<double>();
      CHECK((reference.heads[h].K - K).cwiseAbs().maxCoeff() < 1e-12);
      CHECK((reference.heads[h].V - V).cwiseAbs().maxCoeff() < 1e-12);
      CHECK((reference.heads[h].Q - Q).cwiseAbs().maxCoeff() < 1e-12);
    }
    AttentionEngine engine;
    REQUIRE(engine.compute(X, X, parameters, config));
    for (int h = 1; h < config.heads; ++h)
      CHECK((engine.result().heads[h].K == engine.result().heads[h - 1].K) == (h % per_group != 0));
  }
}

TEST_CASE("grouped-query attention with as many groups as heads is multi-head attention") {
  AttentionConfig config{.d_model = 8, .heads = 4, .d_k = 2, .d_v = 2};
  const Parameters parameters = seeded_parameters(config, 11);
  const Matrix X = Matrix::Random(5, 8);
  AttentionEngine multi_head, grouped;
  REQUIRE(multi_head.compute(X, X, parameters, config));
  config.kv_groups = config.heads;
  REQUIRE(validate(config));
  REQUIRE(grouped.compute(X, X, parameters, config));
  CHECK(grouped.result().output == multi_head.result().output);
  const ReferenceResult reference = reference_attention(X, X, parameters, config);
  config.kv_groups = 0;
  const ReferenceResult reference_multi_head = reference_attention(X, X, parameters, config);
  CHECK(reference.output == reference_multi_head.output);
  // And with fewer groups the output is not the same (the test can tell them apart).
  config.kv_groups = 1;
  REQUIRE(grouped.compute(X, X, parameters, config));
  CHECK(!(grouped.result().output == multi_head.result().output));
}

TEST_CASE("kv_groups that do not divide the heads are refused with a message") {
  AttentionConfig config{.d_model = 6, .heads = 6, .d_k = 1, .d_v = 1};
  const Parameters parameters = seeded_parameters(config, 3);
  const Matrix X = Matrix::Random(3, 6);
  for (int groups : {4, 5, -1, 7}) {
    CAPTURE(groups);
    config.kv_groups = groups;
    const Status status = validate(config);
    REQUIRE(!status);
    MESSAGE(status.message());
    CHECK(status.message().find("kv_groups") != std::string::npos);
    AttentionEngine engine;
    CHECK(!engine.compute(X, X, parameters, config));
  }
  config.kv_groups = 4;
  CHECK(validate(config).message() ==
        "kv_groups must divide heads: 6 heads cannot be shared out among 4 key/value groups");
  for (int groups : {0, 1, 2, 3, 6}) {
    config.kv_groups = groups;
    CHECK(validate(config));
  }
  // A change of heads makes the groups valid again.
  config.heads = 4;
  config.kv_groups = 3;
  normalize_kv_groups(config);
  CHECK(config.kv_groups == 0);
  config.kv_groups = 2;
  normalize_kv_groups(config);
  CHECK(config.kv_groups == 2);
}

}  // namespace attnviz
