#include "app/view/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz::view {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;
constexpr double kScreenLimit = 1e7;  // pixels: far beyond any screen, far within float range

float to_screen_float(double value) {
  if (std::isnan(value)) return 0.0f;
  return static_cast<float>(std::clamp(value, -kScreenLimit, kScreenLimit));
}

// The bounding box of the origin and the finite points.
struct Box {
  double lo[2] = {0, 0}, hi[2] = {0, 0};
};
Box bounding_box(std::span<const Point2> points) {
  Box box;
  for (const Point2& p : points) {
    if (!std::isfinite(p[0]) || !std::isfinite(p[1])) continue;
    for (int k = 0; k < 2; ++k) {
      box.lo[k] = std::min(box.lo[k], p[static_cast<std::size_t>(k)]);
      box.hi[k] = std::max(box.hi[k], p[static_cast<std::size_t>(k)]);
    }
  }
  return box;
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Dot-product geometry
// -----------------------------------------------------------------------------

DotGeometry dot_geometry(const Eigen::Ref<const RowVector>& q,
                         const Eigen::Ref<const RowVector>& k) {
  DotGeometry g;
  const Eigen::Index d = std::min(q.size(), k.size());
  double dot = 0, qq = 0, kk = 0;
  for (Eigen::Index c = 0; c < d; ++c) {
    const double a = q(c), b = k(c);
    dot += a * b;
    qq += a * a;
    kk += b * b;
  }
  g.dot = dot;
  g.norm_q = std::sqrt(qq);
  g.norm_k = std::sqrt(kk);
  const bool finite = std::isfinite(dot) && std::isfinite(qq) && std::isfinite(kk);
  if (finite && qq > 0 && kk > 0) {
    g.cos_theta = std::clamp(dot / (g.norm_q * g.norm_k), -1.0, 1.0);
    g.angle_degrees = std::acos(g.cos_theta) * 180.0 / kPi;
  } else {
    g.cos_theta = g.angle_degrees = kNaN;
  }
  if (finite && kk > 0) {
    g.projection = dot / g.norm_k;
    g.foot = dot / kk;
  } else {
    g.projection = kNaN;
    g.foot = finite ? 0.0 : kNaN;
  }
  return g;
}

// -----------------------------------------------------------------------------
// [SECTION] Moving one arrow: the minimum-norm update of a projection matrix
// -----------------------------------------------------------------------------

bool move_projection(Matrix& W, const Eigen::Ref<const RowVector>& x,
                     const Eigen::Ref<const RowVector>& delta) {
  if (x.size() != W.rows() || delta.size() != W.cols()) return false;
  if (!x.allFinite() || !delta.allFinite()) return false;
  double xx = 0;
  for (Eigen::Index r = 0; r < x.size(); ++r)
    xx += static_cast<double>(x(r)) * static_cast<double>(x(r));
  if (!(xx > 0) || !std::isfinite(xx)) return false;
  // Check first, so that a failed update leaves W as it was.
  constexpr double kFloatMax = static_cast<double>(std::numeric_limits<float>::max());
  for (Eigen::Index r = 0; r < W.rows(); ++r) {
    if (x(r) == 0.0f) continue;
    const double weight = static_cast<double>(x(r)) / xx;
    for (Eigen::Index c = 0; c < W.cols(); ++c)
      if (!(std::abs(static_cast<double>(W(r, c)) + weight * static_cast<double>(delta(c))) <=
            kFloatMax))
        return false;
  }
  for (Eigen::Index r = 0; r < W.rows(); ++r) {
    if (x(r) == 0.0f) continue;
    const double weight = static_cast<double>(x(r)) / xx;
    for (Eigen::Index c = 0; c < W.cols(); ++c)
      W(r, c) =
          static_cast<float>(static_cast<double>(W(r, c)) + weight * static_cast<double>(delta(c)));
  }
  return true;
}

// -----------------------------------------------------------------------------
// [SECTION] The plot: world <-> screen, fitting, grid steps
// -----------------------------------------------------------------------------

ScreenPoint PlotFrame::to_screen(double x, double y) const {
  return {to_screen_float(static_cast<double>(screen_x) + (x - centre_x) * scale),
          to_screen_float(static_cast<double>(screen_y) - (y - centre_y) * scale)};
}

Point2 PlotFrame::to_world(float sx, float sy) const {
  return {centre_x + (static_cast<double>(sx) - static_cast<double>(screen_x)) / scale,
          centre_y - (static_cast<double>(sy) - static_cast<double>(screen_y)) / scale};
}

PlotFrame fit_plot(std::span<const Point2> points, Rect area, float margin) {
  const Box box = bounding_box(points);
  PlotFrame f;
  f.screen_x = area.x + area.w * 0.5f;
  f.screen_y = area.y + area.h * 0.5f;
  f.centre_x = 0.5 * box.lo[0] + 0.5 * box.hi[0];
  f.centre_y = 0.5 * box.lo[1] + 0.5 * box.hi[1];
  const double room[2] = {std::max(1.0, static_cast<double>(area.w) - 2.0 * margin),
                          std::max(1.0, static_cast<double>(area.h) - 2.0 * margin)};
  double scale = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 2; ++k) {
    const double extent = box.hi[k] - box.lo[k];
    if (extent > 0 && std::isfinite(extent)) scale = std::min(scale, room[k] / extent);
  }
  if (!std::isfinite(scale) || !(scale > 0)) scale = std::min(room[0], room[1]) / 2.0;  // ±1
  f.scale = scale;
  return f;
}

