// Open, save and export as the File menu does them, without a window.
#include "app/session/file_actions.hpp"
#include "app/session/view_state.hpp"
#include "tests/support/replace_scenario.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/write_targets.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <fstream>
#include <iterator>

namespace attnviz::app {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

AppState builtin_state() {
  AppState state;
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  state.load(*load, "", {});
  state.recompute_if_needed();
  return state;
}

}  // namespace

TEST_CASE("save then open gives the same scenario and view and engine output") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  state.document.set_weight(ParameterName::W_K, 1, 2, 3, 0.375f);
  state.document.set_target("jane likes to eat apple");
  state.ui.theme = Theme::Dark;
  state.ui.center_view = CenterView::Pipeline;
  state.selection.head = 1;
  state.recompute_if_needed();
  state.selection.query = 3;
  const std::string path = (dir.path / "lesson.json").string();
  REQUIRE(save_scenario(state, recent, path));
  CHECK_FALSE(state.unsaved());

  AppState reopened = builtin_state();
  REQUIRE(open_scenario(reopened, recent, path));
  reopened.recompute_if_needed();
  CHECK(scenario_to_json(reopened.document.scenario()) ==
        scenario_to_json(state.document.scenario()));
  CHECK(reopened.ui.theme == Theme::Dark);
  CHECK(reopened.ui.center_view == CenterView::Pipeline);
  CHECK(reopened.selection.head == 1);
  CHECK(reopened.selection.query == 3);
  CHECK(reopened.result().output == state.result().output);
  CHECK(recent.entries().front() == fs::absolute(path).string());
}

TEST_CASE("a failed save says why and keeps the state and the old file") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  state.document.set_target("edited sentence");
  const Status status = save_scenario(state, recent, (dir.path / "missing" / "x.json").string());
  CHECK_FALSE(status);
  CHECK(status.message().find("does not exist") != std::string::npos);
  CHECK(state.unsaved());
  CHECK(state.document.scenario().target == "edited sentence");
}

TEST_CASE("a save into a read-only folder leaves the old file intact") {
  if (geteuid() == 0) {
    MESSAGE("skipped: root ignores folder permissions");
    return;
  }
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  const std::string path = (dir.path / "kept.json").string();
  REQUIRE(save_scenario(state, recent, path));
  const std::string before = testing::read_whole_file(path);
  ::chmod(dir.path.c_str(), 0555);
  state.document.set_target("changed");
  state.recompute_if_needed();
  CHECK_FALSE(save_scenario(state, recent, path));
  ::chmod(dir.path.c_str(), 0755);
  CHECK(testing::read_whole_file(path) == before);
}

TEST_CASE("a scenario that does not compute is not saved") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  state.document.set_target("   ");
  state.recompute_if_needed();
  const Status status = save_scenario(state, recent, (dir.path / "x.json").string());
  CHECK(status.message().find("not saved") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "x.json"));
}

TEST_CASE("a custom mask is saved at the size of the current sentence") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  testing::replace_scenario(state.document, [](Scenario& s) {
    s.edit_one_layer()->mask = MaskMatrix::Ones(5, 5);
    s.edit_one_layer()->mask(4, 0) = 0;
    s.target = "i like to eat apple pie";  // 6 tokens now
  });
  state.recompute_if_needed();
  const std::string path = (dir.path / "m.json").string();
  REQUIRE(save_scenario(state, recent, path));
  Result<Scenario> load = load_scenario_file(path);
  REQUIRE_MESSAGE(load.ok(), load.error());
  CHECK(load->edit_one_layer()->mask.rows() == 6);
  CHECK(load->edit_one_layer()->mask(4, 0) == 0);
}

TEST_CASE("an untitled scenario is saved under its sentence as typed, a named one under its name") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();  // untitled: "I like to eat apple", its sentence
  state.apply(edits::set_target("the animal was tired"));
  const std::string path = (dir.path / "untitled.json").string();
  REQUIRE(save_scenario(state, recent, path));
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(text.find("I like to eat apple") == std::string::npos);
  CHECK(text.find("\"title\"") == std::string::npos);  // untitled it stays: it follows its sentence
  Result<Scenario> load = load_scenario_file(path);
  REQUIRE_MESSAGE(load.ok(), load.error());
  CHECK(scenario_title(*load) == "The animal was tired");

  state.apply(edits::set_title("Pronouns"));
  state.apply(edits::set_target("the cat sat"));
  REQUIRE(save_scenario(state, recent, path));
  load = load_scenario_file(path);
  REQUIRE_MESSAGE(load.ok(), load.error());
  CHECK(load->title == "Pronouns");
  CHECK(scenario_title(*load) == "Pronouns");
}

