// The Cheaper attention view as a student uses it: FlashAttention on docs/scenarios/flash.json
// (12 tokens, causal), opened on its first tile, stepped with the "next tile" button and by a
// click on a tile, and at the last tile the same output as full attention.
#include "tests/support/gui_app.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace attnviz {

namespace fs = std::filesystem;

TEST_CASE("the FlashAttention view steps tile by tile and ends on full attention's output") {
  testing::TempDir dir;
  const std::string scenario =
      (fs::path(ATTNVIZ_SOURCE_DIR) / "docs/scenarios/flash.json").string();
  const testing::Shot first = testing::take_shot(dir, {scenario, "--view", "cheaper"});
  INFO("stderr: " << first.errors);
  REQUIRE(first.status == 0);
  REQUIRE(first.layout.contains("flash"));
  CHECK(first.layout["flash"]["step"] == 0);
  CHECK(first.layout["flash"]["tiles"] == 9);  // 12 tokens in tiles of 4 × 4: 3 × 3
  CHECK(first.layout["labels"]["cheaper"]["tokens"] == 12);

  // At 1280x720: "next tile" three times, then the last tile's button.
  const nlohmann::json stepped = testing::run_session(
      dir, {scenario, "--view", "cheaper"},
      "xdotool mousemove 480 150 click 1\nsleep 0.2\nxdotool click 1\nsleep 0.2\n"
      "xdotool click 1\nsleep 0.4\n");
  CHECK(stepped["flash"]["step"] == 3);
  const nlohmann::json last = testing::run_session(
      dir, {scenario, "--view", "cheaper"}, "xdotool mousemove 542 150 click 1\nsleep 0.4\n");
  CHECK(last["flash"]["step"] == 8);
  CHECK(last["flash"]["largest_difference"].get<double>() < 1e-5);
}

// Linformer chosen in the method list: k summary keys (4 at first), and an output that differs
// from full attention (its projections are random), shown as a number.
TEST_CASE("the Cheaper attention view's Linformer part: k summaries and the difference") {
  testing::TempDir dir;
  const fs::path path = dir.path / "linformer.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "target": ")"
                      << "the animal did not cross the street because it was too tired"
                      << R"("})";
  const nlohmann::json layout = testing::run_session(
      dir, {path.string(), "--view", "cheaper"},
      "xdotool mousemove 400 123 click 1\nsleep 0.5\nxdotool mousemove 400 170 click 1\n"
      "sleep 0.6\n");
  REQUIRE(layout.contains("linformer"));
  CHECK(layout["linformer"]["k"] == 4);
  CHECK(layout["linformer"]["largest_difference"].get<double>() > 1e-3);
  CHECK(layout["labels"]["cheaper"]["tokens"] == 12);
  CHECK_FALSE(layout.contains("flash"));
}

}  // namespace attnviz
