#include "app/view/projection.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz::view {
namespace {

constexpr double kFloatMax = static_cast<double>(std::numeric_limits<float>::max());
// Up to this size the covariance (or Gram) matrix is diagonalised exactly; above, the top two
// directions are found by subspace iteration, which costs O(n·d) per step.
constexpr Eigen::Index kExactLimit = 128;
constexpr int kMaxIterations = 300;

float to_float(double value) {
  if (!std::isfinite(value)) return 0.0f;
  return static_cast<float>(std::clamp(value, -kFloatMax, kFloatMax));
}

// Makes column 1 of `basis` a unit vector orthogonal to column 0 (itself a unit vector); when
// column 1 lies along column 0 (or is 0), takes the unit axis least aligned with column 0.
void complete_second_direction(Eigen::MatrixXd& basis) {
  auto first = basis.col(0);
  auto second = basis.col(1);
  second -= first.dot(second) * first;
  const double norm = second.norm();
  if (norm > 1e-9) {
    second /= norm;
    return;
  }
  Eigen::Index axis = 0;
  first.cwiseAbs().minCoeff(&axis);
  second.setZero();
  second(axis) = 1.0;
  second -= first.dot(second) * first;
  second.normalize();
}

// Orthonormalises the two columns in place (Gram-Schmidt). Column 0 falls back to the first
// unit axis when it is 0.
void orthonormalise(Eigen::MatrixXd& basis) {
  const double norm = basis.col(0).norm();
  if (norm > 1e-300 && std::isfinite(norm)) {
    basis.col(0) /= norm;
  } else {
    basis.col(0).setZero();
    basis(0, 0) = 1.0;
  }
  complete_second_direction(basis);
}

// Orthonormalises the columns of `block` in place (modified Gram-Schmidt, twice for accuracy);
// a column that falls to 0 is replaced by a unit axis and orthonormalised again.
void orthonormalise_block(Eigen::MatrixXd& block) {
  const Eigen::Index d = block.rows();
  for (Eigen::Index c = 0; c < block.cols(); ++c) {
    for (int attempt = 0; attempt <= d; ++attempt) {
      for (int pass = 0; pass < 2; ++pass)
        for (Eigen::Index e = 0; e < c; ++e)
          block.col(c) -= block.col(e).dot(block.col(c)) * block.col(e);
      const double norm = block.col(c).norm();
      if (norm > 1e-10 && std::isfinite(norm)) {
        block.col(c) /= norm;
        break;
      }
      block.col(c).setZero();
      block((c + attempt) % d, c) = 1.0;
    }
  }
}

// The top two directions of the centred rows by block subspace iteration (large n and d):
// a block of kBlock directions converges on the top two at the rate λ_(kBlock+1) / λ_2, much
// faster than two alone when the spectrum is flat; each step costs O(n·d·kBlock).
void iterate_top_two(const Eigen::MatrixXd& centred, Projection2D& map) {
  constexpr Eigen::Index kBlock = 8;
  const Eigen::Index n = centred.rows(), d = centred.cols();
  const Eigen::Index k = std::min<Eigen::Index>(kBlock, std::min(n, d));
  Eigen::MatrixXd& block = map.work_iterate;
  block.resize(d, k);
  // Start from evenly spaced rows (they lean towards the directions of spread), made independent
  // below; deterministic, so the picture does not change between identical runs.
  for (Eigen::Index c = 0; c < k; ++c) block.col(c) = centred.row((c * n) / k).transpose();
  orthonormalise_block(block);
  Eigen::Matrix<double, Eigen::Dynamic, 2> previous = block.leftCols(2);
  Eigen::MatrixXd ritz;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    map.work_product.noalias() = centred * block;              // (n, k)
    block.noalias() = centred.transpose() * map.work_product;  // (d, k)
    orthonormalise_block(block);
    // Rayleigh-Ritz within the block: its top two directions.
    map.work_product.noalias() = centred * block;
    map.work_small.noalias() = map.work_product.transpose() * map.work_product;  // (k, k)
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(map.work_small);
    ritz.noalias() =
        block * solver.eigenvectors().rightCols(2).rowwise().reverse();  // (d, 2), largest first
    const double change = 2.0 - std::abs(ritz.col(0).dot(previous.col(0))) -
                          std::abs(ritz.col(1).dot(previous.col(1)));
    previous = ritz;
    if (change < 1e-10) break;
  }
  map.basis = previous;
}

// The top two principal directions of the rows of map.work_centred (already centred, scaled
// to a largest magnitude of 1, not all 0) into map.basis.
void principal_directions(Projection2D& map) {
  const Eigen::MatrixXd& centred = map.work_centred;
  const Eigen::Index n = centred.rows(), d = centred.cols();
  if (d <= n && d <= kExactLimit) {
    map.work_small.noalias() = centred.transpose() * centred;  // (d, d) covariance (unnormalised)
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(map.work_small);
    map.basis.col(0) = solver.eigenvectors().col(d - 1);  // eigenvalues ascend
    map.basis.col(1) = solver.eigenvectors().col(d - 2);
  } else if (n <= kExactLimit) {
    map.work_small.noalias() = centred * centred.transpose();  // (n, n) Gram matrix
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(map.work_small);
    // A principal direction is Xcᵀ·u for an eigenvector u of the Gram matrix; with fewer than
    // two points of spread (n == 2, or all on a line) the second is completed below.
    map.basis.col(0).noalias() = centred.transpose() * solver.eigenvectors().col(n - 1);
    if (n >= 2 && solver.eigenvalues()(n - 2) > 1e-12 * std::max(1.0, solver.eigenvalues()(n - 1)))
      map.basis.col(1).noalias() = centred.transpose() * solver.eigenvectors().col(n - 2);
    else
      map.basis.col(1).setZero();
  } else {
    iterate_top_two(centred, map);
  }
  orthonormalise(map.basis);
  // A fixed sign: each direction's largest component is positive.
  for (int k = 0; k < 2; ++k) {
    Eigen::Index at = 0;
    map.basis.col(k).cwiseAbs().maxCoeff(&at);
    if (map.basis(at, k) < 0) map.basis.col(k) = -map.basis.col(k);
  }
}

}  // namespace

