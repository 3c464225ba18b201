// Lessons: every built-in lesson loads, every step computes, and every claim a step makes holds
// on the engine's numbers. Then the checks themselves, each shown able to fail.
#include "core/lessons/lesson.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz {
namespace {

Lesson load_builtin(const BuiltinLesson& builtin) {
  Result<Lesson> load = parse_lesson(builtin.json, std::string(builtin.id));
  INFO("lesson " << builtin.id << ": " << load.error());
  REQUIRE(load.ok());
  for (const std::string& warning : load.warnings) FAIL_CHECK(builtin.id << ": " << warning);
  return *load;
}

// A one-step lesson around the built-in scenario with the given step fields.
std::string lesson_with_step(const std::string& step_fields) {
  return R"({"format": "attnviz-lesson", "title": "t", "scenario": )" +
         std::string(builtin_scenario_json()) + R"(, "steps": [{"title": "s", )" + step_fields +
         "}]}";
}

std::vector<std::string> failures_of(const std::string& step_fields) {
  Result<Lesson> load = parse_lesson(lesson_with_step(step_fields), "test");
  INFO(load.error());
  REQUIRE(load.ok());
  const LessonStep& step = load->steps[0];
  Pipeline pipeline;
  REQUIRE(pipeline.run(step.scenario));
  return failed_checks(step, pipeline);
}

}  // namespace

TEST_CASE("there are built-in lessons and each loads without warnings") {
  REQUIRE_FALSE(builtin_lessons().empty());
  for (const BuiltinLesson& builtin : builtin_lessons()) {
    const Lesson lesson = load_builtin(builtin);
    CHECK_FALSE(lesson.title.empty());
    CHECK_FALSE(lesson.steps.empty());
  }
}

TEST_CASE("every claim of every step of every built-in lesson holds on the engine's numbers") {
  int checked = 0;
  for (const BuiltinLesson& builtin : builtin_lessons()) {
    const Lesson lesson = load_builtin(builtin);
    for (std::size_t s = 0; s < lesson.steps.size(); ++s) {
      const LessonStep& step = lesson.steps[s];
      CAPTURE(builtin.id);
      CAPTURE(s);
      Pipeline pipeline;
      const Status status = pipeline.run(step.scenario);
      REQUIRE_MESSAGE(status.is_ok(), status.message());
      for (const std::string& failure : failed_checks(step, pipeline)) FAIL_CHECK(failure);
      checked += static_cast<int>(step.checks.size());
      // Every placeholder in the text is filled, none with the dash of a token that is not there.
      const std::string text = expand_lesson_text(step.text, pipeline);
      CHECK_MESSAGE(text.find('{') == std::string::npos, "unfilled placeholder in: " << text);
      const bool dash_filled = text.find("\xe2\x80\x94") != std::string::npos &&
                               step.text.find("\xe2\x80\x94") == std::string::npos;
      CHECK_MESSAGE(!dash_filled,
                    "a placeholder names a token or head the step does not have: " << text);
    }
  }
  MESSAGE("lesson claims checked: " << checked);
  CHECK(checked > 0);
}

TEST_CASE("a lesson is found by id or number or name") {
  REQUIRE(find_builtin_lesson("05-self-attention"));
  CHECK(find_builtin_lesson("5")->id == "05-self-attention");
  CHECK(find_builtin_lesson("self-attention")->id == "05-self-attention");
  CHECK_FALSE(find_builtin_lesson("99"));
}

TEST_CASE("a step's scenario patch is merged into the previous step's scenario") {
  const std::string text = R"({"format": "attnviz-lesson", "title": "t",
    "scenario": {"target": "a b c", "d_model": 4, "heads": 1, "seed": 3},
    "steps": [{"title": "one"}, {"title": "two", "scenario": {"causal": true}},
              {"title": "three", "scenario": {"target": "x y"}}]})";
  Result<Lesson> load = parse_lesson(text, "t");
  REQUIRE(load.ok());
  const auto& steps = load->steps;
  CHECK_FALSE(steps[0].scenario.config.causal);
  CHECK(steps[1].scenario.config.causal);
  CHECK(steps[2].scenario.config.causal);  // kept from step two
  CHECK(steps[2].scenario.target == "x y");
  CHECK(steps[2].scenario.config.d_model == 4);
}

TEST_CASE("a bad lesson names the step and the key") {
  CHECK(parse_lesson(lesson_with_step(R"("checks": [{"check": "argmx"}])"), "t")
            .error()
            .find("steps[0].checks[0].check") != std::string::npos);
  CHECK(
      parse_lesson(lesson_with_step(R"("query": "banana")"), "t").error().find("steps[0].query") !=
      std::string::npos);
  CHECK(parse_lesson(lesson_with_step(R"("scenario": {"heads": 0})"), "t")
            .error()
            .find("steps[0].scenario") != std::string::npos);
  CHECK(
      parse_lesson(lesson_with_step(R"("view": "sideways")"), "t").error().find("steps[0].view") !=
      std::string::npos);
  CHECK(parse_lesson(R"({"format": "attnviz-scenario"})", "t").error().find("format") !=
        std::string::npos);
  CHECK(parse_lesson("{", "t").error().find("malformed JSON") != std::string::npos);
}

