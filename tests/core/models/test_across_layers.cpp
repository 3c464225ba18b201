// Across layers: residual norms, the logit lens and attention rollout, against independent
// computations (the model cut after layer ℓ predicts what the lens reads at ℓ; rollout worked out
// by hand where every head attends uniformly).
#include "core/models/across_layers.hpp"
#include "core/models/reference_forward.hpp"
#include "tests/support/test_models.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace attnviz {

TEST_CASE("residual norms are the stream's lengths, the input first") {
  const Transformer model = testing::random_gpt2(21);
  const std::vector<int> tokens = {3, 14, 15, 9, 26};
  TransformerForward forward(model);
  REQUIRE(forward.run(tokens).is_ok());
  ReferenceForward reference(model);
  for (const int t : tokens) REQUIRE(reference.step(t).ok());
  const Matrix norms = residual_norms(forward);  // (n_layers + 1, n)
  REQUIRE(norms.rows() == 4);
  REQUIRE(norms.cols() == 5);
  for (int i = 0; i < 5; ++i) {
    double input = 0.0;
    for (int j = 0; j < model.config().d_model; ++j) {
      const double x = model.weights().token_embedding.at(tokens[static_cast<std::size_t>(i)], j) +
                       model.weights().position_embedding.at(i, j);
      input += x * x;
    }
    CHECK(norms(0, i) == doctest::Approx(std::sqrt(input)).epsilon(1e-5));
    for (int l = 0; l < 3; ++l) {
      double sum = 0.0;
      for (const float x : reference.row(i, l).residual_out) sum += double{x} * x;
      CHECK(norms(l + 1, i) == doctest::Approx(std::sqrt(sum)).epsilon(1e-4));
    }
  }
}

namespace {

// The lens at layer ℓ against the same weights cut after layer ℓ: its own read-out (a decoder's
// final norm, an encoder's MLM head) then reads layer ℓ's stream.
void check_lens_against_cut_models(const Transformer& model, const std::vector<int>& tokens,
                                   const std::vector<int>& types) {
  TransformerForward forward(model);
  REQUIRE(forward.run(tokens, types).is_ok());
  const std::vector<std::vector<LensPrediction>> lens = logit_lens(forward);
  const int layers = model.config().n_layers;
  REQUIRE(static_cast<int>(lens.size()) == layers);
  for (int l = 0; l < layers; ++l) {
    TransformerConfig config = model.config();
    config.n_layers = l + 1;
    TransformerWeights weights = model.weights();
    weights.layers.resize(static_cast<std::size_t>(l + 1));
    Transformer cut;
    REQUIRE(cut.set_weights(config, weights, "cut", "test").is_ok());
    TransformerForward cut_forward(cut);
    REQUIRE(cut_forward.run(tokens, types).is_ok());
    for (int i = 0; i < forward.size(); ++i) {
      const RowVector logits = cut_forward.logits(i);
      Eigen::Index best = 0;
      const float largest = logits.maxCoeff(&best);
      const double probability = 1.0 / (logits.array() - largest).exp().cast<double>().sum();
      const LensPrediction& p = lens[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)];
      CHECK(p.token == best);
      CHECK(p.probability == doctest::Approx(probability).epsilon(1e-4));
    }
  }
}

}  // namespace

TEST_CASE("the logit lens at layer ℓ predicts what the model cut after layer ℓ predicts") {
  check_lens_against_cut_models(testing::random_gpt2(22), {1, 7, 2, 40, 33, 8, 12}, {});
}

TEST_CASE("an encoder's logit lens reads each layer through its MLM head, as the cut model does") {
  const Transformer model = testing::random_bert(23);
  REQUIRE(model.predicts_tokens());
  check_lens_against_cut_models(model, {2, 7, 9, 11, 3, 12, 5, 3}, {0, 0, 0, 0, 0, 1, 1, 1});
}

