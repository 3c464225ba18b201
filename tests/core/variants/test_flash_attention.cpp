// FlashAttention's tiles and online softmax (core/variants/flash_attention.hpp) against full
// attention: a plain softmax of every score in double precision, written here, and the engine's
// own head output. Every tile size, including sizes that do not divide n, causal and masked rows
// (a row with every key masked among them), and what the trace says at each tile.
#include "core/engine/attention.hpp"
#include "core/variants/flash_attention.hpp"

#include "tests/support/random_matrix.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace attnviz {
namespace {

using testing::random_matrix;

// Full attention as a textbook writes it: every score, the softmax of each row over its allowed
// keys (a row with none: output 0), α·V. Double precision.
Eigen::MatrixXd plain_attention(const Matrix& Q, const Matrix& K, const Matrix& V, double scale,
                                bool causal, const MaskMatrix* mask) {
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(Q.rows(), V.cols());
  for (Eigen::Index i = 0; i < Q.rows(); ++i) {
    std::vector<double> scores;
    std::vector<Eigen::Index> keys;
    for (Eigen::Index j = 0; j < K.rows(); ++j) {
      if ((causal && j > i) || (mask && (*mask)(i, j) == 0)) continue;
      scores.push_back(scale * Q.row(i).cast<double>().dot(K.row(j).cast<double>()));
      keys.push_back(j);
    }
    if (keys.empty()) continue;
    const double largest = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - largest));
    for (std::size_t k = 0; k < keys.size(); ++k)
      out.row(i) += scores[k] / sum * V.row(keys[k]).cast<double>();
  }
  return out;
}

