// The pipeline in model mode with an encoder–decoder: a tiny BART folder written by the tests
// (tests/support/tiny_encoder_decoder.hpp) as the views read it. Each of its three kinds of
// attention (ModelSpec::part) is the forward pass's own numbers, on the right tokens, masked or
// not as it should be; the translation typed or the model's own; knock-outs of each part; the
// Pipeline view's block for the cross sub-block; and what is refused. The numbers themselves are
// checked against an independent PyTorch reference, through `attnviz-cli compute`, in
// tests/oracle/marian_oracle_test.py (check_parts).
#include "core/models/model.hpp"
#include "core/pipeline/pipeline.hpp"
#include "tests/support/model_run_of.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_encoder_decoder.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attnviz {
namespace {

Scenario translation_scenario(const testing::TempDir& dir, ModelPart part, std::string source,
                              std::string translation) {
  const std::filesystem::path folder = dir.path / "tiny-bart";
  if (!std::filesystem::exists(folder)) testing::write_tiny_bart_folder(dir);
  Scenario scenario;
  scenario.target = std::move(source);
  scenario.spec = ModelSpec::named(folder.string());
  scenario.edit_model()->part = part;
  scenario.edit_model()->decoder_text = std::move(translation);
  return scenario;
}

std::vector<std::string> texts(const Tokenization& tokenization) {
  std::vector<std::string> out;
  for (const Token& token : tokenization.tokens) out.push_back(token.text);
  return out;
}

bool has_stage(const std::vector<BlockStage>& stages, StageId id) {
  return std::any_of(stages.begin(), stages.end(),
                     [&](const BlockStage& stage) { return stage.id == id; });
}

}  // namespace

