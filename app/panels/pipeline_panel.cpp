// The Pipeline view (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class PipelinePanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Heatmaps; }
  std::optional<CenterView> center_view() const override { return CenterView::Pipeline; }
  const char* title() const override { return "Pipeline"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_pipeline_panel() { return std::make_unique<PipelinePanel>(); }

}  // namespace attnviz::app
