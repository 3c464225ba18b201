// Undo and redo: steps are whole gestures, and undo/redo return exact earlier states.
#include "app/session/history.hpp"
#include "tests/support/builtin_state.hpp"
#include "tests/support/replace_scenario.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

struct Fixture {
  AppState state;
  History history;
  double now = 0;
  Fixture() {
    testing::load_builtin_scenario(state);
    frame(false);
  }
  // One frame: the panels may have edited; then the history observes.
  void frame(bool busy) {
    now += 1.0 / 60.0;
    history.observe(state, busy, now);
  }
  void edit_weight(float value) { state.document.set_weight(ParameterName::W_Q, 0, 0, 0, value); }
  std::string json() const { return scenario_to_json(state.document.scenario()); }
};

}  // namespace

TEST_CASE("a drag over many frames is one undo step") {
  Fixture f;
  const std::string before = f.json();
  for (int i = 1; i <= 30; ++i) {  // the mouse is held: every frame changes the weight
    f.edit_weight(0.1f * static_cast<float>(i));
    f.frame(true);
  }
  f.frame(false);  // released
  CHECK(f.history.steps() == 2);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.json() == before);
}

// The sentence field has its own Ctrl+Z (app/session/text_undo.hpp): a word typed and taken back
// there leaves the scenario as it was before the word. That is the word's step undone: Ctrl+Z
// outside the field then goes further back instead of bringing the word again.
TEST_CASE("an edit back to the state before the last step undoes that step") {
  Fixture f;
  testing::replace_scenario(f.state.document, [](Scenario& s) {
    s.edit_one_layer()->config.causal = true;
  });  // an earlier step
  f.frame(false);
  const std::string before_word = f.json();
  const std::string sentence = f.state.document.scenario().target;
  f.state.document.set_target(sentence + " today");  // typed
  f.frame(false);
  const std::string with_word = f.json();
  f.state.document.set_target(sentence);  // taken back in the field
  f.frame(false);
  CHECK(f.json() == before_word);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK_FALSE(f.state.document.scenario()
                  .one_layer()
                  .config.causal);  // the step before: not the word again
  REQUIRE(f.history.redo(f.state));
  CHECK(f.json() == before_word);
  REQUIRE(f.history.redo(f.state));
  CHECK(f.json() == with_word);  // the word's step can be redone
}

TEST_CASE("undo and redo return exact earlier states") {
  Fixture f;
  std::vector<std::string> states = {f.json()};
  for (float value : {1.5f, -2.25f, 7.0f}) {
    f.edit_weight(value);
    f.frame(false);
    states.push_back(f.json());
  }
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.json() == states[2]);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.json() == states[1]);
  REQUIRE(f.history.redo(f.state));
  CHECK(f.json() == states[2]);
  REQUIRE(f.history.undo(f.state, f.now));
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.json() == states[0]);
  CHECK_FALSE(f.history.undo(f.state, f.now));
  CHECK(f.json() == states[0]);
}

TEST_CASE("an edit after an undo drops the steps that were undone") {
  Fixture f;
  f.edit_weight(1.0f);
  f.frame(false);
  f.edit_weight(2.0f);
  f.frame(false);
  REQUIRE(f.history.undo(f.state, f.now));
  f.edit_weight(3.0f);
  f.frame(false);
  CHECK_FALSE(f.history.can_redo());
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.state.document.scenario().one_layer().parameters.heads[0].W_Q(0, 0) == 1.0f);
}

TEST_CASE("typing is one step until a pause ends it") {
  Fixture f;
  const std::string original = f.state.document.scenario().target;
  for (const char* text :
       {"i like to eat apple p", "i like to eat apple pi", "i like to eat apple pie"}) {
    f.state.document.set_target(text);
    f.frame(true);  // the text field stays active while typing
  }
  f.now += History::kTypingPause + 0.1;  // a pause, still in the field
  f.frame(true);
  f.state.document.set_target("i like to eat apple pies");
  f.frame(true);
  f.frame(false);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.state.document.scenario().target == "i like to eat apple pie");
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.state.document.scenario().target == original);
}

