// The Geometry view: the selected head's queries and keys as arrows from the origin, when d_k is
// 2 (a plane) or 3 (space, seen obliquely and turned by dragging empty space). For the selected
// query, each key's dot product q·k = |q| |k| cos θ is in a table and, for the hovered key (or the
// clicked one, or else the key with the largest α), drawn: q's shadow on k's line, a dashed
// perpendicular and the angle θ, so that "dot product = length × projection" is visible.
// Dragging an arrow's tip edits W_Q (a query) or W_K (a key) of the head by the smallest change
// that moves that tip exactly under the mouse (app/view/geometry.hpp); every other arrow follows.
// With d_k > 3 the view explains why it needs 2 or 3 and offers to set d_k, or to draw dims 1
// and 2 as a labelled approximation.
// The class is in geometry_panel.hpp; the plot, the table and the explanation are drawn in
// geometry_plot.cpp.
//   [SECTION] Layout
//   [SECTION] Selectors and the d_k message
//   [SECTION] Arrow positions and the plot frame
//   [SECTION] Mouse: hover, drag a tip, turn the view
#include "app/panels/geometry_panel.hpp"

#include "app/panels/plot_drawing.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace attnviz::app {

// -----------------------------------------------------------------------------
// [SECTION] Layout
// -----------------------------------------------------------------------------

void GeometryPanel::draw_content(const AppState& state, PanelContext& context) {
  const AttentionResult& r = state.result();
  font_ = ImGui::GetFontSize();
  bold_ = context.bold_font;
  const int d_k = r.config.d_k;
  // The flat and space plots drag q and k by editing W_Q and W_K: a run without weights of its
  // own to edit shows the plane of the selected query and key.
  if (!state.pipeline().can(Capability::EditableParameters))
    mode_ = PlotMode::Plane;
  else if (d_k == 2)
    mode_ = PlotMode::Flat;
  else if (d_k == 3)
    mode_ = PlotMode::Space;
  else if (!approximate_)
    mode_ = PlotMode::None;
  else
    mode_ = d_k == 1 ? PlotMode::Flat : PlotMode::Approximate;  // d_k = 1: exact, on the x axis
  draw_selectors(state, context);
  if (mode_ == PlotMode::None) {
    drag_ = {};
    draw_dk_message(state, context);
    return;
  }
  const int head = state.selection.head;
  const int query = state.selection.query;

  // Layout: the square plot and, beside it or under it, the table and the explanation.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 available = ImGui::GetContentRegionAvail();
  if (available.x < font_ * 8 || available.y < font_ * 6) return;
  const float gap = font_ * 0.8f;
  const float side_w = side_width(state);
  const float side_h =
      font_ * (7.5f + 1.35f * static_cast<float>(std::min<Eigen::Index>(r.n_key, 6)));
  const float beside = std::min(available.y, available.x - side_w - gap);
  const float below = std::min(available.x, available.y - side_h - gap);
  view::Rect plot, side;
  if (beside >= below || below < font_ * 8) {
    const float s = std::floor(std::max(font_ * 6, beside));
    plot = {origin.x, origin.y, s, s};
    side = {plot.right() + gap, origin.y, available.x - s - gap, available.y};
  } else {
    const float s = std::floor(below);
    plot = {origin.x + std::floor((available.x - s) * 0.5f), origin.y, s, s};
    side = {origin.x, plot.bottom() + gap, available.x, available.y - s - gap};
  }

  if (mode_ == PlotMode::Plane) {  // the plane of q and the clicked key, else the top α's
    int key = pinned_key_;
    if (key < 0 || key >= r.n_key) {
      const Matrix& w = r.heads[static_cast<std::size_t>(head)].weights;
      key = 0;
      for (int j = 1; j < r.n_key; ++j)
        if (w(query, j) > w(query, key)) key = j;
    }
    update_plane(r, head, query, key);
  }
  update_arrows(r, head);
  update_frame(plot, head);
  // The plot drawn: "flat", "space", "approximate" or "plane" (a real model's: the plane of the
  // selected query and key geometry_plane_key).
  state.frame.values.set("geometry_mode", mode_ == PlotMode::Plane         ? "plane"
                                          : mode_ == PlotMode::Space       ? "space"
                                          : mode_ == PlotMode::Approximate ? "approximate"
                                                                           : "flat");
  state.frame.values.set("geometry_plane_key", mode_ == PlotMode::Plane ? plane_key_ : -1);
  handle_mouse(state, context, r, plot, head);  // may edit the weights and recompute
  const int projected = projected_key(state, r, head, query);
  draw_plot(state, plot, head, query, projected);
  draw_side(state, side, head, query, projected);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(available);
}

