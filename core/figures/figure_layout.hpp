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
  Rect grid;           // the cells
  Rect row_labels;     // to the left of the grid
  Rect column_labels;  // above the grid
  float cell_w = 0, cell_h = 0;
  bool vertical_column_labels = false;  // when the key labels do not fit across a cell
  bool show_values = false;             // cells big enough to print the weight

  Rect cell(int row, int col) const;
  // The (row, col) of the cell under a point, if any.
  std::optional<std::array<int, 2>> hit(float x, float y) const;
};

struct HeatmapStyle {
  float row_label_width = 80;              // widest query label
  float column_label_width = 80;           // widest key label (horizontal text)
  float line_height = 16;                  // font height
  float max_cell_w = 96, max_cell_h = 96;  // cells never grow past these
  float value_text_width = 36;             // "0.00" in the font
};

// Cells as large as the area allows (up to max_cell_w by max_cell_h), labels outside the grid:
// square for a square matrix; for another, square unless the matrix's shape is far from the area's,
// when the long side's cells widen (a strip becomes a readable grid). Under a pixel when the rows
// or columns outnumber the area's pixels: the grid never leaves the area.
HeatmapGeometry layout_heatmap(Rect area, int rows, int cols, const HeatmapStyle& style);

// -----------------------------------------------------------------------------
// [SECTION] Label placement
// -----------------------------------------------------------------------------
// Which of `count` labels to draw along an axis of cells `cell_extent` wide when a label needs
// `label_extent`: every one when they fit, else every k-th (always the first; the selected
// and hovered ones are added when given).
std::vector<int> visible_labels(int count, float cell_extent, float label_extent, int always_a = -1,
                                int always_b = -1);

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
  float x = 0;  // the left edge of the text
};
std::vector<SlotLabel> place_slot_labels(float left, float right, float slot_width,
                                         const std::vector<float>& whole_widths,
                                         const std::vector<float>& short_widths, float gap,
                                         int always_a = -1, int always_b = -1);

// -----------------------------------------------------------------------------
// [SECTION] Arrows: token positions on two sides
// -----------------------------------------------------------------------------
// Queries on the left, keys on the right, evenly spaced down the area.
struct ArrowsGeometry {
  Rect area;
  float left_x = 0, right_x = 0;  // where lines start and end
  float top = 0, step = 0;        // y of token i = top + (i + 0.5) * step
  int left_count = 0, right_count = 0;
  float left_step = 0, right_step = 0;
  float left_y(int i) const { return top + (static_cast<float>(i) + 0.5f) * left_step; }
  float right_y(int i) const { return top + (static_cast<float>(i) + 0.5f) * right_step; }
  // The token under a point on either side: {side (0 left, 1 right), index}.
  std::optional<std::array<int, 2>> hit(float x, float y, float label_width) const;
};
ArrowsGeometry layout_arrows(Rect area, int left_count, int right_count, float label_width);

}  // namespace attnviz::view
