// The one-layer toy's gradient descent (core/training/attention_fit.hpp): the fast gradient
// against its plain reference and against central differences of the loss (each comparison
// shown to catch a gradient without the score's scale), the targets a teacher picks, and
// descents that reach their target, or cannot, as the lessons say.
#include "core/document/scenario.hpp"
#include "core/lessons/lesson.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/training/attention_fit.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>

namespace attnviz {
namespace {

Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng, float spread) {
  std::uniform_real_distribution<float> uniform(-spread, spread);
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = uniform(rng);
  return m;
}

// A random row-stochastic target with some rows empty and nothing on keys that are not allowed.
Matrix random_target(Eigen::Index rows, Eigen::Index cols, const AllowedKeys& allowed,
                     std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Matrix target = Matrix::Zero(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    if (i % 3 == 2) continue;  // no target
    float sum = 0;
    for (Eigen::Index j = 0; j < cols; ++j)
      if (allowed.allowed(i, j) && uniform(rng) < 0.5f) sum += target(i, j) = uniform(rng) + 0.1f;
    if (sum > 0) target.row(i) /= sum;
  }
  return target;
}

double largest_relative(const Matrix& a, const Matrix& b) {
  const double scale = std::max(1e-6, static_cast<double>(b.cwiseAbs().maxCoeff()));
  return static_cast<double>((a - b).cwiseAbs().maxCoeff()) / scale;
}

struct Case {
  const char* name;
  Compatibility compatibility;
  float temperature;
  bool causal;
  bool cross;
  bool masked;
};
constexpr Case kCases[] = {
    {"scaled dot", Compatibility::ScaledDot, 1.0f, false, false, false},
    {"dot, T = 2", Compatibility::Dot, 2.0f, false, false, false},
    {"causal", Compatibility::ScaledDot, 1.0f, true, false, false},
    {"cross, masked", Compatibility::ScaledDot, 0.5f, false, true, true},
};

// The loss alone, from the reference (in double inside), for central differences.
double loss_at(const FitInput& input, const Matrix& W_Q, const Matrix& W_K) {
  FitGradient g;
  REQUIRE(reference_fit_gradient(input, W_Q, W_K, g).is_ok());
  return g.loss;
}

// Central differences of every cell of W_Q and W_K against `gradient`: the largest difference
// relative to the gradient's largest cell.
double finite_difference_error(const FitInput& input, const Matrix& W_Q, const Matrix& W_K,
                               const FitGradient& gradient) {
  const float h = 1e-3f;
  double worst = 0;
  const double scale =
      std::max(gradient.grad_W_Q.cwiseAbs().maxCoeff(), gradient.grad_W_K.cwiseAbs().maxCoeff());
  for (int which = 0; which < 2; ++which) {
    const Matrix& grad = which == 0 ? gradient.grad_W_Q : gradient.grad_W_K;
    for (Eigen::Index r = 0; r < W_Q.rows(); ++r)
      for (Eigen::Index c = 0; c < W_Q.cols(); ++c) {
        Matrix plus_Q = W_Q, minus_Q = W_Q, plus_K = W_K, minus_K = W_K;
        Matrix& plus = which == 0 ? plus_Q : plus_K;
        Matrix& minus = which == 0 ? minus_Q : minus_K;
        plus(r, c) += h;
        minus(r, c) -= h;
        const double step = static_cast<double>(plus(r, c)) - static_cast<double>(minus(r, c));
        const double numeric =
            (loss_at(input, plus_Q, plus_K) - loss_at(input, minus_Q, minus_K)) / step;
        worst = std::max(worst, std::abs(numeric - grad(r, c)) / scale);
      }
  }
  return worst;
}

}  // namespace

