#include "core/pipeline/pipeline.hpp"

#include <doctest/doctest.h>

namespace attnviz {
namespace {

Scenario builtin() {
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  return *load;
}

Eigen::Index argmax_of_row(const Matrix& m, Eigen::Index row) {
  Eigen::Index best = 0;
  m.row(row).maxCoeff(&best);
  return best;
}

}  // namespace

TEST_CASE("the built-in scenario: apple attends most to eat in head 0") {
  Pipeline pipeline;
  REQUIRE(pipeline.run(builtin()));
  const auto& tokens = pipeline.target().tokens;
  REQUIRE(tokens.size() == 5);
  CHECK(tokens[4].text == "apple");
  CHECK(tokens[argmax_of_row(pipeline.result().heads[0].weights, 4)].text == "eat");
}

TEST_CASE("the built-in scenario: eat attends most to apple in head 1") {
  Pipeline pipeline;
  REQUIRE(pipeline.run(builtin()));
  CHECK(argmax_of_row(pipeline.result().heads[1].weights, 3) == 4);
}

TEST_CASE("an empty sentence is an error and the previous result stays") {
  Scenario scenario = builtin();
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const Matrix output = pipeline.result().output;
  scenario.target = "   ";
  const Status status = pipeline.run(scenario);
  CHECK_FALSE(status);
  CHECK(status.message().find("no tokens") != std::string::npos);
  CHECK(pipeline.result().output == output);
  CHECK(pipeline.target().tokens.size() == 5);
  CHECK(pipeline.X_target().rows() == 5);
}

TEST_CASE("a NaN embedding override is an error and the previous inputs stay") {
  Scenario scenario = builtin();
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const Matrix X = pipeline.X_target();
  scenario.edit_one_layer()->embeddings["eat"] =
      std::vector<float>(8, std::numeric_limits<float>::quiet_NaN());
  CHECK_FALSE(pipeline.run(scenario));
  CHECK(pipeline.X_target() == X);
}

TEST_CASE("editing the sentence recomputes with the new tokens") {
  Scenario scenario = builtin();
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  scenario.target = "jane visits africa today";
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.target().tokens.size() == 4);
  CHECK(pipeline.result().heads[0].weights.rows() == 4);
}

TEST_CASE("a long sentence is truncated with a warning") {
  Scenario scenario = builtin();
  scenario.max_tokens = 4;
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.target().tokens.size() == 4);
  REQUIRE(pipeline.warnings().size() == 1);
  CHECK(pipeline.warnings()[0].find("only the first 4") != std::string::npos);
}

TEST_CASE("cross mode takes keys and values from the source sentence") {
  Scenario scenario = builtin();
  scenario.edit_one_layer()->mode = Mode::Cross;
  scenario.edit_one_layer()->source = "je mange une pomme rouge ce soir";
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.keys().tokens.size() == 7);
  CHECK(pipeline.X_keys().rows() == 7);
  CHECK(pipeline.result().heads[0].weights.cols() == 7);
  CHECK(pipeline.result().heads[0].weights.rows() == 5);
}

TEST_CASE("cross mode with an empty source is an error") {
  Scenario scenario = builtin();
  scenario.edit_one_layer()->mode = Mode::Cross;
  scenario.edit_one_layer()->source = "";
  Pipeline pipeline;
  CHECK_FALSE(pipeline.run(scenario));
}

TEST_CASE("a custom mask smaller than the sentence applies where it exists with a warning") {
  Scenario scenario = builtin();
  scenario.edit_one_layer()->mask = MaskMatrix::Ones(3, 3);
  scenario.edit_one_layer()->mask(0, 1) = 0;
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.result().heads[0].weights(0, 1) == 0.0f);
  CHECK(pipeline.result().heads[0].weights(0, 4) > 0.0f);
  CHECK(pipeline.warnings().size() == 1);
}

TEST_CASE("a fully masked query produces a warning that names it") {
  Scenario scenario = builtin();
  scenario.edit_one_layer()->mask = MaskMatrix::Ones(5, 5);
  scenario.edit_one_layer()->mask.row(2).setZero();
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  bool named = false;
  for (const std::string& w : pipeline.warnings())
    named = named || w.find("\"to\"") != std::string::npos;
  CHECK(named);
  // Counted from 1, as the app counts heads and queries: "to" is the third query.
  REQUIRE_FALSE(pipeline.warnings().empty());
  CHECK(pipeline.warnings().front().rfind("head 1: query 3 \"to\"", 0) == 0);
}

}  // namespace attnviz