double largest_difference(const Matrix& a, const Eigen::MatrixXd& b) {
  return (a.cast<double>() - b).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("FlashAttention equals full attention for every tile size, causal or not") {
  const Matrix Q = random_matrix(11, 4, 1), K = random_matrix(11, 4, 2),
               V = random_matrix(11, 3, 3);
  const float scale = 0.5f;
  for (const bool causal : {false, true})
    for (const int block_q : {1, 2, 3, 4, 7, 11, 15})
      for (const int block_k : {1, 3, 5, 8, 11, 20}) {
        CAPTURE(causal);
        CAPTURE(block_q);
        CAPTURE(block_k);
        Result<FlashResult> flash =
            flash_attention(Q, K, V, scale, causal, nullptr, {block_q, block_k}, false);
        REQUIRE(flash.ok());
        CHECK(largest_difference(flash->output, plain_attention(Q, K, V, scale, causal, nullptr)) <
              1e-5);
        CHECK(flash->scores_held == std::min(block_q, 11) * std::min(block_k, 11));
      }
}

TEST_CASE("FlashAttention with a custom mask: a row with every key masked gets 0, as the engine") {
  // Cross attention: 5 queries, 9 keys; query 2 sees no key, query 4 only the last.
  const Matrix Q = random_matrix(5, 6, 4), K = random_matrix(9, 6, 5), V = random_matrix(9, 2, 6);
  MaskMatrix mask = MaskMatrix::Ones(5, 9);
  mask.row(2).setZero();
  mask.row(4).setZero();
  mask(4, 8) = 1;
  for (const int block : {1, 2, 4, 9}) {
    CAPTURE(block);
    Result<FlashResult> flash = flash_attention(Q, K, V, 0.4f, false, &mask, {block, block}, true);
    REQUIRE(flash.ok());
    const Eigen::MatrixXd full = plain_attention(Q, K, V, 0.4, false, &mask);
    CHECK(largest_difference(flash->output, full) < 1e-5);
    CHECK(flash->output.row(2).isZero());
    CHECK(flash->row_sum[2] == 0.0f);
    CHECK(flash->row_max[2] == -std::numeric_limits<float>::infinity());
    CHECK(largest_difference(flash->output.row(4), V.row(8).cast<double>()) < 1e-6);
    CHECK(flash->pairs_computed == 9 * 3 + 1);
  }
}

TEST_CASE("FlashAttention's trace: m and ℓ grow tile by tile to the row's max and sum") {
  const Matrix Q = random_matrix(6, 3, 7), K = random_matrix(6, 3, 8), V = random_matrix(6, 2, 9);
  const float scale = 0.7f;
  Result<FlashResult> flash = flash_attention(Q, K, V, scale, true, nullptr, {4, 4}, true);
  REQUIRE(flash.ok());
  // 2 query blocks × 2 key blocks; under the causal mask the tile of queries 0..3 and keys 4..5
  // is all masked: skipped.
  REQUIRE(flash->tiles.size() == 4);
  CHECK(flash->tiles[1].skipped);
  CHECK(flash->tiles[1].pairs == 0);
  CHECK_FALSE(flash->tiles[3].skipped);
  CHECK(flash->tiles[3].pairs == 3);   // queries 4, 5 against keys 4, 5: (4,4), (5,4), (5,5)
  CHECK(flash->pairs_computed == 21);  // 6 · 7 / 2
  for (Eigen::Index i = 0; i < 6; ++i) {
    double largest = -1e300, sum = 0;
    for (Eigen::Index j = 0; j <= i; ++j)
      largest =
          std::max(largest, double{scale} * Q.row(i).cast<double>().dot(K.row(j).cast<double>()));
    for (Eigen::Index j = 0; j <= i; ++j)
      sum +=
          std::exp(double{scale} * Q.row(i).cast<double>().dot(K.row(j).cast<double>()) - largest);
    CHECK(flash->row_max[static_cast<std::size_t>(i)] == doctest::Approx(largest).epsilon(1e-5));
    CHECK(flash->row_sum[static_cast<std::size_t>(i)] == doctest::Approx(sum).epsilon(1e-5));
  }
  // Query 5 (the second block's second row) after its first key block: its max over keys 0..3;
  // after the second, its max over keys 0..5, and the rescale factor exp(m_before − m_after).
  const FlashTile& first = flash->tiles[2];
  const FlashTile& second = flash->tiles[3];
  CHECK(second.max_before[1] == first.max_after[1]);
  CHECK(second.sum_before[1] == first.sum_after[1]);
  CHECK(second.rescale[1] == doctest::Approx(std::exp(second.max_before[1] - second.max_after[1])));
  CHECK(second.rescale[1] <= 1.0f);
  CHECK(second.max_after[1] == flash->row_max[5]);
  // The running output divided by the running sum is the output at the end.
  CHECK(((second.output_after.row(1) / second.sum_after[1]) - flash->output.row(5))
            .cwiseAbs()
            .maxCoeff() < 1e-6f);
}

TEST_CASE("FlashAttention equals the engine's head output on a scenario's Q, K and V") {
  AttentionConfig config;
  config.d_model = 8;
  config.heads = 2;
  config.d_k = config.d_v = config.d_att = 4;
  config.causal = true;
  config.temperature = 0.8f;
  const Matrix X = random_matrix(9, 8, 10);
  const Parameters parameters = seeded_parameters(config, 11);
  AttentionEngine engine;
  REQUIRE(engine.compute(X, X, parameters, config).is_ok());
  for (int head = 0; head < 2; ++head) {
    const HeadResult& h = engine.result().heads[static_cast<std::size_t>(head)];
    const float scale = 1.0f / std::sqrt(4.0f) / config.temperature;
    Result<FlashResult> flash = flash_attention(h.Q, h.K, h.V, scale, true, nullptr, {3, 2}, false);
    REQUIRE(flash.ok());
    CHECK((flash->output - h.output).cwiseAbs().maxCoeff() < 1e-5f);
  }
}

TEST_CASE("FlashAttention refuses a tile size of 0, mismatched shapes and non-finite inputs") {
  const Matrix Q = random_matrix(3, 2, 12), K = random_matrix(4, 2, 13),
               V = random_matrix(4, 2, 14);
  Result<FlashResult> zero = flash_attention(Q, K, V, 1.0f, false, nullptr, {0, 2}, false);
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error() == "the query block must be between 1 and 512 tokens, got 0");
  CHECK(flash_attention(Q, K, V, 1.0f, false, nullptr, {2, -1}, false).error() ==
        "the key block must be between 1 and 512 tokens, got -1");
  CHECK_FALSE(
      flash_attention(Q, random_matrix(4, 3, 15), V, 1.0f, false, nullptr, {2, 2}, false).ok());
  CHECK_FALSE(
      flash_attention(Q, K, random_matrix(5, 2, 16), 1.0f, false, nullptr, {2, 2}, false).ok());
  CHECK_FALSE(flash_attention(Q, K, V, std::nanf(""), false, nullptr, {2, 2}, false).ok());
  MaskMatrix wrong = MaskMatrix::Ones(2, 4);
  CHECK(flash_attention(Q, K, V, 1.0f, false, &wrong, {2, 2}, false).error() ==
        "the mask is not n_query × n_key");
}

TEST_CASE("FlashAttention clamps a score past float's range, as the engine does") {
  Matrix Q = random_matrix(2, 2, 17), K = random_matrix(3, 2, 18);
  const Matrix V = random_matrix(3, 2, 19);
  Q(0, 0) = 1e30f;
  K(1, 0) = 1e30f;  // q₀·k₁ = 1e60: past float
  Result<FlashResult> flash = flash_attention(Q, K, V, 1.0f, false, nullptr, {1, 1}, false);
  REQUIRE(flash.ok());
  CHECK(flash->overflow);
  CHECK(all_finite(flash->output));
}

}  // namespace attnviz
