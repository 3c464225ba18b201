// The pipeline in model mode (core/pipeline/model_run.hpp): the shipped models' layers as the views
// read them, checked against what the forward pass kept and against the softmax and W_O computed
// here from the adapted numbers.
#include "core/pipeline/pipeline.hpp"

#include <doctest/doctest.h>

#include "tests/support/model_run_of.hpp"

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
  scenario.spec = ModelSpec::named(shipped(name));
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
  REQUIRE(pipeline.can(Capability::TrainedWeights));
  const ModelRun& run = *model_run_of(pipeline);
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
  scenario.edit_model()->set_intervention(1, 1, ablate);
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
  scenario.edit_model()->set_intervention(1, 1, uniform);
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
  CHECK(pipeline.can(Capability::TrainedWeights));
  CHECK(pipeline.target().tokens.size() == tokens);

  Scenario wrong_layer = model_scenario("gpt2-kjv-tiny", "And God said, let there be light");
  HeadIntervention ablate;
  ablate.output_scale = 0.0f;
  wrong_layer.edit_model()->set_intervention(9, 0, ablate);
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
  CHECK(!pipeline.can(Capability::TrainedWeights));
  CHECK(model_run_of(pipeline) == nullptr);
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
  scenario.edit_model()->hide_special_tokens = true;
  Pipeline hidden;
  REQUIRE(hidden.run(scenario));
  const ModelRun& run = *model_run_of(hidden);
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
  empty.edit_model()->hide_special_tokens = true;
  Pipeline only;
  REQUIRE(only.run(empty));
  CHECK(only.target().tokens.size() == 1);
  CHECK_FALSE(model_run_of(only)->hides_tokens());
}

}  // namespace attnviz

namespace attnviz {
namespace {

// The model opened afresh with `spec`'s edits made directly, and run from scratch: what a run
// that made them one by one, as they came, must agree with.
RowVector fresh_logits(const ModelSpec& spec, const std::vector<int>& tokens) {
  Result<Model> model = open_model(spec.model);
  REQUIRE(model.ok());
  Transformer& transformer = model->transformer;
  const int per_kv_head = transformer.config().queries_per_kv_head();
  for (const ModelWeightEdit& e : spec.weight_edits) {
    const bool shared = e.matrix == HeadMatrix::Key || e.matrix == HeadMatrix::Value;
    REQUIRE(transformer
                .set_head_weight(e.layer, shared ? e.head * per_kv_head : e.head, e.matrix, e.row,
                                 e.col, e.value)
                .is_ok());
  }
  for (const ModelEmbeddingEdit& e : spec.embedding_edits)
    REQUIRE(transformer.set_token_embedding(e.token, e.dimension, e.value).is_ok());
  TransformerForward forward(transformer);
  REQUIRE(forward.run(tokens).is_ok());
  return forward.last_logits();
}

}  // namespace

TEST_CASE("model mode: weight edits change a copy of the model, from the layer they touch") {
  Scenario scenario = model_scenario("stories260K", "Once upon a time there was a cat");
  Pipeline pipeline, untouched;
  REQUIRE(pipeline.run(scenario));
  REQUIRE(untouched.run(scenario));
  const std::vector<int> tokens = model_run_of(pipeline)->forward().tokens();
  const RowVector original = model_run_of(pipeline)->forward().last_logits();
  const Matrix layer0 = pipeline.layer(0).output;
  const TransformerConfig& config = model_run_of(pipeline)->model().transformer.config();
  REQUIRE(config.n_kv_heads < config.n_heads);

  // One cell of layer 1's W_K, key/value head 0: both query heads of its group read it.
  const float on_disk =
      model_run_of(pipeline)->model().transformer.head_weight(1, 0, HeadMatrix::Key, 2, 3);
  scenario.edit_model()->set_weight({1, HeadMatrix::Key, 0, 2, 3, on_disk + 2.0f});
  REQUIRE(pipeline.run(scenario));
  const ModelRun& run = *model_run_of(pipeline);
  CHECK(run.forward().last_work().first_layer_redone == 1);
  CHECK(run.model().transformer.head_weight(1, 1, HeadMatrix::Key, 2, 3) == on_disk + 2.0f);
  CHECK(run.model().transformer.weights_on_disk().layers[1].key.at(2, 3) == on_disk);
  CHECK(largest_difference(pipeline.layer(0).output, layer0) == 0.0f);
  CHECK(largest_difference(pipeline.layer(1).heads[0].K, pipeline.layer(1).heads[1].K) == 0.0f);
  const RowVector edited = run.forward().last_logits();
  CHECK((edited - original).cwiseAbs().maxCoeff() > 1e-4f);
  CHECK((edited - fresh_logits(*scenario.model(), tokens)).cwiseAbs().maxCoeff() < 1e-5f);

  // A second edit (W_O of head 3, layer 0) and an embedding: made on top of the first.
  scenario.edit_model()->set_weight({0, HeadMatrix::Output, 3, 1, 4, -0.75f});
  scenario.edit_model()->set_embedding({tokens[2], 5, 1.5f});
  REQUIRE(pipeline.run(scenario));
  CHECK(model_run_of(pipeline)->forward().last_work().first_layer_redone == 0);
  CHECK((model_run_of(pipeline)->forward().last_logits() - fresh_logits(*scenario.model(), tokens))
            .cwiseAbs()
            .maxCoeff() < 1e-5f);

  // Taken back (undo, Reset): the numbers are the model's own again, exactly.
  scenario.edit_model()->weight_edits.clear();
  scenario.edit_model()->embedding_edits.clear();
  REQUIRE(pipeline.run(scenario));
  CHECK((model_run_of(pipeline)->forward().last_logits() - original).cwiseAbs().maxCoeff() == 0.0f);
  // The shared model was never changed.
  REQUIRE(untouched.run(scenario));
  CHECK((model_run_of(untouched)->forward().last_logits() - original).cwiseAbs().maxCoeff() ==
        0.0f);
}

TEST_CASE("model mode: an edit of a cell the model lacks is an error, and nothing changes") {
  Scenario scenario = model_scenario("stories260K", "Once upon a time");
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const RowVector before = model_run_of(pipeline)->forward().last_logits();
  const TransformerConfig& config = model_run_of(pipeline)->model().transformer.config();

  Scenario wrong = scenario;
  wrong.edit_model()->set_weight({0, HeadMatrix::Query, 0, 0, 0, 1.0f});  // a good one first
  wrong.edit_model()->set_weight({0, HeadMatrix::Value, config.n_kv_heads, 0, 0, 1.0f});
  Status status = pipeline.run(wrong);
  REQUIRE(!status);
  CHECK(status.message() == "layer 0, W_V of key/value head " + std::to_string(config.n_kv_heads) +
                                ": stories260K has " + std::to_string(config.n_kv_heads) +
                                " key/value heads per layer");
  wrong = scenario;
  wrong.edit_model()->set_weight({0, HeadMatrix::Output, 0, config.d_head, 0, 1.0f});
  status = pipeline.run(wrong);
  REQUIRE(!status);
  CHECK(status.message().find("is outside its") != std::string::npos);
  wrong = scenario;
  wrong.edit_model()->set_embedding({config.vocab_size, 0, 1.0f});
  status = pipeline.run(wrong);
  REQUIRE(!status);
  CHECK(status.message().find("vocabulary has") != std::string::npos);
  CHECK((model_run_of(pipeline)->forward().last_logits() - before).cwiseAbs().maxCoeff() == 0.0f);
}

}  // namespace attnviz