TEST_CASE("an encoder–decoder's three kinds of attention, each the forward pass's own") {
  testing::TempDir dir;
  const std::vector<std::string> source{"<s>", "ab",
                                        "\xe2\x90\xa3"
                                        "a",
                                        "</s>"};
  const std::vector<std::string> target{"<pad>", "<s>", "c", "d"};
  for (const ModelPart part : kModelParts) {
    CAPTURE(model_part_name(part));
    Pipeline pipeline;
    const Status ran = pipeline.run(translation_scenario(dir, part, "ab a", "cd"));
    REQUIRE_MESSAGE(ran.is_ok(), ran.message());
    const Run& run = pipeline.current();
    CHECK(run.can(Capability::SourceAndTarget));
    CHECK(run.can(Capability::HeadInterventions));
    CHECK_FALSE(run.can(Capability::PredictsNextToken));
    CHECK_FALSE(run.can(Capability::EditableModelWeights));
    const ModelRun* model = model_run_of(pipeline);
    REQUIRE(model != nullptr);
    REQUIRE(model->translation_forward() != nullptr);
    const TransformerForward& encoder = model->translation_forward()->encoder();
    const TransformerForward& decoder = model->translation_forward()->decoder();
    CHECK(run.translation() == "cd");  // typed: the decoder read it
    REQUIRE(run.layer_count() == testing::kLayers);
    // Three stacks, in kModelParts' order; the one shown is the part's.
    REQUIRE(run.stacks().size() == 3);
    for (std::size_t s = 0; s < 3; ++s)
      CHECK(run.stacks()[s].name == model_part_label(kModelParts[s]));
    const int shown = run.shown_stack();
    REQUIRE(kModelParts[static_cast<std::size_t>(shown)] == part);
    const AttentionStack& stack = run.stacks()[static_cast<std::size_t>(shown)];
    // Every stack's α, for the Model view's three grids: the forward pass's, whichever is shown.
    for (int s = 0; s < 3; ++s) {
      const Matrix expected = s == 0   ? encoder.attention(1, 1)
                              : s == 1 ? decoder.attention(1, 1)
                                       : decoder.cross_attention(1, 1);
      const Matrix weights = run.stack_weights(s, 1, 1);
      REQUIRE(weights.rows() == expected.rows());
      REQUIRE(weights.cols() == expected.cols());
      CHECK((weights - expected).cwiseAbs().maxCoeff() == 0.0f);
    }
    CHECK(run.stack_weights(3, 0, 0).size() == 0);
    CHECK(run.stack_weights(0, testing::kLayers, 0).size() == 0);
    for (int layer = 0; layer < run.layer_count(); ++layer) {
      const AttentionResult& result = run.layer(layer);
      REQUIRE(result.heads.size() == static_cast<std::size_t>(testing::kHeads));
      for (int h = 0; h < testing::kHeads; ++h) {
        const HeadResult& head = result.heads[static_cast<std::size_t>(h)];
        const Matrix expected = part == ModelPart::Encoder ? encoder.attention(layer, h)
                                : part == ModelPart::Main  ? decoder.attention(layer, h)
                                                           : decoder.cross_attention(layer, h);
        REQUIRE(head.weights.rows() == expected.rows());
        REQUIRE(head.weights.cols() == expected.cols());
        CHECK((head.weights - expected).cwiseAbs().maxCoeff() == 0.0f);
        for (int i = 0; i < head.weights.rows(); ++i)
          CHECK(head.weights.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
        // Only the decoder's self-attention is causal.
        CHECK(head.masked_scores.allFinite() == (part != ModelPart::Main));
      }
      CHECK(result.config.causal == (part == ModelPart::Main));
    }
    switch (part) {
      case ModelPart::Encoder:
        CHECK(stack.kind == StackKind::Self);
        CHECK(texts(run.target()) == source);
        CHECK(texts(run.keys()) == source);
        CHECK_FALSE(run.cross());
        break;
      case ModelPart::Main:
        CHECK(stack.kind == StackKind::CausalSelf);
        CHECK(texts(run.target()) == target);
        CHECK(texts(run.keys()) == target);
        CHECK_FALSE(run.cross());
        break;
      case ModelPart::Cross:
        CHECK(stack.kind == StackKind::Cross);
        CHECK(stack.keys == TokenSide::Source);
        CHECK(texts(run.target()) == target);
        CHECK(texts(run.keys()) == source);
        CHECK(run.cross());
        // The keys and values come from the encoder's output, the queries from x′.
        CHECK((run.attention_input_keys(1) -
               encoder.layer(testing::kLayers - 1).residual_out.matrix())
                  .cwiseAbs()
                  .maxCoeff() == 0.0f);
        CHECK((run.attention_input(1) - decoder.layer(1).residual_mid.matrix())
                  .cwiseAbs()
                  .maxCoeff() == 0.0f);
        CHECK(run.X_keys().rows() == static_cast<Eigen::Index>(source.size()));
        break;
    }
  }
}

TEST_CASE("an encoder–decoder's own greedy translation, and its source cut to max_tokens") {
  testing::TempDir dir;
  Pipeline pipeline;
  Scenario scenario = translation_scenario(dir, ModelPart::Cross, "ab a", "");
  REQUIRE(pipeline.run(scenario).is_ok());
  const ModelRun* model = model_run_of(pipeline);
  REQUIRE(model != nullptr);
  // The decoder's start token, then what greedy_translation chose: the same ids.
  const std::vector<int> source_ids{1, 258, 259, 0};
  EncoderDecoderForward alone(model->model().transformer);
  const Result<std::vector<int>> greedy = greedy_translation(
      alone, source_ids, model->model().tokenizer.start_token(),
      model->model().tokenizer.stop_token(), 2 * static_cast<int>(source_ids.size()) + 10);
  REQUIRE(greedy.ok());
  std::vector<int> shown;
  for (const ModelToken& token : model->target_tokens()) shown.push_back(token.id);
  CHECK(shown == *greedy);
  std::string text;
  for (std::size_t i = 1; i < greedy->size(); ++i)
    text += model->model().tokenizer.text_of((*greedy)[i - 1], (*greedy)[i]);
  CHECK(pipeline.current().translation() == text);

  // A long source is cut, its end token kept, with a warning.
  scenario.target = "ab ab ab ab ab ab ab ab";
  scenario.max_tokens = 4;
  REQUIRE(pipeline.run(scenario).is_ok());
  const std::span<const ModelToken> cut = model_run_of(pipeline)->source_tokens();
  REQUIRE(cut.size() == 4);
  CHECK(cut.back().id == 0);  // </s>
  REQUIRE_FALSE(pipeline.current().warnings().empty());
  CHECK(pipeline.current().warnings()[0].find("the source has") != std::string::npos);
}

TEST_CASE("an encoder–decoder's heads knocked out in each part, and the changes refused") {
  testing::TempDir dir;
  Pipeline pipeline;
  Scenario scenario = translation_scenario(dir, ModelPart::Cross, "ab a", "cd");
  REQUIRE(pipeline.run(scenario).is_ok());
  const Matrix before = pipeline.current().layer(1).concat;  // (n_target, heads · d_head)

  // A cross head knocked out: its columns of the concat are 0, the other head's unchanged.
  HeadIntervention off;
  off.output_scale = 0;
  scenario.edit_model()->set_intervention(1, 0, off);  // the part shown: cross
  CHECK(scenario.model()->interventions.front().part == ModelPart::Cross);
  REQUIRE(pipeline.run(scenario).is_ok());
  const int d_head = testing::kD / testing::kHeads;
  const Matrix knocked = pipeline.current().layer(1).concat;
  CHECK(knocked.leftCols(d_head).cwiseAbs().maxCoeff() == 0.0f);
  CHECK((knocked.rightCols(d_head) - before.rightCols(d_head)).cwiseAbs().maxCoeff() == 0.0f);
  CHECK(pipeline.current().intervention(1, 0).output_scale == 0.0f);

  // An encoder head knocked out changes what the cross-attention reads.
  scenario.edit_model()->set_intervention(1, 0, {});
  scenario.edit_model()->set_intervention_in(ModelPart::Encoder, 1, 1, off);
  REQUIRE(pipeline.run(scenario).is_ok());
  CHECK(pipeline.current().intervention(1, 1).output_scale == 1.0f);  // cross head 1: as trained
  CHECK((pipeline.current().layer(1).concat - before).cwiseAbs().maxCoeff() > 1e-4f);

  // Refused, the last run kept: the previous token across two texts, a layer the encoder lacks,
  // a pair, a pair filter, weights changed by hand.
  const std::uint64_t kept = pipeline.current().run_count();
  const auto refused = [&](const Scenario& bad, const std::string& says) {
    const Status status = pipeline.run(bad);
    CHECK_FALSE(status.is_ok());
    CHECK_MESSAGE(status.message().find(says) != std::string::npos, status.message());
    CHECK(pipeline.current().run_count() == kept);
  };
  Scenario bad = scenario;
  HeadIntervention previous;
  previous.pattern = HeadIntervention::Pattern::PreviousToken;
  bad.edit_model()->set_intervention_in(ModelPart::Cross, 0, 0, previous);
  refused(bad, "the previous token means nothing across two texts");
  bad = scenario;
  bad.edit_model()->set_intervention_in(ModelPart::Encoder, testing::kLayers, 0, off);
  refused(bad, "encoder self-attention, layer 2, head 0");
  bad = scenario;
  bad.edit_model()->text_b = "b";
  refused(bad, "not a pair");
  bad = scenario;
  bad.edit_model()->pair_filter = PairFilter::AToB;
  refused(bad, "pair filter");
  bad = scenario;
  bad.edit_model()->set_weight({0, HeadMatrix::Query, 0, 0, 0, 0.5f});
  refused(bad, "not yet for an encoder–decoder");
}

TEST_CASE("the Pipeline view's block: the cross sub-block, and the decoder's block around it") {
  testing::TempDir dir;
  Pipeline pipeline;
  std::vector<BlockStage> stages;

  REQUIRE(pipeline.run(translation_scenario(dir, ModelPart::Cross, "ab a", "cd")).is_ok());
  pipeline.current().block_stages(1, 0, stages);
  REQUIRE_FALSE(stages.empty());
  CHECK(stages.size() <= 20);                  // the view's most tiles
  CHECK(has_stage(stages, StageId::XSource));  // m, the encoder's output
  CHECK_FALSE(has_stage(stages, StageId::Masked));
  for (const BlockStage& stage : stages) {
    REQUIRE(stage.matrix != nullptr);
    if (stage.id == StageId::K || stage.id == StageId::V || stage.id == StageId::XSource)
      CHECK(stage.matrix->rows() == 4);  // the source's tokens
    if (stage.id == StageId::Q || stage.id == StageId::Weights) CHECK(stage.matrix->rows() == 4);
    if (stage.id == StageId::Weights) CHECK(stage.matrix->cols() == 4);
  }
  // The last stage is the layer's output, which the next layer reads.
  const LayerStream* stream = pipeline.current().stream_of(1);
  REQUIRE(stream != nullptr);
  const ModelRun* model = model_run_of(pipeline);
  CHECK((stages.back().matrix->array() ==
         model->translation_forward()->decoder().layer(1).residual_out.matrix().array())
            .all());

  REQUIRE(pipeline.run(translation_scenario(dir, ModelPart::Main, "ab a", "cd")).is_ok());
  pipeline.current().block_stages(1, 0, stages);
  CHECK(stages.size() <= 20);
  CHECK(has_stage(stages, StageId::Masked));
  const auto cross_stage = std::find_if(stages.begin(), stages.end(), [](const BlockStage& stage) {
    return stage.title.find("cross-attention") != std::string::npos;
  });
  REQUIRE(cross_stage != stages.end());
  CHECK((cross_stage->matrix->array() == model_run_of(pipeline)
                                             ->translation_forward()
                                             ->decoder()
                                             .layer(1)
                                             .cross_attention_output.matrix()
                                             .array())
            .all());
}

TEST_CASE("a model without an encoder refuses a part and a decoder's text") {
  testing::TempDir dir;
  Pipeline pipeline;
  Scenario scenario;
  scenario.target = "hello";
  scenario.spec = ModelSpec::named("stories260K");
  scenario.edit_model()->part = ModelPart::Cross;
  const Status status = pipeline.run(scenario);
  CHECK_FALSE(status.is_ok());
  CHECK(status.message().find("has no encoder") != std::string::npos);
  scenario.edit_model()->part = ModelPart::Main;
  HeadIntervention off;
  off.output_scale = 0;
  scenario.edit_model()->set_intervention_in(ModelPart::Encoder, 0, 0, off);
  const Status refused = pipeline.run(scenario);
  CHECK_FALSE(refused.is_ok());
  CHECK(refused.message().find("has no encoder") != std::string::npos);
}

TEST_CASE("a scenario keeps the part, the translation and each change's part") {
  Scenario scenario;
  scenario.target = "The black dog.";
  scenario.spec = ModelSpec::named("marian-web-es");
  ModelSpec& spec = *scenario.edit_model();
  spec.part = ModelPart::Cross;
  spec.decoder_text = "El perro negro.";
  HeadIntervention off;
  off.output_scale = 0;
  spec.set_intervention_in(ModelPart::Encoder, 1, 2, off);
  spec.set_intervention_in(ModelPart::Cross, 0, 1, off);
  spec.set_intervention_in(ModelPart::Main, 2, 0, off);
  // Sorted by part, then layer and head; the one-argument forms read the part shown.
  REQUIRE(spec.interventions.size() == 3);
  CHECK(spec.interventions[0].part == ModelPart::Main);
  CHECK(spec.interventions[1].part == ModelPart::Encoder);
  CHECK(spec.interventions[2].part == ModelPart::Cross);
  CHECK(spec.intervention(0, 1).output_scale == 0.0f);
  CHECK(spec.intervention(1, 2).output_scale == 1.0f);
  const std::string json = scenario_to_json(scenario);
  CHECK(json.find("\"part\": \"cross\"") != std::string::npos);
  CHECK(json.find("\"decoder_text\": \"El perro negro.\"") != std::string::npos);
  const Result<Scenario> back = parse_scenario(json);
  REQUIRE_MESSAGE(back.ok(), back.error());
  CHECK(*back->model() == spec);
  const Result<Scenario> bad = parse_scenario(
      R"({"format": "attnviz-scenario", "version": 2, "target": "x",
          "model": {"name": "m", "part": "decoder"}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("model.part") != std::string::npos);
}

}  // namespace attnviz