// -----------------------------------------------------------------------------
// [SECTION] Selectors and the d_k message
// -----------------------------------------------------------------------------

void GeometryPanel::draw_selectors(const AppState& state, PanelContext& context) {
  const int heads = static_cast<int>(state.result().heads.size());
  int head = state.selection.head;
  ImGui::AlignTextToFramePadding();
  draw_layer_selector(state, context, "##geometry");  // a real model's
  ImGui::TextUnformatted("head");
  ImGui::SameLine();
  if (draw_head_combo("##geometry_head", heads, head)) context.selection.head = head;
  ImGui::SameLine(0, font_);
  draw_query_selector(state, context, "##geometry_query", 8.0f, 0.4f);
  // What the mouse can do here.
  const Palette& colours = palette(state.ui.theme);
  if (mode_ == PlotMode::Space) {
    if (fits_after_last_item(ImGui::CalcTextSize("Reset view").x + font_)) {
      ImGui::SameLine(0, font_);
      if (ImGui::SmallButton("Reset view")) orbit_ = {};
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("back to the oblique view (or double-click empty space)");
    }
  } else if (mode_ != PlotMode::None && mode_ != PlotMode::Plane &&
             state.result().config.d_k != 2) {  // d_k = 1, or d_k > 3 approximated
    ImGui::SameLine(0, font_);
    if (ImGui::SmallButton("Set d_k = 2")) set_d_k(state, context, 2);
    const char* label = mode_ == PlotMode::Approximate ? "dims 1 and 2" : "on a line";
    if (fits_after_last_item(ImGui::CalcTextSize(label).x + font_ * 2)) {
      ImGui::SameLine();
      ImGui::Checkbox(label, &approximate_);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("untick to go back to the explanation");
    }
  }
  const char* hint = mode_ == PlotMode::Space
                         ? "drag a tip to edit W_Q / W_K \xc2\xb7 drag empty space to turn"
                     : mode_ == PlotMode::Plane ? "click a key: the plane of q and that key"
                                                : "drag a tip to edit W_Q / W_K";
  if (mode_ != PlotMode::None && fits_after_last_item(ImGui::CalcTextSize(hint).x + font_)) {
    ImGui::SameLine(0, font_);
    ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
    ImGui::TextUnformatted(hint);
    ImGui::PopStyleColor();
  }
}

void GeometryPanel::set_d_k(const AppState& state, PanelContext& context, int d_k) {
  AttentionConfig config = state.document.scenario().one_layer().config;
  config.d_k = d_k;  // d_v, d_att and the rest stay as they are
  context.edits.push(edits::set_config(config));
}

void GeometryPanel::draw_dk_message(const AppState& state, PanelContext& context) {
  const AttentionResult& r = state.result();
  const Palette& colours = palette(state.ui.theme);
  const int d_k = r.config.d_k;
  ImGui::Spacing();
  const float width = std::min(ImGui::GetContentRegionAvail().x, font_ * 30.0f);
  const float indent = std::max(0.0f, (ImGui::GetContentRegionAvail().x - width) * 0.5f);
  ImGui::SetCursorPosY(ImGui::GetCursorPosY() +
                       std::max(0.0f, ImGui::GetContentRegionAvail().y * 0.18f));
  ImGui::Indent(indent);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  if (bold_) ImGui::PushFont(bold_);
  ImGui::Text("The geometry view needs d_k = 2 or 3.");
  if (bold_) ImGui::PopFont();
  ImGui::Spacing();
  ImGui::TextWrapped(
      "It draws every query q and key k of a head as an arrow from the origin, so that the score "
      "q\xc2\xb7k = |q| |k| cos \xce\xb8 can be seen as lengths and an angle. Arrows can be drawn "
      "on a plane (d_k = 2) or in space (d_k = 3); this scenario has d_k = %d%s",
      d_k,
      d_k == 1 ? ": every q and k is one number, q\xc2\xb7k a plain product and \xce\xb8 "
                 "either 0\xc2\xb0 or 180\xc2\xb0."
               : ".");
  ImGui::Spacing();
  if (ImGui::Button("Set d_k = 2")) set_d_k(state, context, 2);
  ImGui::SameLine();
  if (ImGui::Button("Set d_k = 3")) set_d_k(state, context, 3);
  ImGui::SameLine();
  ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
  ImGui::Text("d_v stays %d; the first d_k columns of W_Q and W_K are kept", r.config.d_v);
  ImGui::PopStyleColor();
  ImGui::Spacing();
  ImGui::Spacing();
  if (d_k == 1) {
    ImGui::TextWrapped("Or keep d_k = 1 and see the numbers as arrows along one line.");
    if (ImGui::Button("Show them on a line")) approximate_ = true;
  } else {
    ImGui::TextWrapped(
        "Or keep d_k = %d and look at dims 1 and 2 only: an approximation, in which the lengths "
        "and "
        "angles drawn are not the real ones (the table still uses all %d dims).",
        d_k, d_k);
    if (ImGui::Button("Show dims 1 and 2 (approximation)")) approximate_ = true;
  }
  ImGui::PopTextWrapPos();
  ImGui::Unindent(indent);
}

