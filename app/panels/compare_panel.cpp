// The Compare view (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class ComparePanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Heatmaps; }
  std::optional<CenterView> center_view() const override { return CenterView::Compare; }
  const char* title() const override { return "Compare"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_compare_panel() { return std::make_unique<ComparePanel>(); }

}  // namespace attnviz::app
