// The pipeline in model mode (core/pipeline/model_run.hpp): the shipped models' layers as the views
// read them, checked against what the forward pass kept and against the softmax and W_O computed
// here from the adapted numbers.
#include "core/pipeline/pipeline.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

namespace attnviz {
namespace {

std::string shipped(const char* name) {
  return (std::filesystem::path(ATTNVIZ_SOURCE_DIR) / "assets/models" / name).string();
}

Scenario model_scenario(const char* name, std::string text) {
  Scenario scenario;
  scenario.target = std::move(text);
  scenario.model = ModelSpec{shipped(name), {}};
  return scenario;
}

float largest_difference(const Matrix& a, const Matrix& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("model mode: stories260K's layers are adapted head by head, grouped-query heads shared") {
  Pipeline pipeline;
  REQUIRE(pipeline.run(model_scenario("stories260K", "Once upon a time there was a cat")));
  REQUIRE(pipeline.model_mode());
  const ModelRun& run = *pipeline.model();
  const TransformerConfig& config = run.model().transformer.config();
  CHECK(pipeline.layer_count() == config.n_layers);
  const auto n = static_cast<Eigen::Index>(pipeline.target().tokens.size());
  CHECK(n == run.forward().size());
  CHECK(pipeline.target().tokens.front().kind == TokenKind::Symbol);  // BOS, shown
  CHECK(!pipeline.cross());
  REQUIRE(config.n_kv_heads < config.n_heads);

  for (int layer = 0; layer < config.n_layers; ++layer) {
    const AttentionResult& r = pipeline.layer(layer);
    REQUIRE(r.heads.size() == static_cast<std::size_t>(config.n_heads));
    CHECK(r.n_query == n);
    CHECK(r.config.causal);
    for (int h = 0; h < config.n_heads; ++h) {
      const HeadResult& head = r.heads[static_cast<std::size_t>(h)];
      CHECK(largest_difference(head.weights, run.forward().attention(layer, h)) == 0.0f);
      // The softmax of the masked scores, computed here from the adapted Q and K.
      Matrix expected(n, n);
      for (Eigen::Index i = 0; i < n; ++i) {
        for (Eigen::Index j = 0; j < n; ++j) {
          const float score = head.Q.row(i).dot(head.K.row(j)) / std::sqrt(float(config.d_head));
          if (j > i)
            CHECK(head.masked_scores(i, j) == -std::numeric_limits<float>::infinity());
          else
            CHECK(head.masked_scores(i, j) == doctest::Approx(score).epsilon(1e-4));
          expected(i, j) = j > i ? 0.0f : std::exp(score);
        }
        expected.row(i) /= expected.row(i).sum();
      }
      CHECK(largest_difference(head.weights, expected) < 1e-5f);
      // Query heads of one group read the same keys and values.
      const int partner = h ^ 1;
      const bool shared = config.kv_head_of(h) == config.kv_head_of(partner);
      CHECK(shared);
      CHECK(largest_difference(head.K, r.heads[static_cast<std::size_t>(partner)].K) == 0.0f);
      CHECK(largest_difference(head.V, r.heads[static_cast<std::size_t>(partner)].V) == 0.0f);
      CHECK(largest_difference(head.output, head.weights * head.V) < 1e-5f);
    }
    // The output is the heads' outputs through W_O (llama: no bias).
    const MatrixView& w_o = run.model().transformer.weights().layers[layer].output;
    Matrix W_O(w_o.rows, w_o.cols);  // (n_heads · d_head, d_model)
    for (int row = 0; row < w_o.rows; ++row)
      for (int col = 0; col < w_o.cols; ++col) W_O(row, col) = w_o.at(row, col);
    CHECK(largest_difference(r.output, r.concat * W_O) < 1e-4f);
    CHECK(pipeline.attention_input(layer).rows() == n);
  }
  // Different heads of one group still attend differently: their queries differ.
  CHECK(largest_difference(pipeline.layer(0).heads[0].Q, pipeline.layer(0).heads[1].Q) > 0.0f);
}

TEST_CASE("model mode: an ablation in the spec zeroes the head and leaves the layers below") {
  Scenario scenario = model_scenario("gpt2-kjv-tiny", "In the beginning God created the heaven");
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const Matrix below = pipeline.layer(0).output;
  const Matrix head_before = pipeline.layer(1).heads[1].output;
  const std::uint64_t version_before = pipeline.layer(1).version;
  CHECK(head_before.cwiseAbs().maxCoeff() > 0.0f);

  HeadIntervention ablate;
  ablate.output_scale = 0.0f;
  scenario.model->set_intervention(1, 1, ablate);
  REQUIRE(pipeline.run(scenario));
  // The head still attends (its weighted sum is shown); what it adds, in concat, is 0.
  const AttentionResult& knocked = pipeline.layer(1);
  const Eigen::Index d_head = knocked.heads[1].V.cols();
  CHECK(knocked.concat.middleCols(d_head, d_head).cwiseAbs().maxCoeff() == 0.0f);
  CHECK(largest_difference(knocked.heads[1].output, knocked.heads[1].weights * knocked.heads[1].V) <
        1e-5f);
  CHECK(knocked.heads[1].output.cwiseAbs().maxCoeff() > 0.0f);
  CHECK(pipeline.layer(1).version != version_before);
  CHECK(largest_difference(pipeline.layer(0).output, below) == 0.0f);

  HeadIntervention uniform;
  uniform.pattern = HeadIntervention::Pattern::Uniform;
  scenario.model->set_intervention(1, 1, uniform);
  REQUIRE(pipeline.run(scenario));
  const Matrix& weights = pipeline.layer(1).heads[1].weights;
  CHECK(weights(3, 0) == doctest::Approx(0.25f));
  CHECK(weights(3, 3) == doctest::Approx(0.25f));
}

TEST_CASE("model mode: a missing model or a head it lacks is an error, and the last run stays") {
  Pipeline pipeline;
  REQUIRE(pipeline.run(model_scenario("gpt2-kjv-tiny", "And God said")));
  const std::size_t tokens = pipeline.target().tokens.size();

  Scenario missing = model_scenario("no-such-model", "And God said");
  Status status = pipeline.run(missing);
  REQUIRE(!status);
  CHECK(status.message().find("no-such-model") != std::string::npos);
  CHECK(pipeline.model_mode());
  CHECK(pipeline.target().tokens.size() == tokens);

  Scenario wrong_layer = model_scenario("gpt2-kjv-tiny", "And God said, let there be light");
  HeadIntervention ablate;
  ablate.output_scale = 0.0f;
  wrong_layer.model->set_intervention(9, 0, ablate);
  status = pipeline.run(wrong_layer);
  REQUIRE(!status);
  CHECK(status.message().find("layer 9") != std::string::npos);
  CHECK(status.message().find("layers (0 to") != std::string::npos);
  CHECK(pipeline.target().tokens.size() == tokens);
}

TEST_CASE(
    "model mode: a text longer than max_tokens is cut with a warning, and back to one layer") {
  Scenario scenario =
      model_scenario("gpt2-kjv-tiny", "And God said, let there be light: and there was light.");
  scenario.max_tokens = 4;
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.target().tokens.size() == 4);
  CHECK(pipeline.target().truncated());
  REQUIRE(pipeline.warnings().size() == 1);
  CHECK(pipeline.warnings()[0].find("reads the first 4") != std::string::npos);

  Result<Scenario> one_layer = parse_scenario(builtin_scenario_json());
  REQUIRE(one_layer.ok());
  REQUIRE(pipeline.run(*one_layer));
  CHECK(!pipeline.model_mode());
  CHECK(pipeline.model() == nullptr);
  CHECK(pipeline.layer_count() == 1);
  CHECK(pipeline.target().tokens.size() == 5);
  CHECK(pipeline.result().n_query == 5);
}

TEST_CASE("model mode: special tokens hidden from the views, as the model read them") {
  Scenario scenario = model_scenario("stories260K", "Once upon a time there was a cat");
  Pipeline all;
  REQUIRE(all.run(scenario));
  const auto n = static_cast<Eigen::Index>(all.target().tokens.size());
  REQUIRE(all.target().tokens.front().text == "<s>");
  scenario.model->hide_special_tokens = true;
  Pipeline hidden;
  REQUIRE(hidden.run(scenario));
  const ModelRun& run = *hidden.model();
  CHECK(run.hides_tokens());
  CHECK(static_cast<Eigen::Index>(hidden.target().tokens.size()) == n - 1);
  CHECK(hidden.target().tokens.front().text == all.target().tokens[1].text);
  CHECK(run.shown_index(0) == -1);
  CHECK(run.shown_index(1) == 0);
  CHECK(run.model_tokens().size() == static_cast<std::size_t>(n));  // the model read them all
  for (int layer = 0; layer < hidden.layer_count(); ++layer) {
    const AttentionResult& shown = hidden.layer(layer);
    const AttentionResult& full = all.layer(layer);
    REQUIRE(shown.n_query == n - 1);
    for (std::size_t h = 0; h < shown.heads.size(); ++h) {
      const HeadResult& head = shown.heads[h];
      // The rows and columns of the shown tokens, as the model computed them...
      CHECK(largest_difference(head.weights,
                               full.heads[h].weights.bottomRightCorner(n - 1, n - 1)) == 0.0f);
      CHECK(largest_difference(head.K, full.heads[h].K.bottomRows(n - 1)) == 0.0f);
      // ... and the output the Output view adds up: the shown values only.
      CHECK(largest_difference(head.output, head.weights * head.V) < 1e-5f);
      CHECK(largest_difference(shown.concat.middleCols(static_cast<Eigen::Index>(h) * head.V.cols(),
                                                       head.V.cols()),
                               head.output) == 0.0f);
    }
    CHECK(largest_difference(shown.output, full.output.bottomRows(n - 1)) == 0.0f);
  }
  // A text of special tokens only: they are all there is to show.
  Scenario empty = model_scenario("stories260K", "");
  empty.model->hide_special_tokens = true;
  Pipeline only;
  REQUIRE(only.run(empty));
  CHECK(only.target().tokens.size() == 1);
  CHECK_FALSE(only.model()->hides_tokens());
}

}  // namespace attnviz