// -----------------------------------------------------------------------------
// [SECTION] Arrow positions and the plot frame
// -----------------------------------------------------------------------------

void GeometryPanel::update_arrows(const AttentionResult& r, int head) {
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  n_query_ = static_cast<int>(h.Q.rows());
  n_key_ = static_cast<int>(h.K.rows());
  const std::size_t count = static_cast<std::size_t>(n_query_ + n_key_);
  plane_.resize(count);
  depth_.resize(count);
  tips_.resize(count);
  order_.resize(count);
  radius_ = 0;
  for (int a = 0; a < n_query_ + n_key_; ++a) {
    const Matrix& m = a < n_query_ ? h.Q : h.K;
    const Eigen::Index row = a < n_query_ ? a : a - n_query_;
    const double x = coordinate(m, row, 0), y = coordinate(m, row, 1), z = coordinate(m, row, 2);
    view::Point2& p = plane_[static_cast<std::size_t>(a)];
    if (mode_ == PlotMode::Space) {
      const auto v = orbit_.to_view(x, y, z);
      p = {v[0], v[1]};
      depth_[static_cast<std::size_t>(a)] = v[2];
      const double norm = std::sqrt(x * x + y * y + z * z);
      if (std::isfinite(norm)) radius_ = std::max(radius_, norm);
    } else {
      p = {x, y};
      depth_[static_cast<std::size_t>(a)] = 0;
    }
    order_[static_cast<std::size_t>(a)] = a;
  }
  if (mode_ == PlotMode::Space)
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      return depth_[static_cast<std::size_t>(a)] < depth_[static_cast<std::size_t>(b)];
    });
}

void GeometryPanel::update_plane(const AttentionResult& r, int head, int query, int key) {
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  basis_ = view::plane_basis(h.Q.row(query), h.K.row(key));  // (d_head, 2)
  plane_key_ = key;
}

void GeometryPanel::update_frame(const view::Rect& plot, int head) {
  if (drag_.kind == DragKind::Tip && frame_valid_) return;  // frozen: the tip stays under the mouse
  const float margin = plot_margin();
  const view::PlotFrame fitted = mode_ == PlotMode::Space
                                     ? view::fit_disc(radius_ * 1.05, plot, margin)
                                     : view::fit_plot(plane_, plot, margin);
  const bool same_setting =
      frame_valid_ && frame_area_ == plot && frame_mode_ == mode_ && frame_head_ == head;
  const bool keep = same_setting && view::frame_shows(frame_, plane_, plot, margin) &&
                    frame_.scale <= fitted.scale * 1.6;
  if (!keep) frame_ = fitted;
  frame_valid_ = true;
  frame_area_ = plot;
  frame_mode_ = mode_;
  frame_head_ = head;
}

void GeometryPanel::update_tips() {
  for (std::size_t a = 0; a < plane_.size(); ++a) {
    const view::Point2& p = plane_[a];
    tips_[a] = std::isfinite(p[0]) && std::isfinite(p[1]) ? im(frame_.to_screen(p[0], p[1]))
                                                          : ImVec2(-1e7f, -1e7f);
  }
}

ImVec2 GeometryPanel::to_screen(double x, double y, double z) const {
  if (mode_ == PlotMode::Space) {
    const auto v = orbit_.to_view(x, y, z);
    return im(frame_.to_screen(v[0], v[1]));
  }
  return im(frame_.to_screen(x, y));
}

// -----------------------------------------------------------------------------
// [SECTION] Mouse: hover, drag a tip, turn the view
// -----------------------------------------------------------------------------

