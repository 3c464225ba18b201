#include "core/models/packed_gemm.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace attnviz::blas {

namespace {

constexpr int kWidth = PackedMatrix::kPanelWidth;

#if defined(__x86_64__)
// Rows of A per block: kRows × 2 accumulators, 2 registers of W's row, 1 of A's element: 27
// of AVX-512's 32 registers.
constexpr int kRows = 12;
// Rows of W per pass: a panel's block is kDepth × kPanelWidth floats (96 KB), which stays in
// the second-level cache while every block of A's rows runs over it; a k of at most kDepth (a
// layer's projections, the logits at d_model 768) is one pass, each element of C stored once.
// (Measured at 128 tokens, bert-base's shapes: 768 rows beat 256 by some 10 %.)
constexpr int kDepth = 768;
// W's rows read this many rows ahead of the kernel (the first block of rows of A meets each
// panel's block first: 32 beat 8). The blocks of rows after the first fetch the next block of
// W into the second-level cache, spread over them: in a forward pass each weight matrix comes
// from memory once, and the first block would otherwise wait for it (on this machine one core
// reads some 12 GB/s; the first block alone would ask for 30). The forward's weight products
// went from about 141 to 151 GFLOP/s at bert-base's shapes.
constexpr int kPrefetchRows = 32;

bool asked_for_library() {
  const char* blas = std::getenv("ATTNVIZ_BLAS");
  const char* packed = std::getenv("ATTNVIZ_PACKED");
  return (blas && std::string_view(blas) == "eigen") || (packed && std::string_view(packed) == "0");
}

// C's block (rows × up to kWidth columns) = (or +=) A's rows × the panel's depth rows:
//   for each row p of the panel's block: w = W[p, 0..32) (two registers); for each row r of A:
//   C[r] += A[r, p] · w.
template <int rows>
__attribute__((target("avx512f"))) void kernel_rows(const float* a, std::ptrdiff_t lda,
                                                    const float* panel, int depth, float* c,
                                                    std::ptrdiff_t ldc, int columns,
                                                    bool accumulate, const float* upcoming,
                                                    int fetch_every, const float* bias) {
  // The last panel may be narrower than kWidth: its columns past n are neither read nor stored.
  const __mmask16 first = columns >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << columns) - 1);
  const __mmask16 second = columns >= 32   ? __mmask16(0xFFFF)
                           : columns <= 16 ? __mmask16(0)
                                           : __mmask16((1u << (columns - 16)) - 1);
  // The sums start at the bias (the first depth block of a product with one), else at 0: the
  // bias is added here rather than by another pass over C.
  const __m512 start0 = bias ? _mm512_maskz_loadu_ps(first, bias) : _mm512_setzero_ps();
  const __m512 start1 = bias ? _mm512_maskz_loadu_ps(second, bias + 16) : _mm512_setzero_ps();
  __m512 sum[rows][2];
#pragma GCC unroll 12
  for (int r = 0; r < rows; ++r) {
    sum[r][0] = start0;
    sum[r][1] = start1;
  }
  int countdown = 0;
  for (int p = 0; p < depth; ++p) {
    const float* ahead = panel + static_cast<std::ptrdiff_t>(p + kPrefetchRows) * kWidth;
    _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(ahead + 16), _MM_HINT_T0);
    if (upcoming && --countdown < 0) {  // a row of the next block of W, into the L2 cache
      countdown = fetch_every - 1;
      _mm_prefetch(reinterpret_cast<const char*>(upcoming), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(upcoming + 16), _MM_HINT_T1);
      upcoming += kWidth;
    }
    const __m512 w0 = _mm512_loadu_ps(panel + static_cast<std::ptrdiff_t>(p) * kWidth);
    const __m512 w1 = _mm512_loadu_ps(panel + static_cast<std::ptrdiff_t>(p) * kWidth + 16);
#pragma GCC unroll 12
    for (int r = 0; r < rows; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + p]);
      sum[r][0] = _mm512_fmadd_ps(x, w0, sum[r][0]);
      sum[r][1] = _mm512_fmadd_ps(x, w1, sum[r][1]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < rows; ++r) {
    float* out = c + r * ldc;
    if (accumulate) {
      sum[r][0] = _mm512_add_ps(sum[r][0], _mm512_maskz_loadu_ps(first, out));
      sum[r][1] = _mm512_add_ps(sum[r][1], _mm512_maskz_loadu_ps(second, out + 16));
    }
    _mm512_mask_storeu_ps(out, first, sum[r][0]);
    _mm512_mask_storeu_ps(out + 16, second, sum[r][1]);
  }
}

