// The models' matrix product (OpenBLAS when installed, else Eigen) against a plain loop, with row
// strides wider than the rows and B transposed, as the forward pass calls it.
#include "core/base/rng.hpp"
#include "core/models/blas.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace attnviz {

TEST_CASE("blas::gemm equals a plain loop, with strides and with B transposed") {
  MESSAGE("products by " << blas::backend());
  for (const bool transpose_b : {false, true}) {
    const int m = 37, n = 29, k = 53;
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

}  // namespace attnviz
