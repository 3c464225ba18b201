#include "core/figures/figure_layout.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] Heatmap grid
// -----------------------------------------------------------------------------

Rect HeatmapGeometry::cell(int row, int col) const {
  return {grid.x + static_cast<float>(col) * cell_w, grid.y + static_cast<float>(row) * cell_h,
          cell_w, cell_h};
}

std::optional<std::array<int, 2>> HeatmapGeometry::hit(float x, float y) const {
  if (!grid.contains(x, y) || !viewport.contains(x, y) || cell_w <= 0 || cell_h <= 0)
    return std::nullopt;
  const int col = std::min(cols - 1, static_cast<int>((x - grid.x) / cell_w));
  const int row = std::min(rows - 1, static_cast<int>((y - grid.y) / cell_h));
  return std::array<int, 2>{row, col};
}

HeatmapGeometry HeatmapGeometry::scrolled(float dx, float dy) const {
  HeatmapGeometry g = *this;
  dx = std::clamp(dx, 0.0f, std::max(0.0f, grid.w - viewport.w));
  dy = std::clamp(dy, 0.0f, std::max(0.0f, grid.h - viewport.h));
  g.grid.x -= dx;
  g.grid.y -= dy;
  g.row_labels.y -= dy;
  g.column_labels.x -= dx;
  return g;
}

Rect HeatmapGeometry::scroll_window() const {
  return {viewport.x, viewport.y, viewport.w + (scrolls_y ? scrollbar : 0.0f),
          viewport.h + (scrolls_x ? scrollbar : 0.0f)};
}

Rect HeatmapGeometry::visible_row_labels() const {
  return {row_labels.x, viewport.y, row_labels.w, viewport.h};
}

Rect HeatmapGeometry::visible_column_labels() const {
  return {viewport.x, column_labels.y, viewport.w, column_labels.h};
}

namespace {
// The cells [first, last) of `count` cells `extent` wide from `start` that meet [low, high).
std::array<int, 2> cells_between(int count, float start, float extent, float low, float high) {
  if (count <= 0 || extent <= 0) return {0, 0};
  const int first = std::clamp(static_cast<int>(std::floor((low - start) / extent)), 0, count);
  const int last = std::clamp(static_cast<int>(std::ceil((high - start) / extent)), first, count);
  return {first, last};
}
}  // namespace

std::array<int, 2> HeatmapGeometry::visible_rows() const {
  return cells_between(rows, grid.y, cell_h, viewport.y, viewport.bottom());
}

std::array<int, 2> HeatmapGeometry::visible_cols() const {
  return cells_between(cols, grid.x, cell_w, viewport.x, viewport.right());
}