TEST_CASE("the fit's fast gradient equals its plain reference and central differences") {
  std::mt19937 rng(11);
  for (const Case& c : kCases) {
    CAPTURE(c.name);
    const Eigen::Index n_query = 6, n_key = c.cross ? 5 : 6, d_model = 7, d_k = 3;
    const Matrix X_query = random_matrix(n_query, d_model, rng, 1.0f);
    const Matrix X_key = c.cross ? random_matrix(n_key, d_model, rng, 1.0f) : X_query;
    MaskMatrix mask = MaskMatrix::Ones(n_query, n_key);
    mask(1, 0) = mask(4, 3) = 0;
    FitInput input;
    input.X_query = &X_query;
    input.X_key = &X_key;
    input.allowed = {c.masked ? &mask : nullptr, c.causal};
    input.config.d_model = static_cast<int>(d_model);
    input.config.d_k = static_cast<int>(d_k);
    input.config.compatibility = c.compatibility;
    input.config.temperature = c.temperature;
    input.config.causal = c.causal;
    const Matrix target = random_target(n_query, n_key, input.allowed, rng);
    input.target = &target;
    const Matrix W_Q = random_matrix(d_model, d_k, rng, 0.8f);
    const Matrix W_K = random_matrix(d_model, d_k, rng, 0.8f);

    FitGradient fast, plain;
    REQUIRE(fit_gradient(input, W_Q, W_K, fast).is_ok());
    REQUIRE(reference_fit_gradient(input, W_Q, W_K, plain).is_ok());
    CHECK(fast.loss > 0.01);
    CHECK(fast.loss == doctest::Approx(plain.loss).epsilon(1e-5));
    CHECK(fast.target_rows == plain.target_rows);
    CHECK(fast.mismatch == doctest::Approx(plain.mismatch).epsilon(1e-5));
    const double q_error = largest_relative(fast.grad_W_Q, plain.grad_W_Q);
    const double k_error = largest_relative(fast.grad_W_K, plain.grad_W_K);
    const double weights_error = largest_relative(fast.weights, plain.weights);
    MESSAGE(std::string(c.name) << ": fast against plain, largest relative difference W_Q "
                                << q_error << ", W_K " << k_error << ", α " << weights_error);
    CHECK(q_error < 1e-5);
    CHECK(k_error < 1e-5);
    CHECK(weights_error < 1e-5);
    for (Eigen::Index i = 0; i < n_query; ++i)  // masked keys get nothing
      for (Eigen::Index j = 0; j < n_key; ++j)
        if (!input.allowed.allowed(i, j)) CHECK(fast.weights(i, j) == 0.0f);

    const double numeric_error = finite_difference_error(input, W_Q, W_K, plain);
    MESSAGE(std::string(c.name) << ": central differences, largest relative difference "
                                << numeric_error);
    CHECK(numeric_error < 1e-3);

    // The comparisons catch a wrong gradient: the same inputs read as the other score (the
    // scale of √d_k left out or put in) give a gradient the differences reject.
    FitInput wrong = input;
    wrong.config.compatibility =
        c.compatibility == Compatibility::Dot ? Compatibility::ScaledDot : Compatibility::Dot;
    FitGradient wrong_gradient;
    REQUIRE(fit_gradient(wrong, W_Q, W_K, wrong_gradient).is_ok());
    CHECK(finite_difference_error(input, W_Q, W_K, wrong_gradient) > 0.05);
  }
}

TEST_CASE("the fit refuses what has no gradient, and shapes that do not fit") {
  AttentionConfig config;
  config.hard = true;
  CHECK(check_fit_config(config).message().find("hard attention has no gradient") !=
        std::string::npos);
  config.hard = false;
  for (Compatibility other :
       {Compatibility::General, Compatibility::Additive, Compatibility::Cosine}) {
    config.compatibility = other;
    CHECK_FALSE(check_fit_config(config).is_ok());
  }
  config.compatibility = Compatibility::Dot;
  CHECK(check_fit_config(config).is_ok());

  const Matrix X = Matrix::Ones(3, 4), target = Matrix::Zero(3, 2);
  FitInput input;
  input.X_query = input.X_key = &X;
  input.config = config;
  input.target = &target;  // 2 keys, but X has 3
  FitGradient g;
  const Matrix W = Matrix::Ones(4, 2);
  CHECK(fit_gradient(input, W, W, g).message().find("do not fit") != std::string::npos);
  Matrix bad = W;
  bad(1, 1) = std::numeric_limits<float>::quiet_NaN();
  const Matrix square_target = Matrix::Identity(3, 3);
  input.target = &square_target;
  CHECK(fit_gradient(input, bad, W, g).message().find("not a finite number") != std::string::npos);
  CHECK(fit_gradient(input, W, W, g).is_ok());
  // 1e38 typed into a weight: the scores leave float; an error, and nothing moves.
  Matrix huge = W;
  huge(0, 0) = 1e38f;
  CHECK(fit_gradient(input, huge, W, g).message().find("too large") != std::string::npos);
  CHECK(reference_fit_gradient(input, huge, W, g).message().find("too large") != std::string::npos);
  Matrix huge_Q = huge, kept_K = W;
  CHECK_FALSE(gradient_descent(input, FitSettings{}, 5, huge_Q, kept_K, g).is_ok());
  CHECK(huge_Q == huge);
  CHECK(kept_K == W);
  FitSettings settings;
  settings.learning_rate = std::numeric_limits<float>::quiet_NaN();
  Matrix W_Q = W, W_K = W;
  CHECK_FALSE(gradient_descent(input, settings, 5, W_Q, W_K, g).is_ok());
}

