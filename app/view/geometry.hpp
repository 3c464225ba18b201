// The math of the Geometry view, where queries and keys are arrows from the origin (d_k = 2 or
// 3): the dot product as lengths and an angle, the minimum-norm weight update that moves one
// arrow's tip, the plot's world <-> screen transforms and the 3-D view. Pure math, no GL and no
// ImGui: unit-tested.
//   [SECTION] Dot-product geometry
//   [SECTION] Moving one arrow: the minimum-norm update of a projection matrix
//   [SECTION] The plot: world <-> screen, fitting, grid steps
//   [SECTION] The 3-D view
//   [SECTION] Hit-testing and clipping
#pragma once

#include "app/view/layout.hpp"
#include "core/base/types.hpp"

#include <Eigen/Core>

#include <array>
#include <span>

namespace attnviz::view {

using Point2 = std::array<double, 2>;
using ScreenPoint = std::array<float, 2>;

// -----------------------------------------------------------------------------
// [SECTION] Dot-product geometry
// -----------------------------------------------------------------------------
// q·k = |q| |k| cos θ = |k| × (|q| cos θ): the length of k times the signed length of q's
// shadow on k's line.
struct DotGeometry {
  double dot = 0;                 // q·k
  double norm_q = 0, norm_k = 0;  // |q|, |k|
  double cos_theta = 0;           // NaN when q or k is the zero vector (no angle)
  double angle_degrees = 0;       // θ in [0, 180]; NaN when q or k is the zero vector
  double projection = 0;  // q's scalar projection on k, |q| cos θ = q·k / |k|; NaN when k = 0
  double foot = 0;        // (q·k) / |k|²: the shadow of q on k's line is foot · k; 0 when k = 0
};
// q and k have the same length (in double precision; non-finite inputs give NaN fields).
DotGeometry dot_geometry(const Eigen::Ref<const RowVector>& q,
                         const Eigen::Ref<const RowVector>& k);

// The plane through two vectors q and k (a real model's Geometry view): an orthonormal basis
// (e₁ along q, e₂ the part of k at right angles to q), in which q and k keep their lengths,
// their angle and q·k exactly. A zero q takes dimension 1 for e₁; a k along q (or zero, or not
// finite) takes for e₂ the dimension least along e₁, made perpendicular.   (d, 2); d ≥ 2
Eigen::MatrixXd plane_basis(const Eigen::Ref<const RowVector>& q,
                            const Eigen::Ref<const RowVector>& k);

// -----------------------------------------------------------------------------
// [SECTION] Moving one arrow: the minimum-norm update of a projection matrix
// -----------------------------------------------------------------------------
// The row vector x·W (a query x·W_Q or a key x·W_K) moves by exactly `delta` when W changes by
// ΔW = xᵀ·delta / |x|², the smallest such change (in the Frobenius norm): every other token's
// vector moves by (x'·x / |x|²)·delta. Adds ΔW to W and returns true; returns false, leaving W
// unchanged, when |x| = 0 (no change of W can move x·W = 0), when x or delta is not finite,
// when the result would not be finite, or when the shapes do not match (x: W.rows(), delta:
// W.cols()).
bool move_projection(Matrix& W, const Eigen::Ref<const RowVector>& x,
                     const Eigen::Ref<const RowVector>& delta);

// -----------------------------------------------------------------------------
// [SECTION] The plot: world <-> screen, fitting, grid steps
// -----------------------------------------------------------------------------
// World coordinates (y up) to screen pixels (y down), the same scale on both axes.
struct PlotFrame {
  double centre_x = 0, centre_y = 0;  // the world point at the middle of the area
  double scale = 1;                   // pixels per world unit (> 0)
  float screen_x = 0, screen_y = 0;   // the middle of the area, in pixels

  // Clamped to ±1e7 pixels, so that a far-away point still draws (clipped) without overflow.
  ScreenPoint to_screen(double x, double y) const;
  Point2 to_world(float sx, float sy) const;
  bool operator==(const PlotFrame&) const = default;
};

// The origin and every finite point inside `area` with `margin` pixels free on every side,
// centred, the same scale on both axes. When all of them coincide (every vector is 0), the
// frame spans ±1 around them.
PlotFrame fit_plot(std::span<const Point2> points, Rect area, float margin);

// The disc of `radius` around the origin, centred in `area` with `margin` pixels free: a frame
// that does not change as a 3-D view turns. A radius that is not positive and finite counts as 1.
PlotFrame fit_disc(double radius, Rect area, float margin);

// Whether every finite point (and the origin) lands inside `area` shrunk by `margin`.
bool frame_shows(const PlotFrame& frame, std::span<const Point2> points, Rect area, float margin);

// A grid step of 1, 2 or 5 times a power of ten, so that `extent` holds about `lines` steps
// (at least 1). 1 for an extent that is not positive and finite.
double grid_step(double extent, int lines);

// -----------------------------------------------------------------------------
// [SECTION] The 3-D view
// -----------------------------------------------------------------------------
// An orthographic view of 3-D space (dim 0, dim 1, dim 2; dim 2 up) from a camera that turns
// about the vertical axis (yaw) and looks down at the pitch angle. A rotation: lengths and
// angles are kept, and to_world undoes to_view.
struct Orbit {
  static constexpr float kDefaultYaw = -0.6f;
  static constexpr float kDefaultPitch = 0.42f;
  static constexpr float kMaxPitch = 1.55f;  // just short of straight down or up
  float yaw = kDefaultYaw;
  float pitch = kDefaultPitch;

  // (screen right, screen up, towards the viewer)
  std::array<double, 3> to_view(double x, double y, double z) const;
  std::array<double, 3> to_world(double right, double up, double toward) const;
  // A mouse drag of (dx, dy) pixels, as if the scene were grabbed at its front: to the right, the
  // front moves right; down, the front moves down (the camera rises). The pitch stays within
  // ±kMaxPitch.
  void turn(float dx, float dy, float radians_per_pixel);
};

// -----------------------------------------------------------------------------
// [SECTION] Hit-testing and clipping
// -----------------------------------------------------------------------------
// The distance from p to the segment a-b (to a when a == b).
float distance_to_segment(ScreenPoint a, ScreenPoint b, ScreenPoint p);

// Cuts the segment a-b to the part inside `area`; false when no part is inside.
bool clip_segment(Rect area, ScreenPoint& a, ScreenPoint& b);

}  // namespace attnviz::view
