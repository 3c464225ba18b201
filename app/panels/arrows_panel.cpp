// The Arrows panel (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class ArrowsPanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Arrows; }
  const char* title() const override { return "Arrows"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_arrows_panel() { return std::make_unique<ArrowsPanel>(); }

}  // namespace attnviz::app
