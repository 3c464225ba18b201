// The app's state logic without a window: lesson steps, selection, highlights, options.
#include "app/session/app_state.hpp"
#include "app/session/options.hpp"
#include "tests/support/builtin_state.hpp"
#include "tests/support/replace_scenario.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

using testing::builtin_lesson;

bool shown(const AppState& state, view::PanelId id) {
  return state.ui.visible[static_cast<std::size_t>(id)];
}

}  // namespace

TEST_CASE("a lesson step shows its panels and the lesson band") {
  AppState state;
  state.start_lesson(builtin_lesson("self-attention"), 0);  // panels: input, heatmaps, arrows
  CHECK(shown(state, view::PanelId::Lesson));
  CHECK(shown(state, view::PanelId::Centre));
  CHECK(shown(state, view::PanelId::Arrows));
  CHECK_FALSE(shown(state, view::PanelId::Weights));
  CHECK_FALSE(shown(state, view::PanelId::Output));
}

TEST_CASE("a lesson step selects its head and query and pins its key") {
  AppState state;
  state.start_lesson(builtin_lesson("self-attention"), 2);  // head 0, query apple, key eat
  CHECK(state.selection.head == 0);
  CHECK(state.pipeline().target().tokens[static_cast<std::size_t>(state.selection.query)].text ==
        "apple");
  CHECK(state.highlights_key(3));  // "eat"
  CHECK_FALSE(state.highlights_key(1));
}

TEST_CASE("a predict step waits for the guess and the guess reveals") {
  AppState state;
  state.start_lesson(builtin_lesson("self-attention"), 1);
  CHECK(state.lesson.awaiting_prediction());
  state.lesson.prediction = 3;
  CHECK_FALSE(state.lesson.awaiting_prediction());
  state.go_to_lesson_step(2);
  CHECK_FALSE(state.lesson.prediction);  // a new step asks afresh
}

TEST_CASE("moving past the last step stays on it") {
  AppState state;
  const Lesson lesson = builtin_lesson("self-attention");
  const int last = static_cast<int>(lesson.steps.size()) - 1;
  state.start_lesson(lesson, 0);
  state.go_to_lesson_step(last + 5);
  CHECK(state.lesson.step == last);
  state.go_to_lesson_step(-2);
  CHECK(state.lesson.step == 0);
}

TEST_CASE("leaving a lesson keeps the scenario and shows every panel") {
  AppState state;
  state.start_lesson(builtin_lesson("self-attention"), 4);  // "jane visits africa"
  state.leave_lesson();
  CHECK_FALSE(state.lesson.active());
  CHECK(state.document.scenario().target == "jane visits africa");
  CHECK(shown(state, view::PanelId::Weights));
  CHECK_FALSE(shown(state, view::PanelId::Lesson));
}

TEST_CASE("a lesson started over an opened file leaves that file alone") {
  AppState state;
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load, "/home/teacher/class3.json", {});
  state.start_lesson(builtin_lesson("self-attention"), 0);
  CHECK(state.document.path().empty());  // Save asks where to save the lesson's scenario
  state.go_to_lesson_step(1);
  state.leave_lesson();
  CHECK(state.document.path().empty());
}

// The panel host starts every panel at its top left when the generation moves (panel_host.cpp): a
// scroll position kept from another document hid the sentence or the Weights' row labels.
TEST_CASE("opening a document or a lesson step starts the views afresh, an edit does not") {
  AppState state;
  testing::load_builtin_scenario(state);
  std::uint64_t generation = state.view_generation;
  const auto moved = [&] {
    const bool changed = state.view_generation != generation;
    generation = state.view_generation;
    return changed;
  };
  state.apply(edits::set_target("the cat sat"));
  CHECK_FALSE(moved());
  testing::load_builtin_scenario(state, "/home/teacher/week3.json");  // File > Open, New
  CHECK(moved());
  state.start_lesson(builtin_lesson("self-attention"), 0);
  CHECK(moved());
  state.go_to_lesson_step(1);
  CHECK(moved());
  state.selection.query = 2;
  CHECK_FALSE(moved());
  state.leave_lesson();  // the panels change places
  CHECK(moved());
}

TEST_CASE("an edit recomputes once and a failed edit keeps the last result") {
  AppState state;
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load, "", {});
  state.recompute_if_needed();
  const std::uint64_t version = state.result().version;
  state.recompute_if_needed();  // nothing changed: no recompute
  CHECK(state.result().version == version);
  state.document.set_target("");
  state.recompute_if_needed();
  CHECK_FALSE(state.computed.error.empty());
  CHECK(state.result().version == version);
  CHECK(state.computed.has_result);
}

TEST_CASE("the selection is clamped when the sentence gets shorter") {
  AppState state;
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load, "", {});
  state.recompute_if_needed();
  state.selection.query = 4;
  state.document.set_target("short one");
  state.recompute_if_needed();
  CHECK(state.selection.query == 1);
}

