// The matrix products of the models' forward pass: OpenBLAS's sgemm when Debian's OpenBLAS is
// installed (libopenblas0, loaded at the first product, not linked), Eigen's product otherwise.
//
// Why load it by hand: OpenBLAS 0.3.21 picks its kernels from the CPU when it is loaded, and
// can pick badly: on an Intel Xeon of the machine kind issue 24 was written on, its default ran
// a 1024² product at 15 GFLOP/s against 112 with its Cooperlake kernels (on this project's AMD
// Zen 5 it picks Cooperlake itself; its AVX2 kernels, Haswell or Zen, run at half that: see
// docs/performance.md). Loading it ourselves lets the engine name the kernels first:
// OPENBLAS_CORETYPE when the environment sets it (a shell that sets Haswell gets Haswell),
// otherwise SkylakeX on a CPU with AVX-512 (F, BW, DQ, VL), Haswell on one with AVX2 and FMA,
// and OpenBLAS's own choice elsewhere. A 2 × 2 product checks the library before it is used.
// ATTNVIZ_BLAS=eigen (or an OpenBLAS that is absent or fails the check) keeps Eigen.
#pragma once

#include "core/models/packed_gemm.hpp"

#include <cstddef>
#include <string>

namespace attnviz::blas {

// C (m, n) = A (m, k) · B (k, n)   or, with transpose_b, A · Bᵀ for B stored (n, k);
// row-major, each with its row stride (leading dimension). C's rows may not alias A or B.
void gemm(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b,
          std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, bool transpose_b = false);
// C (m, n) = α · op(A) · op(B) + β · C, as BLAS's sgemm: op(A) (m, k) is A stored (m, k), or Aᵀ
// for A stored (k, m) with transpose_a; op(B) (k, n) likewise. Training's products (its backward
// pass accumulates dW += Xᵀ · dY). β 0 ignores what C held.
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
          std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float beta, float* c,
          std::ptrdiff_t ldc);
// C (m, b.n()) = A (m, b.k()) · B (+ bias, b.n() values, on every row) with B packed once
// (packed_gemm.hpp; needs packed_available()).
void gemm(int m, const float* a, std::ptrdiff_t lda, const PackedMatrix& b, float* c,
          std::ptrdiff_t ldc, const float* bias = nullptr);

// Threads lent to the packed products. A thread that has helpers to spare for its products (the
// app's UI thread computing an edit's result while the renderer waits for it) puts a
// SplitProducts in scope: while it lives, that thread's packed products with enough work
// (kSplitWork multiply-adds, two panels or more) are split by panels over the helpers, each
// taking a run of panels (gemm_packed_panels: the same floats bit for bit as unsplit). Other
// threads' products are not split. Scopes nest; the innermost is used.
class ProductHelpers {
 public:
  virtual ~ProductHelpers() = default;
  // The calling thread and its helpers.
  virtual int threads() const = 0;
  // task(context, i) for every i in [0, count), spread over the calling thread and the helpers;
  // returns when every call has returned.
  virtual void run(int count, void* context, void (*task)(void* context, int i)) = 0;
};
constexpr double kSplitWork = 32.0 * 1024;  // about 10 µs of one core's products
class SplitProducts {
 public:
  explicit SplitProducts(ProductHelpers* helpers);  // nullptr: this thread's products unsplit
  ~SplitProducts();
  SplitProducts(const SplitProducts&) = delete;
  SplitProducts& operator=(const SplitProducts&) = delete;

 private:
  ProductHelpers* outer_;
};

// What multiplies: "OpenBLAS 0.3.21 (SkylakeX kernels)" or "Eigen (...)".
std::string backend();

// The threads OpenBLAS may use for one product (1 by default: the app's renderer needs the other
// core). No effect on Eigen.
void set_threads(int count);
int threads();

// Counting the weight products, for `attnviz-cli model bench --products`: while counting is on,
// every product whose inner and outer widths are both at least kWeightProductWidth (a layer's
// projections, its MLP, the logits; not a head's scores or weighted sum, 64 wide in GPT-2) adds
// its 2·m·n·k floating-point operations and the time it took; the others add theirs to
// `other_*`. Off by default (it reads the clock twice per product). Not thread-safe: count only
// while one thread multiplies.
constexpr int kWeightProductWidth = 256;
struct ProductCounts {
  long long weight_products = 0, other_products = 0;
  double weight_flops = 0.0, weight_seconds = 0.0;
  double other_flops = 0.0, other_seconds = 0.0;
};
void count_products(bool on);  // turning it on starts the counts from zero
ProductCounts product_counts();

}  // namespace attnviz::blas
