#include "app/session/view_state.hpp"

#include "core/base/float_text.hpp"
#include "core/document/json.hpp"
#include "core/document/scenario.hpp"
#include "core/figures/views.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

namespace attnviz::app {
namespace {

using OrderedJson = nlohmann::ordered_json;

// The float written as the shortest decimal that reads back to it (0.02, not 0.0199999995).
double shortest(float value) {
  return shortest_as_double(value);
}

std::optional<int> whole_number(const Json& value, int low, int high) {
  if (!value.is_number()) return std::nullopt;
  const double x = value.get<double>();
  if (!std::isfinite(x) || x != std::floor(x) || x < low || x > high) return std::nullopt;
  return static_cast<int>(x);
}

class Applier {
 public:
  Applier(AppState& state, std::vector<std::string>& warnings)
      : state_(state), warnings_(warnings) {}

  void apply(const Json& root) {
    for (const auto& [key, value] : root.items()) {
      if (key == "layer")
        layer(value);
      else if (key == "head")
        head(value);
      else if (key == "query")
        query(value);
      else if (key == "panels")
        panels(value);
      else if (key == "center_view")
        center_view(value);
      else if (key == "theme")
        theme(value);
      else if (key == "font_size")
        font_size(value);
      else if (key == "colormap")
        colormap(value);
      else if (key == "show_cell_values")
        show_cell_values(value);
      else if (key == "heatmap_contrast")
        heatmap_contrast(value);
      else if (key == "arrow_threshold")
        arrow_threshold(value);
      else if (key == "sampling")
        sampling(value);
      else if (key == "layers_view")
        layers_view(value);
      else if (key == "cheaper_method")
        cheaper_method(value);
      else
        warn(key, "unknown key (ignored)");
    }
  }

 private:
  void warn(const std::string& key, const std::string& message) {
    warnings_.push_back("view." + key + ": " + message);
  }
  void invalid(const std::string& key, const std::string& expected, const Json& value) {
    warn(key, "expected " + expected + ", got " + json_shown(value) + " (ignored)");
  }

  void layer(const Json& value) {  // a model's (the one-layer scenario has layer 0 only)
    if (const auto layer = whole_number(value, 0, 4095))
      state_.selection.layer = *layer;
    else
      invalid("layer", "a layer number from 0 to 4095", value);
  }

  void head(const Json& value) {
    const std::string expected = "a head number from 0 to " + std::to_string(Limits::kMaxHeads - 1);
    if (const auto head = whole_number(value, 0, Limits::kMaxHeads - 1))
      state_.selection.head = *head;
    else
      invalid("head", expected, value);
  }

  void query(const Json& value) {
    const std::string expected =
        "a token number from 0 to " + std::to_string(Limits::kMaxTokens - 1);
    if (const auto query = whole_number(value, 0, Limits::kMaxTokens - 1))
      state_.selection.query = *query;
    else
      invalid("query", expected, value);
  }

  void panels(const Json& value) {
    const char* expected = "a list of panels (input, weights, heatmaps, arrows, output)";
    if (!value.is_array()) return invalid("panels", expected, value);
    view::PanelVisibility visible{};
    bool any = false;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const Json& item = value[i];
      const auto id =
          item.is_string() ? view::parse_panel(item.get_ref<const std::string&>()) : std::nullopt;
      if (!id || *id == view::PanelId::Lesson) {
        invalid("panels[" + std::to_string(i) + "]", "input, weights, heatmaps, arrows or output",
                item);
        continue;
      }
      visible[static_cast<std::size_t>(*id)] = true;
      any = true;
    }
    if (!any) {
      if (value.empty()) invalid("panels", expected, value);
      return;
    }
    // The lesson band follows the lesson, not the file.
    const auto lesson = static_cast<std::size_t>(view::PanelId::Lesson);
    visible[lesson] = state_.ui.visible[lesson];
    state_.ui.visible = visible;
  }

  void center_view(const Json& value) {
    const auto view =
        value.is_string() ? parse_center_view(value.get_ref<const std::string&>()) : std::nullopt;
    if (view)
      state_.ui.center_view = *view;
    else
      invalid("center_view", view::centre_view_names(", ", " or "), value);
  }

  void theme(const Json& value) {
    if (value == "light")
      state_.ui.theme = Theme::Light;
    else if (value == "dark")
      state_.ui.theme = Theme::Dark;
    else
      invalid("theme", "\"light\" or \"dark\"", value);
  }

  void font_size(const Json& value) {
    if (!value.is_number()) return invalid("font_size", "a number of pixels", value);
    const double size = value.get<double>();
    const double clamped = std::clamp(size, double(kMinViewFontSize), double(kMaxViewFontSize));
    if (clamped != size)
      warn("font_size",
           json_shown(value) + " is outside 10 to 64; using " + json_shown(Json(clamped)));
    state_.ui.font_size = static_cast<float>(clamped);
    state_.ui.font_size_chosen = true;
  }

  void colormap(const Json& value) {
    if (value == "sequential")
      state_.ui.colormap = view::ColormapId::Sequential;
    else if (value == "color-blind" || value == "colour-blind")
      state_.ui.colormap = view::ColormapId::ColorBlindSafe;
    else
      invalid("colormap", "\"sequential\" or \"color-blind\"", value);
  }

  void heatmap_contrast(const Json& value) {
    if (value.is_boolean())
      state_.ui.heatmap_contrast = value.get<bool>();
    else
      invalid("heatmap_contrast", "true or false", value);
  }

