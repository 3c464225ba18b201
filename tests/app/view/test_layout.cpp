#include "app/view/layout.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace attnviz::view {
namespace {

bool overlap(const Rect& a, const Rect& b) {
  return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}
bool inside(const Rect& inner, const Rect& outer) {
  return inner.x >= outer.x && inner.y >= outer.y && inner.right() <= outer.right() + 0.01f &&
         inner.bottom() <= outer.bottom() + 0.01f;
}
const Rect& of(const DashboardLayout& layout, PanelId id) {
  return layout[id];
}

}  // namespace

TEST_CASE("the dashboard tiles every panel inside the area without overlap") {
  const Rect area{4, 24, 1272, 690};
  PanelVisibility every{};
  every.fill(true);
  const DashboardLayout layout = layout_dashboard(area, every, 4, 120, 16);
  CHECK(layout.arrangement == Arrangement::Dashboard);
  for (int a = 0; a < kPanelCount; ++a) {
    CHECK_FALSE(layout[PanelId(a)].empty());
    CHECK(inside(layout[PanelId(a)], area));
    for (int b = a + 1; b < kPanelCount; ++b)
      CHECK_FALSE(overlap(layout[PanelId(a)], layout[PanelId(b)]));
  }
}

TEST_CASE("the weights band spans the width under the other panels") {
  const Rect area{0, 0, 1000, 600};
  const DashboardLayout layout = layout_dashboard(area, kAllPanels, 4, 0, 16);
  CHECK(of(layout, PanelId::Weights).w == 1000);
  CHECK(of(layout, PanelId::Weights).bottom() == 600);
  CHECK(of(layout, PanelId::Centre).bottom() < of(layout, PanelId::Weights).y);
}

TEST_CASE("a hidden panel gets no room and its neighbours take it") {
  const Rect area{0, 0, 1000, 600};
  PanelVisibility visible = kAllPanels;
  visible[size_t(PanelId::Weights)] = false;
  visible[size_t(PanelId::Output)] = false;
  const DashboardLayout layout = layout_dashboard(area, visible, 4, 0, 16);
  CHECK(of(layout, PanelId::Weights).empty());
  CHECK(of(layout, PanelId::Output).empty());
  CHECK(of(layout, PanelId::Centre).h == 600);
  CHECK(of(layout, PanelId::Arrows).h == 600);
}

TEST_CASE("the lesson band spans the top and the other panels start below it") {
  PanelVisibility every{};
  every.fill(true);
  const DashboardLayout layout = layout_dashboard({0, 0, 1000, 600}, every, 4, 100, 16);
  CHECK(of(layout, PanelId::Lesson) == Rect{0, 0, 1000, 100});
  CHECK(of(layout, PanelId::Input).y == 104);
}

TEST_CASE("the lesson band is hidden by default") {
  CHECK(of(layout_dashboard({0, 0, 1000, 600}, kAllPanels, 4, 100, 16), PanelId::Lesson).empty());
}

TEST_CASE("a single visible panel fills the area") {
  PanelVisibility visible{};
  visible[size_t(PanelId::Centre)] = true;
  const Rect area{10, 20, 800, 500};
  CHECK(of(layout_dashboard(area, visible, 4, 0, 16), PanelId::Centre) == area);
}

namespace {
// The room the dashboard has in a window: less the menu and status bars (a line and a half of
// text each) and the gaps.
Rect dashboard_area(float width, float height, float font) {
  const float bar = std::round(font * 1.5f);
  return {4, bar + 4, width - 8, height - 2 * bar - 8};
}

// Every shown panel is in exactly one window, every window inside the area, none overlapping,
// and each at least as large as what its panels need.
void check_usable(const DashboardLayout& layout, const PanelVisibility& visible, const Rect& area,
                  float font) {
  for (int p = 0; p < kPanelCount; ++p) {
    const PanelId id = PanelId(p);
    if (id == PanelId::Lesson) continue;
    int windows = 0;
    for (const DashboardWindow& w : layout.windows)
      windows += static_cast<int>(std::count(w.panels.begin(), w.panels.end(), id));
    CHECK(windows == (visible[size_t(p)] ? 1 : 0));
  }
  for (std::size_t a = 0; a < layout.windows.size(); ++a) {
    const DashboardWindow& w = layout.windows[a];
    CHECK(inside(w.rect, area));
    for (std::size_t b = a + 1; b < layout.windows.size(); ++b)
      CHECK_FALSE(overlap(w.rect, layout.windows[b].rect));
    for (const PanelId id : w.panels) {
      if (id == PanelId::Lesson) continue;
      const Size needs = panel_needs(id, font);
      INFO("font ", font, " panel ", panel_name(id), " in ", to_string(layout.arrangement));
      CHECK(w.rect.w >= needs.w);
      CHECK(w.rect.h >= needs.h + (w.tabs() ? 2 * font : 0.0f) - 0.01f);
    }
  }
}
}  // namespace