int GeometryPanel::arrow_under(ImVec2 mouse, const view::Rect& plot) const {
  if (!plot.contains(mouse.x, mouse.y)) return -1;
  const ImVec2 o = im(frame_.to_screen(0, 0));
  int best = -1;
  float best_distance = font_ * 0.75f;
  for (int a = 0; a < n_query_ + n_key_; ++a) {  // tips first
    const float d = length(ImVec2(mouse.x - tips_[static_cast<std::size_t>(a)].x,
                                  mouse.y - tips_[static_cast<std::size_t>(a)].y));
    if (d < best_distance) best = a, best_distance = d;
  }
  if (best >= 0) return best;
  best_distance = font_ * 0.3f;
  for (int a = 0; a < n_query_ + n_key_; ++a) {
    const float d =
        view::distance_to_segment(sp(o), sp(tips_[static_cast<std::size_t>(a)]), sp(mouse));
    if (d < best_distance) best = a, best_distance = d;
  }
  return best;
}

// The head whose W_Q (a query) or W_K (a key) moves `head`'s arrow: under grouped-query attention
// a key's W_K is its group's (the first head of the group), shared by the group's other heads.
int GeometryPanel::weight_head(const AppState& state, Side side, int head) {
  return side == Side::Key ? kv_source_head(state.document.scenario().one_layer().config, head)
                           : head;
}

const Matrix& GeometryPanel::weight_matrix(const AppState& state, Side side,
                                           int head) {  // (d_model, d_k)
  const HeadParameters& p =
      state.document.scenario()
          .one_layer()
          .parameters.heads[static_cast<std::size_t>(weight_head(state, side, head))];
  return side == Side::Query ? p.W_Q : p.W_K;
}

void GeometryPanel::start_tip_drag(const AppState& state, PanelContext& context, int arrow,
                                   int head) {
  const Side side = arrow < n_query_ ? Side::Query : Side::Key;
  const int index = side == Side::Query ? arrow : arrow - n_query_;
  const Matrix& X = side == Side::Query ? state.pipeline().X_target() : state.pipeline().X_keys();
  const auto& tokens =
      side == Side::Query ? state.pipeline().target().tokens : state.pipeline().keys().tokens;
  // A real model's weights are not dragged here (the Plane mode): a press is a click only.
  const bool plane = mode_ == PlotMode::Plane;
  if (!plane &&
      (head >= static_cast<int>(state.document.scenario().one_layer().parameters.heads.size()) ||
       index >= X.rows()))
    return;
  drag_ = {};
  drag_.kind = DragKind::Tip;
  drag_.side = side;
  drag_.index = index;
  drag_.head = head;
  drag_.press = ImGui::GetIO().MousePos;
  if (plane) {
    if (side == Side::Query) context.selection.query = index;
    return;
  }
  drag_x_ = X.row(index);
  drag_x_norm_ = static_cast<double>(drag_x_.norm());
  drag_start_W_ = weight_matrix(state, side, head);
  delta_.setZero(drag_start_W_.cols());
  if (side == Side::Query)
    context.selection.query = index;  // the query being moved is the one explained
  last_delta_ = delta_;
  if (!(drag_x_norm_ > 0)) {
    std::snprintf(
        note_, sizeof note_,
        "\"%s\" has the zero vector as its embedding x, so its %s x\xc2\xb7W = 0 whatever W is: "
        "no change of %s can move it.",
        state.frame.visual_text(tokens[static_cast<std::size_t>(index)].text),
        side == Side::Query ? "query" : "key", side == Side::Query ? "W_Q" : "W_K");
  }
}