using Kernel = void (*)(const float*, std::ptrdiff_t, const float*, int, float*, std::ptrdiff_t,
                        int, bool, const float*, int, const float*);
template <int... rows>
constexpr auto make_kernels(std::integer_sequence<int, rows...>) {
  return std::array<Kernel, sizeof...(rows)>{&kernel_rows<rows + 1>...};
}
// kernels[r - 1]: the kernel for a block of r rows (the last block of A may have fewer).
constexpr auto kKernels = make_kernels(std::make_integer_sequence<int, kRows>{});

// C (m, n) = A (m, k) · B with the AVX-512 kernel.
void gemm_packed_avx512(int m, int k, int n, const float* a, std::ptrdiff_t lda,
                        const PackedMatrix& b, int first_panel, int end_panel, float* c,
                        std::ptrdiff_t ldc, const float* bias) {
  // Panel by panel: its column block of C (m × 32) stays in cache while the depth blocks add up.
  for (int j = first_panel; j < end_panel; ++j) {
    const int columns = std::min(kWidth, n - j * kWidth);
    for (int depth_start = 0; depth_start < k; depth_start += kDepth) {
      const int depth = std::min(kDepth, k - depth_start);
      const bool accumulate = depth_start > 0;
      const float* panel = b.panel(j) + static_cast<std::ptrdiff_t>(depth_start) * kWidth;
      // The block after this one (this panel's next depth block, or the next panel's first),
      // fetched while this one is multiplied: W comes from memory once per product, and the
      // first block of A's rows would otherwise wait for it. (The last fetches may reach a few
      // rows past it: a prefetch of any address is harmless.)
      const float* upcoming = depth_start + kDepth < k ? panel + kDepth * kWidth
                              : j + 1 < b.panels()     ? b.panel(j + 1)
                                                       : nullptr;
      // Spread over the blocks of A's rows after the first: each fetches its share of the
      // next block's rows, one row every `blocks_after` rows of its own (W's rate from memory
      // then stays under what one core reads).
      const int blocks = (m + kRows - 1) / kRows;
      const int blocks_after = std::max(1, blocks - 1);
      const int share = (depth + blocks_after - 1) / blocks_after;  // rows of the next block
      for (int i = 0, block = 0; i < m; i += kRows, ++block) {
        const int rows = std::min(kRows, m - i);
        const int part = blocks > 1 ? block - 1 : 0;  // the first block fetches nothing
        const bool fetches = upcoming && (blocks == 1 || block > 0);
        kKernels[static_cast<std::size_t>(rows - 1)](
            a + i * lda + depth_start, lda, panel, depth, c + i * ldc + j * kWidth, ldc, columns,
            accumulate,
            fetches ? upcoming + static_cast<std::ptrdiff_t>(part) * share * kWidth : nullptr,
            std::max(1, depth / std::max(1, share)),
            bias && !accumulate ? bias + static_cast<std::ptrdiff_t>(j) * kWidth : nullptr);
      }
    }
  }
}

// The AVX2 + FMA kernel (a CPU without AVX-512): the same packed panels, each taken as two halves
// of 16 columns. C's block (rows × up to 16 columns) = (or +=) A's rows × the half panel's depth
// rows, in 2 registers of 8 floats a row: kRowsAvx2 × 2 accumulators, 2 of W's row, 1 of A's
// element: 15 of AVX2's 16 registers.
constexpr int kRowsAvx2 = 6;
constexpr int kHalf = 16;
// W's rows fetched this far ahead (32 KB; past a panel's last rows, into the next panel). On the
// 2-core AMD EPYC guest this kernel was written on, where one core reads memory at about 10 GB/s
// and a keystroke's weights (18 MB for marian-web-es) do not stay in its cache, 256 rows took a
// product of 11 rows by marian-web-es's 8,003 open rows of logits from 1.4 ms to 0.9 ms against
// 32 (128 to 512 alike).
constexpr int kPrefetchRowsAvx2 = 256;

