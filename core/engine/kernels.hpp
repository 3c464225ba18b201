// The engine's inner loops: 16-lane loops, copies, and products without heap allocation.
// Internal to core/engine, like lanes.hpp: included by attention.cpp and attention_stages.cpp, in
// an unnamed namespace, so that each translation unit has its own and the compiler inlines them
// there as it did when the engine was one file.
#pragma once

#include "core/engine/attention.hpp"
#include "core/engine/lanes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>

namespace attnviz {
namespace {  // each including translation unit has its own copy (see above)

using lanes::kLanes;
using lanes::Lanes;
constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kFloatMax = std::numeric_limits<float>::max();

// -----------------------------------------------------------------------------
// [SECTION] Helpers: 16-lane loops, copies, products without heap allocation
// -----------------------------------------------------------------------------
// Rows of attention are short, so the per-row work is done 16 floats at a time
// (core/engine/lanes.hpp: one AVX-512 register, or an array the compiler vectorizes), with the last
// partial group masked.

// dst = src for (rows, cols) floats with the given row strides: 16 floats at a time, with the
// last partial group of each row masked (a memcpy call per short row costs more than the copy).
// The usual widths of a head (4 to 64) have their own loops: rows of 8 floats are copied a
// thousand at a time (every head's W_Q, W_K and W_V, or Q, K and V), and a loop that works the
// width out at run time spends more on that than on the copy.
template <Eigen::Index kCols>
void copy_rows_of_width(const float* src, Eigen::Index src_stride, float* dst,
                        Eigen::Index dst_stride, Eigen::Index rows) {
  constexpr Eigen::Index full = kCols / kLanes * kLanes, rest = kCols - full;
  for (Eigen::Index r = 0; r < rows; ++r, src += src_stride, dst += dst_stride) {
    for (Eigen::Index c = 0; c < full; c += kLanes) lanes::store(dst + c, lanes::load(src + c));
    if constexpr (rest > 0) lanes::copy_partial(src + full, dst + full, rest);
  }
}

void copy_rows(const float* src, Eigen::Index src_stride, float* dst, Eigen::Index dst_stride,
               Eigen::Index rows, Eigen::Index cols) {
  switch (cols) {
    case 4:
      return copy_rows_of_width<4>(src, src_stride, dst, dst_stride, rows);
    case 8:
      return copy_rows_of_width<8>(src, src_stride, dst, dst_stride, rows);
    case 16:
      return copy_rows_of_width<16>(src, src_stride, dst, dst_stride, rows);
    case 32:
      return copy_rows_of_width<32>(src, src_stride, dst, dst_stride, rows);
    case 64:
      return copy_rows_of_width<64>(src, src_stride, dst, dst_stride, rows);
    default:
      break;
  }
  const Eigen::Index full = cols / kLanes * kLanes, rest = cols - full;
  for (Eigen::Index r = 0; r < rows; ++r, src += src_stride, dst += dst_stride) {
    for (Eigen::Index c = 0; c < full; c += kLanes) lanes::store(dst + c, lanes::load(src + c));
    if (rest > 0) lanes::copy_partial(src + full, dst + full, rest);
  }
}

// dst = lhs · rhs, for a row-major dst. Eigen packs the operands of a product into blocks that
// live on the stack up to EIGEN_STACK_ALLOCATION_LIMIT bytes and on the heap beyond. A row-major
// product is computed transposed, so its first packed block is (kc, mc) with mc over dst's
// columns; when that block would not fit, the product is done a band of columns at a time,
// narrow enough that it does (each entry is still the same sum in the same order). Eigen's
// blocking keeps the second block, (kc, nc) over dst's rows, within 768 KiB.
template <typename Lhs, typename Rhs, typename Dst>
void multiply_into(const Eigen::MatrixBase<Lhs>& lhs, const Eigen::MatrixBase<Rhs>& rhs,
                   const Eigen::MatrixBase<Dst>& dst_expression) {
  Eigen::MatrixBase<Dst>& dst = const_cast<Eigen::MatrixBase<Dst>&>(dst_expression);
  static_assert(static_cast<bool>(Dst::IsRowMajor),
                "multiply_into() expects a row-major destination");
  constexpr Eigen::Index kStackFloats = EIGEN_STACK_ALLOCATION_LIMIT / sizeof(float);
  const Eigen::Index cols = rhs.cols();
  Eigen::Index kc = lhs.cols(), mc = cols, nc = lhs.rows();
  Eigen::internal::computeProductBlockingSizes<float, float, 1>(kc, mc, nc);
  if (kc * mc <= kStackFloats) {
    dst.noalias() = lhs * rhs;
    return;
  }
  const Eigen::Index band = std::max<Eigen::Index>(16, (kStackFloats / kc) / 16 * 16);
  for (Eigen::Index c = 0; c < cols; c += band) {
    const Eigen::Index width = std::min(band, cols - c);
    dst.middleCols(c, width).noalias() = lhs * rhs.middleCols(c, width);
  }
}

// dst = lhs · rhs for small products, all row-major: each row of dst is Σ_k lhs(i, k) · rhs.row(k),
// a block of kRows rows by kGroups groups of 16 columns at a time (the last partial group
// masked): the block's sums are independent chains that share each load of lhs and of rhs.
// Eigen's GEMM path packs both operands and dispatches to a kernel whose fixed cost per call is
// more than a classroom head's whole product, and its coefficient-based product (lazyProduct)
// goes scalar when a row of dst is shorter than a vector (d_v = 8). Each entry is the same sum
// over k, in order.
// With AVX-512's 32 vector registers, 8 rows x 3 groups of accumulators fit (5-8% faster at
// classroom sizes than 4 rows).
#if ATTNVIZ_LANES_AVX512
constexpr Eigen::Index kSmallRows = 8;
constexpr Eigen::Index kSmallGroups = 3;
#else
// With AVX2's 16 registers a group of 16 columns is two: 4 rows of one group keep 8 sums and
// the group's 2 registers of rhs; 4 rows of three groups (24 registers of sums) spilled, and took
// 12% longer at N=32, d_model=64 and 8 heads.
constexpr Eigen::Index kSmallRows = 4;
constexpr Eigen::Index kSmallGroups = 1;
#endif

// The weighted sum of a head whose d_v divides 16 goes over groups of keys (weighted_sum_block())
// when a vector is one 16-float register. With the portable Lanes (AVX2: two 8-float registers)
// it would make as many multiply-adds as the 8-float product over rows of V, plus the shuffles.
constexpr bool kGroupKeys = ATTNVIZ_LANES_AVX512 != 0;

// Where a product's groups of columns come from and go to. Columns::load(g, k) is group g of row
// k of rhs; Columns::target(g) is where group g goes, and Columns::store(target, i, sums) writes
// its row i; Columns::from(g) is the same columns from group g on; Columns::Vector holds a group
// and Columns::zero() is one of 0s.
// Here, the columns of row-major matrices: groups of 16 (kFull), or the one partial group at
// the end of a row, its first `rest` lanes: 9 to 15 of 16 lanes (kPartial), or up to 8 in
// 8 lanes (kUpToEight).
enum class GroupKind { kFull, kPartial, kUpToEight };

template <GroupKind kKind>
struct MatrixColumns {
  using Vector = std::conditional_t<kKind == GroupKind::kUpToEight, lanes::EightLanes, Lanes>;
  const float* rhs;
  Eigen::Index rhs_stride;
  float* dst;
  Eigen::Index dst_stride;
  Eigen::Index rest;  // kPartial, kUpToEight: the lanes of the one group

