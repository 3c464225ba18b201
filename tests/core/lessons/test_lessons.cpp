// Lessons: every built-in lesson loads, every step computes, and every claim a step makes holds
// on the engine's numbers. Then the checks themselves, each shown able to fail.
#include "core/lessons/lesson.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <functional>
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
  CHECK_FALSE(steps[0].scenario.one_layer().config.causal);
  CHECK(steps[1].scenario.one_layer().config.causal);
  CHECK(steps[2].scenario.one_layer().config.causal);  // kept from step two
  CHECK(steps[2].scenario.target == "x y");
  CHECK(steps[2].scenario.one_layer().config.d_model == 4);
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
  CHECK(failures[0].find("\"i\" attends as much to \"eat\" (0.44) as to \"like\" (0.44)") !=
        std::string::npos);
}

TEST_CASE("a claim that fails says so in words, with the numbers the views print") {
  // In the built-in scenario "apple" gives eat 0.74 and like 0.12 in head 0.
  const std::vector<std::string> argmax =
      failures_of(R"("checks": [{"check": "argmax", "head": 0, "query": "apple", "key": "like"}])");
  REQUIRE(argmax.size() == 1);
  CHECK(argmax[0].find("\"apple\" attends most to \"eat\" (0.74), not to \"like\" (0.12)") !=
        std::string::npos);
  const std::vector<std::string> above = failures_of(
      R"("checks": [{"check": "weight_above", "query": "apple", "key": "eat", "value": 0.9}])");
  REQUIRE(above.size() == 1);
  CHECK(above[0].find("\"apple\" gives \"eat\" 0.74, not more than 0.90") != std::string::npos);
  const std::vector<std::string> output = failures_of(
      R"("checks": [{"check": "output_equals_value", "head": 1, "query": "eat", "key": "apple"}])");
  REQUIRE(output.size() == 1);
  CHECK(output[0].find("the output of \"eat\" is a blend of several values, not exactly the value "
                       "of \"apple\"") != std::string::npos);
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

// -----------------------------------------------------------------------------
// What the student changed
// -----------------------------------------------------------------------------
namespace {

Lesson builtin_named(std::string_view name) {
  const std::optional<BuiltinLesson> builtin = find_builtin_lesson(name);
  REQUIRE(builtin);
  return load_builtin(*builtin);
}

// The step's scenario with `change` made, computed, as the student's edit leaves it.
StudentChange change_of(const LessonStep& step, const std::function<void(Scenario&)>& change) {
  Scenario now = step.scenario;
  change(now);
  Pipeline pipeline;
  REQUIRE(pipeline.run(now));
  return student_change(step, now, pipeline);
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Lesson 1: "al" lies between alice [1 0 0 0] and alan [0 1 0 0]; its first number below 0.50
// moves it nearer alan.
void al_nearer_alan(Scenario& s) {
  s.edit_one_layer()->embeddings.at("al")[0] = 0.45f;
}

}  // namespace

TEST_CASE("the change a step asks for is not reported as breaking its text") {
  // Lesson 1, step 6: "drag the first number of the row "al" (0.60) below 0.50: the hard answer
  // jumps from one income to the other".
  const Lesson lesson = builtin_named("retrieval");
  const LessonStep& step = lesson.steps[5];
  REQUIRE(step.scenario.one_layer().config.hard);
  const StudentChange change = change_of(step, al_nearer_alan);
  CHECK(change.parts == std::vector<std::string>{"embeddings"});
  CHECK(change.invited);
  CHECK_FALSE(change.failures.empty());  // the claims as the step began no longer hold ...
  INFO(change.message);                  // ... and the note says what the change did, plainly
  CHECK(has(change.message, "You changed X (the embeddings), as the step suggests."));
  CHECK(has(change.message,
            "the output of \"al\" is the value of \"alan\" (38.00), not that of \"alice\" "
            "(52.00)"));
  CHECK_FALSE(has(change.message, "describes the step as it began"));
  CHECK_FALSE(has(change.message, "differs"));
  CHECK_FALSE(has(change.message, "{"));  // no check as written (JSON)
}

TEST_CASE(
    "the same change on a step that does not ask for it says the text is of the step before") {
  // Lesson 1, step 5 (soft attention): "al gives 0.59 to alice and 0.36 to alan".
  const Lesson lesson = builtin_named("retrieval");
  const LessonStep& step = lesson.steps[4];
  REQUIRE(step.invites.empty());
  const StudentChange change = change_of(step, al_nearer_alan);
  CHECK_FALSE(change.invited);
  INFO(change.message);
  CHECK(has(change.message,
            "You changed X (the embeddings): the text above describes the step as it began."));
  CHECK(has(change.message, "Now \"al\" attends most to \"alan\""));
}

TEST_CASE("a change that keeps every claim of the text says that the text still holds") {
  const Lesson lesson = builtin_named("retrieval");
  const StudentChange change = change_of(lesson.steps[5], [](Scenario& s) {
    s.edit_one_layer()->embeddings.at("al")[0] = 0.55f;  // still nearer alice
  });
  CHECK(change.parts == std::vector<std::string>{"embeddings"});
  CHECK(change.failures.empty());
  CHECK(change.message ==
        "You changed X (the embeddings), as the step suggests. What the text above says still "
        "holds.");
  CHECK(change_of(lesson.steps[5], [](Scenario&) {}).message.empty());  // no change at all
}

TEST_CASE("knocking out the head a step asks for: the note names the head and the claim holds") {
  // Lesson 12, step 4: "Knock it out ... knocking out layer 2, head 1 instead leaves the guess
  // alone". The claims are about each head's effect on the model as the student has it: a head
  // already knocked out still changes the prediction when it is knocked out.
  const Lesson lesson = builtin_named("induction-heads");
  const LessonStep& step = lesson.steps[3];
  const StudentChange knocked = change_of(step, [](Scenario& s) {
    HeadIntervention out;
    out.output_scale = 0.0f;
    s.edit_model()->set_intervention_in(ModelPart::Main, 1, 3, out);
  });
  INFO(knocked.message);
  CHECK(knocked.invited);
  CHECK(knocked.failures.empty());
  CHECK(knocked.message ==
        "You changed the model (layer 2, head 4 knocked out), as the step suggests. What the text "
        "above says still holds.");
  // Layer 2, head 1 knocked out as well: the claim "it leaves the guess alone" is still of that
  // head; restoring a head the step had changed is told as such.
  const StudentChange restored = change_of(lesson.steps[4], [](Scenario& s) {
    s.edit_model()->set_intervention_in(ModelPart::Main, 1, 3, HeadIntervention{});
  });
  INFO(restored.message);
  CHECK(has(restored.message, "You changed the model (layer 2, head 4 restored)"));
  CHECK(has(restored.message, "the model's most likely next token is \"v\""));
}

TEST_CASE("a change the step invites and one it does not: the note says the text is of before") {
  // Lesson 6, step 5 invites toggling the causal mask, not editing the weights.
  const Lesson lesson = builtin_named("causal-mask");
  const LessonStep& step = lesson.steps[4];
  const StudentChange invited =
      change_of(step, [](Scenario& s) { s.edit_one_layer()->config.causal = true; });
  CHECK(invited.invited);
  CHECK(has(invited.message, "You changed the causal mask, as the step suggests."));
  const StudentChange both = change_of(step, [](Scenario& s) {
    s.edit_one_layer()->config.causal = true;
    s.edit_one_layer()->parameters.heads[0].W_V(0, 0) += 1.0f;
  });
  CHECK_FALSE(both.invited);
  INFO(both.message);
  CHECK(has(both.message,
            "You changed the causal mask and the weights (W_V): the text above "
            "describes the step as it began."));
}

TEST_CASE("changed parts: reshaped weights and embeddings follow the setting that reshaped them") {
  const Lesson lesson = builtin_named("retrieval");
  const Scenario& before = lesson.steps[0].scenario;
  Scenario wider = before;
  AttentionConfig config = wider.edit_one_layer()->config;
  config.d_model = 5;
  config.d_k = 6;
  apply_config(*wider.edit_one_layer(), config);
  CHECK(changed_parts(before, wider) == std::vector<std::string>{"d_model", "d_k"});
  Scenario edited = before;
  edited.target = "al";
  edited.edit_one_layer()->parameters.W_O(0, 1) = 3.0f;
  edited.edit_one_layer()->config.temperature = 2.0f;
  CHECK(changed_parts(before, edited) ==
        std::vector<std::string>{"target", "temperature", "weights"});
  CHECK(changed_parts(before, before).empty());
}

TEST_CASE("after the student types another sentence, a claim about its words says they are gone") {
  // Lesson 10, step 3 reorders the 4 words of "mouse chased a dog"; the student keeps 2.
  const Lesson lesson = builtin_named("order");
  const LessonStep& step = lesson.steps[2];
  const StudentChange change = change_of(step, [](Scenario& s) { s.target = "mouse chased"; });
  REQUIRE_FALSE(change.failures.empty());
  bool reorder_gone = false;
  for (const CheckFailure& failure : change.failures)
    reorder_gone |= failure.words_gone && has(failure.reason, "no longer has the 4 words");
  CHECK(reorder_gone);
  CHECK(has(change.message, "the sentence has no \"dog\""));
}

TEST_CASE("a self-attention claim after a switch to cross-attention says the sentences differ") {
  // Lesson 7, step 4 invites Self / Cross; its claim that every word attends most to itself is
  // about self-attention. The source, shorter than the target, has no column for the last words.
  const Lesson lesson = builtin_named("cross-attention");
  const LessonStep& step = lesson.steps[3];
  const StudentChange change = change_of(step, [](Scenario& s) {
    s.edit_one_layer()->mode = Mode::Cross;
    s.edit_one_layer()->source = "le chat";
  });
  bool told = false;
  for (const CheckFailure& failure : change.failures)
    told |= has(failure.reason, "two different sentences: no word meets itself");
  CHECK(told);
  const StudentChange toggled =
      change_of(step, [](Scenario& s) { s.edit_one_layer()->mode = Mode::Cross; });
  CHECK(toggled.invited);
  CHECK(has(toggled.message,
            "You changed Self / Cross, as the step suggests. Now the queries and "
            "the keys come from two different sentences"));
}

TEST_CASE("a step that invites the sentence says nothing of the words typed away") {
  // Lesson 4, step 6: "Type your own sentence with a pronoun."
  const Lesson lesson = builtin_named("why-project");
  const LessonStep& step = lesson.steps[5];
  REQUIRE(std::find(step.invites.begin(), step.invites.end(), "target") != step.invites.end());
  const StudentChange change =
      change_of(step, [](Scenario& s) { s.target = "tom said he was hungry"; });
  CHECK(change.invited);
  CHECK_FALSE(change.failures.empty());
  CHECK(change.message.empty());
}

TEST_CASE("a step invites only parts of a scenario") {
  CHECK(parse_lesson(lesson_with_step(R"("invites": ["hard", "embeddings"])"), "t").ok());
  const std::string error =
      parse_lesson(lesson_with_step(R"("invites": ["hard", "colour"])"), "t").error();
  CHECK(has(error, "steps[0].invites[1]"));
  CHECK(has(error, "unknown part \"colour\""));
  CHECK(
      has(parse_lesson(lesson_with_step(R"("invites": "hard")"), "t").error(), "steps[0].invites"));
}

TEST_CASE("every built-in step whose text asks the student to change something invites it") {
  // The verbs of the lessons' instructions that change the scenario (hovering and clicking a head
  // do not).
  const char* verbs[] = {"drag ", "type ", "toggle ", "untick ", "tick ", "raise ", "lower "};
  for (const BuiltinLesson& builtin : builtin_lessons()) {
    const Lesson lesson = load_builtin(builtin);
    for (std::size_t s = 0; s < lesson.steps.size(); ++s) {
      std::string text = lesson.steps[s].text;
      std::transform(text.begin(), text.end(), text.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      for (const char* verb : verbs) {
        const bool asked_but_not_invited = has(text, verb) && lesson.steps[s].invites.empty();
        CHECK_MESSAGE(!asked_but_not_invited, builtin.id << " step " << s + 1 << " asks to \""
                                                         << verb << "\" but invites nothing");
      }
    }
  }
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
