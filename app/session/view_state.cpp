#include "app/session/view_state.hpp"

#include "core/base/float_text.hpp"
#include "core/document/json.hpp"
#include "core/document/scenario.hpp"
#include "core/figures/views.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>

namespace attnviz::app {
namespace {

using namespace view_json;

// The float written as the shortest decimal that reads back to it (0.02, not 0.0199999995).
double shortest(float value) {
  return shortest_as_double(value);
}

// What a "view" entry is read into and written from.
struct ViewTarget {
  Selection& selection;
  UiSettings& ui;
};

// One of the app's keys of the "view" object (the views' own register themselves:
// app/session/view_settings.hpp): how it is read (throwing JsonFailure, or warning through the
// reader for a part of it) and written (nothing: left out, as a default is). In the order written.
struct AppSetting {
  std::string_view key;
  void (*read)(const Json& value, const std::string& path, ViewTarget& target, JsonReader& reader);
  void (*write)(const Selection& selection, const UiSettings& ui, OrderedJson& view);
};

constexpr std::array<std::string_view, 2> kThemes = {"light", "dark"};

// clang-format off
const AppSetting kViewSettings[] = {
  {"layer",  // a model's (the one-layer scenario has layer 0 only)
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.selection.layer = whole_number(value, path, 0, 4095, "a layer number from 0 to 4095");
   },
   [](const Selection& selection, const UiSettings&, OrderedJson& view) {
     if (selection.layer != 0) view["layer"] = selection.layer;
   }},
  {"head",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.selection.head = whole_number(value, path, 0, Limits::kMaxHeads - 1,
         "a head number from 0 to " + std::to_string(Limits::kMaxHeads - 1));
   },
   [](const Selection& selection, const UiSettings&, OrderedJson& view) {
     view["head"] = selection.head;
   }},
  {"query",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.selection.query = whole_number(value, path, 0, Limits::kMaxTokens - 1,
         "a token number from 0 to " + std::to_string(Limits::kMaxTokens - 1));
   },
   [](const Selection& selection, const UiSettings&, OrderedJson& view) {
     view["query"] = selection.query;
   }},
  {"panels",  // a wrong item is left out, the others kept
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader& reader) {
     const char* what = "a list of panels (input, weights, heatmaps, arrows, output)";
     if (!value.is_array() || value.empty()) expected(path, what, value);
     view::PanelVisibility visible{};
     bool any = false;
     for (std::size_t i = 0; i < value.size(); ++i) {
       const Json& item = value[i];
       const auto id =
           item.is_string() ? view::parse_panel(item.get_ref<const std::string&>()) : std::nullopt;
       if (!id || *id == view::PanelId::Lesson) {
         reader.warning(path + "[" + std::to_string(i) +
                        "]: expected input, weights, heatmaps, arrows or output, got " +
                        json_shown(item) + " (ignored)");
         continue;
       }
       visible[static_cast<std::size_t>(*id)] = true;
       any = true;
     }
     if (!any) return;
     // The lesson band follows the lesson, not the file.
     const auto lesson = static_cast<std::size_t>(view::PanelId::Lesson);
     visible[lesson] = target.ui.visible[lesson];
     target.ui.visible = visible;
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     OrderedJson panels = OrderedJson::array();
     for (int i = 0; i < view::kPanelCount; ++i) {
       const auto id = static_cast<view::PanelId>(i);
       if (id != view::PanelId::Lesson && ui.visible[static_cast<std::size_t>(i)])
         panels.push_back(std::string(view::panel_name(id)));
     }
     view["panels"] = std::move(panels);
   }},
  {"center_view",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     const auto view =
         value.is_string() ? parse_center_view(value.get_ref<const std::string&>()) : std::nullopt;
     if (!view) expected(path, view::centre_view_names(", ", " or "), value);
     target.ui.center_view = *view;
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     view["center_view"] = std::string(to_string(ui.center_view));
   }},
  {"theme",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.ui.theme = one_of(value, path, kThemes, "\"light\" or \"dark\"") == 1 ? Theme::Dark
                                                                                : Theme::Light;
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     view["theme"] = ui.theme == Theme::Dark ? "dark" : "light";
   }},
  {"font_size",  // only a size chosen: one that follows the window is the next window's to choose
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader& reader) {
     const double size = value.is_number() ? value.get<double>() : NAN;
     if (!std::isfinite(size)) expected(path, "a number of pixels", value);
     const double clamped = std::clamp(size, double(kMinViewFontSize), double(kMaxViewFontSize));
     if (clamped != size)
       reader.warning(path + ": " + json_shown(value) + " is outside 10 to 64; using " +
                      json_shown(Json(clamped)));
     target.ui.font_size = static_cast<float>(clamped);
     target.ui.font_size_chosen = true;
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     if (!ui.font_size_chosen) return;
     if (ui.font_size == std::floor(ui.font_size) && std::abs(ui.font_size) < 1e6f)
       view["font_size"] = static_cast<int>(ui.font_size);
     else
       view["font_size"] = shortest(ui.font_size);
   }},
  {"colormap",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     constexpr std::array<std::string_view, 3> kNames = {"sequential", "color-blind",
                                                         "colour-blind"};
     target.ui.colormap = one_of(value, path, kNames, "\"sequential\" or \"color-blind\"") == 0
                              ? view::ColormapId::Sequential
                              : view::ColormapId::ColorBlindSafe;
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     view["colormap"] =
         ui.colormap == view::ColormapId::ColorBlindSafe ? "color-blind" : "sequential";
   }},
  {"show_cell_values",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.ui.show_cell_values = flag(value, path);
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     view["show_cell_values"] = ui.show_cell_values;
   }},
  {"heatmap_contrast",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.ui.heatmap_contrast = flag(value, path);
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     view["heatmap_contrast"] = ui.heatmap_contrast;
   }},
  {"arrow_threshold",
   [](const Json& value, const std::string& path, ViewTarget& target, JsonReader&) {
     target.ui.arrow_threshold = number_in(value, path, 0, 1, true, "a weight from 0 to 1");
   },
   [](const Selection&, const UiSettings& ui, OrderedJson& view) {
     view["arrow_threshold"] = shortest(ui.arrow_threshold);
   }},
};
// clang-format on

}  // namespace

