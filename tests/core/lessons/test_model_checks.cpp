// The lesson checks on a real model (core/lessons/lesson.hpp): each one fails, with the numbers in
// words, when its claim is false, and a lesson that asks them of no model is refused.
#include "core/lessons/lesson.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

namespace attnviz {
namespace {

// A one-step lesson on `model` (gpt2-kjv-tiny) with `checks`, its failures on the engine's
// numbers.
std::vector<std::string> failures_of(const std::string& checks, const std::string& text,
                                     const std::string& model = "gpt2-kjv-tiny") {
  const std::string json = R"({"format": "attnviz-lesson", "title": "t",
    "scenario": {"version": 2, "model": {"name": ")" +
                           model + R"("}, "target": ")" + text + R"("},
    "steps": [{"title": "s", "checks": [)" +
                           checks + "]}]}";
  Result<Lesson> lesson = parse_lesson(json, "test");
  INFO(lesson.status().message());
  REQUIRE(lesson.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(lesson->steps[0].scenario));
  return failed_checks(lesson->steps[0], pipeline);
}

const char* kMadeUp = "xqz plov wrim. xqz plo";

}  // namespace

TEST_CASE("true claims about a model hold") {
  CHECK(failures_of(R"({"check": "role", "layer": 1, "head": 3, "role": "induction"},
                       {"check": "top_token", "token": "v"},
                       {"check": "ablation_changes_top", "layer": 1, "head": 3},
                       {"check": "ablation_keeps_top", "layer": 1, "head": 0},
                       {"check": "kv_shared", "layer": 0, "head": 1, "head_b": 1},
                       {"check": "kv_separate", "layer": 0, "head": 1, "head_b": 2},
                       {"check": "argmax", "layer": 1, "head": 3, "query": "#15", "key": "#5"})",
                    kMadeUp)
            .empty());
}

TEST_CASE("each model check fails when its claim is false, saying why") {
  const auto one = [](const std::string& check) {
    const std::vector<std::string> failures = failures_of(check, kMadeUp);
    REQUIRE(failures.size() == 1);
    return failures[0];
  };
  CHECK(one(R"({"check": "role", "layer": 1, "head": 3, "role": "previous-token"})")
            .find("layer 2, head 4 is a induction head, not a previous-token one") !=
        std::string::npos);
  CHECK(one(R"({"check": "top_token", "token": "w"})").find("most likely next token is \"v\"") !=
        std::string::npos);
  CHECK(one(R"({"check": "top_token", "token": "v", "value": 0.9})").find("not more than 0.90") !=
        std::string::npos);
  CHECK(one(R"({"check": "next_rank", "token": "v", "value": 3})")
            .find("\"v\" is the model's guess number 1 (0.27), not number 3") != std::string::npos);
  CHECK(one(R"({"check": "next_rank", "token": "t", "value": 1})")
            .find("\"t\" is the model's guess number 2") != std::string::npos);
  CHECK(one(R"({"check": "ablation_keeps_top", "layer": 1, "head": 3})")
            .find("changes the prediction from \"v\" to \"t\"") != std::string::npos);
  CHECK(one(R"({"check": "ablation_changes_top", "layer": 1, "head": 0})")
            .find("does not change the prediction: it stays \"v\"") != std::string::npos);
  CHECK(one(R"({"check": "kv_separate", "layer": 0, "head": 1, "head_b": 1})")
            .find("read the same keys and values") != std::string::npos);
  CHECK(one(R"({"check": "lens_top", "layer": 1, "token": "w"})").find("predicts \"v\"") !=
        std::string::npos);
  CHECK(one(R"({"check": "argmax", "layer": 7, "head": 0, "query": "#1", "key": "#0"})")
            .find("there is no layer 8") != std::string::npos);
  CHECK(one(R"({"check": "argmax", "layer": 1, "head": 3, "query": "#15", "key": "#4"})")
            .find("attends most to") != std::string::npos);
}

TEST_CASE("fill: an encoder's likeliest token at its [MASK], and a decoder's checks refused") {
  const std::string text = "In the beginning God created the heavens and the [MASK].";
  CHECK(failures_of(R"({"check": "fill", "token": "earth"},
                       {"check": "fill", "token": "earth", "query": "#10"})",
                    text, "bert-web")
            .empty());
  const auto one = [&](const std::string& check, const std::string& model,
                       const std::string& on = "") {
    const std::vector<std::string> failures = failures_of(check, on.empty() ? text : on, model);
    REQUIRE(failures.size() == 1);
    return failures[0];
  };
  CHECK(one(R"({"check": "fill", "token": "water"})", "bert-web")
            .find("the model's likeliest token is \"earth\"") != std::string::npos);
  CHECK(one(R"({"check": "fill", "token": "earth", "value": 0.99})", "bert-web")
            .find("not more than 0.99") != std::string::npos);
  CHECK(one(R"({"check": "fill", "token": "earth"})", "bert-web", "no mask here")
            .find("the text has no [MASK]") != std::string::npos);
  CHECK(one(R"({"check": "top_token", "token": "earth"})", "bert-web")
            .find("is an encoder: it predicts no next token") != std::string::npos);
  CHECK(one(R"({"check": "fill", "token": "v"})", "gpt2-kjv-tiny", kMadeUp).find("fills no mask") !=
        std::string::npos);
}

TEST_CASE("a lesson step's numbers in its text read the step's layer of the model") {
  Result<Lesson> lesson = parse_lesson(R"({"format": "attnviz-lesson", "title": "t",
    "scenario": {"version": 2, "model": {"name": "gpt2-kjv-tiny"}, "target": "xqz plov wrim."},
    "steps": [{"title": "s", "layer": 0, "text": "{alpha:3:#4:#3}"},
              {"title": "s", "layer": 1, "text": "{alpha:3:#4:#3}"}]})",
                                       "test");
  REQUIRE(lesson.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(lesson->steps[0].scenario));
  for (int layer = 0; layer < 2; ++layer) {
    const LessonStep& step = lesson->steps[static_cast<std::size_t>(layer)];
    REQUIRE(step.layer == layer);
    char expected[32];
    std::snprintf(expected, sizeof expected, "%.2f",
                  static_cast<double>(pipeline.layer(layer).heads[3].weights(4, 3)));
    CHECK(expand_lesson_text(step.text, pipeline, *step.layer) == expected);
  }
  CHECK(pipeline.layer(0).heads[3].weights(4, 3) != pipeline.layer(1).heads[3].weights(4, 3));
}

TEST_CASE("a model check in a lesson without a model, or an unknown role, is refused") {
  Result<Lesson> no_model = parse_lesson(R"({"format": "attnviz-lesson", "title": "t",
    "scenario": {"target": "a b c"},
    "steps": [{"title": "s", "checks": [{"check": "top_token", "token": "b"}]}]})",
                                         "test");
  REQUIRE_FALSE(no_model.ok());
  CHECK(no_model.status().message().find("the scenario names none") != std::string::npos);
  Result<Lesson> bad_role = parse_lesson(R"({"format": "attnviz-lesson", "title": "t",
    "scenario": {"version": 2, "model": {"name": "gpt2-kjv-tiny"}, "target": "a"},
    "steps": [{"title": "s", "checks": [{"check": "role", "head": 0, "role": "copier"}]}]})",
                                         "test");
  REQUIRE_FALSE(bad_role.ok());
  CHECK(bad_role.status().message().find("unknown role \"copier\"") != std::string::npos);
}

}  // namespace attnviz
