#include "app/view/layout.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] Dashboard
// -----------------------------------------------------------------------------
namespace {
bool shown(const PanelVisibility& v, PanelId id) {
  return v[static_cast<std::size_t>(id)];
}
Rect& at(DashboardLayout& layout, PanelId id) {
  return layout[static_cast<std::size_t>(id)];
}
}  // namespace

DashboardLayout layout_dashboard(Rect area, const PanelVisibility& v, float gap,
                                 float lesson_height) {
  DashboardLayout layout{};
  if (shown(v, PanelId::Lesson)) {
    const float h = std::min(lesson_height, area.h);
    at(layout, PanelId::Lesson) = {area.x, area.y, area.w, h};
    area.y += h + gap;
    area.h = std::max(0.0f, area.h - h - gap);
  }
  // Rows: the top band and the weights band.
  const bool top_band = shown(v, PanelId::Input) || shown(v, PanelId::Centre) ||
                        shown(v, PanelId::Arrows) || shown(v, PanelId::Output);
  Rect top = area;
  if (shown(v, PanelId::Weights)) {
    const float weights_h = top_band ? std::round(area.h * 0.36f) : area.h;
    at(layout, PanelId::Weights) = {area.x, area.bottom() - weights_h, area.w, weights_h};
    top.h = top_band ? area.h - weights_h - gap : 0;
  }
  if (!top_band) return layout;

  // Columns of the top band, with relative widths; hidden columns give their room away.
  const bool right_column = shown(v, PanelId::Arrows) || shown(v, PanelId::Output);
  struct Column {
    bool present;
    float weight;
  };
  const std::array<Column, 3> columns = {{{shown(v, PanelId::Input), 0.25f},
                                          {shown(v, PanelId::Centre), 0.42f},
                                          {right_column, 0.33f}}};
  float total = 0;
  int present = 0;
  for (const Column& c : columns)
    if (c.present) total += c.weight, ++present;
  const float usable = top.w - gap * static_cast<float>(present - 1);
  float x = top.x;
  std::array<Rect, 3> rects{};
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (!columns[i].present) continue;
    const float w = std::round(usable * columns[i].weight / total);
    rects[i] = {x, top.y, w, top.h};
    x += w + gap;
  }
  // The last column takes the rounding remainder.
  for (int i = 2; i >= 0; --i)
    if (columns[size_t(i)].present) {
      rects[size_t(i)].w = top.right() - rects[size_t(i)].x;
      break;
    }
  at(layout, PanelId::Input) = rects[0];
  at(layout, PanelId::Centre) = rects[1];
  if (right_column) {
    Rect r = rects[2];
    if (shown(v, PanelId::Arrows) && shown(v, PanelId::Output)) {
      const float arrows_h = std::round((r.h - gap) * 0.5f);
      at(layout, PanelId::Arrows) = {r.x, r.y, r.w, arrows_h};
      at(layout, PanelId::Output) = {r.x, r.y + arrows_h + gap, r.w, r.h - arrows_h - gap};
    } else {
      at(layout, shown(v, PanelId::Arrows) ? PanelId::Arrows : PanelId::Output) = r;
    }
  }
  return layout;
}

}  // namespace attnviz::view
