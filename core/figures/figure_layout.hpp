// The geometry of a figure of attention, in any medium (the app's views and the SVG export):
// rectangles, the heatmap grid with its labels and hit-testing, label placement, and the arrows
// view's token positions. Pure geometry: no GL, no ImGui, unit-tested.
//   [SECTION] Rectangles
//   [SECTION] Heatmap grid: cells, labels, hit-testing
//   [SECTION] Label placement
//   [SECTION] Arrows: token positions on two sides
#pragma once

#include <array>
#include <optional>
#include <vector>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] Rectangles
// -----------------------------------------------------------------------------
struct Rect {
  float x = 0, y = 0, w = 0, h = 0;
  float right() const { return x + w; }
  float bottom() const { return y + h; }
  bool empty() const { return w <= 0 || h <= 0; }
  bool contains(float px, float py) const { return px >= x && px < x + w && py >= y && py < y + h; }
  bool operator==(const Rect&) const = default;
};

// -----------------------------------------------------------------------------
// [SECTION] Heatmap grid: cells, labels, hit-testing
// -----------------------------------------------------------------------------
struct HeatmapGeometry {
  int rows = 0, cols = 0;
  Rect grid;           // the cells, all of them (larger than the area when it scrolls)
  Rect row_labels;     // to the left of the grid, as tall as the grid
  Rect column_labels;  // above the grid, as wide as the grid
  float cell_w = 0, cell_h = 0;
  bool vertical_column_labels = false;  // when the key labels do not fit across a cell
  bool show_values = false;             // cells big enough to print the weight
  // Where the cells are seen: the grid itself when it fits the area; else the part of the area
  // right of the row labels and under the column labels, less a scroll bar's width on each side
  // that scrolls (HeatmapStyle::min_cell_w, min_cell_h). The labels follow the scroll beside it.
  Rect viewport;
  bool scrolls_x = false, scrolls_y = false;
  float scrollbar = 0;  // HeatmapStyle::scrollbar, when a side scrolls

  Rect cell(int row, int col) const;
  // The (row, col) of the cell under a point, if any (only where the cells are seen).
  std::optional<std::array<int, 2>> hit(float x, float y) const;
  // The same grid scrolled by (dx, dy) pixels: the cells and the labels along them move; the
  // viewport stays. Of the geometry layout_heatmap gave; clamped to the grid's extent.
  HeatmapGeometry scrolled(float dx, float dy) const;
  // The scroll window: the viewport with the scroll bars' bands.
  Rect scroll_window() const;
  // The row labels and column labels where they are seen (beside the viewport).
  Rect visible_row_labels() const;
  Rect visible_column_labels() const;
  // The rows [first, last) and columns whose cells are at least partly in the viewport.
  std::array<int, 2> visible_rows() const;
  std::array<int, 2> visible_cols() const;
};

struct HeatmapStyle {
  float row_label_width = 80;              // widest query label
  float column_label_width = 80;           // widest key label (horizontal text)
  float line_height = 16;                  // font height
  float max_cell_w = 96, max_cell_h = 96;  // cells never grow past these
  float value_text_width = 36;             // "0.00" in the font
  // Cells never smaller than these (0: cells shrink to fit, under a pixel if need be): past
  // them the grid is larger than the area and scrolls in its viewport, by scroll bars
  // `scrollbar` wide. The app keeps cells a text line tall and wide, so that every label fits.
  float min_cell_w = 0, min_cell_h = 0;
  float scrollbar = 0;
  // Cells may be wider than tall to hold the numbers ("0.00"), when the room allows it.
  bool widen_for_values = false;
};

// Cells as large as the area allows (up to max_cell_w by max_cell_h), labels outside the grid:
// square for a square matrix; for another, square unless the matrix's shape is far from the area's,
// when the long side's cells widen (a strip becomes a readable grid). With widen_for_values, cells
// too narrow for the numbers but a line tall widen to hold them where the room allows. Without a
// minimum cell, under a pixel when the rows or columns outnumber the area's pixels: the grid never
// leaves the area; with one, the grid keeps that size and scrolls (viewport, scrolls_x, scrolls_y).
// Numbers are shown when a cell holds value_text_width and a line.
HeatmapGeometry layout_heatmap(Rect area, int rows, int cols, const HeatmapStyle& style);

