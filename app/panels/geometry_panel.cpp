// The Geometry view (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class GeometryPanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Heatmaps; }
  std::optional<CenterView> center_view() const override { return CenterView::Geometry; }
  const char* title() const override { return "Geometry"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_geometry_panel() { return std::make_unique<GeometryPanel>(); }

}  // namespace attnviz::app