void GeometryPanel::handle_mouse(const AppState& state, PanelContext& context,
                                 const AttentionResult& r, const view::Rect& plot, int head) {
  update_tips();
  const ImGuiIO& io = ImGui::GetIO();
  ImGui::SetCursorScreenPos(ImVec2(plot.x, plot.y));
  ImGui::InvisibleButton("##geometry_plot", ImVec2(plot.w, plot.h));
  const bool hovered = ImGui::IsItemHovered();
  hovered_arrow_ = hovered && drag_.kind == DragKind::None ? arrow_under(io.MousePos, plot) : -1;

  if (ImGui::IsItemActivated()) {
    note_[0] = '\0';
    drag_ = {};
    if (hovered_arrow_ >= 0) {
      start_tip_drag(state, context, hovered_arrow_, head);
    } else if (mode_ == PlotMode::Space) {
      drag_.kind = DragKind::Turn;
      drag_.press = io.MousePos;
    }
  }
  if (hovered && mode_ == PlotMode::Space && hovered_arrow_ < 0 &&
      ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
    orbit_ = {};

  if (drag_.kind != DragKind::None && !ImGui::IsItemActive()) {  // released
    if (drag_.kind == DragKind::Tip && !drag_.moved &&
        drag_.side == Side::Key)  // a click on a key keeps its projection
      pinned_key_ = pinned_key_ == drag_.index ? -1 : drag_.index;
    drag_ = {};
  }
  if (drag_.kind == DragKind::Turn) {
    orbit_.turn(io.MouseDelta.x, io.MouseDelta.y, 0.01f);
    ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeAll);
    update_arrows(r, head);
    update_tips();
  } else if (drag_.kind == DragKind::Tip) {
    drag_tip(state, context, r, head, io.MousePos);
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
  } else if (hovered_arrow_ >= 0) {
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
  }
}

void GeometryPanel::drag_tip(const AppState& state, PanelContext& context, const AttentionResult& r,
                             int head, ImVec2 m) {
  if (mode_ == PlotMode::Plane) return;  // a click, not a drag (start_tip_drag)
  const ImGuiIO& io = ImGui::GetIO();
  if (!drag_.moved &&
      length(ImVec2(m.x - drag_.press.x, m.y - drag_.press.y)) >= io.MouseDragThreshold)
    drag_.moved = true;
  if (!drag_.moved || drag_.cancelled || !(drag_x_norm_ > 0)) return;
  const Matrix& W = weight_matrix(state, drag_.side, drag_.head);
  // The document changed under the drag (a shape, a head removed): stop.
  if (drag_.head != head || W.rows() != drag_start_W_.rows() || W.cols() != drag_start_W_.cols() ||
      drag_x_.size() != W.rows()) {
    drag_ = {};
    return;
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {  // put the matrix back
    context.edits.push(edits::set_projection(
        weight_name(drag_.side), weight_head(state, drag_.side, drag_.head), drag_start_W_));
    drag_.cancelled = true;
    update_arrows(r, head);
    update_tips();
    return;
  }
  // The move of the mouse in world units, as a move of the vector (dims not drawn stay).
  delta_.setZero(W.cols());
  const float dx = m.x - drag_.press.x, dy = m.y - drag_.press.y;
  if (mode_ == PlotMode::Space) {
    const auto move = orbit_.to_world(static_cast<double>(dx) / frame_.scale,
                                      -static_cast<double>(dy) / frame_.scale, 0.0);
    for (int c = 0; c < 3 && c < delta_.size(); ++c)
      delta_(c) = static_cast<float>(move[static_cast<std::size_t>(c)]);
  } else {
    delta_(0) = static_cast<float>(static_cast<double>(dx) / frame_.scale);
    if (delta_.size() > 1) delta_(1) = static_cast<float>(-static_cast<double>(dy) / frame_.scale);
  }
  if (delta_ == last_delta_) return;
  drag_next_W_ = drag_start_W_;  // same shape every frame: no allocation
  if (!view::move_projection(drag_next_W_, drag_x_, delta_)) return;
  last_delta_ = delta_;
  // Computed at once: this frame shows the moved arrows.
  context.edits.push(edits::set_projection(
      weight_name(drag_.side), weight_head(state, drag_.side, drag_.head), drag_next_W_));
  update_arrows(r, head);
  update_tips();
}

// The key whose projection is drawn: hovered (here or in another view), else clicked, else the
// one with the largest α for the selected query.
int GeometryPanel::projected_key(const AppState& state, const AttentionResult& r, int head,
                                 int query) const {
  if (drag_.kind == DragKind::Tip && drag_.side == Side::Key) return drag_.index;
  if (hovered_arrow_ >= n_query_) return hovered_arrow_ - n_query_;
  if (state.frame.hovered.valid() && state.frame.hovered.side == Side::Key &&
      state.frame.hovered.index < n_key_)
    return state.frame.hovered.index;
  if (pinned_key_ >= 0 && pinned_key_ < n_key_) return pinned_key_;
  const Matrix& w = r.heads[static_cast<std::size_t>(head)].weights;
  int best = 0;
  for (int j = 1; j < n_key_; ++j)
    if (w(query, j) > w(query, best)) best = j;
  return best;
}

ATTNVIZ_REGISTER_PANEL(view::ViewId::Geometry, GeometryPanel);

}  // namespace attnviz::app
