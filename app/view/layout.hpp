// Where the panels go on screen: the dashboard tiled over the window. Pure geometry, no GL and
// no ImGui, so it is unit-tested. The geometry inside a figure (heatmap grid, labels, arrows)
// is core/figures/figure_layout.hpp, shared with the SVG export.
#pragma once

#include "core/figures/figure_layout.hpp"

#include <array>
#include <optional>
#include <string_view>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] Dashboard: the panels tiled over the window
// -----------------------------------------------------------------------------
// Heatmaps is the centre slot, which hosts the views (heatmaps, pipeline, neuron, geometry,
// compare) as tabs; Lesson is a band across the top while a lesson runs.
enum class PanelId { Input = 0, Weights, Heatmaps, Arrows, Output, Lesson, Count };
inline constexpr int kPanelCount = static_cast<int>(PanelId::Count);
std::string_view panel_name(PanelId id);  // "input", "weights", ... (command-line names)
std::optional<PanelId> parse_panel(std::string_view name);

using PanelVisibility = std::array<bool, kPanelCount>;
inline constexpr PanelVisibility kAllPanels = {true, true, true, true, true, false};

// One rectangle per panel; a hidden panel gets an empty one and its neighbours take its room.
//   +-----------------------------------+
//   | Lesson (while a lesson runs)      |
//   +--------+--------------+-----------+
//   | Input  | Heatmaps     | Arrows    |
//   |        |              +-----------+
//   |        |              | Output    |
//   +--------+--------------+-----------+
//   | Weights                           |
//   +-----------------------------------+
using DashboardLayout = std::array<Rect, kPanelCount>;
DashboardLayout layout_dashboard(Rect area, const PanelVisibility& visible, float gap,
                                 float lesson_height = 0);

}  // namespace attnviz::view