namespace attnviz {

// The Pipeline view's block: each layer's residual stream adds up, and the attention input is the
// norm of what enters (RMSNorm for stories260K, computed here from its definition).
TEST_CASE("model mode: the residual stream through a layer adds up, and n is its RMSNorm") {
  Pipeline pipeline;
  REQUIRE(pipeline.run(model_scenario("stories260K", "Once upon a time there was a cat")));
  const ModelRun& run = *model_run_of(pipeline);
  const Transformer& transformer = run.model().transformer;
  const TransformerConfig& config = transformer.config();
  REQUIRE(config.norm == NormKind::RMSNorm);
  for (int layer = 0; layer < config.n_layers; ++layer) {
    CAPTURE(layer);
    const LayerStream& s = run.stream(layer);
    CHECK(largest_difference(s.residual_mid, s.residual_in + pipeline.layer(layer).output) < 1e-5f);
    CHECK(largest_difference(s.residual_out, s.residual_mid + s.mlp_output) < 1e-5f);
    if (layer + 1 < config.n_layers)
      CHECK(largest_difference(run.stream(layer + 1).residual_in, s.residual_out) == 0.0f);
    const VectorView& gamma =
        transformer.weights().layers[static_cast<std::size_t>(layer)].attention_norm_weight;
    Matrix expected = s.residual_in;  // (n, d_model)
    for (Eigen::Index i = 0; i < expected.rows(); ++i) {
      const float rms =
          std::sqrt(expected.row(i).squaredNorm() / float(config.d_model) + config.norm_epsilon);
      for (Eigen::Index d = 0; d < expected.cols(); ++d)
        expected(i, d) = expected(i, d) / rms * gamma.data[d];
    }
    CHECK(largest_difference(run.layer_input(layer), expected) < 1e-5f);
  }
  // Layer 0's input is the tokens' embeddings (positions enter through RoPE).
  const int first = run.forward().tokens()[1];
  const Matrix& x0 = run.stream(0).residual_in;
  for (int d = 0; d < config.d_model; ++d)
    CHECK(x0(1, d) == transformer.weights().token_embedding.at(first, d));
}

}  // namespace attnviz