TEST_CASE("argmax and weight checks fail when the claim is false") {
  // In the built-in scenario apple attends most to eat in head 0 (0.74).
  CHECK(failures_of(R"("checks": [{"check": "argmax", "head": 0, "query": "apple", "key": "eat"}])")
            .empty());
  CHECK(
      failures_of(R"("checks": [{"check": "argmax", "head": 0, "query": "apple", "key": "like"}])")
          .size() == 1);
  CHECK(
      failures_of(
          R"("checks": [{"check": "weight_above", "query": "apple", "key": "eat", "value": 0.9}])")
          .size() == 1);
  CHECK(
      failures_of(
          R"("checks": [{"check": "weight_below", "query": "apple", "key": "eat", "value": 0.9}])")
          .empty());
  CHECK(failures_of(R"("checks": [{"check": "max_weight_above", "query": "apple", "value": 0.7}])")
            .empty());
  CHECK(failures_of(R"("checks": [{"check": "max_weight_below", "query": "apple", "value": 0.7}])")
            .size() == 1);
}

TEST_CASE("an argmax claim resting on a tie fails") {
  // In the built-in scenario "i" gives 0.44 to both "like" and "eat" in head 0: neither is "the"
  // word it attends to most, though "like" comes first.
  const std::vector<std::string> failures =
      failures_of(R"("checks": [{"check": "argmax", "head": 0, "query": "i", "key": "like"}])");
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].find("tied with \"eat\"") != std::string::npos);
}

TEST_CASE("structural checks fail when the claim is false") {
  CHECK(failures_of(R"("checks": [{"check": "diagonal_dominates", "head": 0}])").size() == 1);
  CHECK(failures_of(R"("checks": [{"check": "one_hot", "head": 0}])").size() == 1);
  CHECK(failures_of(R"("scenario": {"hard": true}, "checks": [{"check": "one_hot", "head": 0}])")
            .empty());
  CHECK(failures_of(R"("checks": [{"check": "upper_triangle_zero", "head": 0}])").size() == 1);
  CHECK(
      failures_of(
          R"("scenario": {"causal": true}, "checks": [{"check": "upper_triangle_zero", "head": 1}])")
          .empty());
  CHECK(failures_of(
            R"("checks": [{"check": "heads_disagree", "head": 0, "head_b": 1, "query": "eat"}])")
            .empty());
  CHECK(failures_of(
            R"("checks": [{"check": "heads_disagree", "head": 0, "head_b": 0, "query": "eat"}])")
            .size() == 1);
}

TEST_CASE("output_equals_value holds for hard attention and fails for soft attention") {
  const std::string check =
      R"("checks": [{"check": "output_equals_value", "head": 1, "query": "eat", "key": "apple"}])";
  CHECK(failures_of(R"("scenario": {"hard": true}, )" + check).empty());
  CHECK(failures_of(check).size() == 1);
}

TEST_CASE("permutation checks tell positions on from positions off") {
  const std::string shuffle = R"("permutation": [4, 0, 3, 1, 2])";
  CHECK(
      failures_of(R"("checks": [{"check": "permutation_equivariant", )" + shuffle + "}]").empty());
  CHECK(failures_of(R"("checks": [{"check": "not_permutation_equivariant", )" + shuffle + "}]")
            .size() == 1);
  CHECK(
      failures_of(
          R"("scenario": {"positional": "sinusoidal"}, "checks": [{"check": "not_permutation_equivariant", )" +
          shuffle + "}]")
          .empty());
}

TEST_CASE("placeholders are filled with live numbers") {
  Result<Lesson> load = parse_lesson(lesson_with_step(R"("text": "x")"), "t");
  REQUIRE(load.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(load->steps[0].scenario));
  CHECK(expand_lesson_text("{n_query}x{n_key} = {pairs}, d_k {d_k}, {heads} heads", pipeline) ==
        "5x5 = 25, d_k 4, 2 heads");
  CHECK(expand_lesson_text("apple to eat: {alpha:0:apple:eat}, top {argmax:0:apple}", pipeline) ==
        "apple to eat: 0.74, top eat");
  CHECK(expand_lesson_text("{unknown} {", pipeline) == "{unknown} {");
}

TEST_CASE("a placeholder whose token was edited away reads as a dash") {
  Result<Lesson> load = parse_lesson(lesson_with_step(R"("text": "x")"), "t");
  REQUIRE(load.ok());
  Scenario edited = load->steps[0].scenario;
  edited.target = "i like to eat banana";  // "apple" is gone
  Pipeline pipeline;
  REQUIRE(pipeline.run(edited));
  CHECK(
      expand_lesson_text(
          "eat to apple: {alpha:0:eat:apple}, top of apple {argmax:0:apple}, head 9 {argmax:9:eat}",
          pipeline) ==
      "eat to apple: \xe2\x80\x94, top of apple \xe2\x80\x94, head 9 \xe2\x80\x94");
}

TEST_CASE("tokens are referred to by text or by index") {
  const Tokenization tokens = tokenize("The cat sat", 256);
  CHECK(resolve_token(tokens, "cat") == 1);
  CHECK(resolve_token(tokens, "the") == 0);
  CHECK(resolve_token(tokens, "#2") == 2);
  CHECK(resolve_token(tokens, "dog") == -1);
  CHECK(resolve_token(tokens, "#7") == -1);
}

// Found by the lesson fuzz target: "#4294967296" was read by atoi, wrapped to 0 and meant the
// first token.
TEST_CASE("a token index that is too large or not a number refers to no token") {
  const Tokenization tokens = tokenize("The cat sat", 256);
  for (const char* reference : {"#4294967296", "#18446744073709551616", "#-1", "#1x", "#+1", "# 1"})
    CHECK_MESSAGE(resolve_token(tokens, reference) == -1, reference);
}

}  // namespace attnviz
