// Replacing a scenario with unsaved edits waits for the user's choice.
#include "app/session/unsaved_guard.hpp"
#include "tests/support/builtin_state.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

// The built-in scenario, loaded, and a count of replacements run.
struct Fixture {
  AppState state;
  UnsavedGuard guard;
  int replaced = 0;
  Fixture() { testing::load_builtin_scenario(state); }
  void edit() { state.document.set_target("the cat sat"); }
  bool request() {
    return guard.request(state, "Opening other.json", [this] { ++replaced; });
  }
};

}  // namespace

TEST_CASE("a scenario without unsaved edits is replaced at once") {
  Fixture f;
  CHECK(f.request());
  CHECK(f.replaced == 1);
  CHECK_FALSE(f.guard.asking());
}

TEST_CASE("a scenario with unsaved edits is replaced only after the user answers") {
  Fixture f;
  f.edit();
  CHECK_FALSE(f.request());
  CHECK(f.replaced == 0);
  CHECK(f.guard.asking());
}

TEST_CASE("discarding the edits runs the replacement once") {
  Fixture f;
  f.edit();
  f.request();
  f.guard.discard();
  CHECK(f.replaced == 1);
  CHECK_FALSE(f.guard.asking());
  f.guard.discard();
  CHECK(f.replaced == 1);
}

TEST_CASE("cancelling keeps the edits and forgets the replacement") {
  Fixture f;
  f.edit();
  f.request();
  f.guard.cancel();
  CHECK_FALSE(f.guard.asking());
  f.guard.discard();
  CHECK(f.replaced == 0);
  CHECK(f.state.document.scenario().target == "the cat sat");
}

TEST_CASE("after a save that worked the replacement runs") {
  Fixture f;
  f.edit();
  f.request();
  f.state.document.mark_saved();  // what a save does
  f.guard.saved(f.state);
  CHECK(f.replaced == 1);
  CHECK_FALSE(f.guard.asking());
}

TEST_CASE("after a save that failed nothing is replaced and the question goes") {
  Fixture f;
  f.edit();
  f.request();
  f.guard.saved(f.state);  // still unsaved
  CHECK(f.replaced == 0);
  CHECK_FALSE(f.guard.asking());
}

TEST_CASE("a second request while one waits takes its place") {
  Fixture f;
  f.edit();
  f.request();
  int second = 0;
  f.guard.request(f.state, "Opening second.json", [&] { ++second; });
  f.guard.discard();
  CHECK(f.replaced == 0);
  CHECK(second == 1);
}

TEST_CASE("a lesson's edits are replaced without asking") {
  Fixture f;
  f.state.start_lesson(testing::builtin_lesson("self-attention"), 0);
  f.edit();
  REQUIRE(f.state.unsaved());
  CHECK(f.request());
  CHECK(f.replaced == 1);
}

TEST_CASE("the question names the file, else the scenario's title (an untitled one's sentence)") {
  Fixture f;
  f.state.document.set_title("Dogs and cats");
  CHECK(UnsavedGuard::document_name(f.state) == "\"Dogs and cats\"");
  f.state.load(f.state.document.scenario(), "/home/teacher/lessons/week3.json", {});
  CHECK(UnsavedGuard::document_name(f.state) == "week3.json");
  f.state.document.forget_path();
  f.state.document.set_title("");  // untitled: called by its sentence
  CHECK(UnsavedGuard::document_name(f.state) == "\"I like to eat apple\"");
  f.state.document.set_target("the animal was tired");
  CHECK(UnsavedGuard::document_name(f.state) == "\"The animal was tired\"");
  f.state.document.set_target("");
  CHECK(UnsavedGuard::document_name(f.state) == "This scenario");
}

TEST_CASE("the question says what would replace the scenario") {
  Fixture f;
  f.state.load(f.state.document.scenario(), "/home/teacher/lessons/week3.json", {});
  f.edit();
  f.request();
  REQUIRE(f.guard.asking());
  CHECK(f.guard.question(f.state) == "week3.json has changes that are not saved.");
  CHECK(f.guard.consequence() ==
        "Opening other.json replaces it: save the changes first, or they are lost.");
  f.guard.request(f.state, "The built-in scenario",
                  [] {});  // the later request is the one asked about
  CHECK(f.guard.consequence().rfind("The built-in scenario replaces it", 0) == 0);
}

TEST_CASE("quitting with unsaved edits waits for the answer, as opening does") {
  Fixture f;
  int quits = 0;
  CHECK(f.guard.request_quit(f.state, [&] { ++quits; }));  // nothing to lose: at once
  CHECK(quits == 1);
  f.edit();
  CHECK_FALSE(f.guard.request_quit(f.state, [&] { ++quits; }));
  CHECK(quits == 1);
  CHECK(f.guard.asking_to_quit());
  f.guard.cancel();  // the app stays open with the edits
  CHECK(quits == 1);
  CHECK_FALSE(f.guard.asking());
  f.guard.request_quit(f.state, [&] { ++quits; });
  f.guard.discard();  // "Quit without saving"
  CHECK(quits == 2);
  f.guard.request_quit(f.state, [&] { ++quits; });
  f.state.document.mark_saved();  // "Save first", which worked
  f.guard.saved(f.state);
  CHECK(quits == 3);
}

TEST_CASE("the question before quitting says that quitting closes the scenario") {
  Fixture f;
  f.state.load(f.state.document.scenario(), "/home/teacher/lessons/week3.json", {});
  f.edit();
  f.guard.request_quit(f.state, [] {});
  CHECK(f.guard.question(f.state) == "week3.json has changes that are not saved.");
  CHECK(f.guard.consequence() ==
        "Quitting AttnViz closes it: save the changes first, or they are lost.");
  CHECK(f.guard.discard_label() == "Quit without saving");
  f.request();  // a later request to open a file takes its place, and is asked about as one
  CHECK_FALSE(f.guard.asking_to_quit());
  CHECK(f.guard.consequence().rfind("Opening other.json replaces it", 0) == 0);
  CHECK(f.guard.discard_label() == "Discard the changes");
}

TEST_CASE("quitting a lesson does not ask") {
  Fixture f;
  f.state.start_lesson(testing::builtin_lesson("self-attention"), 0);
  f.edit();
  int quits = 0;
  CHECK(f.guard.request_quit(f.state, [&] { ++quits; }));
  CHECK(quits == 1);
}

}  // namespace attnviz::app
