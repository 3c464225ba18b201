// The Geometry view's math (app/view/geometry.hpp), one behaviour per case.
#include "app/view/geometry.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace attnviz::view {
namespace {

RowVector row(std::initializer_list<float> values) {
  RowVector v(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (float value : values) v(i++) = value;
  return v;
}

Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Matrix m(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) m(r, c) = uniform(rng);
  return m;
}

const Rect kArea{100, 50, 400, 300};

}  // namespace

// --- Dot-product geometry ---------------------------------------------------------------------

TEST_CASE("the dot product equals the lengths times the cosine of the angle") {
  const RowVector q = row({3, 4}), k = row({2, 0});
  const DotGeometry g = dot_geometry(q, k);
  CHECK(g.dot == doctest::Approx(6.0));
  CHECK(g.norm_q == doctest::Approx(5.0));
  CHECK(g.norm_k == doctest::Approx(2.0));
  CHECK(g.norm_q * g.norm_k * g.cos_theta == doctest::Approx(g.dot));
  CHECK(g.angle_degrees == doctest::Approx(std::acos(0.6) * 180.0 / 3.14159265358979));
}

TEST_CASE("the dot product equals the length of k times the projection of q on k") {
  const RowVector q = row({1.5f, -2.0f, 0.5f}), k = row({-0.3f, 1.2f, 2.0f});
  const DotGeometry g = dot_geometry(q, k);
  CHECK(g.norm_k * g.projection == doctest::Approx(g.dot));
  CHECK(g.projection == doctest::Approx(g.norm_q * g.cos_theta));
}

TEST_CASE("the shadow of q on the line of k is perpendicular to k") {
  const RowVector q = row({1.5f, -2.0f, 0.5f}), k = row({-0.3f, 1.2f, 2.0f});
  const DotGeometry g = dot_geometry(q, k);
  double residual_dot_k = 0;
  for (Eigen::Index c = 0; c < 3; ++c) residual_dot_k += (q(c) - g.foot * k(c)) * k(c);
  CHECK(residual_dot_k == doctest::Approx(0.0).epsilon(1e-9));
}

TEST_CASE("orthogonal vectors have an angle of 90 degrees and a dot product of 0") {
  const DotGeometry g = dot_geometry(row({0, 2}), row({-3, 0}));
  CHECK(g.dot == 0.0);
  CHECK(g.angle_degrees == doctest::Approx(90.0));
  CHECK(g.projection == doctest::Approx(0.0));
}

TEST_CASE("opposite vectors have an angle of 180 degrees") {
  const DotGeometry g = dot_geometry(row({1, 1}), row({-2, -2}));
  CHECK(g.angle_degrees == doctest::Approx(180.0));
  CHECK(g.cos_theta == doctest::Approx(-1.0));
}

TEST_CASE("parallel vectors have an angle of 0 even when rounding pushes the cosine past 1") {
  const DotGeometry g = dot_geometry(row({1, 2, 3}), row({3, 6, 9}));
  CHECK(g.cos_theta <= 1.0);
  CHECK(g.angle_degrees < 1e-4);
  CHECK_FALSE(std::isnan(g.angle_degrees));
}

TEST_CASE("a zero key has no angle and no projection but a dot product of 0") {
  const DotGeometry g = dot_geometry(row({1, 2}), row({0, 0}));
  CHECK(g.dot == 0.0);
  CHECK(std::isnan(g.angle_degrees));
  CHECK(std::isnan(g.cos_theta));
  CHECK(std::isnan(g.projection));
  CHECK(g.foot == 0.0);
}

TEST_CASE("a zero query has no angle but a projection of 0") {
  const DotGeometry g = dot_geometry(row({0, 0}), row({1, 2}));
  CHECK(std::isnan(g.angle_degrees));
  CHECK(g.projection == 0.0);
}

// --- The minimum-norm update ------------------------------------------------------------------