// -----------------------------------------------------------------------------
// [SECTION] Label placement
// -----------------------------------------------------------------------------
// Which of `count` labels to draw along an axis of cells `cell_extent` wide when a label needs
// `label_extent`: every one when they fit, else every k-th (always the first; the selected
// and hovered ones are added when given).
std::vector<int> visible_labels(int count, float cell_extent, float label_extent, int always_a = -1,
                                int always_b = -1);

// The size to write tokens' names at in rows `row_height` apart (the Arrows, Output and Pipeline
// views): the font's size, as tall as the row in rows thinner than a line, but never below
// font - 2 px (one step of the text size): rows thinner than that scroll instead.
float token_label_size(float row_height, float font);

// Names under a row of equal slots (a bar chart's bars): slot i spans [left + i·slot_width,
// left + (i + 1)·slot_width]. Each name is centred under its slot and kept within
// [left, right]; names never overlap (at least `gap` apart). The `always` slots (the chosen and
// the hovered one: -1 for none) are placed first, whole. Then, left to right, every other name
// whole if it fits among those placed, else its short form (`short_widths[i]`: the name cut to
// its slot with an ellipsis, measured by the caller; 0 when none is worth showing), else not at
// all.
struct SlotLabel {
  enum class Form { Hidden, Whole, Short };
  Form form = Form::Hidden;
  float x = 0;   // the left edge of the text
  int line = 0;  // place_staggered_slot_labels: 0 the first line under the slots, 1 the second
};
std::vector<SlotLabel> place_slot_labels(float left, float right, float slot_width,
                                         const std::vector<float>& whole_widths,
                                         const std::vector<float>& short_widths, float gap,
                                         int always_a = -1, int always_b = -1);

// Every name whole, centred under its slot and kept within [left, right], on the first line when
// it is at least `gap` from the names already there, else on the second (the `always` slots
// first). Names that clear neither line (slots narrower than staggered_slot_width) go to the line
// of their parity. Every label's form is Whole.
std::vector<SlotLabel> place_staggered_slot_labels(float left, float right, float slot_width,
                                                   const std::vector<float>& whole_widths,
                                                   float gap, int always_a = -1, int always_b = -1);
// The least slot width with which names up to `widest` wide, `gap` apart, always clear one of two
// staggered lines (the first and last names clamped to the edges included).
float staggered_slot_width(float widest, float gap);

// -----------------------------------------------------------------------------
// [SECTION] Arrows: token positions on two sides
// -----------------------------------------------------------------------------
// Queries on the left, keys on the right, evenly spaced down the area; at least `min_step` apart
// (a text line, in the app), when the area is shorter than that: then `area` is taller than the
// one given (content_h), and the app scrolls it.
struct ArrowsGeometry {
  Rect area;  // the one given, made taller when the tokens need more room
  float content_h = 0;
  bool scrolls = false;           // content_h is more than the height given
  float left_x = 0, right_x = 0;  // where lines start and end
  float top = 0, step = 0;        // y of token i = top + (i + 0.5) * step
  int left_count = 0, right_count = 0;
  float left_step = 0, right_step = 0;
  float left_y(int i) const { return top + (static_cast<float>(i) + 0.5f) * left_step; }
  float right_y(int i) const { return top + (static_cast<float>(i) + 0.5f) * right_step; }
  // The token under a point on either side: {side (0 left, 1 right), index}.
  std::optional<std::array<int, 2>> hit(float x, float y, float label_width) const;
};
ArrowsGeometry layout_arrows(Rect area, int left_count, int right_count, float label_width,
                             float min_step = 0);

}  // namespace attnviz::view
