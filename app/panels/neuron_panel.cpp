// The Neuron view (placeholder until it is written).
#include "app/panels/panel.hpp"

#include <imgui.h>

namespace attnviz::app {
namespace {

class NeuronPanel final : public Panel {
 public:
  view::PanelId id() const override { return view::PanelId::Heatmaps; }
  std::optional<CenterView> center_view() const override { return CenterView::Neuron; }
  const char* title() const override { return "Neuron"; }
  void draw_content(AppState&, PanelContext&) override { ImGui::TextUnformatted("(not built yet)"); }
};

}  // namespace

std::unique_ptr<Panel> make_neuron_panel() { return std::make_unique<NeuronPanel>(); }

}  // namespace attnviz::app
