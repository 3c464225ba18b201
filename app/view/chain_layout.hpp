// Where the Pipeline view's tiles go: which rows and columns of each stage's matrix are shown (all
// of them, or a window around the selected query with "…" for the rest), and the tiles placed
// left to right behind their connectors ("→", a gap), wrapping into lines, with the largest cells
// (and the most rows per matrix) with which the chain fits the view. No ImGui: unit-tested; the
// view measures the titles and the token names, and draws what this places.
#pragma once

#include "core/pipeline/run.hpp"

#include <array>
#include <span>

namespace attnviz::view {

inline constexpr int kMaxSlots = 12;  // rows or columns shown per matrix

// Which rows (or columns) of a matrix are shown, slot by slot: an index, or -1 for "…".
struct Slots {
  std::array<int, kMaxSlots> index{};
  int count = 0;
  int find(int i) const;  // the slot showing row i, or -1
};

// All of n when they fit in `limit` slots (3 to kMaxSlots); else a window of them that contains
// `focus` (the start when -1), with "…" for the rows left out before and after. `focus_span`
// keeps focus..focus+span-1 together when they fit.
Slots make_slots(int n, int limit, int focus, int focus_span = 1);

// A tile as the layout sees it: what it is given, and where it is placed.
struct ChainTile {
  int n_rows = 0, n_cols = 0;  // its matrix's
  StageAxis rows = StageAxis::Other;
  bool concat = false;  // the heads' outputs side by side: its columns follow the selected head
  StageJoin connector = StageJoin::Arrow;
  float title_w = 0, shape_w = 0;  // as drawn: its title, its shape ("5×8")
  // Placed:
  Slots row_slots, col_slots;
  bool labels = false;  // token names left of the grid (the first tile of a line)
  float x = 0, y = 0;   // its top left, relative to the chain's origin
  float w = 0;          // its width
  float grid_x = 0, grid_y = 0;
};

struct ChainSize {
  float w = 0, h = 0;
};

class ChainLayout {
 public:
  ChainLayout() = default;
  // `font`: the text size; `widest_label`: the widest token name at that size; `cross`: the
  // queries and the keys are two sentences; the rows and columns kept in view: the selected query,
  // and the selected head's columns of the concatenation (`concat_first`, `concat_span`).
  ChainLayout(float font, float widest_label, bool cross, int focus_query, int concat_first,
              int concat_span);

  // The most rows and columns per matrix (12, else fewer) and the largest cell size (within
  // limits) with which the chain fits `width` × `height`; when nothing fits, the smallest cells
  // (never under a readable name's size), and it scrolls. Sets every tile's slots and place.
  ChainSize fit(std::span<ChainTile> tiles, float width, float height);
  // Places the tiles with cells of `cell` px, wrapping at `width`; returns the size used.
  ChainSize place(std::span<ChainTile> tiles, float cell, float width);

  float cell() const { return cell_; }
  float label_font() const { return label_font_; }  // the token names' size at this cell size
  float label_w() const { return label_w_; }        // the width of their column
  float title_h() const { return font_ * 1.2f; }
  float shape_h() const { return font_ * 1.05f; }
  float connector_w(StageJoin join) const {
    return font_ * (join == StageJoin::Arrow ? 1.6f : (join == StageJoin::Space ? 1.4f : 0.5f));
  }
  float line_gap() const { return font_ * 0.5f; }

 private:
  void set_slots(std::span<ChainTile> tiles, int limit) const;
  void set_label_size(float cell);
  float tile_width(const ChainTile& t, float cell, bool labels) const;
  bool wants_labels(std::span<const ChainTile> tiles, std::size_t k, bool line_start) const;

  float font_ = 16, widest_label_ = 0;
  bool cross_ = false;
  int focus_query_ = 0, concat_first_ = 0, concat_span_ = 1;
  float cell_ = 16, label_font_ = 16, label_w_ = 0;
};

}  // namespace attnviz::view
