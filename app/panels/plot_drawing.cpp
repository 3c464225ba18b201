// Plots on an ImGui draw list: dashed and clipped lines, arrows, and their labels' number formats.
#include "app/panels/plot_drawing.hpp"

#include "core/figures/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz::app {

void add_dashed_line(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 colour, float thickness,
                     float dash) {
  const ImVec2 d(b.x - a.x, b.y - a.y);
  const float total = length(d);
  if (total < 0.5f || dash <= 0) return;
  const ImVec2 unit(d.x / total, d.y / total);
  const int count = std::min(4000, static_cast<int>(total / (dash * 2.0f)) + 1);
  for (int k = 0; k < count; ++k) {
    const float s0 = static_cast<float>(k) * dash * 2.0f, s1 = std::min(total, s0 + dash);
    list->AddLine(ImVec2(a.x + unit.x * s0, a.y + unit.y * s0),
                  ImVec2(a.x + unit.x * s1, a.y + unit.y * s1), colour, thickness);
  }
}

void add_clipped_line(ImDrawList* list, const view::Rect& clip, ImVec2 a, ImVec2 b, ImU32 colour,
                      float thickness, float dash) {
  view::ScreenPoint p = sp(a), q = sp(b);
  if (!view::clip_segment(clip, p, q)) return;
  if (dash > 0)
    add_dashed_line(list, im(p), im(q), colour, thickness, dash);
  else
    list->AddLine(im(p), im(q), colour, thickness);
}

void add_arrow(ImDrawList* list, const view::Rect& clip, ImVec2 from, ImVec2 to, ImU32 colour,
               float thickness, float head) {
  const ImVec2 d(to.x - from.x, to.y - from.y);
  const float total = length(d);
  if (total < head * 1.1f) {
    list->AddCircleFilled(to, std::max(thickness, head * 0.3f), colour);
    return;
  }
  const ImVec2 unit(d.x / total, d.y / total), normal(-unit.y, unit.x);
  const ImVec2 base(to.x - unit.x * head, to.y - unit.y * head);
  add_clipped_line(list, clip, from, ImVec2(base.x + unit.x * 0.5f, base.y + unit.y * 0.5f), colour,
                   thickness);
  if (!clip.contains(to.x, to.y)) return;
  const float half = head * 0.42f;
  list->AddTriangleFilled(to, ImVec2(base.x + normal.x * half, base.y + normal.y * half),
                          ImVec2(base.x - normal.x * half, base.y - normal.y * half), colour);
}

void format_vector(char* out, int size, const Eigen::Ref<const RowVector>& v) {
  const int dims = static_cast<int>(v.size());
  int used = std::snprintf(out, static_cast<std::size_t>(size), "(");
  const int shown = std::min(dims, 4);
  char number[32];
  for (int c = 0; c < shown && used < size; ++c) {
    view::format_number_into(number, sizeof number, v(c), 2);
    used += std::snprintf(out + used, static_cast<std::size_t>(size - used), "%s%s",
                          c > 0 ? ", " : "", number);
  }
  if (used < size)
    std::snprintf(out + used, static_cast<std::size_t>(size - used), "%s)",
                  dims > shown ? ", \xe2\x80\xa6" : "");
}

void format_double(char* out, int size, double value, int decimals) {
  if (std::isnan(value)) {
    std::snprintf(out, static_cast<std::size_t>(size), "\xe2\x80\x94");
    return;
  }
  view::format_number_into(out, size, static_cast<float>(value), decimals);
}

void format_angle(char* out, int size, double degrees) {
  if (std::isnan(degrees))
    std::snprintf(out, static_cast<std::size_t>(size), "\xe2\x80\x94");
  else
    std::snprintf(out, static_cast<std::size_t>(size), "%.0f\xc2\xb0", degrees);
}

void format_tick(char* out, int size, double value, double step) {
  if (std::abs(value) < step * 1e-6) value = 0;
  std::snprintf(out, static_cast<std::size_t>(size), "%g", value);
}

}  // namespace attnviz::app
