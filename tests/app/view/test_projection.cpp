// 2-D projection of value vectors (app/view/projection.hpp), one behaviour per case.
#include "app/view/projection.hpp"

#include <doctest/doctest.h>
#include <Eigen/Eigenvalues>

#include <cmath>
#include <limits>
#include <random>

namespace attnviz::view {
namespace {

Matrix random_points(Eigen::Index n, Eigen::Index d, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Matrix m(n, d);
  for (Eigen::Index r = 0; r < n; ++r)
    for (Eigen::Index c = 0; c < d; ++c) m(r, c) = uniform(rng);
  return m;
}

double distance(const Matrix& m, Eigen::Index a, Eigen::Index b) {
  return static_cast<double>((m.row(a) - m.row(b)).norm());
}

bool all_finite(const Matrix& m) {
  return m.allFinite();
}

// Every pairwise distance of `projected` equals the one of `original`.
void check_distances_preserved(const Matrix& original, const Matrix& projected, double tolerance) {
  for (Eigen::Index a = 0; a < original.rows(); ++a)
    for (Eigen::Index b = a + 1; b < original.rows(); ++b)
      CHECK(distance(projected, a, b) ==
            doctest::Approx(distance(original, a, b)).epsilon(tolerance));
}

TEST_CASE("points on a line in five dimensions keep their distances along the first axis") {
  // x_t = base + t * direction, for a handful of t.
  const float t_values[] = {-2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f};
  RowVector base(5), direction(5);
  base << 0.3f, -1.0f, 2.0f, 0.5f, 0.0f;
  direction << 1.0f, 2.0f, -2.0f, 0.0f, 4.0f;
  direction /= direction.norm();
  Matrix points(6, 5);
  for (int r = 0; r < 6; ++r) points.row(r) = base + t_values[r] * direction;
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(map.kind == ProjectionKind::Pca);
  for (int r = 0; r < 6; ++r) CHECK(std::abs(out(r, 1)) < 1e-5f);
  // Distances along the line are kept, up to a sign of the axis.
  const float sign = out(5, 0) > out(0, 0) ? 1.0f : -1.0f;
  for (int r = 1; r < 6; ++r)
    CHECK(sign * (out(r, 0) - out(0, 0)) ==
          doctest::Approx(t_values[r] - t_values[0]).epsilon(1e-5));
  CHECK(map.explained[0] == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("points on a line in many dimensions keep their distances with the iterative solver") {
  // d and n above the exact-solver limit.
  const Eigen::Index n = 200, d = 300;
  Matrix direction = random_points(1, d, 3);
  direction /= direction.norm();
  Matrix points(n, d);
  for (Eigen::Index r = 0; r < n; ++r)
    points.row(r) = (static_cast<float>(r) * 0.01f - 1.0f) * direction.row(0);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  for (Eigen::Index r = 0; r < n; ++r) CHECK(std::abs(out(r, 1)) < 1e-4f);
  CHECK(std::abs(out(n - 1, 0) - out(0, 0)) ==
        doctest::Approx(0.01 * static_cast<double>(n - 1)).epsilon(1e-4));
}

TEST_CASE("two dimensional points come back with their pairwise distances") {
  const Matrix points = random_points(7, 2, 11);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(map.kind == ProjectionKind::Raw2D);
  check_distances_preserved(points, out, 1e-6);
}

TEST_CASE("points spanning a plane in higher dimensions keep their pairwise distances") {
  // Random 2-D points embedded in 6-D by an orthonormal pair of directions plus an offset.
  const Matrix flat = random_points(9, 2, 5);
  Matrix axes = random_points(2, 6, 8);
  axes.row(0) /= axes.row(0).norm();
  axes.row(1) -= axes.row(1).dot(axes.row(0)) * axes.row(0);
  axes.row(1) /= axes.row(1).norm();
  Matrix points = flat * axes;
  for (Eigen::Index r = 0; r < points.rows(); ++r) points.row(r) += RowVector::Constant(6, 0.7f);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  check_distances_preserved(flat, out, 1e-4);
  CHECK(map.explained[0] + map.explained[1] == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("one dimensional values are placed on the horizontal axis") {
  Matrix points(3, 1);
  points << -1.5f, 0.0f, 2.0f;
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(map.kind == ProjectionKind::Raw1D);
  for (int r = 0; r < 3; ++r) {
    CHECK(out(r, 0) == points(r, 0));
    CHECK(out(r, 1) == 0.0f);
  }
}

TEST_CASE("identical points project to finite coordinates") {
  Matrix points = Matrix::Constant(5, 4, 0.25f);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(all_finite(out));
  CHECK(out.cwiseAbs().maxCoeff() == 0.0f);
  const auto p = map.apply(points.row(0).data());
  CHECK(std::isfinite(p[0]));
  CHECK(std::isfinite(p[1]));
}

TEST_CASE("a single point projects to finite coordinates") {
  const Matrix points = random_points(1, 6, 2);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(out.rows() == 1);
  CHECK(all_finite(out));
}

TEST_CASE("two points in many dimensions project to finite coordinates at their distance") {
  const Matrix points = random_points(2, 10, 4);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(all_finite(out));
  CHECK(distance(out, 0, 1) == doctest::Approx(distance(points, 0, 1)).epsilon(1e-5));
}

TEST_CASE("zero points give an empty finite result") {
  const Matrix points(0, 5);
  Matrix out;
  Projection2D map;
  CHECK(project_to_2d(points, out, map));
  CHECK(out.rows() == 0);
  CHECK(out.cols() == 2);
}

TEST_CASE("huge finite values project to finite coordinates") {
  Matrix points = random_points(6, 5, 9) * 3e38f;
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(all_finite(out));
}

TEST_CASE("non finite input is refused with zero output") {
  Matrix points = random_points(4, 3, 1);
  points(2, 1) = std::numeric_limits<float>::quiet_NaN();
  Matrix out;
  Projection2D map;
  CHECK_FALSE(project_to_2d(points, out, map));
  CHECK(out.rows() == 4);
  CHECK(out.cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE("the projection of a convex combination is the combination of the projections") {
  for (const Eigen::Index d : {1, 2, 3, 8, 40}) {
    CAPTURE(d);
    const Matrix points = random_points(6, d, static_cast<unsigned>(20 + d));
    Matrix out;
    Projection2D map;
    REQUIRE(project_to_2d(points, out, map));
    RowVector alpha(6);
    alpha << 0.1f, 0.3f, 0.05f, 0.25f, 0.2f, 0.1f;
    const RowVector combined = alpha * points;  // Σ α_j v_j, as a head's output
    const auto projected = map.apply(combined.data());
    const RowVector expected = alpha * out;  // Σ α_j p(v_j)
    CHECK(projected[0] == doctest::Approx(expected(0)).epsilon(1e-5).scale(1.0));
    CHECK(projected[1] == doctest::Approx(expected(1)).epsilon(1e-5).scale(1.0));
  }
}

TEST_CASE("apply reproduces the projected rows") {
  const Matrix points = random_points(8, 5, 13);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  for (Eigen::Index r = 0; r < points.rows(); ++r) {
    const auto p = map.apply(points.row(r).data());
    CHECK(p[0] == doctest::Approx(out(r, 0)).epsilon(1e-5).scale(1.0));
    CHECK(p[1] == doctest::Approx(out(r, 1)).epsilon(1e-5).scale(1.0));
  }
}

TEST_CASE("the first principal axis carries at least as much variance as the second") {
  const Matrix points = random_points(30, 12, 17);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(map.explained[0] >= map.explained[1]);
  CHECK(map.explained[0] + map.explained[1] <= 1.0 + 1e-9);
}

TEST_CASE("the iterative solver finds the same principal axes as an exact eigensolver") {
  // n and d above the exact-solver limit; columns of uneven spread.
  Matrix points = random_points(200, 150, 31);
  for (Eigen::Index c = 0; c < points.cols(); ++c)
    points.col(c) *= 1.0f + 0.02f * static_cast<float>(c % 40);
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  Eigen::MatrixXd centred = points.cast<double>();
  centred.rowwise() -= centred.colwise().mean().eval();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> exact(centred.transpose() * centred);
  const Eigen::Index d = points.cols();
  CHECK(std::abs(map.basis.col(0).dot(exact.eigenvectors().col(d - 1))) ==
        doctest::Approx(1.0).epsilon(1e-6));
  CHECK(std::abs(map.basis.col(1).dot(exact.eigenvectors().col(d - 2))) ==
        doctest::Approx(1.0).epsilon(1e-6));
  CHECK(map.explained[0] ==
        doctest::Approx(exact.eigenvalues()(d - 1) / centred.squaredNorm()).epsilon(1e-6));
}

TEST_CASE("the basis of a principal projection is orthonormal") {
  const Matrix points = random_points(150, 200, 21);  // above the exact-solver limit
  Matrix out;
  Projection2D map;
  REQUIRE(project_to_2d(points, out, map));
  CHECK(map.basis.col(0).norm() == doctest::Approx(1.0));
  CHECK(map.basis.col(1).norm() == doctest::Approx(1.0));
  CHECK(std::abs(map.basis.col(0).dot(map.basis.col(1))) < 1e-9);
}

TEST_CASE("fitting keeps the aspect ratio and the margin") {
  Matrix points(3, 2);
  points << 0, 0, 2, 0, 2, 1;  // 2 wide, 1 high
  const Rect area{100, 50, 400, 400};
  const Viewport2D v = fit_to_rect(points, nullptr, area, 20);
  CHECK(v.scale == doctest::Approx(180.0));  // (400 - 2·20) / 2
  const auto a = v.to_screen(0, 0), b = v.to_screen(2, 1);
  CHECK(a[0] == doctest::Approx(120.0));
  CHECK(b[0] == doctest::Approx(480.0));
  CHECK(b[1] - a[1] == doctest::Approx(-180.0));  // y points up, same scale
  CHECK(0.5f * (a[1] + b[1]) == doctest::Approx(250.0));
}

TEST_CASE("fitting includes the extra point") {
  Matrix points(2, 2);
  points << 0, 0, 1, 0;
  const std::array<float, 2> extra = {3.0f, 0.0f};
  const Viewport2D v = fit_to_rect(points, &extra, {0, 0, 100, 100}, 10);
  CHECK(v.to_screen(3, 0)[0] == doctest::Approx(90.0));
  CHECK(v.to_screen(0, 0)[0] == doctest::Approx(10.0));
}

TEST_CASE("fitting coincident points puts them at the centre") {
  const Matrix points = Matrix::Constant(4, 2, 5.0f);
  const Viewport2D v = fit_to_rect(points, nullptr, {0, 0, 200, 100}, 10);
  const auto p = v.to_screen(5, 5);
  CHECK(p[0] == doctest::Approx(100.0));
  CHECK(p[1] == doctest::Approx(50.0));
  CHECK(std::isfinite(v.scale));
}

}  // namespace
}  // namespace attnviz::view
