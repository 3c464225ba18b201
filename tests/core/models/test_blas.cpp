// The models' matrix product (OpenBLAS when installed, else Eigen) against a plain loop, with row
// strides wider than the rows and B transposed, as the forward pass calls it.
#include "core/base/rng.hpp"
#include "core/models/blas.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace attnviz {

TEST_CASE("blas::gemm equals a plain loop, with strides and with B transposed") {
  MESSAGE("products by " << blas::backend());
  // m = 1 goes through sgemv (a token appended, the last position's logits).
  for (const auto& shape :
       {std::pair{37, false}, std::pair{37, true}, std::pair{1, false}, std::pair{1, true}}) {
    const int m = shape.first;
    const bool transpose_b = shape.second;
    CAPTURE(m);
    CAPTURE(transpose_b);
    const int n = 29, k = 53;
    const std::ptrdiff_t lda = k + 3, ldb = (transpose_b ? k : n) + 5, ldc = n + 2;
    std::vector<float> a(static_cast<std::size_t>(m * lda)),
        b(static_cast<std::size_t>((transpose_b ? n : k) * ldb)),
        c(static_cast<std::size_t>(m * ldc), -7.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = rng::value(1, i);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = rng::value(2, i);
    blas::gemm(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, transpose_b);
    double worst = 0.0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int p = 0; p < k; ++p)
          sum += double{a[i * lda + p]} * (transpose_b ? b[j * ldb + p] : b[p * ldb + j]);
        worst = std::max(worst, std::fabs(sum - c[i * ldc + j]));
      }
    CHECK(worst < 1e-4);
    // The padding between rows is not written.
    for (int i = 0; i < m; ++i) CHECK(c[i * ldc + n] == -7.0f);
  }
  std::vector<float> c(4, 3.0f);
  blas::gemm(2, 2, 0, nullptr, 0, nullptr, 2, c.data(), 2);  // an empty sum is 0
  CHECK(c == std::vector<float>(4, 0.0f));
}

TEST_CASE("blas::gemm's general form: either operand transposed, set or added, with strides") {
  // Training's products (its backward pass adds dW += Xᵀ · dY).
  MESSAGE("products by " << blas::backend());
  const int m = 23, n = 31, k = 47;
  for (const bool transpose_a : {false, true}) {
    for (const bool transpose_b : {false, true}) {
      for (const float beta : {0.0f, 1.0f, 0.5f}) {
        CAPTURE(transpose_a);
        CAPTURE(transpose_b);
        CAPTURE(beta);
        // A stored (m, k), or (k, m) when transposed; B (k, n) or (n, k); rows padded.
        const std::ptrdiff_t lda = (transpose_a ? m : k) + 3, ldb = (transpose_b ? k : n) + 5,
                             ldc = n + 2;
        std::vector<float> a(static_cast<std::size_t>((transpose_a ? k : m) * lda)),
            b(static_cast<std::size_t>((transpose_b ? n : k) * ldb)),
            c(static_cast<std::size_t>(m * ldc));
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = rng::value(3, i);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = rng::value(4, i);
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = rng::value(5, i);
        const std::vector<float> before = c;
        blas::gemm(transpose_a, transpose_b, m, n, k, 2.0f, a.data(), lda, b.data(), ldb, beta,
                   c.data(), ldc);
        double worst = 0.0;
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int p = 0; p < k; ++p)
              sum += double{transpose_a ? a[p * lda + i] : a[i * lda + p]} *
                     (transpose_b ? b[j * ldb + p] : b[p * ldb + j]);
            const double expected = 2.0 * sum + beta * before[i * ldc + j];
            worst = std::max(worst, std::fabs(expected - c[i * ldc + j]));
          }
          CHECK(c[i * ldc + n] == before[i * ldc + n]);  // the padding is not written
        }
        MESSAGE("largest difference " << worst);
        CHECK(worst < 1e-4);
      }
    }
  }
}

TEST_CASE("blas::count_products counts the weight products apart from the others") {
  const int wide = blas::kWeightProductWidth;
  std::vector<float> a(static_cast<std::size_t>(4 * wide), 0.5f),
      b(static_cast<std::size_t>(wide * wide), 0.25f), c(static_cast<std::size_t>(4 * wide));
  blas::gemm(4, wide, wide, a.data(), wide, b.data(), wide, c.data(), wide);  // not counted
  blas::count_products(true);
  CHECK(blas::product_counts().weight_products == 0);
  blas::gemm(4, wide, wide, a.data(), wide, b.data(), wide, c.data(), wide);      // a weight's
  blas::gemm(4, 64, wide, a.data(), wide, b.data(), wide, c.data(), wide);        // a head's
  blas::gemm(4, wide, 64, a.data(), wide, b.data(), wide, c.data(), wide, true);  // a head's
  blas::count_products(false);
  blas::gemm(4, wide, wide, a.data(), wide, b.data(), wide, c.data(), wide);  // not counted
  const blas::ProductCounts counts = blas::product_counts();
  CHECK(counts.weight_products == 1);
  CHECK(counts.weight_flops == 2.0 * 4 * wide * wide);
  CHECK(counts.other_products == 2);
  CHECK(counts.other_flops == 2.0 * 4 * 64 * wide * 2);
  CHECK(counts.weight_seconds >= 0.0);
  CHECK(c[0] == doctest::Approx(0.5 * 0.25 * wide));
}

}  // namespace attnviz