TEST_CASE("a file in cross mode with the causal mask opens with it off and a warning") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  const fs::path both = dir.path / "both.json";
  std::ofstream(both) << R"({"format": "attnviz-scenario", "mode": "cross", "target": "a b",
                            "source": "c d e", "causal": true})";
  REQUIRE(open_scenario(state, recent, both.string()));
  CHECK(state.document.scenario().one_layer().mode == Mode::Cross);
  CHECK_FALSE(state.document.scenario().one_layer().config.causal);
  REQUIRE(state.file_warnings.size() == 1);
  CHECK(state.file_warnings[0].find(std::string(kCausalOffInCross)) != std::string::npos);
  CHECK_FALSE(state.unsaved());  // as opened; the warning says what was done
  state.recompute_if_needed();
  CHECK(state.computed.error.empty());
}

TEST_CASE("opening a file that is not a scenario keeps the state and says why") {
  TempDir dir;
  RecentFiles recent("");
  AppState state = builtin_state();
  const fs::path bad = dir.path / "bad.json";
  std::ofstream(bad) << "{\"format\": \"something-else\"}";
  const Status status = open_scenario(state, recent, bad.string());
  CHECK_FALSE(status);
  CHECK(status.message().find("format") != std::string::npos);
  CHECK(status.message().rfind("not opened: ", 0) ==
        0);  // not taken for the current scenario's error
  CHECK(state.document.scenario().target == "i like to eat apple");
}

TEST_CASE("exports write the heatmap and arrows as SVG and every matrix as CSV and JSON") {
  TempDir dir;
  AppState state = builtin_state();
  REQUIRE(export_heatmap_svg(state, (dir.path / "h.svg").string()));
  REQUIRE(export_arrows_svg(state, (dir.path / "a.svg").string(), true));
  REQUIRE(export_matrices_csv(state, (dir.path / "csv").string()));
  REQUIRE(export_result_json(state, (dir.path / "r.json").string()));
  const std::string heatmap = testing::read_whole_file(dir.path / "h.svg");
  std::size_t cells = 0;
  for (std::size_t at = heatmap.find("class=\"cell\""); at != std::string::npos;
       at = heatmap.find("class=\"cell\"", at + 1))
    ++cells;
  CHECK(cells == 25);
  // Heads counted from 1, as the app shows them: the built-in scenario's two are head1, head2.
  CHECK(fs::exists(dir.path / "csv" / "head1_weights.csv"));
  CHECK(fs::exists(dir.path / "csv" / "head2_weights.csv"));
  CHECK_FALSE(fs::exists(dir.path / "csv" / "head0_weights.csv"));
  CHECK(testing::read_whole_file(dir.path / "r.json").find("\"target_tokens\"") !=
        std::string::npos);
}

// Issue 36: Save, Save as and every export write through links, into pipes, descriptors and
// devices, and never replace what the path points at (tests/support/write_targets.hpp).
TEST_CASE("Save writes through every kind of target and replaces none") {
  AppState state = builtin_state();
  RecentFiles recent("");
  testing::check_every_write_target(
      [&](const std::string& path) { return save_scenario(state, recent, path); });
}

TEST_CASE("the heatmap's SVG export writes through every kind of target") {
  const AppState state = builtin_state();
  testing::check_every_write_target(
      [&](const std::string& path) { return export_heatmap_svg(state, path); });
}

TEST_CASE("the arrows' SVG export writes through every kind of target") {
  const AppState state = builtin_state();
  testing::check_every_write_target(
      [&](const std::string& path) { return export_arrows_svg(state, path, false); });
}

TEST_CASE("the result's JSON export writes through every kind of target") {
  const AppState state = builtin_state();
  testing::check_every_write_target(
      [&](const std::string& path) { return export_result_json(state, path); });
}

TEST_CASE("the CSV export writes into a linked folder and through a linked file") {
  TempDir dir;
  const AppState state = builtin_state();
  fs::create_directory(dir.path / "real");
  fs::create_directory_symlink("real", dir.path / "linked");
  { std::ofstream(dir.path / "elsewhere.csv") << "old"; }
  fs::create_symlink("../elsewhere.csv", dir.path / "real" / "output.csv");
  REQUIRE(export_matrices_csv(state, (dir.path / "linked").string()));
  CHECK(fs::is_symlink(dir.path / "linked"));
  CHECK(fs::is_symlink(dir.path / "real" / "output.csv"));
  CHECK(testing::read_whole_file(dir.path / "elsewhere.csv").rfind("\"\",", 0) == 0);
  CHECK(fs::exists(dir.path / "real" / "head1_weights.csv"));
  for (const std::string& name : testing::names_in(dir.path / "real"))
    CHECK_MESSAGE(name.ends_with(".csv"), name);  // no temporary file left
}

TEST_CASE("the CSV export into a file where a folder is expected says so") {
  TempDir dir;
  const AppState state = builtin_state();
  { std::ofstream(dir.path / "file.csv") << "old"; }
  const Status status = export_matrices_csv(state, (dir.path / "file.csv").string());
  REQUIRE_FALSE(status);
  CHECK(status.message().find("file.csv") != std::string::npos);
  CHECK(testing::read_whole_file(dir.path / "file.csv") == "old");
}

}  // namespace attnviz::app
