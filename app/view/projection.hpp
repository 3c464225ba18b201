// Vectors drawn on a plane: the value vectors of a head projected to 2-D, and the fitting of
// 2-D points into a screen rectangle. Pure math (Eigen), no GL and no ImGui: unit-tested.
//
// The projection is affine, p(x) = (x - origin) · basis, so it maps a weighted average of
// vectors to the same weighted average of their projections: the projection of a head's
// output Σ α_j v_j (with Σ α_j = 1) sits exactly at Σ α_j p(v_j).
#pragma once

#include "app/view/layout.hpp"
#include "core/base/types.hpp"

#include <Eigen/Core>

#include <array>

namespace attnviz::view {

enum class ProjectionKind {
  Raw1D,  // d == 1: (v, 0)
  Raw2D,  // d == 2: the two dimensions as they are
  Pca,    // d > 2: the top two principal directions of the centred rows
};

struct Projection2D {
  ProjectionKind kind = ProjectionKind::Raw2D;
  Eigen::Index dims = 0;              // d
  Eigen::RowVectorXd origin;          // (d) subtracted before projecting (the mean for PCA, else 0)
  Eigen::MatrixXd basis;              // (d, 2) orthonormal columns (a zero column for d == 1)
  std::array<double, 2> explained{};  // share of the total variance along each axis, in [0, 1]

  // The projection of one d-vector (a row of `points`, or a head's output). Finite for any
  // finite input (clamped to the float range); (0, 0) for a non-finite one.
  std::array<float, 2> apply(const float* row) const;

  // Work buffers, kept between calls so that a projection of unchanged shape allocates nothing.
  Eigen::MatrixXd work_centred;  // (n, d) centred (and scaled) points
  Eigen::MatrixXd work_small;    // the smaller of the covariance (d, d) and Gram (n, n) matrices
  Eigen::MatrixXd work_iterate;  // (d, 2) subspace iteration
  Eigen::MatrixXd work_product;  // (n, 2)
};

// Projects each row of `points` (n, d) to 2-D: `out` becomes (n, 2), `map` the affine map used
// (apply it to other vectors of the same space). d == 1 gives (v, 0); d == 2 the points
// themselves; d > 2 the top two principal components (the signs chosen so that each direction's
// largest component is positive). Degenerate inputs (n <= 1, all points equal, all on one line)
// give finite output. Returns false, with `out` all 0, when `points` holds NaN or infinity or
// has no columns.
bool project_to_2d(const Matrix& points, Matrix& out, Projection2D& map);

// Places 2-D coordinates in a screen rectangle: the same scale on both axes, y pointing up, the
// bounding box of the fitted points centred with `margin` pixels free on every side. When all
// points coincide they land at the centre.
struct Viewport2D {
  double centre_x = 0, centre_y = 0;  // the middle of the points' bounding box
  double scale = 1;                   // pixels per unit
  float screen_x = 0, screen_y = 0;   // the middle of the rectangle
  std::array<float, 2> to_screen(double x, double y) const;
};
// Fits the rows of `points` (n, 2) and, when `extra` is given, one more point (x, y).
Viewport2D fit_to_rect(const Matrix& points, const std::array<float, 2>* extra, Rect area,
                       float margin);

}  // namespace attnviz::view
