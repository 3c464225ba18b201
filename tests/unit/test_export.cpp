#include "core/export.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace attnviz {
namespace {

struct Computed {
  Scenario scenario;
  Pipeline pipeline;
  Computed(bool causal) {
    ScenarioLoad load = parse_scenario(builtin_scenario_json());
    REQUIRE(load.ok());
    scenario = *load.scenario;
    scenario.config.causal = causal;
    REQUIRE(pipeline.run(scenario));
  }
};

}  // namespace

TEST_CASE("the result JSON holds the engine's numbers exactly") {
  Computed c(false);
  const auto json = nlohmann::json::parse(result_to_json(c.scenario, c.pipeline));
  const HeadResult& head = c.pipeline.result().heads[1];
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      CHECK(json["heads"][1]["weights"][i][j].get<float>() == head.weights(i, j));
  CHECK(json["output"][4][1].get<float>() == c.pipeline.result().output(4, 1));
  CHECK(json["target_tokens"][4] == "apple");
  CHECK(json["config"]["heads"] == 2);
}

TEST_CASE("masked scores are written as null") {
  Computed c(true);
  const auto json = nlohmann::json::parse(result_to_json(c.scenario, c.pipeline));
  CHECK(json["heads"][0]["masked_scores"][0][1].is_null());
  CHECK(json["heads"][0]["masked_scores"][1][0].is_number());
}

TEST_CASE("CSV rows hold the matrix values with labels when given") {
  Matrix m(2, 2);
  m << 0.5f, -1.25f, 3.0f, 1e-7f;
  CHECK(matrix_to_csv(m) == "0.5,-1.25\n3,1e-07\n");
  CHECK(matrix_to_csv(m, {"a", "b\"c"}, {"x", "y"}) ==
        "\"\",\"a\",\"b\"\"c\"\n\"x\",0.5,-1.25\n\"y\",3,1e-07\n");
}

TEST_CASE("the text heatmap labels rows and columns with the tokens") {
  Computed c(false);
  const std::string text = weights_to_text(c.pipeline, 0);
  CHECK(text.find("apple") != std::string::npos);
  CHECK(text.find("head 0") != std::string::npos);
}

}  // namespace attnviz
