// The pipeline in model mode with an encoder (BERT's architecture): a tiny BERT folder written
// by the tests (tests/support/tiny_bert.hpp) as the views read it: what the run can do, its one
// stack of attention both ways, sentence pairs with their token types, special tokens hidden, and
// the Pipeline view's block with the norms after each sublayer.
#include "core/models/norms.hpp"
#include "core/pipeline/pipeline.hpp"
#include "tests/support/model_run_of.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_bert.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attnviz {
namespace {

Scenario bert_scenario(const testing::TempDir& dir, std::string text, std::string text_b = {}) {
  const std::filesystem::path folder = dir.path / "tiny-bert";
  if (!std::filesystem::exists(folder)) testing::write_tiny_bert_folder(folder);
  Scenario scenario;
  scenario.target = std::move(text);
  scenario.spec = ModelSpec::named(folder.string());
  scenario.edit_model()->text_b = std::move(text_b);
  return scenario;
}

std::vector<std::string> shown_tokens(const Run& run) {
  std::vector<std::string> out;
  for (const Token& token : run.target().tokens) out.push_back(token.text);
  return out;
}

}  // namespace

TEST_CASE("model mode, an encoder: what it can do, one stack both ways, a pair's tokens") {
  testing::TempDir dir;
  Pipeline pipeline;
  const Status ran = pipeline.run(bert_scenario(dir, "The cats sat.", "the dog"));
  REQUIRE_MESSAGE(ran.is_ok(), ran.message());
  CHECK(pipeline.can(Capability::FillsMask));
  CHECK(pipeline.can(Capability::SentencePairs));
  CHECK(pipeline.can(Capability::HeadInterventions));
  CHECK_FALSE(pipeline.can(Capability::PredictsNextToken));
  const Run& run = pipeline.current();
  REQUIRE(run.stacks().size() == 1);
  CHECK(run.stacks()[0].kind == StackKind::Self);
  CHECK(shown_tokens(run) == std::vector<std::string>{"[CLS]", "the", "cat", "##s", "sat", ".",
                                                      "[SEP]", "the", "dog", "[SEP]"});
  const ModelRun* model = model_run_of(pipeline);
  REQUIRE(model != nullptr);
  CHECK(model->forward().token_types() == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 1});
  // Both ways: no score masked, and the first query gives weight to the last key.
  const AttentionResult& layer = run.layer(1);
  CHECK_FALSE(layer.config.causal);
  for (const HeadResult& head : layer.heads) {
    CHECK(head.masked_scores.allFinite());
    CHECK(head.weights(0, 9) > 0.0f);
    for (int i = 0; i < head.weights.rows(); ++i)
      CHECK(head.weights.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("model mode, an encoder: special tokens hidden, a decoder refuses a pair") {
  testing::TempDir dir;
  Pipeline pipeline;
  Scenario scenario = bert_scenario(dir, "the cat sat", "the dog");
  scenario.edit_model()->hide_special_tokens = true;
  REQUIRE(pipeline.run(scenario).is_ok());
  CHECK(shown_tokens(pipeline.current()) ==
        std::vector<std::string>{"the", "cat", "sat", "the", "dog"});
  CHECK(pipeline.current().sequence_length() == 8);

  Scenario decoder;
  decoder.target = "In the beginning";
  decoder.spec = ModelSpec::named(
      (std::filesystem::path(ATTNVIZ_SOURCE_DIR) / "assets/models/gpt2-kjv-tiny").string());
  decoder.edit_model()->text_b = "a second text";
  const Status refused = pipeline.run(decoder);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.message().find("reads one text, not a pair") != std::string::npos);
}

TEST_CASE("model mode, an encoder: the block has no mask, and a norm after each sum") {
  testing::TempDir dir;
  Pipeline pipeline;
  REQUIRE(pipeline.run(bert_scenario(dir, "the cat sat on the dog")).is_ok());
  const Run& run = pipeline.current();
  std::vector<BlockStage> stages;
  run.block_stages(1, 1, stages);
  std::vector<StageId> ids;
  for (const BlockStage& stage : stages) ids.push_back(stage.id);
  const std::vector<StageId> expected = {StageId::Residual,
                                         StageId::Q,
                                         StageId::K,
                                         StageId::V,
                                         StageId::Scores,
                                         StageId::Scaled,
                                         StageId::Weights,
                                         StageId::HeadOutput,
                                         StageId::Concat,
                                         StageId::Output,
                                         StageId::AttentionSum,
                                         StageId::ResidualMid,
                                         StageId::Mlp,
                                         StageId::MlpSum,
                                         StageId::ResidualOut};
  CHECK(ids == expected);
  // x′ = LayerNorm(s) and x″ = LayerNorm(s′), s = x + attn: worked out here from the stages.
  const auto stage = [&](StageId id) -> const BlockStage& {
    return *std::find_if(stages.begin(), stages.end(),
                         [id](const BlockStage& s) { return s.id == id; });
  };
  const BlockStage& sum = stage(StageId::AttentionSum);
  const Matrix expected_sum = *stage(StageId::Residual).matrix + *stage(StageId::Output).matrix;
  CHECK((*sum.matrix - expected_sum).cwiseAbs().maxCoeff() < 1e-6f);
  for (const StageId id : {StageId::ResidualMid, StageId::ResidualOut}) {
    const BlockStage& norm = stage(id);
    REQUIRE(norm.recipe.kind == StageRecipe::Kind::Norm);
    REQUIRE(norm.recipe.input != nullptr);
    const Matrix& input = *norm.recipe.input;  // (n, d_model)
    for (int i = 0; i < input.rows(); ++i) {
      const auto row = input.row(i);
      const float mean = row.mean();
      const float variance = (row.array() - mean).square().mean();
      for (int j = 0; j < input.cols(); ++j) {
        const float normed = (row(j) - mean) / std::sqrt(variance + 1e-12f) * norm.recipe.gamma[j] +
                             norm.recipe.beta[j];
        CHECK((*norm.matrix)(i, j) == doctest::Approx(normed).epsilon(1e-4));
      }
    }
  }
  // The projections read x itself (no norm before them).
  CHECK(stage(StageId::Q).recipe.input_name == "x");
  CHECK(stage(StageId::Q).title == "Q = xW_Q + b");
}

TEST_CASE("a scenario keeps an encoder's second text and its pair filter") {
  Scenario scenario;
  scenario.target = "The cat sat.";
  scenario.spec = ModelSpec::named("bert-web");
  scenario.edit_model()->text_b = "A dog barked.";
  for (const PairFilter filter : kPairFilters) {
    scenario.edit_model()->pair_filter = filter;
    Result<Scenario> read = parse_scenario(scenario_to_json(scenario));
    REQUIRE_MESSAGE(read.ok(), read.error());
    REQUIRE(read->model());
    CHECK(read->model()->text_b == "A dog barked.");
    CHECK(read->model()->pair_filter == filter);
  }
  const Result<Scenario> bad =
      parse_scenario(R"({"format":"attnviz-scenario","version":2,"target":"a",)"
                     R"("model":{"name":"bert-web","pair_filter":"A->C"}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("model.pair_filter") != std::string::npos);
}

TEST_CASE("model mode, an encoder: the pair filter shows one sentence's attention to the other's") {
  testing::TempDir dir;
  Pipeline everything;
  REQUIRE(everything.run(bert_scenario(dir, "the cat sat", "the dog")).is_ok());
  const AttentionResult& all = everything.current().layer(1);  // (8, 8)
  // [CLS] the cat sat [SEP] | the dog [SEP]: positions 0..4 are A, 5..7 are B.
  const std::vector<int> a = {0, 1, 2, 3, 4}, b = {5, 6, 7};
  struct Case {
    PairFilter filter;
    const std::vector<int>& queries;
    const std::vector<int>& keys;
  };
  for (const Case& c : {Case{PairFilter::AToB, a, b}, Case{PairFilter::BToA, b, a},
                        Case{PairFilter::AToA, a, a}, Case{PairFilter::BToB, b, b}}) {
    CAPTURE(pair_filter_name(c.filter));
    Pipeline pipeline;
    Scenario scenario = bert_scenario(dir, "the cat sat", "the dog");
    scenario.edit_model()->pair_filter = c.filter;
    REQUIRE(pipeline.run(scenario).is_ok());
    const Run& run = pipeline.current();
    CHECK(run.cross());
    CHECK(run.target().tokens.size() == c.queries.size());
    CHECK(run.keys().tokens.size() == c.keys.size());
    CHECK(run.shown_positions() == c.queries);
    CHECK(run.key_positions() == c.keys);
    CHECK(run.sequence_length() == 8);  // the model still read the pair whole
    const AttentionResult& layer = run.layer(1);
    REQUIRE(layer.n_query == static_cast<int>(c.queries.size()));
    REQUIRE(layer.n_key == static_cast<int>(c.keys.size()));
    CHECK(run.X_keys().rows() == static_cast<int>(c.keys.size()));
    CHECK(run.attention_input_keys(1).rows() == static_cast<int>(c.keys.size()));
    for (std::size_t h = 0; h < layer.heads.size(); ++h) {
      const HeadResult& head = layer.heads[h];
      const HeadResult& whole = all.heads[h];
      REQUIRE(head.weights.rows() == static_cast<int>(c.queries.size()));
      REQUIRE(head.weights.cols() == static_cast<int>(c.keys.size()));
      RowVector shown_share = RowVector::Zero(static_cast<int>(c.queries.size()));
      for (std::size_t i = 0; i < c.queries.size(); ++i)
        for (std::size_t j = 0; j < c.keys.size(); ++j) {
          // The same numbers as the whole pair's, at the same tokens.
          const float expected = whole.weights(c.queries[i], c.keys[j]);
          CHECK(head.weights(static_cast<int>(i), static_cast<int>(j)) == expected);
          CHECK(head.K(static_cast<int>(j), 0) == whole.K(c.keys[j], 0));
          shown_share(static_cast<int>(i)) += expected;
        }
      // Each row's weights add up to the share that went to the sentence shown (below 1), and
      // the head's output is the sum over the shown values.
      for (int i = 0; i < head.weights.rows(); ++i)
        CHECK(head.weights.row(i).sum() == doctest::Approx(shown_share(i)));
      const Matrix output = head.weights * head.V;  // (n_query, d_head)
      CHECK((head.output - output).cwiseAbs().maxCoeff() < 1e-6f);
    }
    // The Pipeline view's K stage multiplies the keys' rows.
    std::vector<BlockStage> stages;
    run.block_stages(1, 0, stages);
    for (const BlockStage& stage : stages)
      if (stage.id == StageId::K || stage.id == StageId::V) {
        REQUIRE(stage.recipe.input != nullptr);
        CHECK(stage.recipe.input->rows() == static_cast<int>(c.keys.size()));
        CHECK(stage.matrix->rows() == static_cast<int>(c.keys.size()));
      }
  }
}

TEST_CASE("model mode, an encoder: a pair filter without a second sentence shows everything") {
  testing::TempDir dir;
  Pipeline pipeline;
  Scenario scenario = bert_scenario(dir, "the cat sat");
  scenario.edit_model()->pair_filter = PairFilter::AToB;
  REQUIRE(pipeline.run(scenario).is_ok());
  const Run& run = pipeline.current();
  CHECK_FALSE(run.cross());
  CHECK(run.target().tokens.size() == 5);
  CHECK(run.layer(0).n_key == 5);
  const std::vector<std::string>& warnings = run.warnings();
  CHECK(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("needs a second sentence (B)") != std::string::npos;
  }));
}

}  // namespace attnviz
