// Scenario files that name a real model (docs/formats.md, "A model in a scenario").
#include "core/document/scenario.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz {
namespace {

const char* kModelFile = R"({
  "format": "attnviz-scenario",
  "version": 2,
  "model": {
    "name": "gpt2-kjv-tiny",
    "interventions": [
      {"layer": 1, "head": 1, "scale": 0},
      {"layer": 0, "head": 2, "pattern": "previous_token"},
      {"layer": 0, "head": 0, "scale": 0.5, "pattern": "uniform"}
    ]
  },
  "target": "In the beginning God created"
})";

std::string error_of(const std::string& json) {
  Result<Scenario> parsed = parse_scenario(json);
  REQUIRE(!parsed.ok());
  return parsed.status().message();
}

}  // namespace

TEST_CASE("a scenario naming a model reads its interventions, sorted by layer and head") {
  Result<Scenario> parsed = parse_scenario(kModelFile);
  REQUIRE(parsed.ok());
  CHECK(parsed.warnings.empty());
  REQUIRE(parsed->has_model());
  const ModelSpec& spec = *parsed->model();
  CHECK(spec.model == "gpt2-kjv-tiny");
  REQUIRE(spec.interventions.size() == 3);
  CHECK(spec.interventions[0].layer == 0);
  CHECK(spec.interventions[0].head == 0);
  CHECK(spec.interventions[0].change.output_scale == 0.5f);
  CHECK(spec.interventions[0].change.pattern == HeadIntervention::Pattern::Uniform);
  CHECK(spec.interventions[1].change.pattern == HeadIntervention::Pattern::PreviousToken);
  CHECK(spec.intervention(1, 1).ablated());
  CHECK(!spec.intervention(1, 0).changes_anything());
  CHECK(parsed->target == "In the beginning God created");
}

TEST_CASE("a model scenario is written as version 2 with only the model's keys, and reads back") {
  Result<Scenario> parsed = parse_scenario(kModelFile);
  REQUIRE(parsed.ok());
  const std::string json = scenario_to_json(*parsed);
  CHECK(json.find("\"version\": 2") != std::string::npos);
  CHECK(json.find("\"weights\"") == std::string::npos);  // the one-layer model is not the model's
  CHECK(json.find("\"d_model\"") == std::string::npos);
  CHECK(json.find("\"scale\": 0.0") != std::string::npos);  // knocked out
  Result<Scenario> again = parse_scenario(json);
  REQUIRE(again.ok());
  CHECK(*again->model() == *parsed->model());
  CHECK(again->target == parsed->target);
  CHECK(scenario_to_json(*again) == json);

  // Without a model, version 1 as before.
  Scenario plain = *parsed;
  plain.spec = OneLayerSpec::seeded(AttentionConfig{}, 7);
  plain.target = "the cat sat";
  CHECK(scenario_to_json(plain).find("\"version\": 1") != std::string::npos);
}

TEST_CASE("hiding special tokens is kept in the file, and absent means shown") {
  Result<Scenario> parsed = parse_scenario(
      R"({"version": 2, "model": {"name": "m", "hide_special_tokens": true}, "target": "a"})");
  REQUIRE(parsed.ok());
  CHECK(parsed->model()->hide_special_tokens);
  const std::string json = scenario_to_json(*parsed);
  CHECK(json.find("\"hide_special_tokens\": true") != std::string::npos);
  Result<Scenario> shown = parse_scenario(kModelFile);
  REQUIRE(shown.ok());
  CHECK_FALSE(shown->model()->hide_special_tokens);
  CHECK(scenario_to_json(*shown).find("hide_special_tokens") == std::string::npos);
  CHECK(error_of(R"({"version": 2, "model": {"name": "m", "hide_special_tokens": 1},
                     "target": "a"})")
            .find("model.hide_special_tokens") != std::string::npos);
}

TEST_CASE("set_intervention keeps one entry per head and drops a change back to nothing") {
  ModelSpec spec = ModelSpec::named("stories260K");
  HeadIntervention ablate;
  ablate.output_scale = 0;
  spec.set_intervention(2, 3, ablate);
  spec.set_intervention(0, 5, ablate);
  spec.set_intervention(2, 3, ablate);
  REQUIRE(spec.interventions.size() == 2);
  CHECK(spec.interventions[0].layer == 0);
  spec.set_intervention(0, 5, HeadIntervention{});
  REQUIRE(spec.interventions.size() == 1);
  CHECK(spec.interventions[0].layer == 2);
}