TEST_CASE("the logit lens names no token where a huge weight made the stream overflow") {
  Transformer model = testing::random_gpt2(23);
  // W_V of layer 1 at 3e38: every value of its heads, and every stream above, is not finite.
  for (int row = 0; row < model.config().d_model; ++row)
    REQUIRE(model.set_head_weight(1, 0, HeadMatrix::Value, row, 0, 3e38f).is_ok());
  const std::vector<int> tokens = {1, 7, 2, 40};
  TransformerForward forward(model);
  REQUIRE(forward.run(tokens).is_ok());
  const std::vector<std::vector<LensPrediction>> lens = logit_lens(forward);
  for (const LensPrediction& p : lens[0]) CHECK(p.token >= 0);  // below the edit: a prediction
  for (std::size_t l = 1; l < lens.size(); ++l)
    for (const LensPrediction& p : lens[l]) {
      CHECK(p.token == -1);
      CHECK(p.probability == 0.0f);
    }
}

TEST_CASE("attention rollout, worked out by hand where every head attends uniformly") {
  const Transformer model = testing::random_gpt2(23);
  TransformerForward forward(model);
  HeadIntervention uniform;
  uniform.pattern = HeadIntervention::Pattern::Uniform;
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 4; ++h) REQUIRE(forward.set_intervention(l, h, uniform).is_ok());
  const std::vector<int> tokens = {5, 6};
  REQUIRE(forward.run(tokens).is_ok());
  const std::vector<Matrix> rollout = attention_rollout(forward);
  REQUIRE(rollout.size() == 3);
  // α = [1 0; ½ ½], so Â = ½α + ½I = [1 0; ¼ ¾], and after ℓ + 1 layers row 2 is
  // [1 − (¾)^(ℓ+1), (¾)^(ℓ+1)].
  for (int l = 0; l < 3; ++l) {
    const double stay = std::pow(0.75, l + 1);
    CHECK(rollout[static_cast<std::size_t>(l)](0, 0) == doctest::Approx(1.0));
    CHECK(rollout[static_cast<std::size_t>(l)](0, 1) == 0.0f);
    CHECK(rollout[static_cast<std::size_t>(l)](1, 0) == doctest::Approx(1.0 - stay));
    CHECK(rollout[static_cast<std::size_t>(l)](1, 1) == doctest::Approx(stay));
  }
  // On a real pattern: rows sum to 1 and nothing lies above the diagonal.
  forward.clear_interventions();
  const std::vector<int> longer = {5, 6, 7, 8, 9, 10, 11};
  REQUIRE(forward.run(longer).is_ok());
  const std::vector<Matrix> real = attention_rollout(forward);
  for (const Matrix& r : real)
    for (int i = 0; i < 7; ++i) {
      CHECK(r.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
      for (int t = i + 1; t < 7; ++t) CHECK(r(i, t) == 0.0f);
    }
  // Layer by layer, in plain loops: rollout_ℓ[i][t] = Σ_s Â_ℓ[i][s] · rollout_ℓ−1[s][t], the
  // later layer on the left (the information flows from the tokens up through the layers).
  for (int l = 1; l < 3; ++l) {
    double mixed[7][7] = {};
    for (int i = 0; i < 7; ++i) {
      double row_sum = 0.0;
      for (int s = 0; s <= i; ++s) {
        double mean = 0.0;
        for (int h = 0; h < 4; ++h)
          mean += forward.attention_row(l, h, i)[static_cast<std::size_t>(s)];
        mixed[i][s] = 0.5 * mean / 4.0 + (s == i ? 0.5 : 0.0);
        row_sum += mixed[i][s];
      }
      for (int s = 0; s <= i; ++s) mixed[i][s] /= row_sum;
    }
    for (int i = 0; i < 7; ++i)
      for (int t = 0; t < 7; ++t) {
        double sum = 0.0;
        for (int s = 0; s < 7; ++s)
          sum += mixed[i][s] * real[static_cast<std::size_t>(l - 1)](s, t);
        CHECK(real[static_cast<std::size_t>(l)](i, t) == doctest::Approx(sum).epsilon(1e-5));
      }
  }
}

}  // namespace attnviz