TEST_CASE("the targets a teacher picks") {
  const Tokenization cat = tokenize("the cat sat on the mat", 64);
  const AllowedKeys everything;
  const Matrix previous =
      target_attention(TargetPattern::PreviousWord, cat, cat, false, everything);
  CHECK(previous(0, 0) == 1.0f);  // the first word has none before it: itself
  for (Eigen::Index i = 1; i < 6; ++i) CHECK(previous(i, i - 1) == 1.0f);
  CHECK(previous.sum() == doctest::Approx(6.0f));

  // Under the causal mask no word may look at the next: only the last looks at itself.
  const Matrix next_causal =
      target_attention(TargetPattern::NextWord, cat, cat, false, AllowedKeys{nullptr, true});
  CHECK(next_causal.sum() == doctest::Approx(1.0f));
  CHECK(next_causal(5, 5) == 1.0f);

  const Matrix same = target_attention(TargetPattern::SameWord, cat, cat, false, everything);
  CHECK(same(0, 0) == 0.5f);  // "the" is words 0 and 4
  CHECK(same(0, 4) == 0.5f);
  CHECK(same(1, 1) == 1.0f);

  const Matrix first = target_attention(TargetPattern::FirstWord, cat, cat, false, everything);
  CHECK(first.col(0).sum() == doctest::Approx(6.0f));

  // Lesson 1's names: in cross-attention each query finds its own name among the keys.
  const Tokenization names = tokenize("alice alan bob maria", 64);
  const Tokenization alice = tokenize("alice", 64);
  const Matrix own = target_attention(TargetPattern::SameWord, alice, names, true, everything);
  CHECK(own(0, 0) == 1.0f);
  CHECK(own.sum() == doctest::Approx(1.0f));

  const Tokenization animal =
      tokenize("the animal did not cross the street because it was tired", 64);
  const Matrix it =
      target_attention(TargetPattern::PronounToNoun, animal, animal, false, everything);
  CHECK(it(8, 1) == 1.0f);                   // it → animal (the subject, not the street)
  CHECK(it.sum() == doctest::Approx(1.0f));  // only the pronoun has a target
  const Tokenization people = tokenize("mary met the dogs and she fed them", 64);
  const Matrix agree =
      target_attention(TargetPattern::PronounToNoun, people, people, false, everything);
  CHECK(agree(5, 0) == 1.0f);  // she → mary
  CHECK(agree(7, 3) == 1.0f);  // them → dogs

  MaskMatrix painted = MaskMatrix::Zero(3, 3);
  painted(0, 1) = painted(0, 2) = painted(2, 0) = 1;
  const Matrix from_paint = painted_target(painted, AllowedKeys{nullptr, true});
  CHECK(from_paint.sum() == doctest::Approx(1.0f));  // row 0 asks only for keys after it
  CHECK(from_paint(2, 0) == 1.0f);
  const Matrix free_paint = painted_target(painted, everything);
  CHECK(free_paint(0, 1) == 0.5f);

  // Two "the"s with one embedding: the previous-word target asks two things of one question
  // (rows 0 and 4), and of one answer (keys 0 and 4: "cat" wants the first, "mat" the second).
  Matrix X = Matrix::Zero(6, 3);
  for (int i = 0; i < 6; ++i) X(i, i % 3) = static_cast<float>(i + 1);
  X.row(4) = X.row(0);
  const std::optional<UnreachablePair> pair = unreachable_pair(X, X, previous, everything);
  REQUIRE(pair);
  CHECK_FALSE(pair->keys);
  CHECK(pair->first == 0);
  CHECK(pair->second == 4);
  const Matrix key_only = target_attention(TargetPattern::FirstWord, cat, cat, false, everything);
  const std::optional<UnreachablePair> keys = unreachable_pair(X, X, key_only, everything);
  REQUIRE(keys);  // every word wants key 0 and not key 4, which is the same key
  CHECK(keys->keys);
  CHECK_FALSE(unreachable_pair(X, X, same, everything));  // "the" at both: one question, one answer
  X.row(4)(1) = 9.0f;
  CHECK_FALSE(unreachable_pair(X, X, previous, everything));

  CHECK(parse_target_pattern("pronoun-noun").value() == TargetPattern::PronounToNoun);
  CHECK(parse_target_pattern("nope").error().find("previous-word") != std::string::npos);
}

