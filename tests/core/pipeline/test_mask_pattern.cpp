// A scenario's mask pattern (Scenario::mask_pattern, core/variants/sparse_masks.hpp): read and
// written back, refused when malformed or beside a custom mask, and made for the sentence as it
// is, so that it follows the text: every weight outside the pattern is 0, as the engine computes
// with that mask given explicitly.
#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/variants/sparse_masks.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz {
namespace {

Scenario with_pattern(const std::string& pattern, const std::string& text) {
  Result<Scenario> parsed = parse_scenario(R"({"format": "attnviz-scenario", "target": ")" + text +
                                           R"(", "mask_pattern": )" + pattern + "}");
  INFO(parsed.error());
  REQUIRE(parsed.ok());
  return *parsed;
}

std::string error_of(const std::string& rest) {
  Result<Scenario> parsed =
      parse_scenario(R"({"format": "attnviz-scenario", "target": "a b c", )" + rest + "}");
  REQUIRE(!parsed.ok());
  return parsed.error();
}

}  // namespace

TEST_CASE("a mask pattern is read, written back, and refused when malformed") {
  const Scenario s =
      with_pattern(R"({"kind": "dilated", "width": 3, "dilation": 2, "global": [0]})", "a b c d e");
  REQUIRE(s.one_layer().mask_pattern);
  CHECK(s.one_layer().mask_pattern->kind == MaskPattern::Kind::Dilated);
  CHECK(s.one_layer().mask_pattern->dilation == 2);
  CHECK(s.one_layer().mask_pattern->global_tokens == std::vector<int>{0});
  const std::string json = scenario_to_json(s);
  CHECK(json.find(R"("kind": "dilated")") != std::string::npos);
  Result<Scenario> again = parse_scenario(json);
  REQUIRE(again.ok());
  CHECK(again->one_layer().mask_pattern == s.one_layer().mask_pattern);
  CHECK(error_of(R"("mask_pattern": {"kind": "diagonal"})").find("mask_pattern.kind") !=
        std::string::npos);
  CHECK(error_of(R"("mask_pattern": {"kind": "window", "width": 0})").find("mask_pattern.width") !=
        std::string::npos);
  CHECK(error_of(R"("mask": [[1,1,1],[1,1,1],[1,1,1]], "mask_pattern": {"kind": "blocks"})")
            .find("give mask or mask_pattern") != std::string::npos);
}

TEST_CASE("a window pattern follows the sentence and hides every key outside it") {
  Scenario scenario = with_pattern(R"({"kind": "window", "width": 3, "global": [0]})",
                                   "the animal did not cross the street");
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  REQUIRE(pipeline.mask() != nullptr);
  Result<MaskMatrix> expected = with_global_tokens(*window_mask(7, 7, 3), {0});
  REQUIRE(expected.ok());
  CHECK(*pipeline.mask() == *expected);
  for (const HeadResult& head : pipeline.result().heads)
    for (Eigen::Index i = 0; i < 7; ++i) {
      CHECK(head.weights.row(i).sum() == doctest::Approx(1.0f));
      for (Eigen::Index j = 0; j < 7; ++j)
        if ((*expected)(i, j) == 0) CHECK(head.weights(i, j) == 0.0f);
    }
  // The same weights as the engine given that mask.
  AttentionEngine engine;
  REQUIRE(engine
              .compute(pipeline.X_target(), pipeline.X_target(), scenario.one_layer().parameters,
                       scenario.one_layer().config, &*expected)
              .is_ok());
  CHECK((engine.result().heads[1].weights - pipeline.result().heads[1].weights)
            .cwiseAbs()
            .maxCoeff() == 0.0f);
  // Two more words: the mask is made for nine.
  scenario.target += " because it";
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.mask()->rows() == 9);
  CHECK(*pipeline.mask() == *with_global_tokens(*window_mask(9, 9, 3), {0}));
  // A global token past the sentence waits for it.
  scenario.edit_one_layer()->mask_pattern->global_tokens = {20};
  REQUIRE(pipeline.run(scenario));
  CHECK(*pipeline.mask() == *window_mask(9, 9, 3));
  // No pattern, no mask.
  scenario.edit_one_layer()->mask_pattern.reset();
  REQUIRE(pipeline.run(scenario));
  CHECK(pipeline.mask() == nullptr);
}

}  // namespace attnviz
