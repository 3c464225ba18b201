// Where the panels go on screen: the dashboard tiled over the window. Pure geometry, no GL and
// no ImGui, so it is unit-tested. The geometry inside a figure (heatmap grid, labels, arrows)
// is core/figures/figure_layout.hpp, shared with the SVG export.
#pragma once

#include "core/figures/figure_layout.hpp"
#include "core/figures/views.hpp"

#include <array>
#include <optional>
#include <string_view>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] Dashboard: the panels tiled over the window
// -----------------------------------------------------------------------------
// The panels are the dashboard's slots (core/figures/views.hpp: their names, and which views
// each holds): Centre hosts the centre views as tabs; Lesson is a band across the top while a
// lesson runs.
using PanelId = Slot;
inline constexpr int kPanelCount = kSlotCount;
// "input", "weights", ... (the names users type)
inline std::string_view panel_name(PanelId id) {
  return slot_name(id);
}
inline std::optional<PanelId> parse_panel(std::string_view name) {
  return parse_slot(name);
}

using PanelVisibility = std::array<bool, kPanelCount>;
inline constexpr PanelVisibility kAllPanels = {true, true, true, true, true, false};

// One rectangle per panel; a hidden panel gets an empty one and its neighbours take its room.
//   +-----------------------------------+
//   | Lesson (while a lesson runs)      |
//   +--------+--------------+-----------+
//   | Input  | Centre       | Arrows    |
//   |        |              +-----------+
//   |        |              | Output    |
//   +--------+--------------+-----------+
//   | Weights                           |
//   +-----------------------------------+
using DashboardLayout = std::array<Rect, kPanelCount>;
DashboardLayout layout_dashboard(Rect area, const PanelVisibility& visible, float gap,
                                 float lesson_height = 0);

}  // namespace attnviz::view
