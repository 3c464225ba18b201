// Plots on an ImGui draw list: dashed and clipped lines, arrows, and their labels' number formats.
#pragma once

#include "app/view/geometry.hpp"
#include "core/base/types.hpp"

#include <imgui.h>
#include <Eigen/Core>

#include <cmath>

namespace attnviz::app {

// A screen point as ImGui's ImVec2 and back, and a vector's length in pixels.
inline ImVec2 im(view::ScreenPoint p) {
  return ImVec2(p[0], p[1]);
}
inline view::ScreenPoint sp(ImVec2 p) {
  return {p.x, p.y};
}
inline float length(ImVec2 v) {
  return std::sqrt(v.x * v.x + v.y * v.y);
}

// A line of dashes from a to b (already clipped to the plot, so the count is bounded).
void add_dashed_line(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 colour, float thickness,
                     float dash);

// Clips a-b to the plot and draws it, solid or dashed.
void add_clipped_line(ImDrawList* list, const view::Rect& clip, ImVec2 a, ImVec2 b, ImU32 colour,
                      float thickness, float dash = 0);

// An arrow from `from` to `to` with a filled head; a dot when it is too short for a head.
void add_arrow(ImDrawList* list, const view::Rect& clip, ImVec2 from, ImVec2 to, ImU32 colour,
               float thickness, float head);

// "(1.20, -0.50)": the first components (then "…" when there are more than four).
void format_vector(char* out, int size, const Eigen::Ref<const RowVector>& v);

// A number from double-precision geometry, never "nan" (an angle that does not exist is "—").
void format_double(char* out, int size, double value, int decimals);

// An angle in whole degrees, "—" when it does not exist.
void format_angle(char* out, int size, double degrees);

// A tick label: "0", "0.5", "-2", "1e+03".
void format_tick(char* out, int size, double value, double step);

}  // namespace attnviz::app
