// Linformer (core/variants/linformer.hpp) against full attention computed plainly here: with
// k = n and E = F the identity, or a permutation (keys and values moved together), it is full
// attention; with k = 1 every query gets the one summary value; its projections are deterministic
// with the variance the method needs; bad k and shapes are refused by name.
#include "core/variants/linformer.hpp"

#include "tests/support/random_matrix.hpp"

#include <doctest/doctest.h>

#include <cmath>

namespace attnviz {
namespace {

using testing::random_matrix;

// Full attention, no mask, in double: softmax(scale · Q·Kᵀ) · V.
Eigen::MatrixXd plain_attention(const Matrix& Q, const Matrix& K, const Matrix& V, double scale) {
  Eigen::MatrixXd scores = scale * Q.cast<double>() * K.cast<double>().transpose();
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    scores.row(i) = (scores.row(i).array() - scores.row(i).maxCoeff()).exp().matrix();
    scores.row(i) /= scores.row(i).sum();
  }
  return scores * V.cast<double>();
}

}  // namespace

TEST_CASE("Linformer with k = n and E = F = I, or a permutation, is full attention") {
  const Matrix Q = random_matrix(6, 4, 1), K = random_matrix(8, 4, 2), V = random_matrix(8, 3, 3);
  const Eigen::MatrixXd full = plain_attention(Q, K, V, 0.5);
  const Matrix I = Matrix::Identity(8, 8);
  Result<LinformerResult> same = linformer_attention(Q, K, V, I, I, 0.5f);
  REQUIRE(same.ok());
  CHECK((same->output.cast<double>() - full).cwiseAbs().maxCoeff() < 1e-5);
  CHECK(same->pairs == 6 * 8);
  Matrix P = Matrix::Zero(8, 8);  // key j becomes summary (3j + 1) mod 8
  for (int j = 0; j < 8; ++j) P((3 * j + 1) % 8, j) = 1.0f;
  Result<LinformerResult> moved = linformer_attention(Q, K, V, P, P, 0.5f);
  REQUIRE(moved.ok());
  CHECK((moved->output.cast<double>() - full).cwiseAbs().maxCoeff() < 1e-5);
}

TEST_CASE("Linformer with one summary key gives every query the one summary value") {
  const Matrix Q = random_matrix(5, 4, 4), K = random_matrix(7, 4, 5), V = random_matrix(7, 2, 6);
  const Matrix E = linformer_projection(1, 7, 9), F = linformer_projection(1, 7, 10);
  Result<LinformerResult> one = linformer_attention(Q, K, V, E, F, 1.0f);
  REQUIRE(one.ok());
  const RowVector summary = F * V;  // (1, d_v)
  for (Eigen::Index i = 0; i < 5; ++i) {
    CHECK(one->weights(i, 0) == doctest::Approx(1.0f));
    CHECK((one->output.row(i) - summary).cwiseAbs().maxCoeff() < 1e-6f);
  }
  CHECK(one->pairs == 5);
}

TEST_CASE("Linformer's scores, weights and output are the plain formulas on the summaries") {
  const Matrix Q = random_matrix(4, 3, 11), K = random_matrix(9, 3, 12),
               V = random_matrix(9, 2, 13);
  const Matrix E = linformer_projection(3, 9, 1);
  Result<LinformerResult> shared = linformer_attention(Q, K, V, E, E, 0.7f);  // E = F
  REQUIRE(shared.ok());
  const Eigen::MatrixXd summary_keys = E.cast<double>() * K.cast<double>();
  const Eigen::MatrixXd summary_values = E.cast<double>() * V.cast<double>();
  const Eigen::MatrixXd expected =
      plain_attention(Q, summary_keys.cast<float>(), summary_values.cast<float>(), 0.7);
  CHECK((shared->output.cast<double>() - expected).cwiseAbs().maxCoeff() < 1e-5);
  CHECK((shared->summary_keys.cast<double>() - summary_keys).cwiseAbs().maxCoeff() < 1e-5);
  for (Eigen::Index i = 0; i < 4; ++i) CHECK(shared->weights.row(i).sum() == doctest::Approx(1.0f));
}

TEST_CASE("Linformer's projections: the same for a seed, variance 1/k") {
  const Matrix a = linformer_projection(4, 600, 7), b = linformer_projection(4, 600, 7);
  CHECK(a == b);
  CHECK(a != linformer_projection(4, 600, 8));
  const double variance = a.cast<double>().array().square().mean();
  CHECK(variance == doctest::Approx(0.25).epsilon(0.1));
  CHECK(std::abs(a.cast<double>().mean()) < 0.02);
}

TEST_CASE("Linformer refuses k of 0 or past n, and projections of the wrong shape") {
  const Matrix Q = random_matrix(3, 2, 14), K = random_matrix(4, 2, 15),
               V = random_matrix(4, 2, 16);
  const Matrix none(0, 4);
  CHECK(linformer_attention(Q, K, V, none, none, 1.0f).error() ==
        "k, the number of summary keys, must be between 1 and n = 4, got 0");
  const Matrix five = linformer_projection(5, 4, 1);
  CHECK(linformer_attention(Q, K, V, five, five, 1.0f).error().find("got 5") != std::string::npos);
  const Matrix two = linformer_projection(2, 4, 1), wrong = linformer_projection(2, 3, 1);
  CHECK(linformer_attention(Q, K, V, two, wrong, 1.0f).error() ==
        "E and F must both be k × n = 2 × 4");
  CHECK_FALSE(linformer_attention(Q, K, V, two, two, std::nanf("")).ok());
}

}  // namespace attnviz