template <int rows>
__attribute__((target("avx2,fma"))) void kernel_rows_avx2(const float* a, std::ptrdiff_t lda,
                                                          const float* half_panel, int depth,
                                                          float* c, std::ptrdiff_t ldc, int columns,
                                                          bool accumulate, const float* bias) {
  // The half panel may be narrower than 16 (the last panel's): its columns past n are neither
  // read from C or the bias nor stored (the panel itself is zero-padded there).
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i first = _mm256_cmpgt_epi32(_mm256_set1_epi32(columns), lane);
  const __m256i second = _mm256_cmpgt_epi32(_mm256_set1_epi32(columns - 8), lane);
  const bool whole = columns == kHalf;
  const __m256 start0 = bias ? _mm256_maskload_ps(bias, first) : _mm256_setzero_ps();
  const __m256 start1 = bias ? _mm256_maskload_ps(bias + 8, second) : _mm256_setzero_ps();
  __m256 sum[rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) {
    sum[r][0] = start0;
    sum[r][1] = start1;
  }
  for (int p = 0; p < depth; ++p) {
    const float* w = half_panel + static_cast<std::ptrdiff_t>(p) * kWidth;
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchRowsAvx2 * kWidth), _MM_HINT_T0);
    const __m256 w0 = _mm256_loadu_ps(w);
    const __m256 w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + p);
      sum[r][0] = _mm256_fmadd_ps(x, w0, sum[r][0]);
      sum[r][1] = _mm256_fmadd_ps(x, w1, sum[r][1]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) {
    float* out = c + r * ldc;
    if (whole) {
      if (accumulate) {
        sum[r][0] = _mm256_add_ps(sum[r][0], _mm256_loadu_ps(out));
        sum[r][1] = _mm256_add_ps(sum[r][1], _mm256_loadu_ps(out + 8));
      }
      _mm256_storeu_ps(out, sum[r][0]);
      _mm256_storeu_ps(out + 8, sum[r][1]);
      continue;
    }
    if (accumulate) {
      sum[r][0] = _mm256_add_ps(sum[r][0], _mm256_maskload_ps(out, first));
      sum[r][1] = _mm256_add_ps(sum[r][1], _mm256_maskload_ps(out + 8, second));
    }
    _mm256_maskstore_ps(out, first, sum[r][0]);
    _mm256_maskstore_ps(out + 8, second, sum[r][1]);
  }
}

using KernelAvx2 = void (*)(const float*, std::ptrdiff_t, const float*, int, float*, std::ptrdiff_t,
                            int, bool, const float*);
template <int... rows>
constexpr auto make_kernels_avx2(std::integer_sequence<int, rows...>) {
  return std::array<KernelAvx2, sizeof...(rows)>{&kernel_rows_avx2<rows + 1>...};
}
constexpr auto kKernelsAvx2 = make_kernels_avx2(std::make_integer_sequence<int, kRowsAvx2>{});

// C (m, n) = A (m, k) · B with the AVX2 kernel: panel by panel, half by half, depth block by
// depth block, each block of A's rows over the half panel's block (48 KB, in the L2 cache).
void gemm_packed_avx2(int m, int k, int n, const float* a, std::ptrdiff_t lda,
                      const PackedMatrix& b, int first_panel, int end_panel, float* c,
                      std::ptrdiff_t ldc, const float* bias) {
  for (int j = first_panel; j < end_panel; ++j) {
    const int columns = std::min(kWidth, n - j * kWidth);
    for (int half = 0; half * kHalf < columns; ++half) {
      const int half_columns = std::min(kHalf, columns - half * kHalf);
      const std::ptrdiff_t column = static_cast<std::ptrdiff_t>(j) * kWidth + half * kHalf;
      for (int depth_start = 0; depth_start < k; depth_start += kDepth) {
        const int depth = std::min(kDepth, k - depth_start);
        const bool accumulate = depth_start > 0;
        const float* half_panel =
            b.panel(j) + static_cast<std::ptrdiff_t>(depth_start) * kWidth + half * kHalf;
        for (int i = 0; i < m; i += kRowsAvx2) {
          const int rows = std::min(kRowsAvx2, m - i);
          kKernelsAvx2[static_cast<std::size_t>(rows - 1)](
              a + i * lda + depth_start, lda, half_panel, depth, c + i * ldc + column, ldc,
              half_columns, accumulate, bias && !accumulate ? bias + column : nullptr);
        }
      }
    }
  }
}