PlotFrame fit_disc(double radius, Rect area, float margin) {
  if (!(radius > 0) || !std::isfinite(radius)) radius = 1.0;
  PlotFrame f;
  f.screen_x = area.x + area.w * 0.5f;
  f.screen_y = area.y + area.h * 0.5f;
  const double room = std::max(1.0, static_cast<double>(std::min(area.w, area.h)) - 2.0 * margin);
  f.scale = room / (2.0 * radius);
  return f;
}

bool frame_shows(const PlotFrame& frame, std::span<const Point2> points, Rect area, float margin) {
  const auto inside = [&](double x, double y) {
    const ScreenPoint s = frame.to_screen(x, y);
    return s[0] >= area.x + margin - 0.5f && s[0] <= area.right() - margin + 0.5f &&
           s[1] >= area.y + margin - 0.5f && s[1] <= area.bottom() - margin + 0.5f;
  };
  if (!inside(0, 0)) return false;
  for (const Point2& p : points)
    if (std::isfinite(p[0]) && std::isfinite(p[1]) && !inside(p[0], p[1])) return false;
  return true;
}

double grid_step(double extent, int lines) {
  if (!(extent > 0) || !std::isfinite(extent)) return 1.0;
  const double raw = extent / static_cast<double>(std::max(1, lines));
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  const double mantissa = raw / power;  // [1, 10)
  const double nice = mantissa < 1.5 ? 1.0 : (mantissa < 3.5 ? 2.0 : (mantissa < 7.5 ? 5.0 : 10.0));
  return nice * power;
}

// -----------------------------------------------------------------------------
// [SECTION] The 3-D view
// -----------------------------------------------------------------------------
// First a turn by `yaw` about the vertical axis (dim 2), then a tilt by `pitch` about the
// screen's horizontal axis. At pitch 0 the camera looks horizontally along +y'.

std::array<double, 3> Orbit::to_view(double x, double y, double z) const {
  const double cy = std::cos(static_cast<double>(yaw)), sy = std::sin(static_cast<double>(yaw));
  const double cp = std::cos(static_cast<double>(pitch)), sp = std::sin(static_cast<double>(pitch));
  const double x1 = x * cy - y * sy;
  const double y1 = x * sy + y * cy;
  return {x1, z * cp + y1 * sp, z * sp - y1 * cp};
}