TEST_CASE("every text size offered leaves every panel usable at 1280x720 and 1920x1080") {
  for (const auto& [width, height] : {std::pair{1280.0f, 720.0f}, std::pair{1920.0f, 1080.0f}}) {
    const float largest = largest_usable_font_size(width, height);
    CHECK(largest >= 28);  // the sizes the class needs are offered
    for (float font = 10; font <= largest; font += 1) {
      const Rect area = dashboard_area(width, height, font);
      check_usable(layout_dashboard(area, kAllPanels, 4, 0, font), kAllPanels, area, font);
      PanelVisibility every{};
      every.fill(true);  // and with a lesson's band
      const DashboardLayout with_lesson = layout_dashboard(area, every, 4, font * 5, font);
      CHECK_FALSE(with_lesson[PanelId::Lesson].empty());
    }
  }
}

TEST_CASE("panels give way in order as the text grows: right tabs, two columns, one, all tabs") {
  const auto arrangement = [](float font) {
    return layout_dashboard(dashboard_area(1280, 720, font), kAllPanels, 4, 0, font).arrangement;
  };
  CHECK(arrangement(16) == Arrangement::Dashboard);
  Arrangement last = Arrangement::Dashboard;
  for (float font = 10; font <= 64; font += 2) {
    const Arrangement now = arrangement(font);
    CHECK(static_cast<int>(now) >= static_cast<int>(last));  // never back to more windows
    last = now;
  }
  CHECK(last == Arrangement::AllTabs);
  // 22 px at 1280x720: Arrows and Output no longer each get a usable half of a column.
  CHECK(arrangement(22) != Arrangement::Dashboard);
  // The same text in a larger window keeps the dashboard.
  CHECK(layout_dashboard(dashboard_area(1920, 1080, 24), kAllPanels, 4, 0, 24).arrangement ==
        Arrangement::Dashboard);
}

TEST_CASE("panels become tabs only when shown") {
  PanelVisibility visible = kAllPanels;
  visible[size_t(PanelId::Arrows)] = false;
  visible[size_t(PanelId::Weights)] = false;
  const Rect area = dashboard_area(1280, 720, 30);
  const DashboardLayout layout = layout_dashboard(area, visible, 4, 0, 30);
  check_usable(layout, visible, area, 30);
  CHECK(of(layout, PanelId::Arrows).empty());
  CHECK(of(layout, PanelId::Weights).empty());
}

TEST_CASE("a window too small for any arrangement still gets every panel, as tabs") {
  const Rect area{0, 0, 300, 200};
  const DashboardLayout layout = layout_dashboard(area, kAllPanels, 4, 0, 40);
  CHECK(layout.arrangement == Arrangement::AllTabs);
  REQUIRE(layout.windows.size() == 1);
  CHECK(layout.windows[0].rect == area);
  CHECK(layout.windows[0].panels.size() == 5);
}

TEST_CASE("a long lesson text takes at most half the window") {
  PanelVisibility every{};
  every.fill(true);
  const DashboardLayout layout = layout_dashboard({0, 0, 1000, 600}, every, 4, 5000, 16);
  CHECK(of(layout, PanelId::Lesson).h == 300);
}

TEST_CASE("the text size that suits a window grows with its height") {
  CHECK(suited_font_size(720) == 16);
  CHECK(suited_font_size(1080) == 24);
  CHECK(suited_font_size(100) == 13);  // never unreadably small
  CHECK(suited_presenter_font_size(720) == 24);
  CHECK(suited_presenter_font_size(1080) == 36);
  CHECK(suited_presenter_font_size(1080) > suited_font_size(1080));
}

