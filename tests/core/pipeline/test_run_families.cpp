// Every family of runs (core/pipeline/run.hpp) keeps one contract: the one-layer scenario, the two
// shipped trained models (GPT-2 layout, llama2.c), and the toy family the tests add in one file
// (tests/family/random_attention.cpp). A pipeline picks the family that claims a scenario; each
// stage of a block has the shape its axes say, and its recipe's operands recompute it.
#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"
#include "tests/family/random_attention.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace attnviz {
namespace {

Scenario builtin() {
  Result<Scenario> scenario = parse_scenario(builtin_scenario_json());
  REQUIRE(scenario.ok());
  return std::move(*scenario);
}

Scenario with_model(std::string name, std::string text) {
  Scenario scenario = builtin();
  if (!name.starts_with("random:"))
    name = (std::filesystem::path(ATTNVIZ_SOURCE_DIR) / "assets/models" / name).string();
  scenario.spec = ModelSpec::named(name);
  scenario.target = std::move(text);
  return scenario;
}

// The largest |difference| between `matrix` and what the recipe's operands recompute, for the
// kinds a product or a sum makes; −1 for the kinds recomputed otherwise.
float recomputed_difference(const BlockStage& stage) {
  using Kind = StageRecipe::Kind;
  const StageRecipe& r = stage.recipe;
  const Matrix& m = *stage.matrix;
  Matrix expected;
  switch (r.kind) {
    case Kind::Projection:
      if (r.rotary || !r.input || !r.weight) return -1;  // turned by position after the product
      expected = *r.input * *r.weight;                   // (n, d_model) · (d_model, d_head)
      if (r.bias && r.bias->size() > 0) expected.rowwise() += *r.bias;
      break;
    case Kind::OutputProjection:
      REQUIRE(r.other);
      REQUIRE(r.weight);
      expected = *r.other * *r.weight;  // (n, heads · d_head) · (heads · d_head, d_model)
      if (r.bias && r.bias->size() > 0) expected.rowwise() += *r.bias;
      break;
    case Kind::Sum:
      REQUIRE(r.input);
      REQUIRE(r.other);
      expected = *r.input + *r.other;
      break;
    case Kind::WeightedSum:
      REQUIRE(r.head_result);
      expected = r.head_result->weights * r.head_result->V;  // (n, n) · (n, d_head)
      break;
    default:
      return -1;
  }
  REQUIRE(expected.rows() == m.rows());
  REQUIRE(expected.cols() == m.cols());
  return (expected - m).cwiseAbs().maxCoeff();
}

void check_contract(const Pipeline& pipeline) {
  const Run& run = pipeline.current();
  REQUIRE(!run.stacks().empty());
  int layers = 0;
  for (const AttentionStack& stack : run.stacks()) {
    CHECK(stack.first_layer == layers);
    layers += stack.layers;
  }
  CHECK(layers == run.layer_count());
  const auto n_query = static_cast<Eigen::Index>(run.target().tokens.size());
  const auto n_key = static_cast<Eigen::Index>(run.keys().tokens.size());
  std::vector<BlockStage> stages;
  for (int layer = 0; layer < run.layer_count(); ++layer) {
    const AttentionResult& result = run.layer(layer);
    CHECK(result.n_query == n_query);
    CHECK(result.n_key == n_key);
    for (int head = 0; head < static_cast<int>(result.heads.size()); ++head) {
      run.block_stages(layer, head, stages);
      REQUIRE(stages.size() >= 4);
      for (const BlockStage& stage : stages) {
        INFO("layer " << layer << ", head " << head << ", stage " << stage.title);
        REQUIRE(stage.matrix);
        CHECK(!stage.title.empty());
        const auto along = [&](StageAxis axis) {
          return axis == StageAxis::Queries ? n_query : n_key;
        };
        if (stage.rows != StageAxis::Other) CHECK(stage.matrix->rows() == along(stage.rows));
        if (stage.cols != StageAxis::Other) CHECK(stage.matrix->cols() == along(stage.cols));
        if (stage.probabilities)
          for (Eigen::Index i = 0; i < stage.matrix->rows(); ++i)
            CHECK(stage.matrix->row(i).sum() == doctest::Approx(1.0).epsilon(1e-4));
        const float difference = recomputed_difference(stage);
        const float tolerance = 1e-4f * (1.0f + stage.matrix->cwiseAbs().maxCoeff());
        if (difference >= 0) CHECK(difference <= tolerance);
      }
    }
  }
}

}  // namespace

