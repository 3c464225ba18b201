// Readable token names at any sentence length (issue 23): the heatmap's cells keep a minimum size
// and scroll past it, numbers shown whenever a cell holds them, names never written smaller than
// one text-size step below the font, the arrows view's tokens at least a line apart, the bar
// chart's names staggered on two lines rather than left out.
#include "core/figures/figure_layout.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnviz::view {
namespace {

bool inside(const Rect& inner, const Rect& outer) {
  return inner.x >= outer.x - 1e-3f && inner.y >= outer.y - 1e-3f &&
         inner.right() <= outer.right() + 1e-3f && inner.bottom() <= outer.bottom() + 1e-3f;
}

// The app's style at a text size: labels of a typical sentence, cells a line at least.
HeatmapStyle app_style(float font) {
  HeatmapStyle style;
  style.line_height = font;
  style.row_label_width = style.column_label_width = font * 4.0f;
  style.max_cell_w = style.max_cell_h = font * 5.0f;
  style.value_text_width = font * 2.0f;
  style.min_cell_w = style.min_cell_h = font;
  style.scrollbar = 14;
  style.widen_for_values = true;
  return style;
}

}  // namespace

TEST_CASE("heatmap cells never shrink below the minimum: the grid scrolls in its viewport") {
  for (const float font : {16.0f, 22.0f, 28.0f})
    for (const int n : {8, 12, 16, 20, 64}) {
      CAPTURE(font);
      CAPTURE(n);
      const Rect area{10, 20, 300, 200};
      const HeatmapGeometry g = layout_heatmap(area, n, n, app_style(font));
      REQUIRE_FALSE(g.grid.empty());
      CHECK(g.cell_w >= font);
      CHECK(g.cell_h >= font);
      CHECK(g.grid.w == doctest::Approx(g.cell_w * static_cast<float>(n)));
      // What is seen, with its scroll bars, stays in the area.
      CHECK(inside(g.scroll_window(), area));
      CHECK(g.scrolls_x == (g.grid.w > g.viewport.w));
      CHECK(g.scrolls_y == (g.grid.h > g.viewport.h));
      if (g.scrolls_x) CHECK(g.viewport.bottom() + g.scrollbar <= area.bottom() + 1e-3f);
      if (g.scrolls_y) CHECK(g.viewport.right() + g.scrollbar <= area.right() + 1e-3f);
    }
}

TEST_CASE("a grid that fits does not scroll, and is seen whole") {
  const HeatmapGeometry g = layout_heatmap({0, 0, 900, 700}, 5, 5, app_style(16));
  CHECK_FALSE(g.scrolls_x);
  CHECK_FALSE(g.scrolls_y);
  CHECK(g.viewport == g.grid);
  CHECK(g.scroll_window() == g.grid);
  CHECK(g.visible_row_labels() == g.row_labels);
  CHECK(g.visible_column_labels() == g.column_labels);
}

TEST_CASE("a scroll bar across the bottom can make the side scroll too") {
  // 20 columns do not fit across; 8 rows would fit down, but not with a scroll bar under them.
  HeatmapStyle style = app_style(16);
  style.scrollbar = 20;
  style.column_label_width = 10;  // across the cells: one line above the grid
  const float label_h = 16 + std::round(16 * 0.4f);
  const Rect area{0, 0, 200, label_h + 8 * 16 + 10};
  const HeatmapGeometry g = layout_heatmap(area, 8, 20, style);
  CHECK(g.scrolls_x);
  CHECK(g.scrolls_y);
  CHECK(inside(g.scroll_window(), area));
}

