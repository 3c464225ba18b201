// The Weights panel (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class WeightsPanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Weights; }
  const char* title() const override { return "Weights"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_weights_panel() { return std::make_unique<WeightsPanel>(); }

}  // namespace attnviz::app