std::array<double, 3> Orbit::to_world(double right, double up, double toward) const {
  const double cy = std::cos(static_cast<double>(yaw)), sy = std::sin(static_cast<double>(yaw));
  const double cp = std::cos(static_cast<double>(pitch)), sp = std::sin(static_cast<double>(pitch));
  // The transpose of to_view's rotation.
  const double x1 = right;
  const double y1 = up * sp - toward * cp;
  const double z = up * cp + toward * sp;
  return {x1 * cy + y1 * sy, -x1 * sy + y1 * cy, z};
}

void Orbit::turn(float dx, float dy, float radians_per_pixel) {
  if (!std::isfinite(dx) || !std::isfinite(dy) || !std::isfinite(radians_per_pixel)) return;
  constexpr float kTwoPi = 6.28318530718f;
  yaw = std::remainder(yaw + dx * radians_per_pixel, kTwoPi);
  pitch = std::clamp(pitch + dy * radians_per_pixel, -kMaxPitch, kMaxPitch);
}

// -----------------------------------------------------------------------------
// [SECTION] Hit-testing and clipping
// -----------------------------------------------------------------------------

float distance_to_segment(ScreenPoint a, ScreenPoint b, ScreenPoint p) {
  const double abx = static_cast<double>(b[0]) - a[0], aby = static_cast<double>(b[1]) - a[1];
  const double apx = static_cast<double>(p[0]) - a[0], apy = static_cast<double>(p[1]) - a[1];
  const double length2 = abx * abx + aby * aby;
  const double t = length2 > 0 ? std::clamp((apx * abx + apy * aby) / length2, 0.0, 1.0) : 0.0;
  return static_cast<float>(std::hypot(apx - t * abx, apy - t * aby));
}

bool clip_segment(Rect area, ScreenPoint& a, ScreenPoint& b) {
  // Liang-Barsky: the segment is a + t (b - a), t in [0, 1].
  const double dx = static_cast<double>(b[0]) - a[0], dy = static_cast<double>(b[1]) - a[1];
  double t0 = 0, t1 = 1;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {static_cast<double>(a[0]) - area.x, static_cast<double>(area.right()) - a[0],
                       static_cast<double>(a[1]) - area.y,
                       static_cast<double>(area.bottom()) - a[1]};
  for (int k = 0; k < 4; ++k) {
    if (p[k] == 0) {
      if (q[k] < 0) return false;  // parallel to this edge and outside it
      continue;
    }
    const double t = q[k] / p[k];
    if (p[k] < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  const ScreenPoint start = a;
  a = {static_cast<float>(start[0] + t0 * dx), static_cast<float>(start[1] + t0 * dy)};
  b = {static_cast<float>(start[0] + t1 * dx), static_cast<float>(start[1] + t1 * dy)};
  return true;
}

}  // namespace attnviz::view

namespace attnviz::view {

Eigen::MatrixXd plane_basis(const Eigen::Ref<const RowVector>& q,
                            const Eigen::Ref<const RowVector>& k) {
  const Eigen::Index d = q.size();
  Eigen::MatrixXd basis = Eigen::MatrixXd::Zero(d, 2);
  if (d == 0) return basis;
  const Eigen::VectorXd qd = q.transpose().cast<double>(), kd = k.transpose().cast<double>();
  Eigen::VectorXd e1 = Eigen::VectorXd::Unit(d, 0);
  if (qd.allFinite() && qd.norm() > 0) e1 = qd / qd.norm();
  basis.col(0) = e1;
  if (d < 2) return basis;
  Eigen::VectorXd e2 = Eigen::VectorXd::Zero(d);
  if (kd.allFinite()) e2 = kd - kd.dot(e1) * e1;
  if (!(e2.norm() > 1e-9 * std::max(1.0, kd.allFinite() ? kd.norm() : 1.0))) {
    Eigen::Index least = 0;
    e1.cwiseAbs().minCoeff(&least);
    e2 = Eigen::VectorXd::Unit(d, least) - e1(least) * e1;
  }
  basis.col(1) = e2 / e2.norm();
  return basis;
}

}  // namespace attnviz::view
