// The "view" object of a scenario file: written from the app state, read back, and every bad
// value refused with a warning that names its key.
#include "app/session/view_state.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

// All but the text size (see the tests of font_size below).
bool same_ui_but_text_size(const UiSettings& a, const UiSettings& b) {
  return a.theme == b.theme && a.colormap == b.colormap && a.visible == b.visible &&
         a.center_view == b.center_view && a.show_cell_values == b.show_cell_values &&
         a.arrow_threshold == b.arrow_threshold && a.heatmap_contrast == b.heatmap_contrast;
}

bool same_selection(const Selection& a, const Selection& b) {
  return a.head == b.head && a.query == b.query;
}

bool any_names(const std::vector<std::string>& warnings, const std::string& key) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& w) { return w.find(key) != std::string::npos; });
}

AppState customized() {
  AppState state;
  state.selection = {.head = 1, .query = 3};
  state.ui.theme = Theme::Dark;
  state.ui.font_size = 18.5f;
  state.ui.font_size_chosen = true;
  state.ui.colormap = view::ColormapId::ColorBlindSafe;
  state.ui.visible = {true, false, true, false, true, false};
  state.ui.center_view = CenterView::Pipeline;
  state.ui.show_cell_values = false;
  state.ui.arrow_threshold = 0.15f;
  state.ui.heatmap_contrast = true;
  return state;
}

}  // namespace

TEST_CASE("view state: a round trip gives the same settings and selection") {
  const AppState before = customized();
  AppState after;
  std::vector<std::string> warnings;
  apply_view_state(view_state_to_json(before), after, warnings);
  CHECK(warnings.empty());
  CHECK(same_ui_but_text_size(before.ui, after.ui));
  CHECK(after.ui.font_size == before.ui.font_size);
  CHECK(after.ui.font_size_chosen);
  CHECK(same_selection(before.selection, after.selection));
}

TEST_CASE("view state: the defaults round-trip too, onto a changed state") {
  const AppState defaults;
  AppState after = customized();
  std::vector<std::string> warnings;
  apply_view_state(view_state_to_json(defaults), after, warnings);
  CHECK(warnings.empty());
  CHECK(same_ui_but_text_size(defaults.ui, after.ui));
  CHECK(after.ui.font_size == 18.5f);  // a text size that follows the window is not written
  CHECK(same_selection(defaults.selection, after.selection));
}

TEST_CASE("view state: a chosen text size is kept in the file, one that follows the window not") {
  AppState state;
  state.ui.font_size = 22;
  CHECK(view_state_to_json(state).find("font_size") == std::string::npos);
  state.ui.font_size_chosen = true;
  CHECK(view_state_to_json(state).find(R"("font_size":22,)") != std::string::npos);
  AppState opened;
  std::vector<std::string> warnings;
  apply_view_state(view_state_to_json(state), opened, warnings);
  CHECK(opened.ui.font_size == 22);
  CHECK(opened.ui.font_size_chosen);  // it stays as the file says when the window is resized
}

TEST_CASE("view state: the JSON holds readable names and short numbers") {
  const std::string json = view_state_to_json(customized());
  CHECK(json ==
        R"({"head":1,"query":3,"panels":["input","heatmaps","output"],"center_view":"pipeline",)"
        R"("theme":"dark","font_size":18.5,"colormap":"color-blind","show_cell_values":false,)"
        R"("heatmap_contrast":true,"arrow_threshold":0.15})");
  AppState state;
  state.ui.font_size = 18;
  state.ui.font_size_chosen = true;
  CHECK(view_state_to_json(state).find(R"("font_size":18,)") != std::string::npos);
  CHECK(view_state_to_json(state).find(R"("arrow_threshold":0.02})") != std::string::npos);
}

TEST_CASE("view state: thresholds survive the trip exactly") {
  for (const float t : {0.0f, 0.02f, 0.1f, 1.0f / 3.0f, 0.7f, 1.0f}) {
    AppState before, after;
    before.ui.arrow_threshold = t;
    std::vector<std::string> warnings;
    apply_view_state(view_state_to_json(before), after, warnings);
    CHECK(after.ui.arrow_threshold == t);
  }
}

