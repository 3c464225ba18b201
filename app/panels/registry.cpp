#include "app/panels/registry.hpp"

#include <array>
#include <string>

namespace attnviz::app {
namespace {

// A function's static: the panels' files register before main(), in an order nobody chooses.
std::array<PanelFactory, view::kViewCount>& factories() {
  static std::array<PanelFactory, view::kViewCount> registered{};
  return registered;
}

}  // namespace

bool register_panel(view::ViewId id, PanelFactory make) {
  factories()[static_cast<std::size_t>(id)] = make;
  return true;
}

Result<std::vector<HostedPanel>> make_panels() {
  std::vector<HostedPanel> panels;
  for (const view::ViewInfo& row : view::kViews) {
    const PanelFactory make = factories()[static_cast<std::size_t>(row.id)];
    if (!make) return Status::error("no panel draws the view \"" + std::string(row.name) + "\"");
    panels.push_back({&row, make()});
  }
  return panels;
}

}  // namespace attnviz::app