HeatmapGeometry layout_heatmap(Rect area, int rows, int cols, const HeatmapStyle& style) {
  HeatmapGeometry g;
  g.rows = rows;
  g.cols = cols;
  if (rows <= 0 || cols <= 0 || area.empty()) return g;
  const float pad = std::round(style.line_height * 0.4f);
  const float label_w = std::min(style.row_label_width, area.w * 0.35f) + pad;
  const float value_w = std::ceil(style.value_text_width + 6.0f);  // a number, a little room
  // Cells as large as the room allows, up to max_cell. Square for a square matrix (self-attention:
  // a diagonal looks diagonal). A matrix far from the area's shape (64 queries by 6 keys) would be
  // a strip with square cells: its long side's cells take what twice the square leaves, so they
  // grow gradually from square as the shapes part. Never under the minimum (the grid scrolls);
  // wider than tall when that lets a number fit.
  const auto cells = [&](float label_h) {
    const float room_w = std::min((area.w - label_w) / static_cast<float>(cols), style.max_cell_w);
    const float room_h = std::min((area.h - label_h) / static_cast<float>(rows), style.max_cell_h);
    const float square = std::min(room_w, room_h);
    std::array<float, 2> cell{square, square};
    if (rows != cols) cell = {std::max(square, room_w - square), std::max(square, room_h - square)};
    cell[0] = std::max(cell[0], style.min_cell_w);
    cell[1] = std::max(cell[1], style.min_cell_h);
    if (style.widen_for_values && cell[0] < value_w && cell[1] >= style.line_height &&
        room_w >= value_w)
      cell[0] = value_w;
    return cell;
  };
  // First try horizontal key labels (one line above the grid).
  float label_h = style.line_height + pad;
  std::array<float, 2> cell = cells(label_h);
  if (cell[0] < style.column_label_width + pad * 0.5f) {
    // Keys do not fit across a cell: write them vertically, up to the widest label, as long as
    // three rows of cells stay in sight (the grid scrolls for the others).
    g.vertical_column_labels = true;
    const float three_rows = 3.0f * std::max(style.min_cell_h, style.line_height);
    label_h =
        std::min(style.column_label_width, std::max(area.h * 0.3f, area.h - three_rows)) + pad;
    cell = cells(label_h);
  }
  // Whole pixels; a cell under a pixel (hundreds of tokens in a small area) stays a fraction, so
  // that the grid keeps to the area (the texture is drawn smaller). No room at all: no grid.
  for (float& extent : cell) extent = extent >= 1.0f ? std::floor(extent) : extent;
  if (!(cell[0] > 0 && cell[1] > 0)) return g;
  g.cell_w = cell[0];
  g.cell_h = cell[1];
  const float grid_w = g.cell_w * static_cast<float>(cols),
              grid_h = g.cell_h * static_cast<float>(rows);
  g.grid = {std::round(area.x + label_w), std::round(area.y + label_h), grid_w, grid_h};
  g.row_labels = {area.x, g.grid.y, label_w - pad, grid_h};
  g.column_labels = {g.grid.x, area.y, grid_w, label_h - pad};
  g.show_values = g.cell_w >= value_w && g.cell_h >= style.line_height;
  // Where the cells are seen: all of them, or (cells kept at their minimum) a window onto them,
  // less a scroll bar's width on a side that scrolls. A scroll bar across the bottom can make
  // the last row need a scroll bar at the side, and the other way round.
  const float room_w = area.right() - g.grid.x, room_h = area.bottom() - g.grid.y;
  const float bar = style.scrollbar;
  constexpr float kSlack = 0.01f;
  g.scrolls_x = grid_w > room_w + kSlack;
  g.scrolls_y = grid_h > room_h + kSlack;
  if (g.scrolls_x && !g.scrolls_y) g.scrolls_y = grid_h > room_h - bar + kSlack;
  if (g.scrolls_y && !g.scrolls_x) g.scrolls_x = grid_w > room_w - bar + kSlack;
  g.scrollbar = g.scrolls_x || g.scrolls_y ? bar : 0.0f;
  g.viewport = {g.grid.x, g.grid.y,
                g.scrolls_x ? std::max(0.0f, room_w - (g.scrolls_y ? bar : 0.0f)) : grid_w,
                g.scrolls_y ? std::max(0.0f, room_h - (g.scrolls_x ? bar : 0.0f)) : grid_h};
  return g;
}

// -----------------------------------------------------------------------------
// [SECTION] Label placement
// -----------------------------------------------------------------------------