TEST_CASE("view state: the lesson band is neither written nor read") {
  AppState state;
  state.ui.visible[static_cast<std::size_t>(view::PanelId::Lesson)] = true;
  CHECK(view_state_to_json(state).find("lesson") == std::string::npos);
  std::vector<std::string> warnings;
  apply_view_state(R"({"panels": ["heatmaps", "lesson"]})", state, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("view.panels[1]") == 0);
  CHECK(state.ui.visible[static_cast<std::size_t>(view::PanelId::Lesson)]);  // still running
  CHECK(state.ui.visible[static_cast<std::size_t>(view::PanelId::Centre)]);
  CHECK_FALSE(state.ui.visible[static_cast<std::size_t>(view::PanelId::Input)]);
}

TEST_CASE("view state: each bad value warns, names its key and keeps the setting") {
  struct Case {
    const char* json;
    const char* key;
  };
  const Case cases[] = {
      {R"({"head": -1})", "view.head"},
      {R"({"head": 1.5})", "view.head"},
      {R"({"head": 99})", "view.head"},
      {R"({"head": "1"})", "view.head"},
      {R"({"query": -3})", "view.query"},
      {R"({"query": 5000})", "view.query"},
      {R"({"query": null})", "view.query"},
      {R"({"panels": "heatmaps"})", "view.panels"},
      {R"({"panels": []})", "view.panels"},
      {R"({"panels": ["sidebar"]})", "view.panels[0]"},
      {R"({"panels": [3]})", "view.panels[0]"},
      {R"({"center_view": "timeline"})", "view.center_view"},
      {R"({"center_view": 1})", "view.center_view"},
      {R"({"theme": "solarized"})", "view.theme"},
      {R"({"theme": true})", "view.theme"},
      {R"({"font_size": "big"})", "view.font_size"},
      {R"({"colormap": "diverging"})", "view.colormap"},
      {R"({"colormap": ["sequential"]})", "view.colormap"},
      {R"({"show_cell_values": 1})", "view.show_cell_values"},
      {R"({"heatmap_contrast": "yes"})", "view.heatmap_contrast"},
      {R"({"arrow_threshold": 2})", "view.arrow_threshold"},
      {R"({"arrow_threshold": -0.1})", "view.arrow_threshold"},
      {R"({"arrow_threshold": "0.1"})", "view.arrow_threshold"},
      {R"({"zoom": 2})", "view.zoom"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    AppState state = customized();
    const AppState before = customized();
    std::vector<std::string> warnings;
    apply_view_state(c.json, state, warnings);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].rfind(std::string(c.key) + ": ", 0) == 0);
    CHECK(same_ui_but_text_size(state.ui, before.ui));
    CHECK(same_selection(state.selection, before.selection));
  }
}

TEST_CASE("view state: valid entries apply even beside invalid ones") {
  AppState state;
  std::vector<std::string> warnings;
  apply_view_state(R"({"theme": "dark", "head": -2, "panels": ["arrows", "nope"], "mystery": {}})",
                   state, warnings);
  CHECK(state.ui.theme == Theme::Dark);
  CHECK(state.selection.head == 0);
  CHECK(state.ui.visible == view::PanelVisibility{false, false, false, true, false, false});
  CHECK(warnings.size() == 3);
  CHECK(any_names(warnings, "view.head"));
  CHECK(any_names(warnings, "view.panels[1]"));
  CHECK(any_names(warnings, "view.mystery"));
}

TEST_CASE("view state: the font size is clamped to 10..64") {
  AppState state;
  std::vector<std::string> warnings;
  apply_view_state(R"({"font_size": 200})", state, warnings);
  CHECK(state.ui.font_size == 64);
  apply_view_state(R"({"font_size": 2})", state, warnings);
  CHECK(state.ui.font_size == 10);
  CHECK(warnings.size() == 2);
  CHECK(any_names(warnings, "view.font_size"));
  warnings.clear();
  apply_view_state(R"({"font_size": 24})", state, warnings);
  CHECK(state.ui.font_size == 24);
  CHECK(warnings.empty());
}

