// The panels, one for each view of core/figures/views.hpp's table. A panel's file registers its
// class for its view (ATTNVIZ_REGISTER_PANEL, next to the class); the shell makes them all in
// the table's order. Adding a view: a row in the table and a panel file.
#pragma once

#include <memory>
#include <vector>

#include "app/panels/panel.hpp"
#include "core/base/status.hpp"
#include "core/figures/views.hpp"

namespace attnviz::app {

using PanelFactory = std::unique_ptr<Panel> (*)();

// A panel with its row of the table (its name, title and slot).
struct HostedPanel {
  const view::ViewInfo* view = nullptr;
  std::unique_ptr<Panel> panel;
};

// Called before main() by ATTNVIZ_REGISTER_PANEL; returns true, to initialise a static.
bool register_panel(view::ViewId id, PanelFactory make);

// One panel for every view of view::kViews, in its order; an error names a view with no panel.
Result<std::vector<HostedPanel>> make_panels();

}  // namespace attnviz::app

// In a panel's file, at namespace scope: ATTNVIZ_REGISTER_PANEL(view::ViewId::Heatmaps,
// HeatmapPanel);
#define ATTNVIZ_REGISTER_PANEL(view_id, PanelClass)                                            \
  [[maybe_unused]] static const bool kRegistered##PanelClass = ::attnviz::app::register_panel( \
      view_id,                                                                                 \
      []() -> std::unique_ptr<::attnviz::app::Panel> { return std::make_unique<PanelClass>(); })
