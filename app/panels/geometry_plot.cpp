// The Geometry view's plot, its tooltip, the table of dot products and the explanation.
//   [SECTION] Helpers
//   [SECTION] The plot
//   [SECTION] The table and the explanation
#include "app/panels/geometry_panel.hpp"

#include "app/panels/plot_drawing.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <vector>

namespace attnviz::app {
namespace {

// -----------------------------------------------------------------------------
// [SECTION] Helpers
// -----------------------------------------------------------------------------

constexpr float kPi = 3.14159265f;

// Queries and keys in two colours that read on both themes; the selected query is drawn in the
// query colour at full strength, the others fainter.
struct ArrowColours {
  ImU32 query, key;
};
ArrowColours arrow_colours(Theme theme) {
  if (theme == Theme::Dark) return {IM_COL32(110, 170, 255, 255), IM_COL32(120, 215, 130, 255)};
  return {IM_COL32(30, 95, 205, 255), IM_COL32(25, 135, 60, 255)};
}

constexpr const char* kAxisNames[3] = {"dim 1", "dim 2", "dim 3"};  // counted from 1
// The Plane mode's axes: along q, and at right angles to it (towards k).
constexpr const char* kPlaneAxisNames[2] = {"along q", "\xe2\x8a\xa5 q"};

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] The plot
// -----------------------------------------------------------------------------

void GeometryPanel::draw_grid(const AppState& state, ImDrawList* list, const view::Rect& plot) {
  const Palette& colours = palette(state.ui.theme);
  const ImU32 grid = with_alpha(colours.text_dim, 0.18f), axis = with_alpha(colours.text_dim, 0.8f);
  const float thin = std::max(1.0f, font_ * 0.06f);
  char text[32];
  if (mode_ != PlotMode::Space) {
    const view::Point2 lo = frame_.to_world(plot.x, plot.bottom()),
                       hi = frame_.to_world(plot.right(), plot.y);
    const double step = view::grid_step(std::max(hi[0] - lo[0], hi[1] - lo[1]), 8);
    const double first_x = std::ceil(lo[0] / step), first_y = std::ceil(lo[1] / step);
    // Every k-th line labelled, counted from 0, so that 0 and round numbers carry the labels.
    const double pixels = step * frame_.scale;
    const long x_every =
        std::max(1L, static_cast<long>(std::ceil(ImGui::CalcTextSize("-0.00").x * 1.3 / pixels)));
    const long y_every = std::max(1L, static_cast<long>(std::ceil(font_ * 1.5 / pixels)));
    for (int k = 0; k < 200 && (first_x + k) * step <= hi[0]; ++k) {
      const double x = (first_x + k) * step;
      const float sx = frame_.to_screen(x, 0)[0];
      list->AddLine(ImVec2(sx, plot.y), ImVec2(sx, plot.bottom()), grid, thin);
      if (std::lround(first_x + k) % x_every == 0 && sx > plot.x + font_ * 1.5f &&
          sx < plot.right() - font_) {
        format_tick(text, sizeof text, x, step);
        const ImVec2 size = ImGui::CalcTextSize(text);
        list->AddText(ImVec2(sx - size.x * 0.5f, plot.bottom() - size.y - font_ * 0.15f),
                      colours.text_dim, text);
      }
    }
    for (int k = 0; k < 200 && (first_y + k) * step <= hi[1]; ++k) {
      const double y = (first_y + k) * step;
      const float sy = frame_.to_screen(0, y)[1];
      list->AddLine(ImVec2(plot.x, sy), ImVec2(plot.right(), sy), grid, thin);
      if (std::lround(first_y + k) % y_every == 0 && sy > plot.y + font_ &&
          sy < plot.bottom() - font_ * 1.5f) {
        format_tick(text, sizeof text, y, step);
        list->AddText(ImVec2(plot.x + font_ * 0.2f, sy - font_ * 0.5f), colours.text_dim, text);
      }
    }
    const ImVec2 o = im(frame_.to_screen(0, 0));
    add_clipped_line(list, plot, ImVec2(plot.x, o.y), ImVec2(plot.right(), o.y), axis, thin * 1.5f);
    add_clipped_line(list, plot, ImVec2(o.x, plot.y), ImVec2(o.x, plot.bottom()), axis,
                     thin * 1.5f);
    const int d_k = state.result().config.d_k;
    const char* const* names = mode_ == PlotMode::Plane ? kPlaneAxisNames : kAxisNames;
    // Axis names, kept clear of the tokens' labels.
    const ImVec2 size = ImGui::CalcTextSize(names[0]);
    if (o.y > plot.y && o.y < plot.bottom()) {
      const ImVec2 at(plot.right() - size.x - font_ * 0.3f, o.y - size.y - font_ * 0.1f);
      list->AddText(at, colours.text_dim, names[0]);
      placed_.push_back(ImVec4(at.x, at.y, at.x + size.x, at.y + size.y));
    }
    if (d_k >= 2 && o.x > plot.x && o.x < plot.right()) {
      const ImVec2 at(
          o.x + font_ * 0.3f,
          plot.y +
              font_ * (mode_ == PlotMode::Approximate || mode_ == PlotMode::Plane ? 1.6f : 0.2f));
      list->AddText(at, colours.text_dim, names[1]);
      placed_.push_back(ImVec4(at.x, at.y, at.x + size.x, at.y + size.y));
    }
    return;
  }
  // Space: a grid on the floor (dim 2 = 0) and the three axes.
  const double step = view::grid_step(2.0 * radius_, 6);
  // Inside the disc the frame fits (the axes reach its edge), so that nothing is cut off.
  const double reach = radius_ > 0 ? radius_ * 1.05 : 1.0;
  const double extent = std::max(step, std::floor(reach / step) * step);
  const int lines = std::min(100, static_cast<int>(std::lround(extent / step)));
  for (int k = -lines; k <= lines; ++k) {
    const double c = static_cast<double>(k) * step;
    add_clipped_line(list, plot, to_screen(c, -extent, 0), to_screen(c, extent, 0), grid, thin);
    add_clipped_line(list, plot, to_screen(-extent, c, 0), to_screen(extent, c, 0), grid, thin);
  }
  for (int dim = 0; dim < 3; ++dim) {
    double end[3] = {0, 0, 0};
    end[dim] = std::max(reach, extent);
    const ImVec2 positive = to_screen(end[0], end[1], end[2]);
    const ImVec2 negative = to_screen(-end[0], -end[1], -end[2]);
    const ImVec2 o = to_screen(0, 0, 0);
    add_clipped_line(list, plot, o, positive, axis, thin * 1.5f);
    add_clipped_line(list, plot, o, negative, with_alpha(colours.text_dim, 0.4f), thin,
                     font_ * 0.25f);
    if (plot.contains(positive.x, positive.y)) {
      const ImVec2 size = ImGui::CalcTextSize(kAxisNames[dim]);
      const ImVec2 d(positive.x - o.x, positive.y - o.y);
      const float n = std::max(1.0f, length(d));
      const ImVec2 at(positive.x + d.x / n * font_ * 0.6f - size.x * 0.5f,
                      positive.y + d.y / n * font_ * 0.6f - size.y * 0.5f);
      list->AddText(at, colours.text_dim, kAxisNames[dim]);
      placed_.push_back(ImVec4(at.x, at.y, at.x + size.x, at.y + size.y));
    }
  }
  char tick[32], caption[64];
  format_tick(tick, sizeof tick, step, step);
  std::snprintf(caption, sizeof caption, "floor grid: %s per square", tick);
  list->AddText(ImVec2(plot.x + font_ * 0.3f, plot.bottom() - font_ * 1.3f), colours.text_dim,
                caption);
}

// Whether an earlier arrow on the same side has the same text with its tip in the same place.
bool GeometryPanel::same_label_earlier(int a, const std::vector<Token>& queries,
                                       const std::vector<Token>& keys) const {
  const bool is_query = a < n_query_;
  const auto text_of = [&](int arrow) -> const std::string& {
    return is_query ? queries[static_cast<std::size_t>(arrow)].text
                    : keys[static_cast<std::size_t>(arrow - n_query_)].text;
  };
  const ImVec2 t = tips_[static_cast<std::size_t>(a)];
  for (int b = is_query ? 0 : n_query_; b < a; ++b) {
    const ImVec2 u = tips_[static_cast<std::size_t>(b)];
    if (std::abs(u.x - t.x) < 1.0f && std::abs(u.y - t.y) < 1.0f && text_of(b) == text_of(a))
      return true;
  }
  return false;
}

// How much of the box other labels (and the tips) cover, in square pixels.
float GeometryPanel::overlap_area(const ImVec4& box) const {
  float area = 0;
  for (const ImVec4& other : placed_)
    area += std::max(0.0f, std::min(box.z, other.z) - std::max(box.x, other.x)) *
            std::max(0.0f, std::min(box.w, other.w) - std::max(box.y, other.y));
  return area;
}

// A token's name beyond its arrow's tip (or beside it when that spot is taken).
void GeometryPanel::place_label(ImDrawList* list, const view::Rect& plot, ImVec2 from, ImVec2 tip,
                                const char* text, ImU32 colour, bool must, ImFont* font) {
  if (font) ImGui::PushFont(font);
  const ImVec2 size = ImGui::CalcTextSize(text);
  if (font) ImGui::PopFont();
  ImVec2 d(tip.x - from.x, tip.y - from.y);
  const float n = length(d);
  d = n > 0.5f ? ImVec2(d.x / n, d.y / n) : ImVec2(0.7071f, -0.7071f);
  const float off = font_ * 0.45f;
  const ImVec2 centre_out(tip.x + d.x * (off + size.x * 0.5f), tip.y + d.y * (off + size.y * 0.5f));
  constexpr int kSpots = 9;
  const ImVec2 spots[kSpots] = {
      ImVec2(centre_out.x - size.x * 0.5f, centre_out.y - size.y * 0.5f),
      ImVec2(tip.x + off, tip.y - size.y - off * 0.3f),
      ImVec2(tip.x - off - size.x, tip.y - size.y - off * 0.3f),
      ImVec2(tip.x + off, tip.y + off * 0.3f),
      ImVec2(tip.x - off - size.x, tip.y + off * 0.3f),
      ImVec2(tip.x - size.x * 0.5f, tip.y - size.y - off),  // straight above, below
      ImVec2(tip.x - size.x * 0.5f, tip.y + off),
      ImVec2(tip.x - size.x * 0.5f, tip.y - size.y * 2.0f - off),  // a line further
      ImVec2(tip.x - size.x * 0.5f, tip.y + size.y + off)};
  int chosen = -1, least_covered = -1;
  float least = FLT_MAX;
  for (int k = 0; k < kSpots && chosen < 0; ++k) {
    const ImVec4 box(spots[k].x, spots[k].y, spots[k].x + size.x, spots[k].y + size.y);
    const float covered = overlap_area(box);
    const bool clear_of_edges = box.x >= plot.x + 2 && box.z <= plot.right() - 2 &&
                                box.y >= plot.y + 2 && box.w <= plot.bottom() - 2;
    if (clear_of_edges && covered == 0.0f) chosen = k;  // free
    const bool inside =
        box.x >= plot.x && box.z <= plot.right() && box.y >= plot.y && box.w <= plot.bottom();
    if (inside && covered < least) {
      least = covered;
      least_covered = k;
    }
  }
  // A label that must be written goes where it covers the least of the others.
  if (chosen < 0 && must) chosen = least_covered >= 0 ? least_covered : 0;
  if (chosen < 0) return;
  const ImVec2 at = spots[chosen];
  if (font)
    list->AddText(font, font->FontSize, at, colour, text);
  else
    list->AddText(at, colour, text);
  placed_.push_back(ImVec4(at.x, at.y, at.x + size.x, at.y + size.y));
}

void GeometryPanel::draw_plot(const AppState& state, const view::Rect& plot, int head, int query,
                              int projected) {
  const AttentionResult& r = state.result();
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  const Palette& colours = palette(state.ui.theme);
  const ArrowColours ac = arrow_colours(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 p0(plot.x, plot.y), p1(plot.right(), plot.bottom());
  list->AddRectFilled(p0, p1, colours.panel_background, font_ * 0.2f);
  list->AddRect(p0, p1, with_alpha(colours.text_dim, 0.35f), font_ * 0.2f);
  list->PushClipRect(p0, p1, true);
  placed_.clear();  // label boxes: the axis names, the banner, the tips, then the labels
  draw_grid(state, list, plot);
  // The approximation, said where it cannot be missed.
  if (mode_ == PlotMode::Approximate || mode_ == PlotMode::Plane) {
    char banner[128];
    const char* key_name =
        plane_key_ >= 0 && plane_key_ < static_cast<int>(state.pipeline().keys().tokens.size())
            ? state.frame.visual_text(
                  state.pipeline().keys().tokens[static_cast<std::size_t>(plane_key_)].text)
            : "";
    if (mode_ == PlotMode::Plane)
      std::snprintf(banner, sizeof banner, "the plane of q and \"%s\": the others are shadows",
                    key_name);
    else
      std::snprintf(banner, sizeof banner, "approximation: dims 1 and 2 of d_k = %d", r.config.d_k);
    if (ImGui::CalcTextSize(banner).x > plot.w - font_ * 0.8f) {
      if (mode_ == PlotMode::Plane)
        std::snprintf(banner, sizeof banner, "plane of q and \"%s\"", key_name);
      else
        std::snprintf(banner, sizeof banner, "approximation: dims 1, 2 of %d", r.config.d_k);
    }
    const ImVec2 size = ImGui::CalcTextSize(banner);
    const ImVec2 at(plot.x + std::max(font_ * 0.3f, (plot.w - size.x) * 0.5f),
                    plot.y + font_ * 0.3f);
    list->AddRectFilled(ImVec2(at.x - font_ * 0.3f, at.y - 2),
                        ImVec2(at.x + size.x + font_ * 0.3f, at.y + size.y + 2), colours.highlight,
                        font_ * 0.2f);
    list->AddText(at, IM_COL32(20, 20, 20, 255), banner);
    placed_.push_back(
        ImVec4(at.x - font_ * 0.3f, at.y - 2, at.x + size.x + font_ * 0.3f, at.y + size.y + 2));
  }
  const ImVec2 o = to_screen(0, 0, 0);
  const float thick = std::max(1.5f, font_ * 0.1f);

  // Space: faint drop lines from every tip to the floor, for depth.
  if (mode_ == PlotMode::Space)
    for (int a = 0; a < n_query_ + n_key_; ++a) {
      const Matrix& m = a < n_query_ ? h.Q : h.K;
      const Eigen::Index row = a < n_query_ ? a : a - n_query_;
      const ImVec2 floor = to_screen(component(m, row, 0), component(m, row, 1), 0);
      add_clipped_line(list, plot, tips_[static_cast<std::size_t>(a)], floor,
                       with_alpha(a < n_query_ ? ac.query : ac.key, 0.35f), 1.0f, font_ * 0.15f);
    }

  // The projection of the selected query on the chosen key, under the arrows.
  const int q_arrow = query, k_arrow = n_query_ + projected;
  const view::DotGeometry g = view::dot_geometry(h.Q.row(query), h.K.row(projected));
  const bool has_shadow = std::isfinite(g.foot) && g.norm_k > 0;
  // True angles only on the plane, and in the Plane mode for the key that spans it with q.
  const bool exact_angles =
      mode_ == PlotMode::Flat || (mode_ == PlotMode::Plane && projected == plane_key_);
  if (has_shadow) {
    const double t = g.foot;
    const ImVec2 foot =
        to_screen(t * coordinate(h.K, projected, 0), t * coordinate(h.K, projected, 1),
                  t * coordinate(h.K, projected, 2));
    const ImVec2 tip_q = tips_[static_cast<std::size_t>(q_arrow)],
                 tip_k = tips_[static_cast<std::size_t>(k_arrow)];
    // k's line, dashed, where the shadow reaches past k or behind the origin.
    if (t > 1.0 || t < 0.0)
      add_clipped_line(list, plot, t > 1.0 ? tip_k : o, foot, with_alpha(ac.key, 0.6f), 1.5f,
                       font_ * 0.3f);
    // The shadow of q on k: a broad band, in the highlight colour.
    add_clipped_line(list, plot, o, foot, with_alpha(colours.highlight, 0.45f), font_ * 0.42f);
    // The perpendicular from q's tip to k's line, dashed, with a right-angle mark.
    add_clipped_line(list, plot, tip_q, foot, colours.text_dim, 1.5f, font_ * 0.25f);
    const ImVec2 along(o.x - foot.x, o.y - foot.y), up(tip_q.x - foot.x, tip_q.y - foot.y);
    const float la = length(along), lu = length(up), mark = font_ * 0.4f;
    if (exact_angles && la > mark * 1.5f && lu > mark * 1.5f) {
      const ImVec2 a(along.x / la * mark, along.y / la * mark),
          b(up.x / lu * mark, up.y / lu * mark);
      const ImVec2 corner_points[3] = {ImVec2(foot.x + a.x, foot.y + a.y),
                                       ImVec2(foot.x + a.x + b.x, foot.y + a.y + b.y),
                                       ImVec2(foot.x + b.x, foot.y + b.y)};
      list->AddPolyline(corner_points, 3, colours.text_dim, 0, 1.2f);
    }
    // The angle θ at the origin (true angles only on the plane).
    const ImVec2 dq(tip_q.x - o.x, tip_q.y - o.y), dk(tip_k.x - o.x, tip_k.y - o.y);
    if (exact_angles && !std::isnan(g.angle_degrees) && g.angle_degrees >= 3.0 &&
        g.angle_degrees <= 177.0 && length(dq) > font_ * 2 && length(dk) > font_ * 2) {
      float a0 = std::atan2(dk.y, dk.x), a1 = std::atan2(dq.y, dq.x);
      float sweep = a1 - a0;
      while (sweep > kPi) sweep -= 2 * kPi;
      while (sweep < -kPi) sweep += 2 * kPi;
      const float radius = std::min({font_ * 1.6f, length(dq) * 0.45f, length(dk) * 0.45f});
      list->PathArcTo(o, radius, a0, a0 + sweep, 24);
      list->PathStroke(colours.text, 0, 1.5f);
      const float mid = a0 + sweep * 0.5f;
      const ImVec2 theta_size = ImGui::CalcTextSize("\xce\xb8");
      list->AddText(ImVec2(o.x + std::cos(mid) * (radius + font_ * 0.55f) - theta_size.x * 0.5f,
                           o.y + std::sin(mid) * (radius + font_ * 0.55f) - theta_size.y * 0.5f),
                    colours.text, "\xce\xb8");
    }
  }

  // The arrows: keys and the other queries (far first), then the chosen key and the selected query.
  // Past a couple of dozen arrows the others fade with their number, down to a fifth, so that the
  // chosen two and q's shadow stand out of a crowd (256 tokens draw 512 arrows).
  const float crowd =
      std::clamp(24.0f / static_cast<float>(std::max(1, n_query_ + n_key_)), 0.2f, 1.0f);
  const auto arrow_style = [&](int a, ImU32& colour, float& width, float& head_size) {
    const bool is_query = a < n_query_;
    const bool emphasised = a == q_arrow || a == k_arrow;
    float alpha = emphasised ? 1.0f : (is_query ? 0.4f : 0.75f) * crowd;
    if (mode_ == PlotMode::Space && radius_ > 0)
      alpha *= static_cast<float>(
          0.55 +
          0.45 * std::clamp((depth_[static_cast<std::size_t>(a)] + radius_) / (2.0 * radius_), 0.0,
                            1.0));
    colour = with_alpha(is_query ? ac.query : ac.key, alpha);
    width = a == q_arrow ? thick * 1.8f : (emphasised ? thick * 1.4f : thick);
    head_size = font_ * (a == q_arrow ? 0.7f : 0.55f);
  };
  for (int a : order_) {
    if (a == q_arrow || a == k_arrow) continue;
    ImU32 colour;
    float width, head_size;
    arrow_style(a, colour, width, head_size);
    const bool lit = a < n_query_ ? state.highlights_query(a) : state.highlights_key(a - n_query_);
    if (lit || a == hovered_arrow_)
      add_clipped_line(list, plot, o, tips_[static_cast<std::size_t>(a)],
                       with_alpha(colours.highlight, 0.6f), width + font_ * 0.3f);
    add_arrow(list, plot, o, tips_[static_cast<std::size_t>(a)], colour, width, head_size);
  }
  for (int a : {k_arrow, q_arrow}) {
    ImU32 colour;
    float width, head_size;
    arrow_style(a, colour, width, head_size);
    const bool lit = a < n_query_ ? state.highlights_query(a) : state.highlights_key(a - n_query_);
    if (lit || a == hovered_arrow_ ||
        (drag_.kind == DragKind::Tip && a == arrow_of(drag_.side, drag_.index, n_query_)))
      add_clipped_line(list, plot, o, tips_[static_cast<std::size_t>(a)],
                       with_alpha(colours.highlight, 0.6f), width + font_ * 0.3f);
    add_arrow(list, plot, o, tips_[static_cast<std::size_t>(a)], colour, width, head_size);
  }
  list->AddCircleFilled(o, std::max(2.5f, font_ * 0.16f), colours.text);

  // Labels: the selected query and the chosen key always, then the others where there is room.
  const auto& queries = state.pipeline().target().tokens;
  const auto& keys = state.pipeline().keys().tokens;
  for (int a = 0; a < n_query_ + n_key_; ++a) {  // keep labels off the tips
    const ImVec2 t = tips_[static_cast<std::size_t>(a)];
    const float rad = font_ * 0.25f;
    placed_.push_back(ImVec4(t.x - rad, t.y - rad, t.x + rad, t.y + rad));
  }
  place_label(list, plot, o, tips_[static_cast<std::size_t>(q_arrow)],
              state.frame.visual_text(queries[static_cast<std::size_t>(query)].text), ac.query,
              true, bold_);
  place_label(list, plot, o, tips_[static_cast<std::size_t>(k_arrow)],
              state.frame.visual_text(keys[static_cast<std::size_t>(projected)].text), ac.key, true,
              bold_);
  for (int pass = 0; pass < 2; ++pass)
    for (int a = 0; a < n_query_ + n_key_; ++a) {
      if (a == q_arrow || a == k_arrow) continue;
      const bool is_query = a < n_query_;
      if ((pass == 0) != !is_query)
        continue;  // keys first: they are what the query is compared with
      const char* text =
          is_query ? state.frame.visual_text(queries[static_cast<std::size_t>(a)].text)
                   : state.frame.visual_text(keys[static_cast<std::size_t>(a - n_query_)].text);
      const bool lit = is_query ? state.highlights_query(a) : state.highlights_key(a - n_query_);
      if (!lit && same_label_earlier(a, queries, keys))
        continue;  // a repeated token at the same place
      place_label(list, plot, o, tips_[static_cast<std::size_t>(a)], text,
                  with_alpha(is_query ? ac.query : ac.key, is_query ? 0.75f : 0.95f), lit, nullptr);
    }

  list->PopClipRect();

  draw_plot_tooltip(state, h, head, query);
}

void GeometryPanel::draw_plot_tooltip(const AppState& state, const HeadResult& h, int head,
                                      int query) {
  const auto& queries = state.pipeline().target().tokens;
  const auto& keys = state.pipeline().keys().tokens;
  char vector[160], a[32], b[32], c[32];
  if (drag_.kind == DragKind::Tip) {
    if (!(drag_x_norm_ > 0) || !drag_.moved) return;
    const bool is_query = drag_.side == Side::Query;
    format_vector(vector, sizeof vector, delta_);
    ImGui::BeginTooltip();
    ImGui::Text("%s \"%s\" moves by \xce\x94 = %s", is_query ? "query" : "key",
                state.frame.visual_text(
                    (is_query ? queries : keys)[static_cast<std::size_t>(drag_.index)].text),
                vector);
    view::format_number_into(a, sizeof a, static_cast<float>(drag_x_norm_), 2);
    ImGui::Text("%s of head %d changes by x^T\xc2\xb7\xce\x94 / |x|\xc2\xb2   (|x| = %s),",
                is_query ? "W_Q" : "W_K", view::shown_number(head), a);
    ImGui::TextUnformatted("the smallest change that moves this tip by exactly \xce\x94;");
    ImGui::Text("every other %s moves by (x'\xc2\xb7x / |x|\xc2\xb2)\xc2\xb7\xce\x94.   Esc: undo",
                is_query ? "query" : "key");
    ImGui::EndTooltip();
    return;
  }
  if (hovered_arrow_ < 0) return;
  const bool is_query = hovered_arrow_ < n_query_;
  const int index = is_query ? hovered_arrow_ : hovered_arrow_ - n_query_;
  state.frame.hovered_next = {is_query ? Side::Query : Side::Key, index};
  ImGui::BeginTooltip();
  if (is_query) {
    format_vector(vector, sizeof vector, h.Q.row(index));
    view::format_number_into(a, sizeof a, h.Q.row(index).norm(), 2);
    ImGui::Text("query \"%s\"   q = %s   |q| = %s",
                state.frame.visual_text(queries[static_cast<std::size_t>(index)].text), vector, a);
    ImGui::TextDisabled(index == query ? "the selected query" : "click to select this query");
    ImGui::TextDisabled("drag the tip to change W_Q of head %d", view::shown_number(head));
  } else {
    const view::DotGeometry g = view::dot_geometry(h.Q.row(query), h.K.row(index));
    format_vector(vector, sizeof vector, h.K.row(index));
    format_double(a, sizeof a, g.norm_k, 2);
    ImGui::Text("key \"%s\"   k = %s   |k| = %s",
                state.frame.visual_text(keys[static_cast<std::size_t>(index)].text), vector, a);
    format_double(a, sizeof a, g.dot, 2);
    format_angle(b, sizeof b, g.angle_degrees);
    if (view::is_masked(h.masked_scores(query, index)))
      std::snprintf(c, sizeof c, "0 (masked)");
    else
      view::format_number_into(c, sizeof c, h.weights(query, index), 2);
    ImGui::Text("with \"%s\":  q\xc2\xb7k = %s   \xce\xb8 = %s   \xce\xb1 = %s",
                state.frame.visual_text(queries[static_cast<std::size_t>(query)].text), a, b, c);
    ImGui::TextDisabled("click to keep its projection drawn; drag the tip to change W_K of head %d",
                        view::shown_number(head));
  }
  ImGui::EndTooltip();
}

// -----------------------------------------------------------------------------
// [SECTION] The table and the explanation
// -----------------------------------------------------------------------------

// The table's natural width: the widest key and four numbers.
float GeometryPanel::side_width(const AppState& state) const {
  float widest = ImGui::CalcTextSize("key").x;
  for (const Token& t : state.pipeline().keys().tokens)
    widest = std::max(widest, ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
  widest = std::min(widest, font_ * 7.0f);
  const float numbers = ImGui::CalcTextSize("0.00").x * 2.0f + ImGui::CalcTextSize("-0.00").x +
                        ImGui::CalcTextSize("180\xc2\xb0").x;
  return std::max(font_ * 11.0f, widest + numbers + cell_padding() * 10.0f +
                                     ImGui::GetStyle().ScrollbarSize + font_ * 0.3f);
}

// Text at the right of the current table cell.
void GeometryPanel::right_aligned(const char* text) {
  const float w = ImGui::CalcTextSize(text).x;
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() +
                       std::max(0.0f, ImGui::GetContentRegionAvail().x - w));
  ImGui::TextUnformatted(text);
}

const char* GeometryPanel::score_note(const AttentionConfig& c) {
  switch (c.compatibility) {
    case Compatibility::Dot:
      return c.temperature != 1.0f ? "\xce\xb1 = softmax(q\xc2\xb7k / T)"
                                   : "\xce\xb1 = softmax(q\xc2\xb7k)";
    case Compatibility::ScaledDot:
      return c.temperature != 1.0f ? "\xce\xb1 = softmax(q\xc2\xb7k / \xe2\x88\x9a"
                                     "d_k / T)"
                                   : "\xce\xb1 = softmax(q\xc2\xb7k / \xe2\x88\x9a"
                                     "d_k)";
    case Compatibility::Cosine:
      return "score = cos \xce\xb8 (lengths do not count)";
    case Compatibility::General:
      return "score = q\xc2\xb7W_a\xc2\xb7k, not q\xc2\xb7k: the table's q\xc2\xb7k is not the "
             "score";
    case Compatibility::Additive:
      return "score = v_a\xc2\xb7tanh(q\xc2\xb7W_1 + k\xc2\xb7W_2), not q\xc2\xb7k";
  }
  return "";
}

void GeometryPanel::draw_side(const AppState& state, const view::Rect& side, int head, int query,
                              int projected) {
  if (side.w < font_ * 6 || side.h < font_ * 3) return;
  const AttentionResult& r = state.result();
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  const Palette& colours = palette(state.ui.theme);
  const ArrowColours ac = arrow_colours(state.ui.theme);
  const auto& queries = state.pipeline().target().tokens;
  const auto& keys = state.pipeline().keys().tokens;
  char a[32], b[32], c[32], d[32];

  ImGui::SetCursorScreenPos(ImVec2(side.x, side.y));
  // A child window: its own clipping, wrapping and (when the text does not fit) scrolling.
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
  const bool open = ImGui::BeginChild("##geometry_side", ImVec2(side.w, side.h), false);
  ImGui::PopStyleColor();
  ImGui::PopStyleVar();
  if (!open) {
    ImGui::EndChild();
    return;
  }
  ImDrawList* list = ImGui::GetWindowDrawList();
  ImGui::PushTextWrapPos(0.0f);
  // A legend, and the selected query.
  const auto swatch = [&](ImU32 colour) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    list->AddRectFilled(ImVec2(p.x, p.y + font_ * 0.42f),
                        ImVec2(p.x + font_ * 0.9f, p.y + font_ * 0.62f), colour);
    ImGui::Dummy(ImVec2(font_ * 0.9f, font_));
    ImGui::SameLine(0, font_ * 0.3f);
  };
  // A block with a residual stream computes q and k from its normalized stream n (and RoPE, when
  // it has it: the Pipeline view shows how).
  const bool model = state.pipeline().can(Capability::ResidualStream);
  const char* queries_are = model ? "queries q (of n\xc2\xb7W_Q)" : "queries q = x\xc2\xb7W_Q";
  const char* keys_are = model ? "keys k (of n\xc2\xb7W_K)" : "keys k = x\xc2\xb7W_K";
  swatch(ac.query);
  ImGui::TextUnformatted(queries_are);
  ImGui::SameLine(0, font_);
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(keys_are).x + font_ * 1.3f)
    ImGui::NewLine();
  swatch(ac.key);
  ImGui::TextUnformatted(keys_are);
  view::format_number_into(a, sizeof a, h.Q.row(query).norm(), 2);
  if (bold_) ImGui::PushFont(bold_);
  ImGui::PushStyleColor(ImGuiCol_Text, ac.query);
  ImGui::Text("q = \"%s\"", state.frame.visual_text(queries[static_cast<std::size_t>(query)].text));
  ImGui::PopStyleColor();
  if (bold_) ImGui::PopFont();
  ImGui::SameLine();
  ImGui::Text("|q| = %s", a);
  ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
  ImGui::TextUnformatted("q\xc2\xb7k = |q| |k| cos \xce\xb8");
  ImGui::PopStyleColor();