TEST_CASE("presenter mode: the lesson, the sentence, then one view filling the rest") {
  const Rect area{0, 0, 1280, 720};
  const PresenterLayout p = layout_presenter(area, 4, 100, 50);
  CHECK(p.lesson == Rect{0, 0, 1280, 100});
  CHECK(p.sentence == Rect{0, 104, 1280, 50});
  CHECK(p.view == Rect{0, 158, 1280, 562});
  const PresenterLayout no_lesson = layout_presenter(area, 4, 0, 50);
  CHECK(no_lesson.lesson.empty());
  CHECK(no_lesson.sentence.y == 0);
  CHECK(no_lesson.view.bottom() == 720);
}

TEST_CASE("heatmap cells are square and the grid fits in the area") {
  const Rect area{0, 0, 600, 400};
  HeatmapStyle style;
  const HeatmapGeometry g = layout_heatmap(area, 5, 7, style);
  CHECK(g.cell_w == g.cell_h);
  CHECK(inside(g.grid, area));
  CHECK(g.grid.w == doctest::Approx(7 * g.cell_w));
  CHECK(g.cell_w <= style.max_cell_w);
}

TEST_CASE("a matrix far from the area's shape gets wide cells, not a strip") {
  const Rect area{0, 0, 600, 400};
  HeatmapStyle style;
  style.column_label_width = 40;
  const HeatmapGeometry g = layout_heatmap(area, 64, 6, style);  // 64 queries, 6 keys
  CHECK(inside(g.grid, area));
  CHECK(g.cell_w > 4 * g.cell_h);
  CHECK(g.grid.w > area.w / 2);  // a grid across the room, where square cells made a 40-pixel strip
}

TEST_CASE("a square matrix keeps square cells in a wide area") {
  const HeatmapGeometry g = layout_heatmap({0, 0, 1200, 200}, 8, 8, HeatmapStyle{});
  CHECK(g.cell_w == g.cell_h);
}

TEST_CASE("more tokens than pixels: cells under a pixel, and the grid stays in the area") {
  const Rect area{10, 10, 300, 300};
  const HeatmapGeometry g = layout_heatmap(area, 512, 512, HeatmapStyle{});
  REQUIRE_FALSE(g.grid.empty());
  CHECK(g.cell_w < 1.0f);
  CHECK(inside(g.grid, area));
  const auto hit = g.hit(g.grid.right() - 0.01f, g.grid.bottom() - 0.01f);
  REQUIRE(hit);
  CHECK((*hit)[0] == 511);
  CHECK((*hit)[1] == 511);
}

TEST_CASE("hit-testing a cell's centre returns that cell") {
  const HeatmapGeometry g = layout_heatmap({0, 0, 900, 700}, 6, 9, HeatmapStyle{});
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 9; ++j) {
      const Rect c = g.cell(i, j);
      const auto hit = g.hit(c.x + c.w / 2, c.y + c.h / 2);
      REQUIRE(hit);
      CHECK((*hit)[0] == i);
      CHECK((*hit)[1] == j);
    }
  CHECK_FALSE(g.hit(g.grid.x - 1, g.grid.y + 1));
  CHECK_FALSE(g.hit(g.grid.right() + 1, g.grid.y + 1));
}

TEST_CASE("many keys switch the key labels to vertical") {
  HeatmapStyle style;
  style.column_label_width = 70;
  const HeatmapGeometry few = layout_heatmap({0, 0, 800, 600}, 4, 4, style);
  const HeatmapGeometry many = layout_heatmap({0, 0, 800, 600}, 64, 64, style);
  CHECK_FALSE(few.vertical_column_labels);
  CHECK(many.vertical_column_labels);
  CHECK(many.column_labels.h > few.column_labels.h);
}

TEST_CASE("numbers are shown only in cells big enough for them") {
  HeatmapStyle style;
  CHECK(layout_heatmap({0, 0, 800, 600}, 5, 5, style).show_values);
  CHECK_FALSE(layout_heatmap({0, 0, 800, 600}, 200, 200, style).show_values);
}