TEST_CASE("undo during a drag takes back the drag so far") {
  Fixture f;
  const float before = f.state.document.scenario().one_layer().parameters.heads[0].W_Q(0, 0);
  f.edit_weight(9.0f);
  f.frame(true);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.state.document.scenario().one_layer().parameters.heads[0].W_Q(0, 0) == before);
  REQUIRE(f.history.redo(f.state));
  CHECK(f.state.document.scenario().one_layer().parameters.heads[0].W_Q(0, 0) == 9.0f);
}

TEST_CASE("loading a scenario starts a new history") {
  Fixture f;
  f.edit_weight(1.0f);
  f.frame(false);
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  f.state.load(*load, "", {});
  f.frame(false);
  CHECK_FALSE(f.history.can_undo(f.state));
  CHECK(f.history.steps() == 1);
}

TEST_CASE("undoing the switch to cross mode brings back self-attention and its causal mask") {
  Fixture f;
  AttentionConfig causal = f.state.document.scenario().one_layer().config;
  causal.causal = true;
  f.state.apply(edits::set_config(causal));
  f.frame(false);
  const std::string self_causal = f.json();
  f.state.apply(edits::set_mode(Mode::Cross));  // turns the mask off: cross mode has none
  f.frame(false);
  const std::string cross = f.json();
  CHECK_FALSE(f.state.document.scenario().one_layer().config.causal);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.json() == self_causal);
  CHECK(f.state.document.scenario().one_layer().mode == Mode::Self);
  CHECK(f.state.document.scenario().one_layer().config.causal);
  REQUIRE(f.history.redo(f.state));
  CHECK(f.json() == cross);
  CHECK_FALSE(f.state.document.scenario().one_layer().config.causal);  // never cross with the mask
}

TEST_CASE("undo restores the engine's output too") {
  Fixture f;
  f.state.recompute_if_needed();
  const Matrix output = f.state.result().output;
  f.edit_weight(-5.0f);
  f.frame(false);
  f.state.recompute_if_needed();
  CHECK(f.state.result().output != output);
  REQUIRE(f.history.undo(f.state, f.now));
  f.state.recompute_if_needed();
  CHECK(f.state.result().output == output);
}

TEST_CASE("undoing back to the scenario as opened leaves nothing unsaved") {
  Fixture f;  // loaded as if opened: saved
  REQUIRE_FALSE(f.state.unsaved());
  f.edit_weight(1.5f);
  f.frame(false);
  f.edit_weight(2.5f);
  f.frame(false);
  CHECK(f.state.unsaved());
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.state.unsaved());  // one step back is not the saved state
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK_FALSE(f.state.unsaved());
}

TEST_CASE("redoing back to the scenario as saved leaves nothing unsaved") {
  Fixture f;
  f.edit_weight(1.5f);
  f.frame(false);
  f.state.document.mark_saved();  // saved here (as file_actions does)
  f.edit_weight(2.5f);
  f.frame(false);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK_FALSE(f.state.unsaved());
  REQUIRE(f.history.undo(f.state, f.now));  // the scenario as opened: not what was saved
  CHECK(f.state.unsaved());
  REQUIRE(f.history.redo(f.state));
  CHECK_FALSE(f.state.unsaved());
  REQUIRE(f.history.redo(f.state));
  CHECK(f.state.unsaved());
}

TEST_CASE("saving during a drag makes the drag's end the saved state") {
  Fixture f;
  f.edit_weight(1.5f);
  f.frame(true);  // still dragging: not a step yet
  f.state.document.mark_saved();
  f.frame(false);  // released: the step is what was saved
  f.edit_weight(2.5f);
  f.frame(false);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK_FALSE(f.state.unsaved());
}

