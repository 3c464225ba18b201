// A panel draws only its content; the framework (app.cpp) owns the window around it, places it
// with the dashboard layout and calls the panels in order: editors first, then views, with a
// recompute between them, so every view shows the edits made earlier in the same frame.
#pragma once

#include "app/view/text_escapes.hpp"
#include "app/session/app_state.hpp"

#include <memory>
#include <optional>

struct ImFont;

namespace attnviz::render {
class HeatmapRenderer;
}

namespace attnviz::app {

struct PanelContext {
  render::HeatmapRenderer& heatmaps;
  view::TextEscapes& text_escapes;  // for text fields: what ImGui cannot hold (emoji)
  ImFont* bold_font = nullptr;
  ImFont* mono_font = nullptr;
};

class Panel {
 public:
  virtual ~Panel() = default;
  virtual view::PanelId id() const = 0;
  virtual const char* title() const = 0;
  // Views in the centre slot (id() == PanelId::Heatmaps) are tabs; this says which one.
  virtual std::optional<CenterView> center_view() const { return std::nullopt; }
  // Called only when the pipeline has a result (state.computed.has_result): at least one head, one query
  // and one key, so a panel need not check for an empty one.
  virtual void draw_content(AppState& state, PanelContext& context) = 0;
};

std::unique_ptr<Panel> make_input_panel();
std::unique_ptr<Panel> make_weights_panel();
std::unique_ptr<Panel> make_heatmap_panel();
std::unique_ptr<Panel> make_arrows_panel();
std::unique_ptr<Panel> make_output_panel();
std::unique_ptr<Panel> make_pipeline_panel();
std::unique_ptr<Panel> make_neuron_panel();
std::unique_ptr<Panel> make_geometry_panel();
std::unique_ptr<Panel> make_compare_panel();
std::unique_ptr<Panel> make_lesson_panel();

}  // namespace attnviz::app