TEST_CASE("labels that fit are all shown") {
  CHECK(visible_labels(5, 40, 30) == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("labels that do not fit are thinned to every k-th plus the selected one") {
  CHECK(visible_labels(10, 10, 25) == std::vector<int>{0, 3, 6, 9});
  CHECK(visible_labels(10, 10, 25, 4) == std::vector<int>{0, 3, 4, 6, 9});
}

namespace {
using Form = SlotLabel::Form;
// No two placed names closer than `gap`, and every one within [left, right].
void check_apart(const std::vector<SlotLabel>& labels, const std::vector<float>& whole,
                 const std::vector<float>& cut, float left, float right, float gap) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].form == Form::Hidden) continue;
    const float wi = labels[i].form == Form::Whole ? whole[i] : cut[i];
    CHECK(labels[i].x >= left);
    CHECK(labels[i].x + wi <= right + 1e-3f);
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      if (labels[j].form == Form::Hidden) continue;
      const float wj = labels[j].form == Form::Whole ? whole[j] : cut[j];
      CHECK((labels[i].x + wi + gap <= labels[j].x + 1e-3f ||
             labels[j].x + wj + gap <= labels[i].x + 1e-3f));
    }
  }
}
}  // namespace

TEST_CASE("slot names that fit their slots are all whole and centred") {
  const std::vector<float> whole{20, 30, 10}, cut{20, 30, 10};
  const std::vector<SlotLabel> labels = place_slot_labels(0, 150, 50, whole, cut, 4);
  REQUIRE(labels.size() == 3);
  for (const SlotLabel& label : labels) CHECK(label.form == Form::Whole);
  CHECK(labels[0].x == doctest::Approx(15));   // centre 25
  CHECK(labels[1].x == doctest::Approx(60));   // centre 75
  CHECK(labels[2].x == doctest::Approx(120));  // centre 125
}

TEST_CASE("a name wider than its slot spills into free room beside it") {
  // Slot 1's name is wider than its slot; its neighbours' names are short.
  const std::vector<float> whole{10, 70, 10}, cut{10, 40, 10};
  const std::vector<SlotLabel> labels = place_slot_labels(0, 150, 50, whole, cut, 4);
  CHECK(labels[0].form == Form::Whole);
  CHECK(labels[1].form == Form::Whole);
  CHECK(labels[2].form == Form::Whole);
  check_apart(labels, whole, cut, 0, 150, 4);
}

TEST_CASE("a name that would overlap its neighbour is cut to its slot or left out") {
  const std::vector<float> whole{45, 45, 45, 45}, cut{28, 28, 0, 28};
  const std::vector<SlotLabel> labels = place_slot_labels(0, 120, 30, whole, cut, 4);
  CHECK(labels[0].form == Form::Whole);  // first come, and clamped to the left edge
  CHECK(labels[0].x == doctest::Approx(0));
  CHECK(labels[1].form == Form::Hidden);  // its cut form (28 of 30) is still too close to name 0
  CHECK(labels[2].form == Form::Whole);
  CHECK(labels[3].form == Form::Hidden);  // name 2 spills into its slot; no cut form fits beside it
  check_apart(labels, whole, cut, 0, 120, 4);
}

TEST_CASE("the chosen and the hovered names are placed first and whole") {
  const std::vector<float> whole{45, 45, 45, 45}, cut{0, 0, 0, 0};
  const std::vector<SlotLabel> labels = place_slot_labels(0, 120, 30, whole, cut, 4, 1, 3);
  CHECK(labels[1].form == Form::Whole);
  CHECK(labels[3].form == Form::Whole);
  CHECK(labels[0].form == Form::Hidden);  // would overlap name 1
  CHECK(labels[2].form == Form::Hidden);
  check_apart(labels, whole, cut, 0, 120, 4);
}

TEST_CASE("slot names with no slots place nothing") {
  CHECK(place_slot_labels(0, 100, 10, {}, {}, 4).empty());
}

TEST_CASE("arrow geometry spaces tokens evenly and hit-tests both sides") {
  const ArrowsGeometry g = layout_arrows({0, 0, 400, 300}, 3, 6, 60);
  CHECK(g.left_y(0) == doctest::Approx(50));
  CHECK(g.right_y(5) == doctest::Approx(275));
  const auto left = g.hit(10, 160, 60);
  REQUIRE(left);
  CHECK((*left)[0] == 0);
  CHECK((*left)[1] == 1);
  const auto right = g.hit(390, 10, 60);
  REQUIRE(right);
  CHECK((*right)[0] == 1);
  CHECK((*right)[1] == 0);
  CHECK_FALSE(g.hit(200, 150, 60));
}

TEST_CASE("panel names parse back") {
  for (int i = 0; i < kPanelCount; ++i) CHECK(parse_panel(panel_name(PanelId(i))) == PanelId(i));
  CHECK_FALSE(parse_panel("sidebar"));
}

}  // namespace attnviz::view
