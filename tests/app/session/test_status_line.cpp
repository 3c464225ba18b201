// The window's title and the status bar's line (app/session/status_line.hpp).
#include "app/session/status_line.hpp"
#include "tests/support/builtin_state.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

// A state as the app has it after opening `scenario` from `path` and computing it.
AppState opened(Scenario scenario, std::string path) {
  AppState state;
  state.load(std::move(scenario), std::move(path), {});
  state.recompute_if_needed();
  REQUIRE(state.computed.has_result);
  return state;
}

Scenario sentence(std::string target) {
  AttentionConfig config;  // d_model 8, 2 heads of 4, scaled dot
  return make_scenario(std::move(target), config, 7);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the title names the file opened") {
  const AppState state = opened(sentence("the cat sat"), "/home/teacher/lessons/lecture.json");
  CHECK(window_title(state) == "lecture.json \xe2\x80\x94 AttnViz");
}

TEST_CASE("the title marks unsaved changes") {
  AppState state = opened(sentence("the cat sat"), "/tmp/lecture.json");
  state.document.set_target("the cat sat down");  // an edit
  CHECK(window_title(state) == "\xe2\x80\xa2 lecture.json \xe2\x80\x94 AttnViz");
}

TEST_CASE("a scenario in no file is named by its title, an untitled one by its sentence") {
  Scenario titled = sentence("the cat sat");
  titled.title = "Pronouns";
  CHECK(window_title(opened(titled, "")) == "Pronouns \xe2\x80\x94 AttnViz");
  CHECK(window_title(opened(sentence("the cat sat"), "")) == "The cat sat \xe2\x80\x94 AttnViz");
  AppState empty;
  empty.document.load(sentence(""), "");
  CHECK(window_title(empty) == "Untitled \xe2\x80\x94 AttnViz");
}

TEST_CASE("an untitled scenario's window title follows the sentence typed, a named one's stays") {
  AppState state;
  testing::load_builtin_scenario(state);
  CHECK(window_title(state) == "I like to eat apple \xe2\x80\x94 AttnViz");
  state.apply(edits::set_target("the animal was tired"));
  CHECK(window_title(state) == "\xe2\x80\xa2 The animal was tired \xe2\x80\x94 AttnViz");
  state.apply(edits::set_title("Pronouns"));
  state.apply(edits::set_target("the cat sat"));
  CHECK(window_title(state) == "\xe2\x80\xa2 Pronouns \xe2\x80\x94 AttnViz");
}

TEST_CASE("Save As proposes a name from the sentence as it is now, the title, or the file's") {
  AppState state;
  testing::load_builtin_scenario(state);
  CHECK(save_as_file_name(state) == "i-like-to-eat-apple.json");
  state.apply(edits::set_target("the animal was tired"));
  CHECK(save_as_file_name(state) == "the-animal-was-tired.json");
  state.apply(edits::set_target(""));
  CHECK(save_as_file_name(state) == "scenario.json");
  state.apply(edits::set_title("Week 3: pronouns"));
  state.apply(edits::set_target("the cat sat"));
  CHECK(save_as_file_name(state) == "week-3-pronouns.json");
  state.load(state.document.scenario(), "/home/teacher/lessons/lecture.json", {});
  CHECK(save_as_file_name(state) == "lecture.json");
}

TEST_CASE("during a lesson the title is the lesson's") {
  AppState state;
  Lesson lesson = testing::builtin_lesson("self-attention");
  const std::string title = lesson.title;
  state.start_lesson(std::move(lesson), 0);
  CHECK(contains(window_title(state), "Lesson: " + title));
}

TEST_CASE("a lesson's scenario keeps the lesson's name after the lesson") {
  AppState state;
  Lesson lesson = testing::builtin_lesson("self-attention");
  const std::string title = lesson.title;
  state.start_lesson(std::move(lesson), 1);
  state.leave_lesson();
  CHECK(window_title(state) == title + ", step 2 \xe2\x80\x94 AttnViz");
}

TEST_CASE("the summary gives the shape of self-attention") {
  const AppState state = opened(sentence("the cat sat on the mat"), "");
  CHECK(shape_summary(state) ==
        "self-attention \xc2\xb7 6 tokens \xc2\xb7 d_model 8 \xc2\xb7 2 heads of d_k 4, d_v 4"
        " \xc2\xb7 scaled dot-product");
}

TEST_CASE("the summary counts queries and keys in cross-attention") {
  Scenario scenario = sentence("the cat sat");
  scenario.edit_one_layer()->mode = Mode::Cross;
  scenario.edit_one_layer()->source = "le chat";
  const std::string summary = shape_summary(opened(scenario, ""));
  CHECK(summary.rfind("cross-attention \xc2\xb7 3 queries \xc3\x97 2 keys \xc2\xb7 ", 0) == 0);
}

TEST_CASE("the summary says one token and one head in the singular") {
  AttentionConfig config;
  config.heads = 1;
  config.d_k = config.d_v = 8;
  const std::string summary = shape_summary(opened(make_scenario("hello", config, 7), ""));
  CHECK(contains(summary, "1 token \xc2\xb7"));
  CHECK(contains(summary, "1 head of d_k 8"));
}

TEST_CASE("the summary names the settings that change the weights") {
  AttentionConfig config;
  config.compatibility = Compatibility::Additive;
  config.temperature = 0.5f;
  config.causal = true;
  config.hard = true;
  Scenario scenario = make_scenario("the cat sat", config, 7);
  scenario.edit_one_layer()->positional = Positional::Sinusoidal;
  scenario.edit_one_layer()->mask = MaskMatrix::Ones(3, 3);
  const std::string summary = shape_summary(opened(scenario, ""));
  CHECK(contains(summary, "additive (Bahdanau), d_att 4"));
  CHECK(contains(summary, "temperature 0.5 \xc2\xb7"));
  CHECK(contains(summary, "hard (argmax)"));
  CHECK(contains(summary, "causal"));
  CHECK(contains(summary, "sinusoidal positions"));
  CHECK(contains(summary, "custom mask"));
}

TEST_CASE("before any result the summary has no token count") {
  AppState state;
  state.document.replace(sentence(""));
  CHECK_FALSE(state.computed.has_result);
  CHECK_FALSE(contains(shape_summary(state), "token"));
}

TEST_CASE("a file name is proposed from the title") {
  CHECK(file_name_for("Week 3: attention") == "week-3-attention.json");
  CHECK(file_name_for("  I like to eat apple!  ") == "i-like-to-eat-apple.json");
  CHECK(file_name_for("Caf\xc3\xa9 / na\xc3\xafve") ==
        "caf\xc3\xa9-na\xc3\xafve.json");  // letters of other scripts kept, no '/'
  CHECK(file_name_for("") == "scenario.json");
  CHECK(file_name_for("?!") == "scenario.json");
  const std::string long_title(100, 'a');
  CHECK(file_name_for(long_title) == std::string(60, 'a') + ".json");
}

}  // namespace attnviz::app