TEST_CASE("after the update the moved vector is the old one plus delta") {
  Matrix W = random_matrix(8, 2, 1);
  const Matrix X = random_matrix(5, 8, 2);
  const RowVector delta = row({0.7f, -1.3f});
  const RowVector before = X.row(3) * W;
  REQUIRE(move_projection(W, X.row(3), delta));
  const RowVector after = X.row(3) * W;
  for (Eigen::Index c = 0; c < 2; ++c) CHECK(std::abs(after(c) - (before(c) + delta(c))) <= 1e-5f);
}

TEST_CASE("the update moves a three dimensional key exactly") {
  Matrix W = random_matrix(12, 3, 3);
  const Matrix X = random_matrix(4, 12, 4);
  const RowVector delta = row({-0.25f, 0.5f, 2.0f});
  const RowVector before = X.row(0) * W;
  REQUIRE(move_projection(W, X.row(0), delta));
  const RowVector after = X.row(0) * W;
  for (Eigen::Index c = 0; c < 3; ++c) CHECK(std::abs(after(c) - (before(c) + delta(c))) <= 1e-5f);
}

TEST_CASE("the update is the outer product of x and delta over the squared length of x") {
  Matrix W = Matrix::Zero(3, 2);
  REQUIRE(move_projection(W, row({1, 2, 2}), row({9, -18})));
  // x / |x|² = (1, 2, 2) / 9.
  CHECK(W(0, 0) == doctest::Approx(1.0));
  CHECK(W(1, 0) == doctest::Approx(2.0));
  CHECK(W(2, 1) == doctest::Approx(-4.0));
  CHECK(W(0, 1) == doctest::Approx(-2.0));
}

TEST_CASE("the update is smaller than any other change that moves the vector as far") {
  const Matrix W0 = random_matrix(6, 2, 5);
  const RowVector x = random_matrix(1, 6, 6).row(0);
  const RowVector delta = row({0.4f, 0.9f});
  Matrix W = W0;
  REQUIRE(move_projection(W, x, delta));
  const double minimum = static_cast<double>((W - W0).norm());
  // Another solution: add a change N with x·N = 0 (columns orthogonal to x).
  Matrix N = random_matrix(6, 2, 7);
  for (Eigen::Index c = 0; c < 2; ++c)
    N.col(c) -= x.transpose() * (x.dot(N.col(c).transpose()) / x.squaredNorm());
  CHECK((x * N).norm() < 1e-5f);
  CHECK(static_cast<double>((W - W0 + N).norm()) > minimum);
}

TEST_CASE("other vectors move by their overlap with x") {
  Matrix W = random_matrix(5, 2, 8);
  const Matrix X = random_matrix(3, 5, 9);
  const RowVector delta = row({1.0f, -0.5f});
  const RowVector other_before = X.row(1) * W;
  REQUIRE(move_projection(W, X.row(0), delta));
  const float share = X.row(1).dot(X.row(0)) / X.row(0).squaredNorm();
  const RowVector other_after = X.row(1) * W;
  for (Eigen::Index c = 0; c < 2; ++c)
    CHECK(other_after(c) == doctest::Approx(other_before(c) + share * delta(c)).epsilon(1e-4));
}

TEST_CASE("a zero embedding cannot move its vector and leaves the weights unchanged") {
  Matrix W = random_matrix(4, 2, 10);
  const Matrix before = W;
  CHECK_FALSE(move_projection(W, RowVector::Zero(4), row({1, 1})));
  CHECK(W == before);
}

TEST_CASE("the update refuses mismatched shapes") {
  Matrix W = random_matrix(4, 2, 11);
  const Matrix before = W;
  CHECK_FALSE(move_projection(W, row({1, 2, 3}), row({1, 1})));
  CHECK_FALSE(move_projection(W, row({1, 2, 3, 4}), row({1, 1, 1})));
  CHECK(W == before);
}

TEST_CASE("the update refuses non-finite input and results past the float range") {
  Matrix W = random_matrix(2, 2, 12);
  const Matrix before = W;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(move_projection(W, row({1, nan}), row({1, 1})));
  CHECK_FALSE(move_projection(W, row({1, 1}), row({nan, 1})));
  CHECK_FALSE(move_projection(W, row({1e-20f, 0}), row({1e30f, 0})));
  CHECK(W == before);
}