namespace {

// The scenario's head 0 descended toward `pattern` for up to `steps` steps.
struct Descent {
  FitGradient before, after;
  int steps = 0;
  std::optional<UnreachablePair> unreachable;
};
Descent descend(const std::string& sentence, Positional positional, TargetPattern pattern,
                int steps) {
  AttentionConfig config;
  config.d_model = 12;
  config.heads = 1;
  config.d_k = 6;
  Scenario scenario = make_scenario(sentence, config, 3);
  scenario.edit_one_layer()->positional = positional;
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario).is_ok());
  FitInput input;
  input.X_query = &pipeline.X_target();
  input.X_key = &pipeline.X_keys();
  input.config = config;
  const Matrix target =
      target_attention(pattern, pipeline.target(), pipeline.keys(), false, input.allowed);
  input.target = &target;
  Matrix W_Q = scenario.one_layer().parameters.heads[0].W_Q;
  Matrix W_K = scenario.one_layer().parameters.heads[0].W_K;
  Descent d;
  d.unreachable = unreachable_pair(*input.X_query, *input.X_key, target, input.allowed);
  REQUIRE(fit_gradient(input, W_Q, W_K, d.before).is_ok());
  REQUIRE(gradient_descent(input, FitSettings{}, steps, W_Q, W_K, d.after, &d.steps).is_ok());
  // What the app shows next: the engine's own attention with the moved weights.
  scenario.edit_one_layer()->parameters.heads[0].W_Q = W_Q;
  scenario.edit_one_layer()->parameters.heads[0].W_K = W_K;
  REQUIRE(pipeline.run(scenario).is_ok());
  CHECK(largest_relative(pipeline.result().heads[0].weights, d.after.weights) < 1e-4);
  return d;
}

}  // namespace

TEST_CASE("gradient descent makes each word look at the word before, given positions") {
  const Descent with =
      descend("the cat sat on the mat", Positional::Sinusoidal, TargetPattern::PreviousWord, 3000);
  MESSAGE("with positions: loss " << with.before.loss << " -> " << with.after.loss << " in "
                                  << with.steps << " steps, mismatch " << with.after.mismatch);
  CHECK(with.after.mismatch <= kFitMatched);
  CHECK(with.steps < 3000);

  // Without positions the two "the"s are one question: no W_Q, W_K sends the first to itself and
  // the second to "on".
  const Descent without =
      descend("the cat sat on the mat", Positional::None, TargetPattern::PreviousWord, 3000);
  MESSAGE("without positions: loss " << without.before.loss << " -> " << without.after.loss
                                     << ", mismatch " << without.after.mismatch);
  CHECK(without.after.mismatch > 0.3);
  CHECK(without.unreachable);
  CHECK_FALSE(with.unreachable);
  CHECK(largest_relative(without.after.weights.row(0), without.after.weights.row(4)) < 1e-4);
}

TEST_CASE("lesson 24's learned weights are what gradient descent finds from the step before") {
  const std::optional<BuiltinLesson> builtin = find_builtin_lesson("24");
  REQUIRE(builtin);
  Result<Lesson> lesson = parse_lesson(builtin->json, std::string(builtin->id));
  REQUIRE(lesson.ok());
  // (the step that starts the descent, the step that shows what it found)
  for (const auto& [from, to] : {std::pair{1, 2}, std::pair{5, 6}}) {
    const int from_step = from;  // CAPTURE's lambda cannot name a structured binding (clang 14)
    CAPTURE(from_step);
    const LessonStep& start = lesson->steps[static_cast<std::size_t>(from)];
    const LessonStep& found = lesson->steps[static_cast<std::size_t>(to)];
    REQUIRE_FALSE(start.fit.empty());
    Pipeline pipeline;
    REQUIRE(pipeline.run(start.scenario).is_ok());
    const OneLayerSpec& one = start.scenario.one_layer();
    FitInput input;
    input.X_query = &pipeline.X_target();
    input.X_key = &pipeline.X_keys();
    input.allowed = {pipeline.mask(), one.config.causal && !pipeline.cross()};
    input.config = one.config;
    const Matrix target =
        target_attention(parse_target_pattern(start.fit).value(), pipeline.target(),
                         pipeline.keys(), pipeline.cross(), input.allowed);
    input.target = &target;
    Matrix W_Q = one.parameters.heads[0].W_Q, W_K = one.parameters.heads[0].W_K;
    FitGradient last;
    int steps = 0;
    REQUIRE(gradient_descent(input, FitSettings{}, 500, W_Q, W_K, last, &steps).is_ok());
    MESSAGE("lesson 24, step " << from + 1 << ": matched in " << steps << " steps");
    CHECK(last.mismatch <= kFitMatched);
    const HeadParameters& written = found.scenario.one_layer().parameters.heads[0];
    CHECK(largest_relative(W_Q, written.W_Q) < 1e-4);
    CHECK(largest_relative(W_K, written.W_K) < 1e-4);
    // The rest of the scenario is the same: only W_Q and W_K moved.
    CHECK(found.scenario.one_layer().parameters.heads[0].W_V == one.parameters.heads[0].W_V);
  }
}

}  // namespace attnviz