TEST_CASE("a scrolled grid moves its cells and labels, and hit-tests what is seen") {
  const HeatmapGeometry g = layout_heatmap({0, 0, 300, 200}, 20, 20, app_style(16));
  REQUIRE(g.scrolls_x);
  REQUIRE(g.scrolls_y);
  CHECK(g.visible_rows()[0] == 0);
  CHECK(g.visible_rows()[1] < 20);
  // Scrolled past the end: clamped to the last cells.
  const HeatmapGeometry end = g.scrolled(1e6f, 1e6f);
  CHECK(end.grid.right() == doctest::Approx(g.viewport.right()));
  CHECK(end.grid.bottom() == doctest::Approx(g.viewport.bottom()));
  CHECK(end.visible_rows()[1] == 20);
  CHECK(end.visible_cols()[1] == 20);
  CHECK(end.row_labels.bottom() == doctest::Approx(end.grid.bottom()));  // the labels in step
  CHECK(end.column_labels.right() == doctest::Approx(end.grid.right()));
  CHECK(end.viewport == g.viewport);
  // The last cell is under its centre, now in the viewport; a cell scrolled out is not hit.
  const Rect last = end.cell(19, 19);
  const auto hit = end.hit(last.x + last.w / 2, last.y + last.h / 2);
  REQUIRE(hit);
  CHECK((*hit)[0] == 19);
  CHECK((*hit)[1] == 19);
  const Rect first = end.cell(0, 0);
  CHECK_FALSE(end.hit(first.x + first.w / 2, first.y + first.h / 2));
  // Half-way: the row under a point is the one drawn there.
  const HeatmapGeometry middle = g.scrolled(0, g.cell_h * 5);
  const auto row = middle.hit(g.viewport.x + 1, g.viewport.y + 1);
  REQUIRE(row);
  CHECK((*row)[0] == 5);
  CHECK(middle.visible_rows()[0] == 5);
  CHECK(g.scrolled(-50, -50).grid == g.grid);  // never before the start
}

TEST_CASE("numbers are shown whenever a cell holds them and a line") {
  HeatmapStyle style = app_style(16);
  style.value_text_width = 32;
  style.column_label_width = 10;  // across the cells: one line above the grid
  // 12 × 12 in a low, wide area: square cells of 22 px, a line tall but too narrow for "0.00".
  const Rect area{0, 0, 640, 22 + 12 * 22 + 2};
  style.widen_for_values = false;
  const HeatmapGeometry square = layout_heatmap(area, 12, 12, style);
  CHECK(square.cell_w == square.cell_h);
  CHECK(square.cell_h >= 16);
  CHECK_FALSE(square.show_values);
  // Wider than tall, the numbers fit without scrolling.
  style.widen_for_values = true;
  const HeatmapGeometry wide = layout_heatmap(area, 12, 12, style);
  CHECK(wide.cell_w >= 38);
  CHECK(wide.cell_h == square.cell_h);
  CHECK(wide.show_values);
  CHECK_FALSE(wide.scrolls_x);
  CHECK_FALSE(wide.scrolls_y);
  // No room to widen: square, no numbers, no scrolling for them.
  const HeatmapGeometry narrow = layout_heatmap({0, 0, 300, 400}, 12, 12, style);
  CHECK_FALSE(narrow.show_values);
  CHECK_FALSE(narrow.scrolls_x);
  // Cells a line tall and wide enough: numbers, where 1.6 lines were asked before.
  const HeatmapGeometry low = layout_heatmap({0, 0, 900, 22 + 5 * 20 + 2}, 5, 5, style);
  CHECK(low.cell_h < 16 * 1.6f);
  CHECK(low.show_values);
}

TEST_CASE("the SVG's and old callers' heatmaps keep to the area: no minimum, no scrolling") {
  const Rect area{10, 10, 300, 300};
  const HeatmapGeometry g = layout_heatmap(area, 64, 64, HeatmapStyle{});
  CHECK_FALSE(g.scrolls_x);
  CHECK_FALSE(g.scrolls_y);
  CHECK(inside(g.grid, area));
  CHECK(g.viewport == g.grid);
}

