#include "core/models/blas.hpp"

#include "core/base/types.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string_view>

namespace attnviz::blas {
namespace {

// cblas_sgemm's signature and constants, as OpenBLAS's cblas.h declares them (no header or
// link dependency: the library is loaded at run time).
using SgemmFunction = void (*)(int order, int transpose_a, int transpose_b, int m, int n, int k,
                               float alpha, const float* a, int lda, const float* b, int ldb,
                               float beta, float* c, int ldc);
using SgemvFunction = void (*)(int order, int transpose, int m, int n, float alpha, const float* a,
                               int lda, const float* x, int increment_x, float beta, float* y,
                               int increment_y);
using SetThreadsFunction = void (*)(int);
using ConfigFunction = char* (*)();
using CoreNameFunction = char* (*)();
constexpr int kRowMajor = 101, kNoTranspose = 111, kTranspose = 112;

struct Library {
  SgemmFunction sgemm = nullptr;
  SgemvFunction sgemv = nullptr;  // for one row: 3 to 7 times sgemm's speed there
  SetThreadsFunction set_threads = nullptr;
  std::string name = "Eigen";
};

std::string_view kernels_for_this_cpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return {};
}

Library load() {
  Library library;
  const char* wanted = std::getenv("ATTNVIZ_BLAS");
  if (wanted != nullptr && std::string_view(wanted) == "eigen") {
    library.name = "Eigen (ATTNVIZ_BLAS=eigen)";
    return library;
  }
#ifdef __EMSCRIPTEN__
  // WebAssembly loads no shared library (the browser build): Eigen's products.
  library.name = "Eigen (WebAssembly)";
  return library;
#endif
  // The kernels are chosen from the environment when the library is loaded.
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    const std::string_view kernels = kernels_for_this_cpu();
    if (!kernels.empty()) setenv("OPENBLAS_CORETYPE", std::string(kernels).c_str(), 0);
  }
  void* handle = nullptr;
  for (const char* file : {"libopenblas.so.0", "libopenblas.so"}) {
    handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
  }
  if (handle == nullptr) {
    library.name = "Eigen (OpenBLAS is not installed: libopenblas0)";
    return library;
  }
  auto sgemm = reinterpret_cast<SgemmFunction>(dlsym(handle, "cblas_sgemm"));
  auto set_threads =
      reinterpret_cast<SetThreadsFunction>(dlsym(handle, "openblas_set_num_threads"));
  auto config = reinterpret_cast<ConfigFunction>(dlsym(handle, "openblas_get_config"));
  auto core_name = reinterpret_cast<CoreNameFunction>(dlsym(handle, "openblas_get_corename"));
  if (sgemm == nullptr) {
    library.name = "Eigen (the OpenBLAS found has no cblas_sgemm)";
    return library;
  }
  if (set_threads != nullptr) set_threads(1);  // one thread: the app's other core draws
  // A product whose answer is known: [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50].
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {0, 0, 0, 0};
  sgemm(kRowMajor, kNoTranspose, kNoTranspose, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  if (c[0] != 19 || c[1] != 22 || c[2] != 43 || c[3] != 50) {
    library.name = "Eigen (OpenBLAS failed its check)";
    return library;
  }
  library.sgemm = sgemm;
  library.sgemv = reinterpret_cast<SgemvFunction>(dlsym(handle, "cblas_sgemv"));
  library.set_threads = set_threads;
  std::string version = config != nullptr ? config() : "OpenBLAS";
  if (const std::size_t space = version.find(' ', version.find(' ') + 1);
      space != std::string::npos)
    version.resize(space);  // "OpenBLAS 0.3.21"
  library.name = version + " (" + (core_name != nullptr ? core_name() : "its own") + " kernels)";
  return library;
}

const Library& library() {
  static const Library loaded = load();
  return loaded;
}

bool counting = false;
ProductCounts counts;

void multiply(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b,
              std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, bool transpose_b);

}  // namespace

void count_products(bool on) {
  counting = on;
  if (on) counts = ProductCounts{};
}

ProductCounts product_counts() {
  return counts;
}