// --- The plot ---------------------------------------------------------------------------------

TEST_CASE("world to screen and back returns the same point") {
  PlotFrame f;
  f.centre_x = 0.3, f.centre_y = -1.2, f.scale = 37.5, f.screen_x = 210, f.screen_y = 140;
  for (const Point2& p : {Point2{0, 0}, Point2{1.25, -3.5}, Point2{-2, 4}}) {
    const ScreenPoint s = f.to_screen(p[0], p[1]);
    const Point2 back = f.to_world(s[0], s[1]);
    CHECK(back[0] == doctest::Approx(p[0]).epsilon(1e-5));
    CHECK(back[1] == doctest::Approx(p[1]).epsilon(1e-5));
  }
}

TEST_CASE("world y points up on the screen") {
  PlotFrame f;
  f.scale = 10;
  CHECK(f.to_screen(0, 1)[1] < f.to_screen(0, 0)[1]);
  CHECK(f.to_screen(1, 0)[0] > f.to_screen(0, 0)[0]);
}

TEST_CASE("the fit shows every point and the origin inside the margin") {
  const std::vector<Point2> points = {{1, 2}, {3.5, -1}, {-0.5, 0.25}, {2, 2}};
  const float margin = 20;
  const PlotFrame f = fit_plot(points, kArea, margin);
  CHECK(frame_shows(f, points, kArea, margin));
  for (const Point2& p : points) {
    const ScreenPoint s = f.to_screen(p[0], p[1]);
    CHECK(s[0] >= kArea.x + margin - 0.01f);
    CHECK(s[0] <= kArea.right() - margin + 0.01f);
    CHECK(s[1] >= kArea.y + margin - 0.01f);
    CHECK(s[1] <= kArea.bottom() - margin + 0.01f);
  }
}

TEST_CASE("the fit includes the origin even when every point is far from it") {
  const std::vector<Point2> points = {{10, 10}, {12, 11}};
  const PlotFrame f = fit_plot(points, kArea, 10);
  const ScreenPoint o = f.to_screen(0, 0);
  CHECK(kArea.contains(o[0], o[1]));
}

TEST_CASE("the fit fills the tighter axis exactly") {
  // Extent 4 by 1 in a 400 by 300 area with margin 20: x limits, 360 / 4 = 90 pixels per unit.
  const std::vector<Point2> points = {{-2, 0}, {2, 1}};
  const PlotFrame f = fit_plot(points, kArea, 20);
  CHECK(f.scale == doctest::Approx(90.0));
  CHECK(f.to_screen(-2, 0)[0] == doctest::Approx(kArea.x + 20));
  CHECK(f.to_screen(2, 0)[0] == doctest::Approx(kArea.right() - 20));
}

TEST_CASE("the fit of vectors that are all zero spans one unit each way") {
  const std::vector<Point2> points = {{0, 0}, {0, 0}};
  const PlotFrame f = fit_plot(points, kArea, 20);
  CHECK(f.scale == doctest::Approx((300.0 - 40.0) / 2.0));
  CHECK(f.to_screen(0, 0)[0] == doctest::Approx(kArea.x + kArea.w * 0.5f));
}

TEST_CASE("the fit ignores points that are not finite") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Point2> points = {{1, 1}, {inf, 0}, {std::nan(""), 2}};
  const PlotFrame f = fit_plot(points, kArea, 20);
  CHECK(std::isfinite(f.scale));
  CHECK(f.scale > 0);
  CHECK(frame_shows(f, points, kArea, 20));
}

TEST_CASE("a frame does not show a point outside its area") {
  const std::vector<Point2> points = {{1, 1}};
  const PlotFrame f = fit_plot(points, kArea, 20);
  const std::vector<Point2> more = {{1, 1}, {5, 5}};
  CHECK_FALSE(frame_shows(f, more, kArea, 20));
}

TEST_CASE("screen coordinates of a far point are clamped to a finite range") {
  PlotFrame f;
  f.scale = 1e30;
  const ScreenPoint s = f.to_screen(1e30, -1e30);
  CHECK(std::isfinite(s[0]));
  CHECK(std::isfinite(s[1]));
}

