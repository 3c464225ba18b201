// The Cheaper attention view as a student uses it: FlashAttention on docs/scenarios/flash.json
// (12 tokens, causal), opened on its first tile, stepped with the "next tile" button and by a
// click on a tile, and at the last tile the same output as full attention.
#include "tests/support/gui_app.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// A scenario on the lessons' sentence that opens the Cheaper attention view on `method`, with
// `extra` scenario keys.
std::string cheaper_scenario(const testing::TempDir& dir, const std::string& method,
                             const std::string& extra) {
  const fs::path path = dir.path / (method + ".json");
  std::ofstream(path) << R"({"format": "attnviz-scenario", "target": ")"
                      << "the animal did not cross the street because it was too tired"
                      << R"(")" << extra
                      << R"(, "view": {"center_view": "cheaper", "cheaper_method": ")" << method
                      << R"("}})";
  return path.string();
}

TEST_CASE("the Reformer part: buckets, the pairs computed, the difference from full attention") {
  testing::TempDir dir;
  const testing::Shot shot =
      testing::take_shot(dir, {cheaper_scenario(dir, "reformer", ""), "--view", "cheaper"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  REQUIRE(shot.layout.contains("cheaper"));
  const nlohmann::json& cheaper = shot.layout["cheaper"];
  CHECK(cheaper["method"] == "reformer");
  CHECK(cheaper["pairs_full"] == 144);
  CHECK(cheaper["pairs"].get<int>() > 0);
  CHECK(cheaper["pairs"].get<int>() < 144);  // 4 buckets: some pairs never meet
  CHECK(cheaper["largest_difference"].get<double>() > 0);
  CHECK(shot.layout["labels"]["cheaper"]["tokens"] == 12);
}

// A window of 3 over 12 tokens computes 34 of 144 pairs; a click on "animal" makes it global: its
// row and column whole again, 34 + 9 + 9 = 52.
TEST_CASE("the sparse part counts the pairs, and a click on a token makes it global") {
  testing::TempDir dir;
  const std::string scenario =
      cheaper_scenario(dir, "sparse", R"(, "mask_pattern": {"kind": "window", "width": 3})");
  const testing::Shot shot = testing::take_shot(dir, {scenario, "--view", "cheaper"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  CHECK(shot.layout["cheaper"]["method"] == "sparse");
  CHECK(shot.layout["cheaper"]["pairs"] == 34);
  CHECK(shot.layout["cheaper"]["pairs_full"] == 144);
  const nlohmann::json clicked = testing::run_session(
      dir, {scenario, "--view", "cheaper"},
      "xdotool mousemove 400 213 click 1\nsleep 0.5\nxdotool key ctrl+s\nsleep 0.6\n");
  CHECK(clicked["cheaper"]["pairs"] == 52);
  // Saved with Ctrl+S: the file names the global token.
  std::ifstream saved(scenario);
  const std::string text((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  CHECK(text.find(R"("global": [1])") != std::string::npos);
}

// 4 heads of d_k = d_v = 2 in 2 groups keep 2 · (2 + 2) = 8 numbers per token; multi-query, 4.
TEST_CASE("the shared keys part: the K/V cache per token follows the groups chosen") {
  testing::TempDir dir;
  const std::string scenario =
      cheaper_scenario(dir, "shared_keys", R"(, "heads": 4, "d_k": 2, "d_v": 2, "kv_groups": 2)");
  const testing::Shot shot = testing::take_shot(dir, {scenario, "--view", "cheaper"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  CHECK(shot.layout["cheaper"]["method"] == "shared_keys");
  CHECK(shot.layout["cheaper"]["cache_per_token"] == 8);
  CHECK(shot.layout["cheaper"]["largest_difference"].get<double>() > 0);
  const nlohmann::json clicked = testing::run_session(
      dir, {scenario, "--view", "cheaper"},
      "xdotool mousemove 520 150 click 1\nsleep 0.5\nxdotool key ctrl+s\nsleep 0.6\n");
  CHECK(clicked["cheaper"]["cache_per_token"] == 4);
  std::ifstream saved(scenario);
  const std::string text((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  CHECK(text.find(R"("kv_groups": 1)") != std::string::npos);
}

TEST_CASE("the decoding part steps one token at a time and matches the causal rows") {
  testing::TempDir dir;
  const std::string scenario = cheaper_scenario(dir, "decoding", R"(, "causal": true)");
  const testing::Shot shot = testing::take_shot(dir, {scenario, "--view", "cheaper"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  CHECK(shot.layout["cheaper"]["method"] == "decoding");
  CHECK(shot.layout["cheaper"]["step"] == 0);
  const nlohmann::json stepped = testing::run_session(
      dir, {scenario, "--view", "cheaper"},
      "xdotool mousemove 488 150 click 1\nsleep 0.2\nxdotool click 1\nsleep 0.4\n");
  CHECK(stepped["cheaper"]["step"] == 2);
  CHECK(stepped["cheaper"]["pairs"] == 1 + 2 + 3);
  CHECK(stepped["cheaper"]["largest_difference"].get<double>() < 1e-5);
}

// Under grouped-query attention the Pipeline view names the key/value group of K and V.
TEST_CASE("the Pipeline view titles K and V with their key/value group") {
  testing::TempDir dir;
  const std::string scenario =
      cheaper_scenario(dir, "shared_keys", R"(, "heads": 4, "d_k": 2, "d_v": 2, "kv_groups": 2)");
  const testing::Shot shot =
      testing::take_shot(dir, {scenario, "--view", "pipeline", "--head", "3"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  const auto& titles = shot.layout["pipeline_titles"];
  CHECK(std::find(titles.begin(), titles.end(), "K = XW_K (kv 2)") != titles.end());
  CHECK(std::find(titles.begin(), titles.end(), "V = XW_V (kv 2)") != titles.end());
}

}  // namespace attnviz
