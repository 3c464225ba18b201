// The Training view as a teacher uses it: Start, and the model learns while the app stays
// responsive; Use this model hands the trained model to every other view, Save as… writes it
// where the file dialog is told. In the one-layer
// scenario, gradient descent moves W_Q and W_K until the head looks at the word before.
#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"
#include "tests/support/gui_app.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace attnviz {
namespace {

using testing::TempDir;

std::string click(const nlohmann::json& layout, const std::string& button,
                  const std::string& part = "train") {
  const int x = static_cast<int>(std::lround(layout[part][button + "_x"].get<double>()));
  const int y = static_cast<int>(std::lround(layout[part][button + "_y"].get<double>()));
  return "xdotool mousemove " + std::to_string(x) + " " + std::to_string(y) + " click 1\n";
}

}  // namespace

// The built-in scenario on "the cat sat on the mat" with positions, its view set as given.
std::string scenario_file(const TempDir& dir, const std::string& view_json) {
  Result<Scenario> scenario = parse_scenario(builtin_scenario_json());
  REQUIRE(scenario.ok());
  scenario->target = "the cat sat on the mat";
  scenario->edit_one_layer()->positional = Positional::Sinusoidal;
  scenario->view_json = view_json;
  const std::string path = (dir.path / "cat.json").string();
  REQUIRE(save_scenario_file(path, *scenario).is_ok());
  return path;
}

TEST_CASE("the Training view trains a model on a thread of its own while the app draws") {
  TempDir dir;
  // A new model learns (the one-layer scenario's Training view starts with its own weights).
  const std::vector<std::string> args = {scenario_file(dir, R"({"training": "model"})"), "--view",
                                         "train", "--presenter"};
  const testing::Shot before = testing::take_shot(dir, args);
  INFO("stderr: " << before.errors);
  REQUIRE(before.status == 0);
  REQUIRE(before.layout.contains("train"));
  CHECK_FALSE(before.layout["train"].contains("steps_taken"));  // nothing trained yet
  // Start: the model learns while the app draws.
  const nlohmann::json after =
      testing::run_session(dir, args, click(before.layout, "start") + testing::paced("sleep 8\n"));
  REQUIRE(after.contains("train"));
  const int steps = after["train"]["steps_taken"].get<int>();
  MESSAGE("steps in the session: " << steps << ", loss " << after["train"]["last_loss"]);
  CHECK(steps >= 50);
  CHECK(after["train"]["frames"].get<int>() >= 2);
  CHECK(after["train"]["last_loss"].get<double>() < 4.0);  // from about log 257 = 5.55
  CHECK(after["train"]["use_x"].get<double>() > 0.0);
  // Save as…: the app's file dialog asks where (the name proposed from the run and the step, the
  // keyboard in its name field); a path typed there gets the model folder.
  REQUIRE(after["train"].contains("save_x"));
  const std::filesystem::path saved = dir.path / "my-induction-model";
  testing::run_session(dir, args,
                       click(before.layout, "start") + testing::paced("sleep 4\n") +
                           click(after, "save") + testing::paced("sleep 1\n") +
                           "xdotool key ctrl+a\nxdotool type --delay 20 '" + saved.string() +
                           "'\n" + testing::paced("sleep 0.5\n") + "xdotool key Return\n" +
                           testing::paced("sleep 1.5\n"));
  CHECK(std::filesystem::is_regular_file(saved / "config.json"));
  CHECK(std::filesystem::is_regular_file(saved / "model.safetensors"));
  CHECK(std::filesystem::is_regular_file(saved / "train.json"));
}

TEST_CASE("gradient descent in the Training view makes the head look at the word before") {
  TempDir dir;
  const std::string path = scenario_file(dir, "");
  const std::vector<std::string> args = {path, "--view", "train", "--presenter"};
  const testing::Shot before = testing::take_shot(dir, args);
  INFO("stderr: " << before.errors);
  REQUIRE(before.status == 0);
  REQUIRE(before.layout.contains("fit"));
  CHECK(before.layout["fit"]["steps"].get<int>() == 0);
  CHECK(before.layout["fit"]["mismatch"].get<double>() > 0.5);
  CHECK(before.layout["fit"]["target_rows"].get<int>() == 6);
  // Start (10 steps a second), then save the moved weights (Ctrl+S: the file it came from).
  const nlohmann::json after =
      testing::run_session(dir, args,
                           click(before.layout, "start", "fit") + testing::paced("sleep 7\n") +
                               "xdotool key ctrl+s\n" + testing::paced("sleep 1\n"));
  REQUIRE(after.contains("fit"));
  const int steps = after["fit"]["steps"].get<int>();
  MESSAGE("steps: " << steps << ", loss " << after["fit"]["loss"] << ", mismatch "
                    << after["fit"]["mismatch"]);
  CHECK(steps > 5);
  CHECK(after["fit"]["mismatch"].get<double>() <= 0.1);
  // The file saved: each word's head 1 now looks at the word before (the first at itself).
  Result<Scenario> saved = load_scenario_file(path);
  REQUIRE(saved.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(*saved).is_ok());
  const Matrix& weights = pipeline.result().heads[0].weights;  // (6, 6)
  for (Eigen::Index i = 0; i < weights.rows(); ++i) {
    Eigen::Index largest = 0;
    weights.row(i).maxCoeff(&largest);
    CHECK(largest == std::max<Eigen::Index>(i - 1, 0));
  }
}

// A painted target is part of the scenario: read from its view state ("fit_painted": for each
// word, the keys painted in its row), and written back by Save.
TEST_CASE("a painted target opens with the scenario and is saved with it") {
  TempDir dir;
  const std::string path =
      scenario_file(dir, R"({"fit_target": "painted", "fit_painted": [[0], [0, 1], [], [9]]})");
  const std::vector<std::string> args = {path, "--view", "train", "--presenter"};
  const testing::Shot shot = testing::take_shot(dir, args);
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  // Rows 0 and 1 have cells the query may see; row 2 none; row 3's key 9 is past the sentence.
  CHECK(shot.layout["fit"]["target_rows"].get<int>() == 2);
  testing::run_session(dir, args, "xdotool key ctrl+s\n" + testing::paced("sleep 1\n"));
  Result<Scenario> saved = load_scenario_file(path);
  REQUIRE(saved.ok());
  const nlohmann::json view = nlohmann::json::parse(saved->view_json);
  CHECK(view["fit_target"] == "painted");
  CHECK(view["fit_painted"] == nlohmann::json::parse("[[0], [0, 1], [], [9]]"));
}

}  // namespace attnviz