TEST_CASE("the disc fit puts the origin in the middle and the radius inside the margin") {
  const PlotFrame f = fit_disc(2.5, kArea, 10);
  CHECK(f.to_screen(0, 0)[0] == doctest::Approx(kArea.x + kArea.w * 0.5f));
  CHECK(f.to_screen(0, 0)[1] == doctest::Approx(kArea.y + kArea.h * 0.5f));
  CHECK(f.to_screen(0, 2.5)[1] == doctest::Approx(kArea.y + 10));
}

TEST_CASE("grid steps are one two or five times a power of ten") {
  CHECK(grid_step(10, 10) == doctest::Approx(1.0));
  CHECK(grid_step(4, 10) == doctest::Approx(0.5));
  CHECK(grid_step(1.6, 8) == doctest::Approx(0.2));
  CHECK(grid_step(3000, 6) == doctest::Approx(500.0));
  CHECK(grid_step(0, 6) == 1.0);
  CHECK(grid_step(std::numeric_limits<double>::infinity(), 6) == 1.0);
}

// --- The 3-D view -----------------------------------------------------------------------------

TEST_CASE("the 3-D view keeps lengths") {
  Orbit orbit;
  orbit.yaw = 0.7f, orbit.pitch = -0.3f;
  const auto v = orbit.to_view(1.0, -2.0, 0.5);
  CHECK(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] == doctest::Approx(1.0 + 4.0 + 0.25));
}

TEST_CASE("the 3-D view and its inverse round-trip") {
  Orbit orbit;
  orbit.yaw = -2.1f, orbit.pitch = 1.1f;
  const auto v = orbit.to_view(0.3, 1.7, -0.8);
  const auto w = orbit.to_world(v[0], v[1], v[2]);
  CHECK(w[0] == doctest::Approx(0.3));
  CHECK(w[1] == doctest::Approx(1.7));
  CHECK(w[2] == doctest::Approx(-0.8));
}

TEST_CASE("the vertical axis points up on the screen at any yaw") {
  Orbit orbit;
  for (float yaw : {-3.0f, -1.0f, 0.0f, 0.5f, 2.5f}) {
    orbit.yaw = yaw;
    const auto v = orbit.to_view(0, 0, 1);
    CHECK(v[0] == doctest::Approx(0.0));
    CHECK(v[1] > 0);
  }
}

TEST_CASE("a move in the screen plane moves the projection by the same amount") {
  // The drag of a 3-D tip: a screen move (dx, dy) becomes a world move parallel to the screen.
  Orbit orbit;
  const auto move = orbit.to_world(0.25, -0.5, 0.0);
  const auto before = orbit.to_view(1, 2, 3);
  const auto after = orbit.to_view(1 + move[0], 2 + move[1], 3 + move[2]);
  CHECK(after[0] - before[0] == doctest::Approx(0.25));
  CHECK(after[1] - before[1] == doctest::Approx(-0.5));
  CHECK(after[2] - before[2] == doctest::Approx(0.0).epsilon(1e-9));
}

TEST_CASE("dragging right moves the front of the scene right") {
  Orbit orbit;
  // A point on the floor in front of the origin (towards the viewer).
  const auto front = orbit.to_world(0.0, 0.0, 1.0);
  const auto floor_point = std::array<double, 3>{front[0], front[1], 0.0};
  const double before = orbit.to_view(floor_point[0], floor_point[1], 0)[0];
  orbit.turn(10, 0, 0.01f);
  CHECK(orbit.to_view(floor_point[0], floor_point[1], 0)[0] > before);
}

TEST_CASE("dragging down moves the front of the scene down") {
  Orbit orbit;
  const auto front = orbit.to_world(0.0, 0.0, 1.0);
  const double before = orbit.to_view(front[0], front[1], 0)[1];
  orbit.turn(0, 10, 0.01f);
  CHECK(orbit.to_view(front[0], front[1], 0)[1] < before);
}

