// The weight products of a forward pass with the weights packed once (issue 38's speed): y = x · W
// for a model's fixed W, whose columns are laid out for the engine's kernel (AVX-512's, or
// AVX2's) the first time the matrix is used, instead of OpenBLAS packing W again in every product
// (at 128 tokens by d_model 768, packing W is a sizeable part of the product's time; for a
// keystroke's dozen rows at d_model 192, most of it).
//
//   pack      W (k, n) row-major, or Wᵀ stored (n, k): panels of kPanelWidth columns, each panel
//             k rows of kPanelWidth floats one after the other (the last panel zero-padded).
//   multiply  C (m, n) = A (m, k) · W: for each panel, each block of kDepth rows of it (in the
//             second-level cache), each block of kRows rows of A: a kRows × kPanelWidth block of
//             C in 24 registers, A's elements broadcast, the panel's rows loaded and fetched a
//             few rows ahead (kernel_rows in packed_gemm.cpp). With AVX2, each half of a panel
//             (16 columns) by blocks of 6 rows of A, in 12 registers (kernel_rows_avx2).
//
// A plain reference of the same product is gemm_reference(), which the tests check the kernel
// against (every edge: m, n not multiples of the blocks, k not of the depth).
#pragma once

#include <cstddef>
#include <vector>

namespace attnviz::blas {

class PackedMatrix {
 public:
  static constexpr int kPanelWidth = 32;  // columns of a panel: two AVX-512 registers

  // Packs B (k, n), row-major with row stride ldb; with `transposed`, B is given as Bᵀ stored
  // (n, k) with row stride ldb (a model's unembedding, whose rows are the tokens).
  void pack(int k, int n, const float* b, std::ptrdiff_t ldb, bool transposed);
  int k() const { return k_; }
  int n() const { return n_; }
  bool empty() const { return data_.empty(); }
  int panels() const { return (n_ + kPanelWidth - 1) / kPanelWidth; }
  // Panel j's rows, kPanelWidth floats each.                             (k, kPanelWidth)
  const float* panel(int j) const {
    return data_.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(k_) * kPanelWidth;
  }
  std::size_t bytes() const { return data_.size() * sizeof(float); }

 private:
  int k_ = 0, n_ = 0;
  std::vector<float> data_;
};

// The kernels that multiply a packed matrix (x86-64): AVX-512F's (12 rows of A × a panel's 32
// columns in 24 registers), or AVX2 + FMA's where there is no AVX-512 (6 rows × a half panel's
// 16 columns in 12 registers). Both read the same packed panels.
enum class PackedKernel { none, avx2, avx512 };

// Whether this CPU runs `kernel`.
bool kernel_runs(PackedKernel kernel);
// The kernel the products use: the widest this CPU runs, none when ATTNVIZ_BLAS=eigen or
// ATTNVIZ_PACKED=0 asks for the library's products; ATTNVIZ_PACKED=avx2 asks for the AVX2 one.
PackedKernel packed_kernel();
// Whether this machine runs a packed kernel (packed_kernel() is not none).
bool packed_available();

// C (m, n) = A (m, k) · B (+ bias, n values, added to every row: the sums start from it), B
// packed (n = b.n(), k = b.k()); row-major with row strides. Requires packed_available().
void gemm_packed(int m, const float* a, std::ptrdiff_t lda, const PackedMatrix& b, float* c,
                 std::ptrdiff_t ldc, const float* bias = nullptr);
// The same with a given kernel, which must run here (kernel_runs): for the tests of each.
void gemm_packed(PackedKernel kernel, int m, const float* a, std::ptrdiff_t lda,
                 const PackedMatrix& b, float* c, std::ptrdiff_t ldc, const float* bias = nullptr);

// The columns of panels [first_panel, end_panel) of the same product alone (C's other columns
// untouched): each column is computed as the whole product computes it, so that a product split
// by panels over threads (blas.hpp's SplitProducts) gives the same floats bit for bit.
void gemm_packed_panels(PackedKernel kernel, int m, const float* a, std::ptrdiff_t lda,
                        const PackedMatrix& b, int first_panel, int end_panel, float* c,
                        std::ptrdiff_t ldc, const float* bias = nullptr);

// The same product written plainly (three loops, double sums), for the tests.
void gemm_reference(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b,
                    std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, bool transposed);

}  // namespace attnviz::blas
