// The Training view as a teacher uses it: Start, and the model learns while the app stays
// responsive; Use this model hands the trained model to every other view.
#include "tests/support/gui_app.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace attnviz {
namespace {

using testing::TempDir;

std::string click(const nlohmann::json& layout, const std::string& button) {
  const int x = static_cast<int>(std::lround(layout["train"][button + "_x"].get<double>()));
  const int y = static_cast<int>(std::lround(layout["train"][button + "_y"].get<double>()));
  return "xdotool mousemove " + std::to_string(x) + " " + std::to_string(y) + " click 1\n";
}

}  // namespace

TEST_CASE("the Training view trains a model on a thread of its own while the app draws") {
  TempDir dir;
  const std::vector<std::string> args = {"--view", "train", "--presenter"};
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
}

}  // namespace attnviz
