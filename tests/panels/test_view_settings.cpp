// The views' own saved settings, registered by the views' files (app/panels/*.cpp): read from a
// scenario's "view" object and written back, through the view state alone (this executable links
// the app's panels, so their settings are registered; no window is opened).
#include "app/session/view_state.hpp"
#include "core/figures/views.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace attnviz::app {
namespace {

bool any_names(const std::vector<std::string>& warnings, const std::string& text) {
  for (const std::string& warning : warnings)
    if (warning.find(text) != std::string::npos) return true;
  return false;
}

// The view state written after reading `json` into a new state.
std::string read_and_written(const std::string& json, std::vector<std::string>& warnings) {
  AppState state;
  apply_view_state(json, state, warnings);
  return view_state_to_json(state);
}

}  // namespace

TEST_CASE("the Next token view's sampling and the Across layers view's part round-trip") {
  const std::string defaults = view_state_to_json(AppState{});
  CHECK(defaults.find("sampling") == std::string::npos);  // files without them stay as they were
  CHECK(defaults.find("layers_view") == std::string::npos);
  std::vector<std::string> warnings;
  const std::string json = read_and_written(
      R"({"sampling": {"temperature": 0.7, "top_k": 40, "top_p": 0.9}, "layers_view": "rollout"})",
      warnings);
  CHECK(warnings.empty());
  CHECK(json.find(R"("sampling":{"temperature":0.7,"top_k":40,"top_p":0.9})") != std::string::npos);
  CHECK(json.find(R"("layers_view":"rollout")") != std::string::npos);
  // In the order of the files before the views registered them: after the app's settings.
  CHECK(json.find("arrow_threshold") < json.find("sampling"));
  CHECK(json.find("sampling") < json.find("layers_view"));
  CHECK(read_and_written(json, warnings) == json);
  CHECK(warnings.empty());
}

TEST_CASE("bad sampling values and parts warn, and each keeps what it was") {
  AppState state;
  std::vector<std::string> warnings;
  apply_view_state(R"({"sampling": {"temperature": 0.5}, "layers_view": "residual"})", state,
                   warnings);
  REQUIRE(warnings.empty());
  apply_view_state(R"({"sampling": {"temperature": -1, "top_k": 2.5, "top_p": 0, "seed": 3},
                       "layers_view": "attention"})",
                   state, warnings);
  CHECK(warnings.size() == 5);
  CHECK(any_names(warnings, "view.sampling.temperature"));
  CHECK(any_names(warnings, "view.sampling.top_k"));
  CHECK(any_names(warnings, "view.sampling.top_p"));
  CHECK(any_names(warnings, "view.sampling.seed: unknown key"));
  CHECK(any_names(warnings, "view.layers_view"));
  const std::string json = view_state_to_json(state);
  CHECK(json.find(R"("sampling":{"temperature":0.5,"top_k":0,"top_p":1.0})") != std::string::npos);
  CHECK(json.find(R"("layers_view":"residual")") != std::string::npos);
  warnings.clear();
  apply_view_state(R"({"sampling": [1, 2]})", state, warnings);
  CHECK(any_names(warnings, "view.sampling: expected an object"));
}

TEST_CASE("the Cheaper attention view's method round-trips, and a bad one warns") {
  CHECK(view_state_to_json(AppState{}).find("cheaper_method") == std::string::npos);
  for (std::size_t m = 1; m < view::kCheaperMethods.size(); ++m) {  // 0, flash: the default
    CAPTURE(view::kCheaperMethods[m]);
    const std::string entry =
        R"("cheaper_method":")" + std::string(view::kCheaperMethods[m]) + "\"";
    std::vector<std::string> warnings;
    const std::string json = read_and_written("{" + entry + "}", warnings);
    CHECK(warnings.empty());
    CHECK(json.find(entry) != std::string::npos);
  }
  AppState state;
  std::vector<std::string> warnings;
  apply_view_state(R"({"cheaper_method": "reformer"})", state, warnings);
  apply_view_state(R"({"cheaper_method": "performer"})", state, warnings);
  CHECK(any_names(warnings, "view.cheaper_method"));
  CHECK(view_state_to_json(state).find(R"("cheaper_method":"reformer")") != std::string::npos);
}

TEST_CASE("a lesson step's method sets the Cheaper attention view's part, through its setting") {
  std::string message;
  AppState state;
  CHECK(read_view_setting("cheaper_method", Json("sparse"), state.ui.views, message));
  CHECK(view_state_to_json(state).find(R"("cheaper_method":"sparse")") != std::string::npos);
}

}  // namespace attnviz::app