TEST_CASE("a model scenario may have an empty text: the model starts from its start token") {
  Result<Scenario> parsed =
      parse_scenario(R"({"format": "attnviz-scenario", "version": 2, "model": {"name": "x"},
                         "target": ""})");
  REQUIRE(parsed.ok());
  CHECK(parsed->target.empty());
}

TEST_CASE("malformed model sections are refused with the key that is wrong") {
  const std::string head = R"({"format": "attnviz-scenario", "version": 2, "target": "a", )";
  CHECK(error_of(head + R"("model": "gpt2"})").find("model: expected an object") !=
        std::string::npos);
  CHECK(error_of(head + R"("model": {}})").find("model.name: missing") != std::string::npos);
  CHECK(error_of(head + R"("model": {"name": "  "}})").find("the name is empty") !=
        std::string::npos);
  CHECK(error_of(head + R"("model": {"name": "m", "interventions": [{"layer": 0}]}})")
            .find("needs a \"layer\" and a \"head\"") != std::string::npos);
  CHECK(error_of(head + R"("model": {"name": "m", "interventions": [{"layer": -1, "head": 0,
                           "scale": 0}]}})")
            .find("interventions[0].layer") != std::string::npos);
  CHECK(error_of(head + R"("model": {"name": "m", "interventions": [{"layer": 0, "head": 0,
                           "scale": 1e38}]}})")
            .find("between -1000 and 1000") != std::string::npos);
  CHECK(error_of(head + R"("model": {"name": "m", "interventions": [{"layer": 0, "head": 0,
                           "pattern": "random"}]}})")
            .find("expected \"computed\", \"uniform\" or \"previous_token\"") != std::string::npos);
  CHECK(error_of(head + R"("model": {"name": "m", "interventions": [
                           {"layer": 0, "head": 0, "scale": 0},
                           {"layer": 0, "head": 0, "scale": 2}]}})")
            .find("changed twice") != std::string::npos);
  CHECK(error_of(R"({"format": "attnviz-scenario", "version": 3, "target": "a"})")
            .find("reads versions 1 and 2") != std::string::npos);
}

}  // namespace attnviz

namespace attnviz {

TEST_CASE("weight and embedding edits are saved per matrix and token, and read back sorted") {
  Result<Scenario> parsed = parse_scenario(R"({"format": "attnviz-scenario", "version": 2,
    "model": {"name": "stories260K",
      "weights": [
        {"layer": 1, "matrix": "W_K", "kv_head": 0, "cells": [[2, 3, 0.5]]},
        {"layer": 0, "matrix": "W_O", "head": 3, "cells": [[1, 4, -0.75], [0, 2, 1e-3]]}
      ],
      "embeddings": [{"token": 40, "cells": [[5, 1.5], [0, -2]]}]},
    "target": "Once upon a time"})");
  REQUIRE(parsed.ok());
  const ModelSpec& spec = *parsed->model();
  REQUIRE(spec.weight_edits.size() == 3);
  CHECK(spec.weight_edits[0] == ModelWeightEdit{0, HeadMatrix::Output, 3, 0, 2, 1e-3f});
  CHECK(spec.weight_edits[1] == ModelWeightEdit{0, HeadMatrix::Output, 3, 1, 4, -0.75f});
  CHECK(spec.weight_edits[2] == ModelWeightEdit{1, HeadMatrix::Key, 0, 2, 3, 0.5f});
  REQUIRE(spec.embedding_edits.size() == 2);
  CHECK(spec.embedding_edits[0] == ModelEmbeddingEdit{40, 0, -2.0f});
  const std::string json = scenario_to_json(*parsed);
  CHECK(json.find(R"("matrix": "W_K",)") != std::string::npos);
  CHECK(json.find(R"("kv_head": 0,)") != std::string::npos);
  CHECK(json.find("[1, 4, -0.75]") != std::string::npos);
  Result<Scenario> again = parse_scenario(json);
  REQUIRE(again.ok());
  CHECK(*again->model() == spec);
}

TEST_CASE("set_weight_block replaces one block's cells and leaves the others") {
  ModelSpec spec = ModelSpec::named("m");
  spec.set_weight({0, HeadMatrix::Query, 1, 0, 0, 1.0f});
  spec.set_weight({0, HeadMatrix::Query, 2, 0, 0, 2.0f});
  spec.set_weight({0, HeadMatrix::Query, 2, 0, 0, 3.0f});  // the same cell: replaced
  REQUIRE(spec.weight_edits.size() == 2);
  spec.set_weight_block(
      0, HeadMatrix::Query, 1,
      {{0, HeadMatrix::Query, 1, 1, 1, 5.0f}, {0, HeadMatrix::Query, 1, 0, 1, 4.0f}});
  REQUIRE(spec.weight_edits.size() == 3);
  CHECK(spec.weight_edits[0].col == 1);  // the old (0, 0) of head 1 is gone
  CHECK(spec.weight_edits[1].row == 1);
  CHECK(spec.weight_edits[2].value == 3.0f);
  spec.set_weight_block(0, HeadMatrix::Query, 1, {});
  REQUIRE(spec.weight_edits.size() == 1);
  CHECK(spec.weight_edits[0].head == 2);
  spec.set_embedding({7, 1, 1.0f});
  spec.set_embedding({3, 0, 1.0f});
  spec.reset_embedding(7);
  REQUIRE(spec.embedding_edits.size() == 1);
  CHECK(spec.embedding_edits[0].token == 3);
}