  static Vector zero() {
    if constexpr (kKind == GroupKind::kUpToEight)
      return lanes::zero_eight();
    else
      return lanes::zero();
  }
  Vector load(Eigen::Index g, Eigen::Index k) const {
    if constexpr (kKind == GroupKind::kUpToEight)
      return lanes::load_eight(rhs + k * rhs_stride, rest);
    else if constexpr (kKind == GroupKind::kPartial)
      return lanes::load_partial(rhs + k * rhs_stride, rest, 0.0f);
    else
      return lanes::load(rhs + k * rhs_stride + g * kLanes);
  }
  // Where group g goes, and row i of it.
  struct Target {
    float* row_0;
    Eigen::Index stride, rest;
  };
  Target target(Eigen::Index g) const { return {dst + g * kLanes, dst_stride, rest}; }
  static void store(const Target& target, Eigen::Index i, Vector sums) {
    if constexpr (kKind == GroupKind::kUpToEight)
      lanes::store_eight(target.row_0 + i * target.stride, sums, target.rest);
    else if constexpr (kKind == GroupKind::kPartial)
      lanes::store_partial(target.row_0 + i * target.stride, sums, target.rest);
    else
      lanes::store(target.row_0 + i * target.stride, sums);
  }
  MatrixColumns from(Eigen::Index g) const {
    return {rhs + g * kLanes, rhs_stride, dst + g * kLanes, dst_stride, rest};
  }
};

// Rows [first, first + kRows) of dst, kGroups groups of columns: the block's sums are
// independent chains that share each load of lhs (rows of lhs from `first`) and of rhs.
template <Eigen::Index kRows, Eigen::Index kGroups, typename Columns>
void multiply_block(const float* lhs, Eigen::Index lhs_stride, Eigen::Index depth,
                    const Columns& columns, Eigen::Index first) {
  // Every loop over rows and groups is unrolled, so that the sums stay in registers (GCC keeps
  // an array it indexes at run time in memory, and then stores it on every step of k).
  using Vector = typename Columns::Vector;
  Vector sums[kRows][kGroups];
#pragma GCC unroll 8
  for (Eigen::Index r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (Eigen::Index g = 0; g < kGroups; ++g) sums[r][g] = Columns::zero();
  for (Eigen::Index k = 0; k < depth; ++k) {
    Vector b[kGroups];
#pragma GCC unroll 4
    for (Eigen::Index g = 0; g < kGroups; ++g) b[g] = columns.load(g, k);
#pragma GCC unroll 8
    for (Eigen::Index r = 0; r < kRows; ++r)
#pragma GCC unroll 4
      for (Eigen::Index g = 0; g < kGroups; ++g)
        sums[r][g] = lanes::multiply_add(b[g], lhs + r * lhs_stride + k, sums[r][g]);
  }
  // Every destination is read before the first store: a store by intrinsic may alias anything,
  // so a field read after one is read again (and with 24 sums live, GCC then spills some).
  typename Columns::Target targets[kGroups];
#pragma GCC unroll 4
  for (Eigen::Index g = 0; g < kGroups; ++g) targets[g] = columns.target(g);
#pragma GCC unroll 8
  for (Eigen::Index r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (Eigen::Index g = 0; g < kGroups; ++g) Columns::store(targets[g], first + r, sums[r][g]);
}

// Every block of rows for one panel of kGroups groups of columns: the panel's rows of rhs
// (depth x 48 floats, 12 KiB for depth 64) are read from L2 cache for the first block and from
// L1 for the others. (Blocks of rows outside and panels inside read the whole of rhs from L2
// for every block: at N=32 and d_model=64, 4 times 48 KiB of projection weights.)
template <Eigen::Index kGroups, typename Columns>
void multiply_panel(const float* lhs, Eigen::Index lhs_stride, Eigen::Index rows,
                    Eigen::Index depth, const Columns& columns) {
  Eigen::Index i = 0;
  for (; i + kSmallRows <= rows; i += kSmallRows)
    multiply_block<kSmallRows, kGroups>(lhs + i * lhs_stride, lhs_stride, depth, columns, i);
  for (; i + 4 <= rows; i += 4)
    multiply_block<4, kGroups>(lhs + i * lhs_stride, lhs_stride, depth, columns, i);
  for (; i < rows; ++i)
    multiply_block<1, kGroups>(lhs + i * lhs_stride, lhs_stride, depth, columns, i);
}

// `count` groups of columns: panels of 3 groups, and 2 + 2 rather than 3 + 1 at the end (a panel
// of one group does an eighth of the work per load that one of three does).
template <typename Columns>
void multiply_groups(const float* lhs, Eigen::Index lhs_stride, Eigen::Index rows,
                     Eigen::Index depth, const Columns& columns, Eigen::Index count) {
  Eigen::Index g = 0;
  if constexpr (kSmallGroups == 3)
    for (; g + 3 <= count && count - g != 4; g += 3)
      multiply_panel<3>(lhs, lhs_stride, rows, depth, columns.from(g));
  if constexpr (kSmallGroups >= 2)
    for (; g + 2 <= count; g += 2) multiply_panel<2>(lhs, lhs_stride, rows, depth, columns.from(g));
  for (; g < count; ++g) multiply_panel<1>(lhs, lhs_stride, rows, depth, columns.from(g));
}

// Small products (at most kSmallProductFlops multiply-adds) by multiply_groups(), larger
// ones by multiply_into().
constexpr Eigen::Index kSmallProductFlops = 1 << 19;

// A step of compute() is split over threads from this much work on, in multiply-adds (about 15 µs
// of it on one core here): below it, a fork-join (about 1 µs, then one core reading what the
// other wrote) took what the split gained, or more, at N = 32 and d_model = 64. A softmax entry
// counts as kSoftmaxWork (its exp and its three passes).
constexpr Eigen::Index kParallelWork = 1 << 20;
constexpr Eigen::Index kSoftmaxWork = 16;

bool small_product(Eigen::Index rows, Eigen::Index depth, Eigen::Index cols) {
  return rows * depth * cols <= kSmallProductFlops;
}

template <typename Lhs, typename Rhs, typename Dst>
void multiply_by_size(const Eigen::MatrixBase<Lhs>& lhs, const Eigen::MatrixBase<Rhs>& rhs,
                      const Eigen::MatrixBase<Dst>& dst_expression) {
  static_assert(static_cast<bool>(Lhs::IsRowMajor) && static_cast<bool>(Rhs::IsRowMajor),
                "multiply_by_size() expects row-major operands");
  const Eigen::Index rows = lhs.rows(), depth = lhs.cols(), cols = rhs.cols();
  if (!small_product(rows, depth, cols)) {
    multiply_into(lhs, rhs, dst_expression);
    return;
  }
  Eigen::MatrixBase<Dst>& dst = const_cast<Eigen::MatrixBase<Dst>&>(dst_expression);
  const float* a = lhs.derived().data();
  const float* b = rhs.derived().data();
  float* c = dst.derived().data();
  const Eigen::Index a_stride = lhs.derived().outerStride(), b_stride = rhs.derived().outerStride();
  const Eigen::Index c_stride = dst.derived().outerStride();
  const Eigen::Index full = cols / kLanes * kLanes, rest = cols - full;
  multiply_groups(a, a_stride, rows, depth,
                  MatrixColumns<GroupKind::kFull>{b, b_stride, c, c_stride, 0}, full / kLanes);
  if (rest > 8)
    multiply_panel<1>(
        a, a_stride, rows, depth,
        MatrixColumns<GroupKind::kPartial>{b + full, b_stride, c + full, c_stride, rest});
  else if (rest > 0)
    multiply_panel<1>(
        a, a_stride, rows, depth,
        MatrixColumns<GroupKind::kUpToEight>{b + full, b_stride, c + full, c_stride, rest});
}

}  // namespace
}  // namespace attnviz