#endif

}  // namespace

void PackedMatrix::pack(int k, int n, const float* b, std::ptrdiff_t ldb, bool transposed) {
  k_ = k;
  n_ = n;
  data_.assign(static_cast<std::size_t>(panels()) * static_cast<std::size_t>(k) * kWidth, 0.0f);
  for (int j = 0; j < panels(); ++j) {
    float* out = data_.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(k) * kWidth;
    const int columns = std::min(kWidth, n - j * kWidth);
    for (int p = 0; p < k; ++p)
      for (int col = 0; col < columns; ++col) {
        const std::ptrdiff_t column = static_cast<std::ptrdiff_t>(j) * kWidth + col;
        out[static_cast<std::ptrdiff_t>(p) * kWidth + col] =
            transposed ? b[column * ldb + p] : b[static_cast<std::ptrdiff_t>(p) * ldb + column];
      }
  }
}

bool kernel_runs(PackedKernel kernel) {
#if defined(__x86_64__)
  switch (kernel) {
    case PackedKernel::avx512:
      return __builtin_cpu_supports("avx512f");
    case PackedKernel::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case PackedKernel::none:
      return false;
  }
#else
  (void)kernel;
#endif
  return false;
}

PackedKernel packed_kernel() {
#if defined(__x86_64__)
  static const PackedKernel chosen = [] {
    if (asked_for_library()) return PackedKernel::none;
    const char* packed = std::getenv("ATTNVIZ_PACKED");
    if (packed && std::string_view(packed) == "avx2")  // the AVX2 kernel where AVX-512 is too
      return kernel_runs(PackedKernel::avx2) ? PackedKernel::avx2 : PackedKernel::none;
    for (const PackedKernel kernel : {PackedKernel::avx512, PackedKernel::avx2})
      if (kernel_runs(kernel)) return kernel;
    return PackedKernel::none;
  }();
  return chosen;
#else
  return PackedKernel::none;  // the kernels are x86-64's (the browser build multiplies with Eigen)
#endif
}

bool packed_available() {
  return packed_kernel() != PackedKernel::none;
}

void gemm_packed(int m, const float* a, std::ptrdiff_t lda, const PackedMatrix& b, float* c,
                 std::ptrdiff_t ldc, const float* bias) {
  gemm_packed(packed_kernel(), m, a, lda, b, c, ldc, bias);
}

void gemm_packed(PackedKernel kernel, int m, const float* a, std::ptrdiff_t lda,
                 const PackedMatrix& b, float* c, std::ptrdiff_t ldc, const float* bias) {
  gemm_packed_panels(kernel, m, a, lda, b, 0, b.panels(), c, ldc, bias);
}

void gemm_packed_panels(PackedKernel kernel, int m, const float* a, std::ptrdiff_t lda,
                        const PackedMatrix& b, int first_panel, int end_panel, float* c,
                        std::ptrdiff_t ldc, const float* bias) {
#if defined(__x86_64__)
  const int k = b.k(), n = b.n();
  first_panel = std::max(0, first_panel);
  end_panel = std::min(end_panel, b.panels());
  if (m <= 0 || n <= 0 || first_panel >= end_panel) return;
  if (k == 0) {
    const int end_column = std::min(n, end_panel * kWidth);
    for (int i = 0; i < m; ++i)
      for (int j = first_panel * kWidth; j < end_column; ++j)
        c[i * ldc + j] = bias ? bias[j] : 0.0f;
    return;
  }
  switch (kernel) {
    case PackedKernel::avx512:
      gemm_packed_avx512(m, k, n, a, lda, b, first_panel, end_panel, c, ldc, bias);
      return;
    case PackedKernel::avx2:
      gemm_packed_avx2(m, k, n, a, lda, b, first_panel, end_panel, c, ldc, bias);
      return;
    case PackedKernel::none:  // not to be asked for (kernel_runs)
      return;
  }
#else
  (void)kernel, (void)m, (void)a, (void)lda, (void)b, (void)first_panel, (void)end_panel, (void)c,
      (void)ldc, (void)bias;
#endif
}

void gemm_reference(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b,
                    std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, bool transposed) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int p = 0; p < k; ++p)
        sum += double{a[i * lda + p]} * (transposed ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = static_cast<float>(sum);
    }
}

}  // namespace attnviz::blas