  // The table: one row per key.
  const float info_h = ImGui::GetTextLineHeightWithSpacing() * 7.0f;
  const float table_h =
      std::max(font_ * 3.0f, side.bottom() - ImGui::GetCursorScreenPos().y - info_h);
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY;
  const float rows_h =
      ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(n_key_ + 1) + font_ * 0.5f;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding,
                      ImVec2(cell_padding(), ImGui::GetStyle().CellPadding.y));
  const float table_w = std::min(ImGui::GetContentRegionAvail().x, side_width(state));
  const ImVec2 table_min = ImGui::GetCursorScreenPos(),
               table_size(table_w, std::min(table_h, rows_h));
  table_hovered_ = ImGui::IsMouseHoveringRect(
      table_min, ImVec2(table_min.x + table_size.x, table_min.y + table_size.y));
  const bool table = ImGui::BeginTable("##geometry_dots", 5, flags, table_size);
  ImGui::PopStyleVar();
  if (table) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("|k|", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("0.00").x);
    ImGui::TableSetupColumn("\xce\xb8", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize("180\xc2\xb0").x);
    ImGui::TableSetupColumn("q\xc2\xb7k", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize("-0.00").x);
    ImGui::TableSetupColumn("\xce\xb1", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize("0.00").x);
    // The header row by hand, so that the numbers' headings sit right-aligned over them.
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, ImGui::GetColorU32(ImGuiCol_TableHeaderBg));
    for (int column = 0; column < 5; ++column) {
      ImGui::TableSetColumnIndex(column);
      const char* name = ImGui::TableGetColumnName(column);
      if (column == 0)
        ImGui::TextUnformatted(name);
      else
        right_aligned(name);
      if (column == 3 && ImGui::IsItemHovered())
        ImGui::SetTooltip("q\xc2\xb7k = |q| |k| cos \xce\xb8");
    }
    int named = 0;
    for (int j = 0; j < n_key_; ++j) {
      const view::DotGeometry g = view::dot_geometry(h.Q.row(query), h.K.row(j));
      ImGui::TableNextRow();
      const bool chosen = j == projected;
      if (chosen)
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, with_alpha(colours.highlight, 0.25f));
      // A key chosen elsewhere (hovered in the plot or another view) scrolls into sight.
      if (chosen && projected != shown_projected_ && !table_hovered_) ImGui::SetScrollHereY(0.5f);
      ImGui::TableSetColumnIndex(0);
      ImGui::PushID(j);
      ImGui::PushStyleColor(ImGuiCol_Text, state.highlights_key(j) ? colours.highlight : ac.key);
      ++named;
      if (ImGui::Selectable(state.frame.visual_text(keys[static_cast<std::size_t>(j)].text), false,
                            ImGuiSelectableFlags_SpanAllColumns))
        pinned_key_ = pinned_key_ == j ? -1 : j;
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered()) {
        state.frame.hovered_next = {Side::Key, j};
        format_double(a, sizeof a, g.norm_q, 2);
        format_double(b, sizeof b, g.norm_k, 2);
        format_double(c, sizeof c, g.cos_theta, 3);
        format_double(d, sizeof d, g.dot, 2);
        ImGui::SetTooltip(
            "q\xc2\xb7k = |q| |k| cos \xce\xb8 = %s \xc3\x97 %s \xc3\x97 %s = %s\nclick to keep "
            "its projection drawn",
            a, b, c, d);
      }
      ImGui::PopID();
      ImGui::TableSetColumnIndex(1);
      format_double(a, sizeof a, g.norm_k, 2);
      right_aligned(a);
      ImGui::TableSetColumnIndex(2);
      format_angle(a, sizeof a, g.angle_degrees);
      right_aligned(a);
      ImGui::TableSetColumnIndex(3);
      format_double(a, sizeof a, g.dot, 2);
      right_aligned(a);
      ImGui::TableSetColumnIndex(4);
      if (view::is_masked(h.masked_scores(query, j))) {
        ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
        right_aligned("masked");
        ImGui::PopStyleColor();
      } else {
        view::format_number_into(a, sizeof a, h.weights(query, j), 2);
        right_aligned(a);
      }
    }
    shown_projected_ = projected;
    ImGui::EndTable();
    // Every key named in its row at the text size (the table scrolls when they do not fit).
    state.frame.layout.labels_of(view::ViewId::Geometry)
        .add(n_key_, named, font_, rows_h > table_size.y + 0.5f);
  }

  // The explanation for the chosen key: dot product = length × projection.
  const view::DotGeometry g = view::dot_geometry(h.Q.row(query), h.K.row(projected));
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ac.key);
  ImGui::Text("k = \"%s\"",
              state.frame.visual_text(keys[static_cast<std::size_t>(projected)].text));
  ImGui::PopStyleColor();
  ImGui::SameLine();
  ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
  const bool hovered_key = hovered_arrow_ >= n_query_ ||
                           (state.frame.hovered.valid() && state.frame.hovered.side == Side::Key);
  bool tied = false;  // another key has as much α: "largest" would single out the first of equals
  for (int j = 0; j < n_key_; ++j)
    tied = tied ||
           (j != projected && std::abs(h.weights(query, j) - h.weights(query, projected)) < 0.005f);
  ImGui::TextUnformatted(hovered_key                ? "(hovered)"
                         : pinned_key_ == projected ? "(clicked)"
                         : tied                     ? "(largest \xce\xb1, tied)"
                                                    : "(largest \xce\xb1)");
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("hover a key (its arrow or its row) to see its projection; click to keep it");
  format_double(a, sizeof a, g.norm_k, 2);
  format_double(b, sizeof b, g.projection, 2);
  format_double(c, sizeof c, g.dot, 2);
  ImGui::TextUnformatted("q\xc2\xb7k = |k| \xc3\x97 |q| cos \xce\xb8");
  ImGui::Text("     = %s \xc3\x97 %s = %s", a, b, c);
  ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
  if (std::isnan(g.projection))
    ImGui::TextWrapped("k is the zero vector: no direction, no angle, q\xc2\xb7k = 0.");
  else
    ImGui::TextWrapped("|q| cos \xce\xb8: q's shadow on k (orange)");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The dashed line drops from q's tip at a right angle onto k's line. The orange band, from "
        "the\n"
        "origin to its foot, is q's shadow on k: |q| cos \xce\xb8 long, negative when it falls "
        "behind the\n"
        "origin. The dot product is k's length times that shadow.");
  ImGui::TextWrapped("%s", score_note(r.config));
  ImGui::PopStyleColor();
  if (note_[0]) {
    ImGui::PushStyleColor(ImGuiCol_Text, colours.highlight);
    ImGui::TextWrapped("%s", note_);
    ImGui::PopStyleColor();
  }
  ImGui::PopTextWrapPos();
  ImGui::EndChild();
}

}  // namespace attnviz::app