TEST_CASE("turning keeps the pitch within its limit") {
  Orbit orbit;
  orbit.turn(0, 1e4f, 0.01f);
  CHECK(orbit.pitch == doctest::Approx(Orbit::kMaxPitch));
  orbit.turn(0, -1e5f, 0.01f);
  CHECK(orbit.pitch == doctest::Approx(-Orbit::kMaxPitch));
}

TEST_CASE("turning wraps the yaw") {
  Orbit orbit;
  orbit.turn(1e5f, 0, 0.01f);
  CHECK(std::abs(orbit.yaw) <= 3.1416f);
}

// --- Hit-testing and clipping -----------------------------------------------------------------

TEST_CASE("the distance to a segment is measured to its nearest point") {
  CHECK(distance_to_segment({0, 0}, {10, 0}, {5, 3}) == doctest::Approx(3.0));
  CHECK(distance_to_segment({0, 0}, {10, 0}, {13, 4}) == doctest::Approx(5.0));
  CHECK(distance_to_segment({0, 0}, {10, 0}, {-3, -4}) == doctest::Approx(5.0));
  CHECK(distance_to_segment({2, 2}, {2, 2}, {5, 6}) == doctest::Approx(5.0));
}

TEST_CASE("clipping keeps a segment inside the area unchanged") {
  ScreenPoint a{150, 100}, b{300, 200};
  REQUIRE(clip_segment(kArea, a, b));
  CHECK(a[0] == 150.0f);
  CHECK(b[1] == 200.0f);
}

TEST_CASE("clipping cuts a segment at the edges of the area") {
  ScreenPoint a{0, 100}, b{1000, 100};
  REQUIRE(clip_segment(kArea, a, b));
  CHECK(a[0] == doctest::Approx(kArea.x));
  CHECK(b[0] == doctest::Approx(kArea.right()));
  CHECK(a[1] == doctest::Approx(100.0));
}

TEST_CASE("clipping rejects a segment outside the area") {
  ScreenPoint a{0, 0}, b{50, 40};
  CHECK_FALSE(clip_segment(kArea, a, b));
  ScreenPoint c{0, 400}, d{1000, 400};
  CHECK_FALSE(clip_segment(kArea, c, d));
}

}  // namespace attnviz::view

namespace attnviz::view {

TEST_CASE("the plane of q and k keeps both exactly: lengths, angle and dot product") {
  RowVector q(4), k(4);
  q << 3.0f, 0.0f, 4.0f, 0.0f;
  k << 1.0f, 2.0f, -1.0f, 2.0f;
  const Eigen::MatrixXd basis = plane_basis(q, k);  // (4, 2)
  REQUIRE(basis.rows() == 4);
  CHECK(basis.col(0).norm() == doctest::Approx(1.0));
  CHECK(basis.col(1).norm() == doctest::Approx(1.0));
  CHECK(std::abs(basis.col(0).dot(basis.col(1))) < 1e-12);
  const Eigen::RowVector2d q2 = q.cast<double>() * basis, k2 = k.cast<double>() * basis;
  CHECK(q2(0) == doctest::Approx(5.0));  // along e₁, all of it
  CHECK(q2(1) == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(k2.norm() == doctest::Approx(static_cast<double>(k.norm())));
  CHECK(q2.dot(k2) == doctest::Approx(static_cast<double>(q.dot(k))));  // 3 - 4 = -1
  CHECK(k2(1) > 0);                                                     // e₂ points towards k
}

TEST_CASE("the plane of q and a k along it, or of a zero q, is still a plane") {
  RowVector q(3), k(3);
  q << 0.0f, 2.0f, 0.0f;
  k << 0.0f, -1.0f, 0.0f;
  Eigen::MatrixXd basis = plane_basis(q, k);
  CHECK(basis.col(1).norm() == doctest::Approx(1.0));
  CHECK(std::abs(basis.col(0).dot(basis.col(1))) < 1e-12);
  q.setZero();
  k << 1.0f, 0.0f, 0.0f;
  basis = plane_basis(q, k);
  CHECK(basis.col(0).norm() == doctest::Approx(1.0));
  CHECK(basis.col(1).norm() == doctest::Approx(1.0));
  CHECK(basis.allFinite());
}

}  // namespace attnviz::view