std::string view_state_to_json(const AppState& state) {
  OrderedJson view = OrderedJson::object();
  // The app's settings (ranked by their place in kViewSettings, 10 apart) and the views' own
  // (app/session/view_settings.hpp), in rank order.
  const std::vector<const ViewSettingEntry*> registered = registered_view_settings();
  auto next = registered.begin();
  int rank = 0;
  for (const AppSetting& setting : kViewSettings) {
    for (; next != registered.end() && (*next)->rank < rank; ++next)
      (*next)->write(state.ui.views, view);
    setting.write(state.selection, state.ui, view);
    rank += 10;
  }
  for (; next != registered.end(); ++next) (*next)->write(state.ui.views, view);
  return view.dump();
}

void apply_view_state(std::string_view json, AppState& state, std::vector<std::string>& warnings) {
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) return;
  Result<Json> parsed = parse_json(json);
  if (!parsed) {
    warnings.push_back("view: " + parsed.error() + " (ignored)");
    return;
  }
  const Json root = std::move(*parsed);
  if (!root.is_object()) {
    warnings.push_back("view: expected an object, got " + json_shown(root) + " (ignored)");
    return;
  }
  JsonReader reader(warnings);
  ViewTarget target{state.selection, state.ui};
  for (const auto& item : root.items()) {  // not a structured binding: the lambdas use the key
    const std::string& key = item.key();
    const Json& value = item.value();
    const std::string path = "view." + key;
    const auto setting = std::find_if(std::begin(kViewSettings), std::end(kViewSettings),
                                      [&](const AppSetting& s) { return s.key == key; });
    const std::vector<const ViewSettingEntry*> registered = registered_view_settings();
    const auto views = std::find_if(registered.begin(), registered.end(),
                                    [&](const ViewSettingEntry* s) { return s->key == key; });
    if (setting == std::end(kViewSettings) && views == registered.end()) {
      warnings.push_back(path + ": unknown key (ignored)");
      continue;
    }
    try {
      if (setting != std::end(kViewSettings))
        setting->read(value, path, target, reader);
      else
        (*views)->read(value, path, reader, state.ui.views);
    } catch (const JsonFailure& failure) {  // this setting stays as it was
      warnings.push_back(failure.message + " (ignored)");
    } catch (const Json::exception& e) {  // not expected: every access is checked
      warnings.push_back(path + ": " + without_exception_id(e.what()) + " (ignored)");
    }
  }
}

}  // namespace attnviz::app