namespace attnviz {

TEST_CASE("apply_config keeps existing weights and overrides and seeds the new cells") {
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  Scenario scenario = *load;
  scenario.edit_one_layer()->embeddings["apple"] = {1, 2, 3, 4, 5, 6, 7, 8};
  const Matrix W_Q0 = scenario.one_layer().parameters.heads[0].W_Q;
  AttentionConfig config = scenario.one_layer().config;
  config.d_model = 10;
  config.heads = 3;
  apply_config(*scenario.edit_one_layer(), config);
  CHECK(scenario.one_layer().parameters.heads[0].W_Q.topRows(8) == W_Q0);
  CHECK(scenario.one_layer().parameters.heads.size() == 3);
  REQUIRE(scenario.edit_one_layer()->embeddings["apple"].size() == 10);
  CHECK(scenario.edit_one_layer()->embeddings["apple"][7] == 8.0f);
  // The new dimensions come from the word's default embedding (dimension 8 = "time": 0).
  RowVector defaults(10);
  default_embedding("apple", 10, defaults.data());
  CHECK(scenario.edit_one_layer()->embeddings["apple"][9] == defaults[9]);
  Pipeline pipeline;
  CHECK(pipeline.run(scenario));
  // And the file written from it loads again.
  CHECK(parse_scenario(scenario_to_json(scenario)).ok());
}

}  // namespace attnviz

namespace attnviz {

TEST_CASE("a sentence of only punctuation computes with one token per mark") {
  Scenario scenario = builtin();
  scenario.target = "?! ... ,";
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.target().tokens.size() == 6);
  CHECK(pipeline.result().heads[0].weights.allFinite());
}

TEST_CASE("a 100000-character paste computes on the first max_tokens tokens with a warning") {
  Scenario scenario = builtin();
  scenario.target.clear();
  while (scenario.target.size() < 100000) scenario.target += "the cat sat on the mat ";
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.target().tokens.size() == 256);
  REQUIRE_FALSE(pipeline.warnings().empty());
  CHECK(pipeline.warnings()[0].find("only the first 256") != std::string::npos);
}

TEST_CASE("invalid UTF-8 in the sentence computes and is warned about") {
  Scenario scenario = builtin();
  scenario.target = "i like \xff\xfe apple";
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  bool warned = false;
  for (const std::string& w : pipeline.warnings())
    warned = warned || w.find("invalid UTF-8") != std::string::npos;
  CHECK(warned);
}

}  // namespace attnviz

namespace attnviz {

// The pipeline embeds a sentence again only when the embedding's inputs change; each change
// below must show in X exactly as a fresh pipeline computes it.
TEST_CASE("a rerun embeds again after an override or positional change") {
  Scenario scenario = builtin();
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const auto same_as_fresh = [&](const char* what) {
    REQUIRE_MESSAGE(pipeline.run(scenario), what);
    Pipeline fresh;
    REQUIRE(fresh.run(scenario));
    CHECK_MESSAGE(pipeline.X_target() == fresh.X_target(), what);
    CHECK_MESSAGE(pipeline.result().output == fresh.result().output, what);
  };
  scenario.edit_one_layer()->embeddings["eat"] = std::vector<float>(8, 0.25f);
  same_as_fresh("an override added");
  scenario.edit_one_layer()->embeddings["eat"][3] = -1.0f;
  same_as_fresh("an override edited");
  scenario.edit_one_layer()->positional = Positional::Sinusoidal;
  same_as_fresh("positions switched on");
  scenario.edit_one_layer()->embeddings.clear();
  same_as_fresh("the overrides removed");
}

TEST_CASE("a rerun embeds again after a d_model or source change") {
  Scenario scenario = builtin();
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  AttentionConfig wider = scenario.one_layer().config;
  wider.d_model = 12;
  apply_config(*scenario.edit_one_layer(), wider);
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.X_target().cols() == 12);
  scenario.edit_one_layer()->mode = Mode::Cross;
  scenario.edit_one_layer()->source = "the cat sat";
  REQUIRE(pipeline.run(scenario));
  scenario.edit_one_layer()->source = "a dog ran far";
  REQUIRE(pipeline.run(scenario));
  Pipeline fresh;
  REQUIRE(fresh.run(scenario));
  CHECK(pipeline.X_keys() == fresh.X_keys());
  CHECK(pipeline.X_keys().rows() == 4);
}

TEST_CASE("the result is a stack of layers: a scenario is one layer, and result() is its top") {
  Pipeline pipeline;
  REQUIRE(pipeline.run(builtin()));
  REQUIRE(pipeline.layer_count() == 1);
  CHECK(&pipeline.layer(0) == &pipeline.result());
  CHECK(pipeline.layer(0).heads.size() == 2);
  pipeline.set_threads(2);  // every layer's engine
  CHECK(pipeline.threads() == 2);
}

}  // namespace attnviz