TEST_CASE("options parse panels and views and lessons") {
  Options options;
  CHECK(parse_options(
            {"--panels", "heatmaps,arrows", "--view", "pipeline", "--lesson", "3", "--step", "2"},
            options)
            .is_ok());
  CHECK((*options.panels)[static_cast<std::size_t>(view::PanelId::Arrows)]);
  CHECK_FALSE((*options.panels)[static_cast<std::size_t>(view::PanelId::Input)]);
  CHECK(options.view == CenterView::Pipeline);
  CHECK(options.lesson == "3");
  CHECK(options.step == 2);
}

TEST_CASE("--threads sets the engine's threads and takes 1 to 16") {
  Options options;
  CHECK_FALSE(options.threads.has_value());  // the default: default_engine_threads()
  CHECK(parse_options({"--threads", "2"}, options).is_ok());
  CHECK(options.threads == 2);
  for (const char* bad : {"0", "17", "two"}) {
    Options other;
    CHECK(parse_options({"--threads", bad}, other).message().find("--threads") !=
          std::string::npos);
  }
  CHECK(parse_options({"--threads"}, options).message().find("--threads") != std::string::npos);
  const int threads = default_engine_threads();
  CHECK((threads == 1 || threads == 2));
}

TEST_CASE("bad options are one-line errors") {
  Options options;
  CHECK(parse_options({"--size", "100x100"}, options).message().find("--size") !=
        std::string::npos);
  CHECK(parse_options({"--panels", "sidebar"}, options).message().find("sidebar") !=
        std::string::npos);
  CHECK(parse_options({"--view", "3d"}, options).message().find("--view") != std::string::npos);
  CHECK(parse_options({"--screenshot-steps", "/tmp/x"}, options).message().find("--lesson") !=
        std::string::npos);
  CHECK(parse_options({"a.json", "b.json"}, options).message().find("unexpected") !=
        std::string::npos);
}

TEST_CASE("signed values use the diverging map of the theme") {
  UiSettings ui;
  CHECK(ui.diverging() == view::ColormapId::Diverging);
  ui.theme = Theme::Dark;
  CHECK(ui.diverging() == view::ColormapId::DivergingDark);
}

TEST_CASE("the heatmap scale tops at 1 or at the head's largest finite weight") {
  UiSettings ui;
  Matrix weights(2, 2);
  weights << 0.1f, 0.3f, 0.2f, 0.25f;
  CHECK(ui.heatmap_top(weights) == 1.0f);
  ui.heatmap_contrast = true;
  CHECK(ui.heatmap_top(weights) == 0.3f);
  weights(0, 0) = std::numeric_limits<float>::quiet_NaN();
  CHECK(ui.heatmap_top(weights) == 0.3f);
  weights.setZero();  // every key masked: the usual scale, not a division by 0
  CHECK(ui.heatmap_top(weights) == 1.0f);
}

TEST_CASE(
    "in self-attention a hovered token marks its query and its key, a heatmap row its query only") {
  AppState state;
  testing::load_builtin_scenario(state);
  state.recompute_if_needed();
  state.frame.hovered = {Side::Query, 2};
  CHECK(state.highlights_query(2));
  CHECK(state.highlights_key(2));
  state.frame.hovered = {Side::Query, 2, /*this_side_only=*/true};
  CHECK(state.highlights_query(2));
  CHECK_FALSE(state.highlights_key(2));
}

TEST_CASE("a lesson step's claims are checked again once the student changes the scenario") {
  AppState state;
  state.start_lesson(builtin_lesson("causal-mask"), 4);  // "Unmasked, loves gives ... to bread"
  CHECK(state.lesson_change().message.empty());          // as the step began
  testing::replace_scenario(state.document, [](Scenario& s) {
    s.edit_one_layer()->parameters.heads[0].W_K(0, 0) += 5.0f;  // not what the step asks
  });
  const StudentChange& change = state.lesson_change();
  INFO(change.message);
  CHECK_FALSE(change.invited);
  CHECK(change.message.find("describes the step as it began") != std::string::npos);
  state.go_to_lesson_step(4);  // back to the step as it began
  CHECK(state.lesson_change().message.empty());
}

TEST_CASE("the change a lesson step asks for is told as what it did, not as a broken text") {
  AppState state;
  state.start_lesson(builtin_lesson("causal-mask"), 4);
  testing::replace_scenario(state.document, [](Scenario& s) {
    s.edit_one_layer()->config.causal = true;
  });  // "Toggle the causal mask in the Input panel to compare."
  const StudentChange& toggled = state.lesson_change();
  INFO(toggled.message);
  CHECK(toggled.invited);
  CHECK(toggled.message.find("as the step suggests") != std::string::npos);
  CHECK(toggled.message.find("no longer holds") == std::string::npos);

  // Lesson 1, step 6: drag the first number of the row "al" of X below 0.50, as the Weights panel
  // does.
  state.start_lesson(builtin_lesson("retrieval"), 5);
  const Token& al = state.pipeline().target().tokens[0];
  REQUIRE(al.text == "al");
  const std::vector<float> row = state.document.scenario().one_layer().embeddings.at("al");
  state.document.set_embedding_value(al, 0, 0.45f, row.data());
  const StudentChange& dragged = state.lesson_change();
  INFO(dragged.message);
  CHECK(dragged.invited);
  CHECK(dragged.message.find("\"al\" is the value of \"alan\" (38.00)") != std::string::npos);
}

}  // namespace attnviz::app
