// Every token's name readable in every view (issue 23): sentences of 8 to 20 tokens, at
// 1280×720 and 1920×1080, at text sizes 16, 22 and 28, in each view (--view: a centre tab, or
// the Arrows or Output panel, which are tabs themselves where panels give way to large text). The
// app reports, per view, the names it has rows or columns for, the names it wrote and the smallest
// size it wrote one at (--layout-out, "labels"); every name must be written, none under the text
// size less one step (2 px), however small the panel: a view that lacks the room scrolls.
// One test case per window size and text size (32 runs of the app each), all of a case's runs on
// one virtual screen: a case takes 10 to 20 s on a quiet 2-core machine, of the 120 s allowed.
#include "core/document/scenario.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/virtual_screen.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Twenty words, each one token; the sentence of n tokens is the first n.
constexpr const char* kWords[] = {"The",  "animal", "didn't", "cross", "the",   "street", "because",
                                  "it",   "was",    "too",    "tired", "so",    "it",     "lay",
                                  "down", "by",     "the",    "old",   "stone", "wall"};

std::string sentence_of(int tokens) {
  std::string text;
  for (int k = 0; k < tokens; ++k) text += (k > 0 ? " " : "") + std::string(kWords[k]);
  return text;
}

// The built-in scenario with the sentence, d_k = 2 so that the Geometry view draws its arrows
// and its table of keys.
fs::path write_sentence(const fs::path& dir, int tokens) {
  Result<Scenario> builtin = parse_scenario(builtin_scenario_json());
  REQUIRE(builtin.ok());
  Scenario scenario = *builtin;
  scenario.target = sentence_of(tokens);
  AttentionConfig config = scenario.one_layer().config;
  config.d_k = 2;
  apply_config(*scenario.edit_one_layer(), config);
  fs::path path = dir / ("sentence-" + std::to_string(tokens) + ".json");
  std::ofstream(path) << scenario_to_json(scenario);
  return path;
}

// The layout the app wrote for a screenshot of `view`, drawn on `screen`.
Json layout_of(const testing::VirtualScreen& screen, const fs::path& dir, const fs::path& scenario,
               const std::string& size, int font, const std::string& view) {
  const char* app = std::getenv("ATTNVIZ_APP");
  REQUIRE_MESSAGE(app != nullptr, "set ATTNVIZ_APP to the attnviz binary");
  const fs::path png = dir / "shot.png", layout = dir / "layout.json", errors = dir / "stderr.txt";
  fs::remove(layout);
  const std::string command =
      "env ATTNVIZ_STATE_DIR='" + (dir / "state").string() + "' DISPLAY='" + screen.display() +
      "' '" + app + "' --scenario '" + scenario.string() + "' --size " + size + " --font-size " +
      std::to_string(font) + " --view " + view + " --screenshot '" + png.string() +
      "' --layout-out '" + layout.string() + "' > /dev/null 2> '" + errors.string() + "'";
  const int status = std::system(command.c_str());
  std::ifstream error_text(errors);
  std::stringstream said;
  said << error_text.rdbuf();
  INFO(command);
  INFO("stderr: " << said.str());
  REQUIRE(status == 0);
  std::ifstream in(layout);
  REQUIRE(in);
  return Json::parse(in);
}

// The names each view must write for a sentence of n tokens (self-attention): the heatmap's
// queries and keys, the arrows' two columns, the output's and the neuron view's keys, the
// geometry table's keys, the comparison's queries once and the keys over each of its three
// maps, and the Cheaper attention view's queries. The Pipeline shows a window of at most 12 rows
// per matrix: its own count is checked.
std::map<std::string, int> names_expected(int n) {
  return {{"heatmaps", 2 * n}, {"arrows", 2 * n},  {"output", n}, {"neuron", n},
          {"geometry", n},     {"compare", 4 * n}, {"cheaper", n}};
}

void check_every_name_written(const std::string& size, int font) {
  testing::TempDir dir;
  const testing::VirtualScreen screen("3900x2300x24");
  std::set<std::string> seen;
  for (const int tokens : {8, 12, 16, 20}) {
    const fs::path scenario = write_sentence(dir.path, tokens);
    const std::map<std::string, int> expected = names_expected(tokens);
    for (const std::string view :
         {"heatmaps", "pipeline", "neuron", "geometry", "compare", "cheaper", "arrows", "output"}) {
      CAPTURE(size);
      CAPTURE(tokens);
      CAPTURE(font);
      CAPTURE(view);
      const Json layout = layout_of(screen, dir.path, scenario, size, font, view);
      if (view == "heatmaps") REQUIRE(layout["heatmap"]["rows"] == tokens);
      const Json& labels = layout["labels"];
      // The view asked for writes names at every size, scrolled if need be; so do the Arrows
      // and Output panels when they have windows of their own (at large text they are tabs,
      // and their turn comes when they are asked for).
      CHECK(labels.contains(view));
      for (const Json& window : layout["windows"])
        if (window["panels"].size() == 1) {
          const std::string alone = window["panels"][0].get<std::string>();
          if (alone == "arrows" || alone == "output") CHECK(labels.contains(alone));
        }
      for (const auto& item : labels.items()) {
        const std::string& name = item.key();
        const Json& record = item.value();
        CAPTURE(name);
        seen.insert(name);
        const int names = record["tokens"].get<int>();
        if (expected.contains(name)) CHECK(names == expected.at(name));
        CHECK(names > 0);
        CHECK(record["labelled"].get<int>() == names);
        CHECK(record["smallest_px"].get<float>() >= static_cast<float>(font - 2));
      }
    }
  }
  // Every view was checked somewhere.
  for (const char* view :
       {"heatmaps", "pipeline", "neuron", "geometry", "compare", "cheaper", "arrows", "output"})
    CHECK(seen.count(view) == 1);
}

}  // namespace

TEST_CASE(
    "every token's name is written in every view at 1280x720, text size 16, none under a step "
    "smaller") {
  check_every_name_written("1280x720", 16);
}

TEST_CASE(
    "every token's name is written in every view at 1280x720, text size 22, none under a step "
    "smaller") {
  check_every_name_written("1280x720", 22);
}

TEST_CASE(
    "every token's name is written in every view at 1280x720, text size 28, none under a step "
    "smaller") {
  check_every_name_written("1280x720", 28);
}

TEST_CASE(
    "every token's name is written in every view at 1920x1080, text size 16, none under a step "
    "smaller") {
  check_every_name_written("1920x1080", 16);
}

TEST_CASE(
    "every token's name is written in every view at 1920x1080, text size 22, none under a step "
    "smaller") {
  check_every_name_written("1920x1080", 22);
}

TEST_CASE(
    "every token's name is written in every view at 1920x1080, text size 28, none under a step "
    "smaller") {
  check_every_name_written("1920x1080", 28);
}

}  // namespace attnviz