namespace {

// Runs `product` (an m × n × k product), counted when counting is on.
template <typename Product>
void counted(int m, int n, int k, const Product& product) {
  if (!counting) {
    product();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  product();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double flops = 2.0 * m * n * k;
  if (n >= kWeightProductWidth && k >= kWeightProductWidth) {
    ++counts.weight_products;
    counts.weight_flops += flops;
    counts.weight_seconds += seconds;
  } else {
    ++counts.other_products;
    counts.other_flops += flops;
    counts.other_seconds += seconds;
  }
}

}  // namespace

void gemm(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b,
          std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, bool transpose_b) {
  counted(m, n, k, [&] { multiply(m, n, k, a, lda, b, ldb, c, ldc, transpose_b); });
}

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
          std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float beta, float* c,
          std::ptrdiff_t ldc) {
  if (m == 0 || n == 0) return;
  counted(m, n, k, [&] {
    const Library& blas = library();
    if (blas.sgemm != nullptr && k > 0) {
      blas.sgemm(kRowMajor, transpose_a ? kTranspose : kNoTranspose,
                 transpose_b ? kTranspose : kNoTranspose, m, n, k, alpha, a, static_cast<int>(lda),
                 b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
      return;
    }
    using Map = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
    Eigen::Map<Matrix, 0, Eigen::OuterStride<>> product(c, m, n, Eigen::OuterStride<>(ldc));
    if (beta == 0.0f)
      product.setZero();
    else if (beta != 1.0f)
      product *= beta;
    if (k == 0) return;
    const auto add = [&](const auto& left, const auto& right) {
      product.noalias() += alpha * (left * right);
    };
    const Map a_map = transpose_a ? Map(a, k, m, Eigen::OuterStride<>(lda))
                                  : Map(a, m, k, Eigen::OuterStride<>(lda));
    const Map b_map = transpose_b ? Map(b, n, k, Eigen::OuterStride<>(ldb))
                                  : Map(b, k, n, Eigen::OuterStride<>(ldb));
    if (transpose_a && transpose_b)
      add(a_map.transpose(), b_map.transpose());
    else if (transpose_a)
      add(a_map.transpose(), b_map);
    else if (transpose_b)
      add(a_map, b_map.transpose());
    else
      add(a_map, b_map);
  });
}

namespace {
thread_local ProductHelpers* split_helpers = nullptr;  // SplitProducts' innermost
}  // namespace

SplitProducts::SplitProducts(ProductHelpers* helpers) : outer_(split_helpers) {
  split_helpers = helpers;
}

SplitProducts::~SplitProducts() {
  split_helpers = outer_;
}

void gemm(int m, const float* a, std::ptrdiff_t lda, const PackedMatrix& b, float* c,
          std::ptrdiff_t ldc, const float* bias) {
  counted(m, b.n(), b.k(), [&] {
    ProductHelpers* helpers = split_helpers;
    const int panels = b.panels();
    const double work = static_cast<double>(m) * b.n() * b.k();
    if (helpers == nullptr || helpers->threads() < 2 || panels < 2 || work < kSplitWork) {
      gemm_packed(m, a, lda, b, c, ldc, bias);
      return;
    }
    // Contiguous runs of panels, one a thread: each reads its own part of B once.
    struct Split {
      int m, parts, panels;
      const float* a;
      std::ptrdiff_t lda;
      const PackedMatrix* b;
      float* c;
      std::ptrdiff_t ldc;
      const float* bias;
    } split{m, std::min(helpers->threads(), panels), panels, a, lda, &b, c, ldc, bias};
    helpers->run(split.parts, &split, [](void* context, int part) {
      const Split& s = *static_cast<const Split*>(context);
      gemm_packed_panels(packed_kernel(), s.m, s.a, s.lda, *s.b, s.panels * part / s.parts,
                         s.panels * (part + 1) / s.parts, s.c, s.ldc, s.bias);
    });
  });
}

namespace {

// Multiply-adds up to which Eigen multiplies an untransposed product.
constexpr double kSmallProduct = 64.0 * 64 * 64;

void multiply(int m, int n, int k, const float* a, std::ptrdiff_t lda, const float* b,
              std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, bool transpose_b) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  const Library& blas = library();
  if (m == 1 && blas.sgemv != nullptr) {
    // One row (a token appended, the last position's logits): c = Bᵀ a, or B a when B is stored
    // (n, k). OpenBLAS's sgemm with m = 1 reads B far slower than its sgemv.
    if (transpose_b)
      blas.sgemv(kRowMajor, kNoTranspose, n, k, 1.0f, b, static_cast<int>(ldb), a, 1, 0.0f, c, 1);
    else
      blas.sgemv(kRowMajor, kTranspose, k, n, 1.0f, b, static_cast<int>(ldb), a, 1, 0.0f, c, 1);
    return;
  }
  // A small product that is not transposed (a narrow head's weighted sum of the values, d_head
  // 8 in stories260K) stays in Eigen: OpenBLAS 0.3.21's SkylakeX kernels allocate on the heap
  // for such shapes (40 allocations a forward pass of stories260K), Eigen does not, and it is as
  // fast there.
  const bool small = !transpose_b && static_cast<double>(m) * n * k <= kSmallProduct;
  if (blas.sgemm != nullptr && !small) {
    blas.sgemm(kRowMajor, kNoTranspose, transpose_b ? kTranspose : kNoTranspose, m, n, k, 1.0f, a,
               static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
    return;
  }
  using Map = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
  Eigen::Map<Matrix, 0, Eigen::OuterStride<>> product(c, m, n, Eigen::OuterStride<>(ldc));
  const Map left(a, m, k, Eigen::OuterStride<>(lda));
  if (transpose_b)
    product.noalias() = left * Map(b, n, k, Eigen::OuterStride<>(ldb)).transpose();
  else
    product.noalias() = left * Map(b, k, n, Eigen::OuterStride<>(ldb));
}

}  // namespace

std::string backend() {
  return library().name;
}

namespace {
int thread_count = 1;
}

void set_threads(int count) {
  thread_count = std::max(count, 1);
  if (library().set_threads != nullptr) library().set_threads(thread_count);
}

int threads() {
  return thread_count;
}

}  // namespace attnviz::blas
