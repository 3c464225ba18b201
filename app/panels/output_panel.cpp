// The Output panel (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class OutputPanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Output; }
  const char* title() const override { return "Output"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_output_panel() { return std::make_unique<OutputPanel>(); }

}  // namespace attnviz::app
