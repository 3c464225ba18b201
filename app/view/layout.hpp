// Where the panels go on screen: the dashboard tiled over the window. Pure geometry, no GL and
// no ImGui, so it is unit-tested. The geometry inside a figure (heatmap grid, labels, arrows)
// is core/figures/figure_layout.hpp, shared with the SVG export.
#pragma once

#include "core/figures/figure_layout.hpp"
#include "core/figures/views.hpp"

#include <array>
#include <optional>
#include <string_view>
#include <vector>

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

// The dashboard: each shown panel's window, tiled over the window.
//   +-----------------------------------+
//   | Lesson (while a lesson runs)      |
//   +--------+--------------+-----------+
//   | Input  | Centre       | Arrows    |
//   |        |              +-----------+
//   |        |              | Output    |
//   +--------+--------------+-----------+
//   | Weights                           |
//   +-----------------------------------+
// A panel is usable only from a size that grows with the text (panel_needs). When the window has
// too little room for every shown panel at that size (large text, a small window), panels give
// way in this order: Arrows and Output share the right column as tabs; then they become tabs of
// the centre; then Input does too (one column of tabs over the Weights band); then Weights (one
// window of tabs). A hidden panel gets no room and its neighbours take it.
enum class Arrangement { Dashboard, RightTabs, TwoColumns, OneColumn, AllTabs };
std::string_view to_string(Arrangement arrangement);

// The least room in which a panel is usable, in pixels, for text of `font` pixels: as many text
// lines as its controls take, and room for a few rows of a sentence (a view scrolls for more).
struct Size {
  float w = 0, h = 0;
};
Size panel_needs(PanelId id, float font);

// A window of the dashboard: one panel, or several as tabs (in PanelId order).
struct DashboardWindow {
  Rect rect;
  std::vector<PanelId> panels;
  bool tabs() const { return panels.size() > 1; }
};

struct DashboardLayout {
  Arrangement arrangement = Arrangement::Dashboard;
  std::array<Rect, kPanelCount> panels{};  // the window each panel is in (empty: not shown)
  std::vector<DashboardWindow> windows;    // every window, lesson band first
  const Rect& operator[](PanelId id) const { return panels[static_cast<std::size_t>(id)]; }
  // The window that holds a panel, if it is shown.
  const DashboardWindow* window_of(PanelId id) const;
};

// `font`: the text size in pixels.
DashboardLayout layout_dashboard(Rect area, const PanelVisibility& visible, float gap,
                                 float lesson_height, float font);

// Presenter mode: the lesson band (when a lesson runs: `lesson_height`, 0 otherwise, at most
// `lesson_share` of the height: more while a predict step covers the views), the sentence as a
// strip of tokens under it, and one view filling the rest.
struct PresenterLayout {
  Rect lesson, sentence, view;
};
PresenterLayout layout_presenter(Rect area, float gap, float lesson_height, float sentence_height,
                                 float lesson_share = 0.4f);

// The text size that suits a window `height` pixels tall: 16 px at 720 lines, growing with it.
float suited_font_size(float height);
// Presenter mode's: half as large again, in whole steps of 2 px (24 px at 720 lines).
float suited_presenter_font_size(float height);
// The largest text size at which every panel is still usable in a window of that size (in one
// window of tabs, at worst, under the menu bar): the largest the app offers for that window.
float largest_usable_font_size(float window_width, float window_height);

}  // namespace attnviz::view