TEST_CASE("view state: the other spellings the command line accepts") {
  AppState state;
  std::vector<std::string> warnings;
  apply_view_state(R"({"colormap": "colour-blind", "head": 2.0})", state, warnings);
  CHECK(warnings.empty());
  CHECK(state.ui.colormap == view::ColormapId::ColorBlindSafe);
  CHECK(state.selection.head == 2);
}

TEST_CASE("view state: malformed JSON gives one warning and changes nothing") {
  const char* inputs[] = {
      "{\"theme\": \"dark\"", "{theme: dark}", "[1, 2", "\xff\xfe", "{\"a\": 1,}", "nul"};
  for (const char* input : inputs) {
    CAPTURE(input);
    AppState state = customized();
    std::vector<std::string> warnings;
    apply_view_state(input, state, warnings);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].rfind("view: malformed JSON", 0) == 0);
    CHECK(same_ui_but_text_size(state.ui, customized().ui));
  }
}

TEST_CASE("view state: not an object, too deep, or empty") {
  AppState state = customized();
  std::vector<std::string> warnings;
  apply_view_state("[\"dark\"]", state, warnings);
  apply_view_state("42", state, warnings);
  apply_view_state(std::string(100000, '[') + std::string(100000, ']'), state, warnings);
  CHECK(warnings.size() == 3);
  for (const std::string& w : warnings) CHECK(w.rfind("view: ", 0) == 0);
  warnings.clear();
  apply_view_state("", state, warnings);
  apply_view_state("  \n", state, warnings);
  apply_view_state("{}", state, warnings);
  CHECK(warnings.empty());
  CHECK(same_ui_but_text_size(state.ui, customized().ui));
}

TEST_CASE("view state: the JSON a scenario file keeps is accepted as it is") {
  // parse_scenario keeps "view" as nlohmann's dump: keys sorted, no spaces; comments allowed.
  AppState state;
  std::vector<std::string> warnings;
  apply_view_state("{\"center_view\":\"geometry\" /* the arrows */, \"query\":4}", state, warnings);
  CHECK(warnings.empty());
  CHECK(state.ui.center_view == CenterView::Geometry);
  CHECK(state.selection.query == 4);
}

}  // namespace attnviz::app

namespace attnviz::app {
namespace {

// A setting of a view of the test's own, registered as a view's file registers one
// (app/session/view_settings.hpp): written after the app's settings, left out at its default.
int read_zoom(const Json& value, const std::string& path, JsonReader&, const int&) {
  return view_json::whole_number(value, path, 1, 8, "a zoom from 1 to 8");
}
OrderedJson write_zoom(const int& zoom) {
  return zoom == 1 ? OrderedJson() : OrderedJson(zoom);
}
const ViewSetting<int> kZoom{"test_zoom", 1000, 1, read_zoom, write_zoom};

}  // namespace

TEST_CASE("view state: a view's own setting registers itself, is read and written by its key") {
  AppState state;
  CHECK(view_state_to_json(state).find("test_zoom") == std::string::npos);  // the default
  kZoom.in(state.ui.views) = 4;
  const std::string json = view_state_to_json(state);
  // After every setting of the app's (ranked lower), at the end.
  CHECK(json.size() > 14);
  CHECK(json.substr(json.size() - 14) == R"("test_zoom":4})");
  AppState other;
  std::vector<std::string> warnings;
  apply_view_state(json, other, warnings);
  CHECK(warnings.empty());
  CHECK(kZoom.in(other.ui.views) == 4);
  // A wrong value: a warning naming the key path, and the setting as it was.
  apply_view_state(R"({"test_zoom": 12})", other, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "view.test_zoom: expected a zoom from 1 to 8, got 12 (ignored)");
  CHECK(kZoom.in(other.ui.views) == 4);
  // As a lesson step sets a view's part, by the setting's key.
  std::string message;
  CHECK(read_view_setting("test_zoom", Json(2), other.ui.views, message));
  CHECK(kZoom.in(other.ui.views) == 2);
  CHECK_FALSE(read_view_setting("test_zoom", Json("big"), other.ui.views, message));
  CHECK(message.find("test_zoom") == 0);
  CHECK_FALSE(read_view_setting("no_such_setting", Json(1), other.ui.views, message));
}

}  // namespace attnviz::app
