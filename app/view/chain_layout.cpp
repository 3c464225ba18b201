#include "app/view/chain_layout.hpp"

#include "core/figures/figure_layout.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace attnviz::view {

int Slots::find(int i) const {
  for (int s = 0; s < count; ++s)
    if (index[static_cast<std::size_t>(s)] == i) return s;
  return -1;
}

Slots make_slots(int n, int limit, int focus, int focus_span) {
  Slots s;
  limit = std::clamp(limit, 3, kMaxSlots);
  if (n <= limit) {
    s.count = n;
    for (int k = 0; k < n; ++k) s.index[static_cast<std::size_t>(k)] = k;
    return s;
  }
  const int span = std::max(1, focus_span);
  const int last = focus < 0 ? 0 : focus + span - 1;
  s.count = limit;
  if (last < limit - 1) {  // the start, then "…"
    for (int k = 0; k < limit - 1; ++k) s.index[static_cast<std::size_t>(k)] = k;
    s.index[static_cast<std::size_t>(limit - 1)] = -1;
  } else if (focus >= n - (limit - 1)) {  // "…", then the end
    s.index[0] = -1;
    for (int k = 1; k < limit; ++k) s.index[static_cast<std::size_t>(k)] = n - limit + k;
  } else {  // "…", a window around the focus, "…"
    const int window = limit - 2;
    const int first = std::clamp(focus - std::max(0, (window - span) / 2), 0, n - window);
    s.index[0] = -1;
    for (int k = 0; k < window; ++k) s.index[static_cast<std::size_t>(k + 1)] = first + k;
    s.index[static_cast<std::size_t>(limit - 1)] = -1;
  }
  return s;
}

ChainLayout::ChainLayout(float font, float widest_label, bool cross, int focus_query,
                         int concat_first, int concat_span)
    : font_(font),
      widest_label_(widest_label),
      cross_(cross),
      focus_query_(focus_query),
      concat_first_(concat_first),
      concat_span_(concat_span) {}

void ChainLayout::set_slots(std::span<ChainTile> tiles, int limit) const {
  for (ChainTile& t : tiles) {
    t.row_slots = make_slots(t.n_rows, limit, t.rows == StageAxis::Queries ? focus_query_ : -1);
    t.col_slots = t.concat ? make_slots(t.n_cols, limit, concat_first_, concat_span_)
                           : make_slots(t.n_cols, limit, -1);
  }
}

// Token names about as tall as the cells, never under font - 2 px (the cells never are).
void ChainLayout::set_label_size(float cell) {
  label_font_ = token_label_size(cell * 1.05f, font_);
  label_w_ =
      std::clamp(widest_label_ * label_font_ / font_ + font_ * 0.3f, font_ * 1.2f, font_ * 5.0f);
}

float ChainLayout::tile_width(const ChainTile& t, float cell, bool labels) const {
  const float grid = (labels ? label_w_ : 0.0f) + cell * static_cast<float>(t.col_slots.count);
  return std::max({grid, t.title_w + font_ * 0.5f, t.shape_w});
}

// Whether tile k starts its rows' names: the first tile of a line, and in cross mode a tile whose
// rows switch between queries and keys (the two sentences differ).
bool ChainLayout::wants_labels(std::span<const ChainTile> tiles, std::size_t k,
                               bool line_start) const {
  const ChainTile& t = tiles[k];
  if (t.rows == StageAxis::Other) return false;
  if (line_start) return true;
  const StageAxis previous = tiles[k - 1].rows;
  return cross_ && previous != StageAxis::Other && previous != t.rows;
}

ChainSize ChainLayout::place(std::span<ChainTile> tiles, float cell, float width) {
  set_label_size(cell);
  float x = 0, y = 0, line_h = 0, used_w = 0;
  bool line_start = true;
  for (std::size_t k = 0; k < tiles.size(); ++k) {
    ChainTile& t = tiles[k];
    float lead = k == 0 ? 0.0f : connector_w(t.connector);
    float w = tile_width(t, cell, wants_labels(tiles, k, line_start));
    if (!line_start && x + lead + w > width) {  // wrap
      y += line_h + line_gap();
      x = 0;
      line_h = 0;
      line_start = true;
      lead = connector_w(StageJoin::Arrow);  // the chain goes on: "→" at the start of the line
      w = tile_width(t, cell, wants_labels(tiles, k, true));
    }
    t.labels = wants_labels(tiles, k, line_start);
    t.x = x + lead;
    t.y = y;
    t.w = w;
    const float grid_w =
        cell * static_cast<float>(t.col_slots.count) + (t.labels ? label_w_ : 0.0f);
    t.grid_x = t.x + (w - grid_w) * 0.5f + (t.labels ? label_w_ : 0.0f);
    t.grid_y = y + title_h();
    x = t.x + w;
    used_w = std::max(used_w, x);
    line_h = std::max(line_h, title_h() + cell * static_cast<float>(t.row_slots.count) + shape_h());
    line_start = false;
  }
  return {used_w, y + line_h};
}

ChainSize ChainLayout::fit(std::span<ChainTile> tiles, float width, float height) {
  const float largest = std::floor(font_ * 2.6f);
  const float readable = std::ceil(token_label_size(0.0f, font_)), smallest = readable;
  constexpr int kLimits[] = {kMaxSlots, 10, 8, 6};
  ChainSize size;
  bool fits = false;
  for (const int limit : kLimits) {
    set_slots(tiles, limit);
    const float floor_cell = limit == kLimits[std::size(kLimits) - 1] ? smallest : readable;
    for (cell_ = largest; cell_ >= floor_cell && !fits; cell_ -= 1.0f) {
      size = place(tiles, cell_, width);
      fits = size.w <= width && size.h <= height;
      if (fits) break;
    }
    if (fits) break;
  }
  if (!fits) {
    cell_ = smallest;
    size = place(tiles, cell_, width);
  }
  return size;
}

}  // namespace attnviz::view