TEST_CASE("token names are never written smaller than one step under the font") {
  for (const float font : {10.0f, 16.0f, 22.0f, 28.0f, 48.0f})
    for (float row = 0.5f; row < 80.0f; row *= 1.3f) {
      CAPTURE(font);
      CAPTURE(row);
      const float size = token_label_size(row, font);
      CHECK(size >= font - 2.0f);
      CHECK(size <= font);
      if (row >= font) CHECK(size == font);
    }
}

TEST_CASE("arrows' tokens are at least the least step apart, past the area it grows and scrolls") {
  const Rect area{0, 0, 400, 100};
  const ArrowsGeometry short_one = layout_arrows(area, 5, 5, 60, 16);
  CHECK_FALSE(short_one.scrolls);
  CHECK(short_one.area == area);
  CHECK(short_one.left_step == doctest::Approx(20));
  for (const int n : {8, 12, 16, 20}) {
    CAPTURE(n);
    const ArrowsGeometry g = layout_arrows(area, n, n, 60, 16);
    CHECK(g.left_step >= 16);
    CHECK(g.right_step >= 16);
    CHECK(g.scrolls == (n * 16 > 100));
    CHECK(g.content_h == doctest::Approx(std::max(100.0f, n * 16.0f)));
    CHECK(g.left_y(n - 1) < g.area.bottom());
    // The last token is hit where it is drawn, below the area given.
    const auto hit = g.hit(5, g.left_y(n - 1), 60);
    REQUIRE(hit);
    CHECK((*hit)[1] == n - 1);
  }
  // Cross attention: 4 queries beside 20 keys share the height the keys need.
  const ArrowsGeometry cross = layout_arrows(area, 4, 20, 60, 16);
  CHECK(cross.right_step == doctest::Approx(16));
  CHECK(cross.left_step == doctest::Approx(80));
  // No least step: as before, spread over the area.
  CHECK(layout_arrows(area, 20, 20, 60).left_step == doctest::Approx(5));
}

TEST_CASE("staggered names: every one whole, none overlapping on its line") {
  const float gap = 4;
  const std::vector<std::vector<float>> sentences = {
      {30, 50, 44, 40, 25, 48, 60, 12, 27, 22, 38, 6},  // the 12-token sentence, at 16 px
      {60, 60, 60, 60, 60, 60, 60, 60},
      {10, 90, 10, 90, 10, 90, 10},
  };
  for (const auto& widths : sentences) {
    const float widest = *std::max_element(widths.begin(), widths.end());
    const float slot = staggered_slot_width(widest, gap);
    const float left = 5, right = left + slot * static_cast<float>(widths.size());
    const std::vector<SlotLabel> labels =
        place_staggered_slot_labels(left, right, slot, widths, gap);
    REQUIRE(labels.size() == widths.size());
    for (std::size_t i = 0; i < labels.size(); ++i) {
      CAPTURE(i);
      CHECK(labels[i].form == SlotLabel::Form::Whole);
      CHECK(labels[i].x >= left - 1e-3f);
      CHECK(labels[i].x + widths[i] <= right + 1e-3f);
      for (std::size_t j = i + 1; j < labels.size(); ++j)
        if (labels[j].line == labels[i].line)
          CHECK((labels[i].x + widths[i] + gap <= labels[j].x + 1e-3f ||
                 labels[j].x + widths[j] + gap <= labels[i].x + 1e-3f));
    }
  }
}

TEST_CASE("staggered names that fit in one line stay on the first") {
  const std::vector<float> widths{20, 30, 25, 10};
  for (const SlotLabel& label : place_staggered_slot_labels(0, 200, 50, widths, 4))
    CHECK(label.line == 0);
  // The chosen one is placed first, on the first line; its neighbours give way to the second.
  const std::vector<float> wide{45, 45, 45, 45};
  const std::vector<SlotLabel> labels = place_staggered_slot_labels(0, 160, 40, wide, 4, 2);
  CHECK(labels[2].line == 0);
  CHECK(labels[1].line == 1);
  CHECK(labels[3].line == 1);
  CHECK(labels[0].line == 0);
}

}  // namespace attnviz::view
