// The seam of model families, proved with a toy: the app built with one more file
// (tests/family/random_attention.cpp: "random attention", two layers of three heads, a family
// that can do nothing in particular) draws every view for it. Each view is shown on its own in a
// screenshot; the layout JSON says which views drew and which said in their place that the run
// lacks what they need (core/figures/views.hpp).
#include "core/figures/views.hpp"
#include "tests/support/gui_app.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace attnviz::testing {
namespace {

bool holds(const nlohmann::json& list, std::string_view name) {
  return std::find(list.begin(), list.end(), std::string(name)) != list.end();
}

}  // namespace

TEST_CASE("a toy family added in one file: every view draws it, or says what it lacks") {
  // (but the Weights band, left out: the toy has no weights to edit)
  TempDir dir;
  for (const view::ViewInfo& info : view::kViews) {
    if (info.id == view::ViewId::Lesson) continue;  // drawn by a lesson only
    // The centre's views by --view; the Arrows and Output panels are always on the dashboard.
    const std::vector<std::string> args = {"--model", "random:7", "--view",
                                           info.centre_tab ? std::string(info.name) : "heatmaps"};
    const Shot shot = take_shot(dir, args);
    INFO("view " << info.name << ": " << shot.errors);
    REQUIRE(shot.status == 0);
    CHECK(shot.errors.empty());
    const nlohmann::json& layout = shot.layout;
    CHECK(layout["model"] == "");  // no trained weights: the status line names none
    CHECK(layout["layer"] == 0);
    const bool needs_met = info.needs == Capabilities{};  // the toy can do nothing in particular
    if (info.slot == view::Slot::Weights) {
      // The Weights band edits weights: a run with none to edit leaves it out (view::slot_shows).
      CHECK_FALSE(holds(layout["views_drawn"], info.name));
      CHECK_FALSE(holds(layout["views_lacking"], info.name));
    } else if (!needs_met && info.takes_place_of != view::ViewId::Count) {
      // A view that takes another's tab (Fill the mask) has none for a run without its needs:
      // the view it stands in for is shown in its stead.
      const std::string_view other = view::view_info(info.takes_place_of).name;
      CHECK_FALSE(holds(layout["views_drawn"], info.name));
      CHECK_FALSE(holds(layout["views_lacking"], info.name));
      CHECK((holds(layout["views_drawn"], other) || holds(layout["views_lacking"], other)));
    } else if (needs_met) {
      CHECK(holds(layout["views_drawn"], info.name));
      CHECK_FALSE(holds(layout["views_lacking"], info.name));
    } else {
      CHECK(holds(layout["views_lacking"], info.name));
      CHECK_FALSE(holds(layout["views_drawn"], info.name));
    }
  }
}

TEST_CASE("the toy's Pipeline view chains its own stages, and its heatmap is its α") {
  TempDir dir;
  const Shot shot =
      take_shot(dir, {"--model", "random:7", "--view", "pipeline", "--layer", "1", "--head", "2"});
  INFO(shot.errors);
  REQUIRE(shot.status == 0);
  // The titles the family gave its stages (random_attention.cpp), in its order.
  const std::vector<std::string> titles = shot.layout["pipeline_titles"];
  CHECK(titles == std::vector<std::string>{
                      "X = random", "Q = XW_Q", "K = XW_K", "V = XW_V", "S = QK\xe2\x8a\xa4",
                      "\xc3\xb7\xe2\x88\x9a"
                      "d_k",
                      "\xce\xb1 = softmax", "\xce\xb1\xc2\xb7V", "concat", "\xc2\xb7W_O"});
  CHECK(shot.layout["layer"] == 1);  // its second layer
  CHECK(shot.layout["head"] == 2);   // its third head
  // The built-in sentence's tokens, as the family tokenizes them.
  CHECK(shot.layout["tokens"] > 3);

  const Shot heatmaps = take_shot(dir, {"--model", "random:7", "--view", "heatmaps"});
  REQUIRE(heatmaps.status == 0);
  const nlohmann::json& geometry = heatmaps.layout["heatmap"];
  CHECK(geometry["rows"] == heatmaps.layout["tokens"]);
  CHECK(geometry["cols"] == heatmaps.layout["tokens"]);
  CHECK(geometry["cell_w"] > 4);
}

TEST_CASE("a family's name that it refuses is an error in one line, and the app opens nothing") {
  TempDir dir;
  const Shot shot = take_shot(dir, {"--model", "random:seven"});
  CHECK(shot.status != 0);
  CHECK(shot.errors.find("random:SEED: SEED is a number") != std::string::npos);
}

}  // namespace attnviz::testing