TEST_CASE("malformed weight edits are refused with the key that is wrong") {
  const std::string head =
      R"({"format": "attnviz-scenario", "version": 2, "target": "a", "model": {"name": "m", )";
  const auto error = [&](const std::string& rest) {
    Result<Scenario> parsed = parse_scenario(head + rest + "}}");
    REQUIRE(!parsed.ok());
    return parsed.status().message();
  };
  CHECK(error(R"("weights": {})").find("model.weights: expected a list") != std::string::npos);
  CHECK(error(R"("weights": [{"layer": 0, "matrix": "W_X", "head": 0, "cells": []}])")
            .find("expected \"W_Q\", \"W_K\", \"W_V\" or \"W_O\"") != std::string::npos);
  CHECK(error(R"("weights": [{"layer": 0, "matrix": "W_K", "head": 0, "cells": []}])")
            .find("needs a \"kv_head\"") != std::string::npos);
  CHECK(error(R"("weights": [{"layer": 0, "matrix": "W_Q", "head": 0, "cells": [[0, 1]]}])")
            .find("model.weights[0].cells[0]") != std::string::npos);
  CHECK(error(R"("weights": [{"layer": 0, "matrix": "W_Q", "head": 0, "cells": [[0, 1, 1e39]]}])")
            .find("outside the float range") != std::string::npos);
  CHECK(error(R"("weights": [{"layer": 0, "matrix": "W_Q", "head": 0,
                              "cells": [[0, -1, 1]]}])")
            .find("cells[0][1]") != std::string::npos);
  CHECK(error(R"("weights": [{"layer": 0, "matrix": "W_Q", "head": 0, "cells": [[0, 1, 1]]},
                             {"layer": 0, "matrix": "W_Q", "head": 0, "cells": [[0, 1, 2]]}])")
            .find("given twice") != std::string::npos);
  CHECK(error(R"("embeddings": [{"token": 3}])").find("needs a \"token\"") != std::string::npos);
  CHECK(error(R"("embeddings": [{"token": 3, "cells": [[0, 1], [0, 2]]}])")
            .find("token 3, dimension 0 is given twice") != std::string::npos);
}

}  // namespace attnviz

namespace attnviz {

// The scenario is a sum: the one-layer model or a real model, never both. A model's file may keep
// one-layer keys (an older AttnViz wrote them, or a hand): they are read and checked, not kept.
TEST_CASE("a scenario names a model or holds the one-layer model, never both") {
  const Result<Scenario> parsed = parse_scenario(
      R"({"format": "attnviz-scenario", "version": 2, "model": {"name": "stories260K"},
          "target": "Once upon a time", "d_model": 16, "heads": 4, "seed": 99})");
  REQUIRE(parsed.ok());
  Scenario scenario = *parsed;
  REQUIRE(scenario.has_model());
  CHECK(scenario.edit_one_layer() == nullptr);
  // Read, it is the defaults, not the file's 16 dimensions.
  CHECK(scenario.one_layer().config.d_model == no_one_layer().config.d_model);
  CHECK(scenario.one_layer().seed == 7);
  CHECK(scenario_to_json(scenario).find("d_model") == std::string::npos);

  // The same keys beside no model make the one-layer model.
  const Result<Scenario> one = parse_scenario(
      R"({"format": "attnviz-scenario", "target": "Once upon a time", "d_model": 16,
          "heads": 4, "seed": 99})");
  REQUIRE(one.ok());
  CHECK_FALSE(one->has_model());
  CHECK(one->model() == nullptr);
  CHECK(one->one_layer().config.d_model == 16);
  CHECK(one->one_layer().seed == 99);

  // A malformed one-layer key is an error even beside a model: the file is wrong.
  const Result<Scenario> bad = parse_scenario(
      R"({"format": "attnviz-scenario", "version": 2, "model": {"name": "stories260K"},
          "target": "x", "heads": "four"})");
  CHECK_FALSE(bad.ok());
}

}  // namespace attnviz