  void show_cell_values(const Json& value) {
    if (value.is_boolean())
      state_.ui.show_cell_values = value.get<bool>();
    else
      invalid("show_cell_values", "true or false", value);
  }

  // {"temperature": 0.7, "top_k": 40, "top_p": 0.9}: each key optional, each checked alone.
  void sampling(const Json& value) {
    if (!value.is_object()) {
      invalid("sampling", "an object such as {\"temperature\": 0.7, \"top_k\": 40}", value);
      return;
    }
    SamplingSettings& s = state_.ui.sampling;
    for (const auto& [key, entry] : value.items()) {
      const double x = entry.is_number() ? entry.get<double>() : -1;
      if (key == "temperature" && entry.is_number() && x >= 0 && x <= 100)
        s.temperature = static_cast<float>(x);
      else if (key == "top_k" && whole_number(entry, 0, 100000))
        s.top_k = *whole_number(entry, 0, 100000);
      else if (key == "top_p" && entry.is_number() && x > 0 && x <= 1)
        s.top_p = static_cast<float>(x);
      else if (key == "temperature" || key == "top_k" || key == "top_p")
        invalid("sampling." + key,
                key == "temperature" ? "a number from 0 to 100"
                : key == "top_k"     ? "a whole number from 0 (every token) to 100000"
                                     : "a number above 0, at most 1",
                entry);
      else
        warn("sampling." + key, "unknown key (ignored)");
    }
  }

  void layers_view(const Json& value) {
    using Section = UiSettings::LayersSection;
    const std::string name = value.is_string() ? value.get<std::string>() : "";
    if (name == "lens")
      state_.ui.layers_section = Section::Lens;
    else if (name == "rollout")
      state_.ui.layers_section = Section::Rollout;
    else if (name == "residual")
      state_.ui.layers_section = Section::Residual;
    else
      invalid("layers_view", "\"lens\", \"rollout\" or \"residual\"", value);
  }

  void cheaper_method(const Json& value) {
    const std::string name = value.is_string() ? value.get<std::string>() : "";
    for (std::size_t i = 0; i < view::kCheaperMethods.size(); ++i)
      if (name == view::kCheaperMethods[i]) {
        state_.ui.cheaper_method = static_cast<UiSettings::CheaperMethod>(i);
        return;
      }
    invalid("cheaper_method",
            "\"flash\", \"linformer\", \"reformer\", \"sparse\", \"shared_keys\" or "
            "\"decoding\"",
            value);
  }

  void arrow_threshold(const Json& value) {
    const double x = value.is_number() ? value.get<double>() : -1;
    if (value.is_number() && x >= 0 && x <= 1)
      state_.ui.arrow_threshold = static_cast<float>(x);
    else
      invalid("arrow_threshold", "a weight from 0 to 1", value);
  }

  AppState& state_;
  std::vector<std::string>& warnings_;
};

}  // namespace

std::string view_state_to_json(const AppState& state) {
  const UiSettings& ui = state.ui;
  OrderedJson view = OrderedJson::object();
  if (state.selection.layer != 0) view["layer"] = state.selection.layer;  // a model's
  view["head"] = state.selection.head;
  view["query"] = state.selection.query;
  OrderedJson panels = OrderedJson::array();
  for (int i = 0; i < view::kPanelCount; ++i) {
    const auto id = static_cast<view::PanelId>(i);
    if (id != view::PanelId::Lesson && ui.visible[static_cast<std::size_t>(i)])
      panels.push_back(std::string(view::panel_name(id)));
  }
  view["panels"] = std::move(panels);
  view["center_view"] = std::string(to_string(ui.center_view));
  view["theme"] = ui.theme == Theme::Dark ? "dark" : "light";
  // Only a size chosen: one that follows the window is the next window's to choose.
  if (ui.font_size_chosen) {
    if (ui.font_size == std::floor(ui.font_size) && std::abs(ui.font_size) < 1e6f)
      view["font_size"] = static_cast<int>(ui.font_size);
    else
      view["font_size"] = shortest(ui.font_size);
  }
  view["colormap"] = ui.colormap == view::ColormapId::ColorBlindSafe ? "color-blind" : "sequential";
  view["show_cell_values"] = ui.show_cell_values;
  view["heatmap_contrast"] = ui.heatmap_contrast;
  view["arrow_threshold"] = shortest(ui.arrow_threshold);
  // A real model's settings, when they are not the defaults (files before them stay as they were).
  const SamplingSettings defaults;
  if (ui.sampling.temperature != defaults.temperature || ui.sampling.top_k != defaults.top_k ||
      ui.sampling.top_p != defaults.top_p) {
    OrderedJson sampling = OrderedJson::object();
    sampling["temperature"] = shortest(ui.sampling.temperature);
    sampling["top_k"] = ui.sampling.top_k;
    sampling["top_p"] = shortest(ui.sampling.top_p);
    view["sampling"] = std::move(sampling);
  }
  using Section = UiSettings::LayersSection;
  if (ui.layers_section != Section::Lens)
    view["layers_view"] = ui.layers_section == Section::Rollout ? "rollout" : "residual";
  if (ui.cheaper_method != UiSettings::CheaperMethod::Flash)
    view["cheaper_method"] =
        std::string(view::kCheaperMethods[static_cast<std::size_t>(ui.cheaper_method)]);
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
  try {
    Applier(state, warnings).apply(root);
  } catch (const Json::exception& e) {  // not expected: every access is checked
    warnings.push_back(std::string("view: ") + e.what());
  }
}

}  // namespace attnviz::app
