// The Geometry view's class, internal to it: defined in geometry_panel.cpp and geometry_plot.cpp.
#pragma once

#include "app/panels/panel.hpp"
#include "app/view/geometry.hpp"

#include <imgui.h>

#include <cmath>
#include <vector>

namespace attnviz::app {

// How the vectors are drawn.
enum class PlotMode {
  None,         // d_k > 3 and no approximation asked for: the message
  Flat,         // d_k = 1 or 2: the plane (d_k = 1 on the horizontal axis)
  Space,        // d_k = 3: an oblique view of space
  Approximate,  // d_k > 3: dims 0 and 1 only, labelled as an approximation
  Plane,        // a real model (d_head of 8 to 128): the plane through the selected query q and
                // one key k (clicked, else the one with the largest α), where q, k, their angle
                // and q·k are exact; every other arrow is its shadow on that plane
};

class GeometryPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override;

 private:
  // The view.
  PlotMode mode_ = PlotMode::None;
  bool approximate_ = false;  // d_k > 3: draw dims 0 and 1 anyway
  view::Orbit orbit_;
  float font_ = 16;
  ImFont* bold_ = nullptr;  // the bold font (nullptr: the regular one)
  // The frame is kept while every arrow still fits and it is not much too large, so that an edit
  // does not rescale the plot every frame; it is frozen while a tip is dragged.
  view::PlotFrame frame_;
  bool frame_valid_ = false;
  view::Rect frame_area_;
  PlotMode frame_mode_ = PlotMode::None;
  int frame_head_ = -1;
  double radius_ = 1;  // Space: the longest vector (what the frame fits)

  // Arrows: queries first (0 .. n_query-1), then keys. Kept between frames (no allocation).
  int n_query_ = 0, n_key_ = 0;
  std::vector<view::Point2> plane_;  // in the plane of the screen, world units
  std::vector<double> depth_;        // Space: towards the viewer
  std::vector<ImVec2> tips_;         // on screen
  std::vector<int> order_;           // drawing order (far first)
  std::vector<ImVec4> placed_;       // label boxes, to avoid overlaps
  int hovered_arrow_ = -1;           // under the mouse this frame
  int pinned_key_ = -1;              // clicked: its projection stays drawn
  int shown_projected_ = -1;         // the key the table last showed as chosen
  bool table_hovered_ = false;

  // A drag: of a tip (edits W_Q or W_K) or of empty space (turns the 3-D view).
  enum class DragKind { None, Tip, Turn };
  struct Drag {
    DragKind kind = DragKind::None;
    Side side = Side::Query;
    int index = -1, head = -1;
    ImVec2 press;
    bool moved = false, cancelled = false;
  } drag_;
  Matrix drag_start_W_;  // the matrix when the drag began (Escape puts it back)
  Matrix drag_next_W_;   // drag_start_W_ plus this frame's update
  RowVector drag_x_;     // the token's embedding row x
  RowVector delta_;      // the move of the tip, in d_k dims
  RowVector last_delta_;
  double drag_x_norm_ = 0;
  char note_[256] = "";  // why a drag could not edit (a zero embedding), until the next press

  static int arrow_of(Side side, int index, int n_query) {
    return side == Side::Query ? index : n_query + index;
  }

  // Selectors and the d_k message (geometry_panel.cpp).
  void draw_selectors(const AppState& state, PanelContext& context);
  static void set_d_k(const AppState& state, PanelContext& context, int d_k);
  void draw_dk_message(const AppState& state, PanelContext& context);

  // Arrow positions and the plot frame (geometry_panel.cpp).
  // Component `dim` of row `row`, 0 past the matrix's width (d_k = 1 draws on the x axis).
  static double component(const Matrix& m, Eigen::Index row, int dim) {
    return dim < m.cols() ? static_cast<double>(m(row, dim)) : 0.0;
  }
  // Where row `row` is drawn along axis `dim`: its component, or in the Plane mode its
  // coordinate along the plane's basis vector `dim` (0 or 1; 0 for dim 2).
  double coordinate(const Matrix& m, Eigen::Index row, int dim) const {
    if (mode_ != PlotMode::Plane) return component(m, row, dim);
    if (dim > 1 || basis_.rows() != m.cols()) return 0.0;
    return m.row(row).cast<double>().dot(basis_.col(dim));
  }
  // The Plane mode's basis (view::plane_basis of q and k).                          (d_head, 2)
  void update_plane(const AttentionResult& r, int head, int query, int key);
  Eigen::MatrixXd basis_;
  int plane_key_ = -1;  // the key k of the plane
  void update_arrows(const AttentionResult& r, int head);
  float plot_margin() const { return font_ * 2.2f; }
  void update_frame(const view::Rect& plot, int head);
  void update_tips();
  ImVec2 to_screen(double x, double y, double z) const;

  // Mouse: hover, drag a tip, turn the view (geometry_panel.cpp).
  int arrow_under(ImVec2 mouse, const view::Rect& plot) const;
  static int weight_head(const AppState& state, Side side, int head);
  static const Matrix& weight_matrix(const AppState& state, Side side, int head);  // (d_model, d_k)
  static ParameterName weight_name(Side side) {
    return side == Side::Query ? ParameterName::W_Q : ParameterName::W_K;
  }
  void start_tip_drag(const AppState& state, PanelContext& context, int arrow, int head);
  void handle_mouse(const AppState& state, PanelContext& context, const AttentionResult& r,
                    const view::Rect& plot, int head);
  void drag_tip(const AppState& state, PanelContext& context, const AttentionResult& r, int head,
                ImVec2 m);
  int projected_key(const AppState& state, const AttentionResult& r, int head, int query) const;

  // The plot (geometry_plot.cpp).
  void draw_grid(const AppState& state, ImDrawList* list, const view::Rect& plot);
  bool same_label_earlier(int a, const std::vector<Token>& queries,
                          const std::vector<Token>& keys) const;
  float overlap_area(const ImVec4& box) const;
  void place_label(ImDrawList* list, const view::Rect& plot, ImVec2 from, ImVec2 tip,
                   const char* text, ImU32 colour, bool must, ImFont* font);
  void draw_plot(const AppState& state, const view::Rect& plot, int head, int query, int projected);
  void draw_plot_tooltip(const AppState& state, const HeadResult& h, int head, int query);

  // The table and the explanation (geometry_plot.cpp).
  float cell_padding() const { return std::round(font_ * 0.3f); }
  float side_width(const AppState& state) const;
  static void right_aligned(const char* text);
  static const char* score_note(const AttentionConfig& c);
  void draw_side(const AppState& state, const view::Rect& side, int head, int query, int projected);
};

}  // namespace attnviz::app