std::array<float, 2> Projection2D::apply(const float* row) const {
  if (dims == 0 || basis.rows() != dims || origin.size() != dims) return {0.0f, 0.0f};
  double x = 0, y = 0;
  for (Eigen::Index k = 0; k < dims; ++k) {
    const double centred = static_cast<double>(row[k]) - origin(k);
    x += centred * basis(k, 0);
    y += centred * basis(k, 1);
  }
  if (!std::isfinite(x) || !std::isfinite(y)) return {0.0f, 0.0f};
  return {to_float(x), to_float(y)};
}

bool project_to_2d(const Matrix& points, Matrix& out, Projection2D& map) {
  const Eigen::Index n = points.rows(), d = points.cols();
  out.setZero(n, 2);
  map.dims = d;
  map.origin.setZero(d);
  map.basis.setZero(d, 2);
  map.explained = {0.0, 0.0};
  map.kind =
      d <= 1 ? ProjectionKind::Raw1D : (d == 2 ? ProjectionKind::Raw2D : ProjectionKind::Pca);
  if (d == 0 || !points.allFinite()) return false;

  // The variance shares, for every kind (computed on centred, scaled copies: no overflow).
  map.work_centred = points.cast<double>();
  const Eigen::RowVectorXd mean = map.work_centred.colwise().mean();
  map.work_centred.rowwise() -= mean;
  const double largest = n > 0 ? map.work_centred.cwiseAbs().maxCoeff() : 0.0;
  const bool spread = largest > 0 && std::isfinite(largest);
  if (spread) map.work_centred /= largest;
  const double total = spread ? map.work_centred.squaredNorm() : 0.0;

  if (map.kind != ProjectionKind::Pca) {
    map.basis(0, 0) = 1.0;
    if (d == 2) map.basis(1, 1) = 1.0;
    for (Eigen::Index r = 0; r < n; ++r) {
      out(r, 0) = points(r, 0);
      out(r, 1) = d == 2 ? points(r, 1) : 0.0f;
    }
    if (total > 0)
      for (Eigen::Index k = 0; k < d; ++k)
        map.explained[static_cast<std::size_t>(k)] = map.work_centred.col(k).squaredNorm() / total;
    return true;
  }

  map.origin = mean;
  if (!spread || n <= 1) {  // every point the same: all at (0, 0), any axes will do
    map.basis(0, 0) = 1.0;
    map.basis(1, 1) = 1.0;
    return true;
  }
  principal_directions(map);
  map.work_product.noalias() = map.work_centred * map.basis;  // (n, 2), in units of `largest`
  for (int k = 0; k < 2; ++k)
    map.explained[static_cast<std::size_t>(k)] =
        std::clamp(map.work_product.col(k).squaredNorm() / total, 0.0, 1.0);
  for (Eigen::Index r = 0; r < n; ++r)
    for (int k = 0; k < 2; ++k) out(r, k) = to_float(map.work_product(r, k) * largest);
  return true;
}

std::array<float, 2> Viewport2D::to_screen(double x, double y) const {
  const double sx = static_cast<double>(screen_x) + (x - centre_x) * scale;
  const double sy = static_cast<double>(screen_y) - (y - centre_y) * scale;
  return {to_float(sx), to_float(sy)};
}

Viewport2D fit_to_rect(const Matrix& points, const std::array<float, 2>* extra, Rect area,
                       float margin) {
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-std::numeric_limits<double>::infinity(),
                  -std::numeric_limits<double>::infinity()};
  const auto include = [&](double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y)) return;
    lo[0] = std::min(lo[0], x), hi[0] = std::max(hi[0], x);
    lo[1] = std::min(lo[1], y), hi[1] = std::max(hi[1], y);
  };
  if (points.cols() >= 2)
    for (Eigen::Index r = 0; r < points.rows(); ++r) include(points(r, 0), points(r, 1));
  if (extra) include((*extra)[0], (*extra)[1]);

  Viewport2D v;
  v.screen_x = area.x + area.w * 0.5f;
  v.screen_y = area.y + area.h * 0.5f;
  if (!(lo[0] <= hi[0])) return v;  // nothing finite to fit
  v.centre_x = 0.5 * lo[0] + 0.5 * hi[0];
  v.centre_y = 0.5 * lo[1] + 0.5 * hi[1];
  const double room[2] = {std::max(1.0, static_cast<double>(area.w) - 2.0 * margin),
                          std::max(1.0, static_cast<double>(area.h) - 2.0 * margin)};
  double scale = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 2; ++k) {
    const double extent = hi[k] - lo[k];
    if (extent > 0 && std::isfinite(extent)) scale = std::min(scale, room[k] / extent);
  }
  v.scale = std::isfinite(scale) && scale > 0 ? scale : 1.0;
  return v;
}

}  // namespace attnviz::view