TEST_CASE("a pipeline runs the family that claims the scenario, and each keeps the contract") {
  REQUIRE(testing::random_family_registered());
  Pipeline pipeline;

  REQUIRE(pipeline.run(builtin()));
  CHECK(pipeline.can(Capability::EditableParameters));
  CHECK_FALSE(pipeline.can(Capability::TrainedWeights));
  check_contract(pipeline);

  REQUIRE(pipeline.run(with_model("random:7", "the cat sat on the mat")));
  CHECK(pipeline.current().capabilities() == Capabilities{});
  CHECK(pipeline.layer_count() == 2);
  CHECK(pipeline.target().tokens.size() == 6);
  check_contract(pipeline);
  const std::uint64_t toy_run = pipeline.current().run_count();

  REQUIRE(pipeline.run(with_model("gpt2-kjv-tiny", "And God said, Let there be light")));
  CHECK(pipeline.can(Capability::TrainedWeights));
  CHECK(pipeline.can(Capability::PredictsNextToken));
  check_contract(pipeline);

  REQUIRE(pipeline.run(with_model("stories260K", "Once upon a time")));
  check_contract(pipeline);

  // A scenario the claiming family refuses: an error, and the last good run stays current.
  const Status refused = pipeline.run(with_model("random:x", "a b"));
  CHECK_FALSE(refused);
  CHECK(refused.message() == "random:SEED: SEED is a number");
  CHECK(pipeline.can(Capability::TrainedWeights));

  // Back to the toy: the run of each family is kept, and runs again.
  REQUIRE(pipeline.run(with_model("random:7", "the cat sat")));
  CHECK(pipeline.current().run_count() > toy_run);
  CHECK(pipeline.target().tokens.size() == 3);
}

TEST_CASE("the one-layer run's stages are the chain the Pipeline view always drew") {
  Pipeline pipeline;
  Scenario scenario = builtin();
  REQUIRE(pipeline.run(scenario));
  std::vector<BlockStage> stages;
  pipeline.current().block_stages(0, 0, stages);
  std::vector<std::string> titles;
  for (const BlockStage& stage : stages) titles.push_back(stage.title);
  CHECK(titles == std::vector<std::string>{"X", "Q = XW_Q", "K = XW_K", "V = XW_V",
                                           "S = QK\xe2\x8a\xa4",
                                           "\xc3\xb7\xe2\x88\x9a"
                                           "d_k",
                                           "mask: none", "\xce\xb1 = softmax", "\xce\xb1\xc2\xb7V",
                                           "concat", "\xc2\xb7W_O = output"});
  // Cross-attention: X target → Q, then X source → K V; the key stages' rows are the source's.
  set_mode(*scenario.edit_one_layer(), Mode::Cross, scenario.target);
  scenario.edit_one_layer()->source = "le chat noir dort";
  REQUIRE(pipeline.run(scenario));
  pipeline.current().block_stages(0, 1, stages);
  REQUIRE(stages.size() == 12);
  CHECK(stages[0].title == "X target");
  CHECK(stages[2].title == "X source");
  CHECK(stages[2].rows == StageAxis::Keys);
  CHECK(stages[2].join == StageJoin::Space);
  CHECK(stages[3].recipe.input_name == "X_src");
  check_contract(pipeline);
}

}  // namespace attnviz