std::vector<int> visible_labels(int count, float cell_extent, float label_extent, int always_a,
                                int always_b) {
  std::vector<int> out;
  if (count <= 0) return out;
  const int stride = cell_extent >= label_extent || cell_extent <= 0
                         ? 1
                         : static_cast<int>(std::ceil(label_extent / cell_extent));
  for (int i = 0; i < count; i += stride) out.push_back(i);
  for (int extra : {always_a, always_b})
    if (extra >= 0 && extra < count && extra % stride != 0) out.push_back(extra);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

float token_label_size(float row_height, float font) {
  const float smallest = std::max(1.0f, font - 2.0f);
  return std::clamp(row_height, smallest, std::max(smallest, font));
}

std::vector<SlotLabel> place_slot_labels(float left, float right, float slot_width,
                                         const std::vector<float>& whole_widths,
                                         const std::vector<float>& short_widths, float gap,
                                         int always_a, int always_b) {
  const int count = static_cast<int>(whole_widths.size());
  std::vector<SlotLabel> labels(whole_widths.size());
  std::vector<std::array<float, 2>> taken;  // [x0, x1) of the names placed so far
  const auto centred = [&](int i, float width) {
    const float centre = left + slot_width * (static_cast<float>(i) + 0.5f);
    return std::clamp(centre - width * 0.5f, left, std::max(left, right - width));
  };
  const auto free = [&](float x, float width) {
    for (const auto& [x0, x1] : taken)
      if (x < x1 + gap && x0 < x + width + gap) return false;
    return true;
  };
  const auto place = [&](int i, SlotLabel::Form form, float x, float width) {
    labels[static_cast<std::size_t>(i)] = {form, x};
    taken.push_back({x, x + width});
  };
  for (const int i : {always_a, always_b})
    if (i >= 0 && i < count &&
        labels[static_cast<std::size_t>(i)].form == SlotLabel::Form::Hidden) {
      const float width = whole_widths[static_cast<std::size_t>(i)];
      place(i, SlotLabel::Form::Whole, centred(i, width), width);
    }
  for (int i = 0; i < count; ++i) {
    if (i == always_a || i == always_b) continue;
    const float whole = whole_widths[static_cast<std::size_t>(i)];
    const float cut = i < static_cast<int>(short_widths.size())
                          ? short_widths[static_cast<std::size_t>(i)]
                          : 0.0f;
    if (const float x = centred(i, whole); free(x, whole))
      place(i, SlotLabel::Form::Whole, x, whole);
    else if (const float xs = centred(i, cut); cut > 0 && free(xs, cut))
      place(i, SlotLabel::Form::Short, xs, cut);
  }
  return labels;
}

std::vector<SlotLabel> place_staggered_slot_labels(float left, float right, float slot_width,
                                                   const std::vector<float>& whole_widths,
                                                   float gap, int always_a, int always_b) {
  const int count = static_cast<int>(whole_widths.size());
  std::vector<SlotLabel> labels(whole_widths.size());
  std::array<std::vector<std::array<float, 2>>, 2> taken;  // per line: [x0, x1) placed so far
  const auto free = [&](int line, float x, float width) {
    for (const auto& [x0, x1] : taken[static_cast<std::size_t>(line)])
      if (x < x1 + gap && x0 < x + width + gap) return false;
    return true;
  };
  const auto place = [&](int i) {
    const float width = whole_widths[static_cast<std::size_t>(i)];
    const float centre = left + slot_width * (static_cast<float>(i) + 0.5f);
    const float x = std::clamp(centre - width * 0.5f, left, std::max(left, right - width));
    const int line = free(0, x, width) ? 0 : (free(1, x, width) ? 1 : i % 2);
    labels[static_cast<std::size_t>(i)] = {SlotLabel::Form::Whole, x, line};
    taken[static_cast<std::size_t>(line)].push_back({x, x + width});
  };
  for (const int i : {always_a, always_b})
    if (i >= 0 && i < count && labels[static_cast<std::size_t>(i)].form == SlotLabel::Form::Hidden)
      place(i);
  for (int i = 0; i < count; ++i)
    if (labels[static_cast<std::size_t>(i)].form == SlotLabel::Form::Hidden) place(i);
  return labels;
}

float staggered_slot_width(float widest, float gap) {
  // Names i and i + 2 share a line, two slots apart: 2w >= widest + gap. The first name, clamped
  // to the left edge, ends at `widest`; the third begins at 2.5w - widest / 2: 2.5w >= 1.5 widest
  // + gap. Both hold from 0.6 (widest + gap).
  return 0.6f * (std::max(0.0f, widest) + std::max(0.0f, gap));
}

// -----------------------------------------------------------------------------
// [SECTION] Arrows
// -----------------------------------------------------------------------------

ArrowsGeometry layout_arrows(Rect area, int left_count, int right_count, float label_width,
                             float min_step) {
  ArrowsGeometry g;
  // Taller than given when the longer side's tokens would be closer than min_step.
  const float needed =
      std::max(0.0f, min_step) * static_cast<float>(std::max(left_count, right_count));
  g.content_h = std::max(area.h, needed);
  g.scrolls = g.content_h > area.h + 0.01f;
  g.area = {area.x, area.y, area.w, g.content_h};
  g.left_count = left_count;
  g.right_count = right_count;
  const float margin = 8.0f;
  g.left_x = area.x + label_width + margin;
  g.right_x = area.right() - label_width - margin;
  g.top = area.y;
  g.left_step = left_count > 0 ? g.content_h / static_cast<float>(left_count) : 0;
  g.right_step = right_count > 0 ? g.content_h / static_cast<float>(right_count) : 0;
  g.step = std::max(g.left_step, g.right_step);
  return g;
}

std::optional<std::array<int, 2>> ArrowsGeometry::hit(float x, float y, float label_width) const {
  if (!area.contains(x, y)) return std::nullopt;
  if (x < area.x + label_width + 8.0f && left_step > 0)
    return std::array<int, 2>{
        0, std::clamp(static_cast<int>((y - top) / left_step), 0, left_count - 1)};
  if (x > area.right() - label_width - 8.0f && right_step > 0)
    return std::array<int, 2>{
        1, std::clamp(static_cast<int>((y - top) / right_step), 0, right_count - 1)};
  return std::nullopt;
}

}  // namespace attnviz::view