TEST_CASE("the history keeps within its memory budget") {
  AppState state;
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load, "", {});
  History history(1);  // one byte: only the current state and one step back survive
  double now = 0;
  history.observe(state, false, now);
  for (int i = 0; i < 10; ++i) {
    state.document.set_weight(ParameterName::W_Q, 0, 0, 0, static_cast<float>(i));
    history.observe(state, false, now += 0.1);
  }
  CHECK(history.steps() == 2);
  REQUIRE(history.undo(state, now));
  CHECK(state.document.scenario().one_layer().parameters.heads[0].W_Q(0, 0) == 8.0f);
  CHECK_FALSE(history.undo(state, now));
}

// The Input panel's seed field edits the document as every other field does (issue 36): typing a
// seed marks the scenario unsaved and is one undo step ("change the seed"), which takes it back.
TEST_CASE("typing a seed marks the scenario unsaved and is one undo step") {
  Fixture f;
  REQUIRE_FALSE(f.state.unsaved());
  const std::string before = f.json();
  const std::uint64_t seed = f.state.document.scenario().one_layer().seed;
  const std::uint64_t version = f.state.document.version();
  f.state.document.set_seed(seed);  // the same seed: no edit
  CHECK(f.state.document.version() == version);
  for (const std::uint64_t typed : {4u, 42u, 421u}) {  // digit by digit, the field being typed in
    f.state.document.set_seed(typed);
    f.frame(true);
  }
  f.frame(false);  // the field let go
  CHECK(f.state.document.scenario().one_layer().seed == 421);
  CHECK(f.state.document.version() > version);
  CHECK(f.state.unsaved());
  CHECK(f.history.steps() == 2);
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.state.document.scenario().one_layer().seed == seed);
  CHECK(f.json() == before);
  CHECK_FALSE(f.state.unsaved());  // back to the scenario as opened
  REQUIRE(f.history.redo(f.state));
  CHECK(f.state.document.scenario().one_layer().seed == 421);
  CHECK(f.state.unsaved());
}

}  // namespace attnviz::app

namespace attnviz::app {

TEST_CASE("undo and redo name the edit they take back or bring again") {
  Fixture f;
  CHECK(f.history.undo_label(f.state).empty());  // nothing to undo
  HeadIntervention knocked_out;
  knocked_out.output_scale = 0.0f;
  // A named edit on the one-layer scenario's title, then one that changes nothing (no step).
  f.state.apply(edits::set_title("Fruit"));
  f.frame(false);
  CHECK(f.history.undo_label(f.state) == "rename the scenario");
  f.state.apply(edits::set_head_intervention(1, 2, knocked_out));  // no model: no edit
  f.frame(false);
  CHECK(f.history.undo_label(f.state) == "rename the scenario");
  f.state.apply(edits::set_weight(ParameterName::W_K, 1, 0, 0, 0.25f));
  CHECK(f.history.undo_label(f.state) == "edit W_K of head 2");  // in progress: taken back first
  f.frame(false);
  CHECK(f.history.undo_label(f.state) == "edit W_K of head 2");
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.history.undo_label(f.state) == "rename the scenario");
  CHECK(f.history.redo_label() == "edit W_K of head 2");
  REQUIRE(f.history.undo(f.state, f.now));
  CHECK(f.history.undo_label(f.state).empty());
  CHECK(f.history.redo_label() == "rename the scenario");
}

TEST_CASE("a panel's queued edits change nothing until the host applies them, in order") {
  Fixture f;
  const std::uint64_t version = f.state.document.version();
  f.state.edits.push(edits::set_target("the cat sat"));
  f.state.edits.push(edits::set_target("the cat sat down"));
  CHECK(f.state.document.version() == version);
  CHECK(f.state.document.scenario().target != "the cat sat down");
  CHECK(f.state.apply_queued_edits());
  CHECK(f.state.edits.empty());
  CHECK(f.state.document.scenario().target == "the cat sat down");
  CHECK(f.state.document.last_edit() == "edit the sentence");
  CHECK(f.state.pipeline().target().tokens.size() == 4);  // computed again
  CHECK_FALSE(f.state.apply_queued_edits());              // nothing left
}

}  // namespace attnviz::app
