// Attention engine. Index:
//   [SECTION] Helpers: 16-lane loops, copies, products without heap allocation
//   [SECTION] Softmax
//   [SECTION] Compatibility functions
//   [SECTION] Stages (core/attention_stages.hpp)
//   [SECTION] Engine
//
// Speed (README, "Performance"): one product projects every head at once; a head's scores are
// made a band of queries at a time, so that they stay in cache from the product that makes them
// to the one that uses them; a block of rows goes from raw to scaled and masked scores in one
// pass and to weights in three, 16 floats at a time, while it is in L1 cache; and no product
// touches the heap, at any size. Products up to kSmallProductFlops multiply-adds (every product of
// a classroom recompute) skip Eigen's GEMM, whose fixed cost per call exceeds them, for a plain
// loop over rows of 16 floats (multiply_by_size()).
#include "core/attention.hpp"

#include "core/attention_stages.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attnviz {

namespace {
constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kFloatMax = std::numeric_limits<float>::max();

// -----------------------------------------------------------------------------
// [SECTION] Helpers: 16-lane loops, copies, products without heap allocation
// -----------------------------------------------------------------------------
// Rows of attention are short (a classroom sentence has 5 to 30 tokens), so the per-row work is
// done in plain loops over 16 floats at a time (one AVX-512 register, or two AVX ones), with the
// last partial group padded: Eigen's dynamic-size loops spend more on aligning each short row
// than on the row itself.
using Lanes = Eigen::Array<float, 16, 1>;
constexpr Eigen::Index kLanes = 16;

// The last n < 16 floats of a row, padded with `pad`; and back. With AVX-512 one masked load or
// store (a lane-by-lane copy would stall on store forwarding, once per short row).
Lanes load_partial(const float* x, Eigen::Index n, float pad) {
  Lanes lanes;
#if defined(__AVX512F__)
  const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
  _mm512_storeu_ps(lanes.data(), _mm512_mask_loadu_ps(_mm512_set1_ps(pad), mask, x));
#else
  lanes.setConstant(pad);
  for (Eigen::Index j = 0; j < n; ++j) lanes[j] = x[j];
#endif
  return lanes;
}

void store_partial(const Lanes& lanes, float* x, Eigen::Index n) {
#if defined(__AVX512F__)
  const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
  _mm512_mask_storeu_ps(x, mask, _mm512_loadu_ps(lanes.data()));
#else
  for (Eigen::Index j = 0; j < n; ++j) x[j] = lanes[j];
#endif
}

// The largest and the sum of 16 lanes, halves folded together in registers (Eigen's own
// reductions of a fixed-size array go through memory with GCC 12).
float max_of_lanes(const Lanes& lanes) {
  const Eigen::Array<float, 8, 1> eight = lanes.head<8>().max(lanes.tail<8>());
  const Eigen::Array<float, 4, 1> four = eight.head<4>().max(eight.tail<4>());
  return std::max(std::max(four[0], four[1]), std::max(four[2], four[3]));
}

float sum_of_lanes(const Lanes& lanes) {
  const Eigen::Array<float, 8, 1> eight = lanes.head<8>() + lanes.tail<8>();
  const Eigen::Array<float, 4, 1> four = eight.head<4>() + eight.tail<4>();
  return (four[0] + four[1]) + (four[2] + four[3]);
}

float clamp_to_finite(float value) {
  if (std::isnan(value)) return -kFloatMax;  // undefined (inf - inf): ranked lowest
  return std::clamp(value, -kFloatMax, kFloatMax);
}

// dst = src for (rows, cols) floats with the given row strides: 16 floats at a time, with the
// last partial group of each row masked (a memcpy call per short row costs more than the copy).
void copy_rows(const float* src, Eigen::Index src_stride, float* dst, Eigen::Index dst_stride,
               Eigen::Index rows, Eigen::Index cols) {
  const Eigen::Index full = cols / kLanes * kLanes, rest = cols - full;
  for (Eigen::Index r = 0; r < rows; ++r, src += src_stride, dst += dst_stride) {
    for (Eigen::Index c = 0; c < full; c += kLanes) Eigen::Map<Lanes>(dst + c) = Eigen::Map<const Lanes>(src + c);
    if (rest > 0) store_partial(load_partial(src + full, rest, 0.0f), dst + full, rest);
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
  static_assert(static_cast<bool>(Dst::IsRowMajor), "multiply_into() expects a row-major destination");
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
// classroom sizes than 4 rows); with 16 registers (AVX2, SSE) they would spill.
#if defined(__AVX512F__)
constexpr Eigen::Index kSmallRows = 8;
#else
constexpr Eigen::Index kSmallRows = 4;
#endif
constexpr Eigen::Index kSmallGroups = 3;

template <Eigen::Index kRows, Eigen::Index kGroups, bool kPartial>
void multiply_small_block(const float* lhs, Eigen::Index lhs_stride, const float* rhs,
                          Eigen::Index rhs_stride, float* dst, Eigen::Index dst_stride,
                          Eigen::Index depth, Eigen::Index rest) {
  Lanes sums[kRows][kGroups];
  for (Eigen::Index r = 0; r < kRows; ++r)
    for (Eigen::Index g = 0; g < kGroups; ++g) sums[r][g].setZero();
  for (Eigen::Index k = 0; k < depth; ++k) {
    Lanes b[kGroups];
    for (Eigen::Index g = 0; g < kGroups; ++g)
      b[g] = kPartial ? load_partial(rhs + k * rhs_stride, rest, 0.0f)
                      : Lanes(Eigen::Map<const Lanes>(rhs + k * rhs_stride + g * kLanes));
    for (Eigen::Index r = 0; r < kRows; ++r) {
      const float a = lhs[r * lhs_stride + k];
      for (Eigen::Index g = 0; g < kGroups; ++g) sums[r][g] += a * b[g];
    }
  }
  for (Eigen::Index r = 0; r < kRows; ++r)
    for (Eigen::Index g = 0; g < kGroups; ++g) {
      if (kPartial)
        store_partial(sums[r][g], dst + r * dst_stride, rest);
      else
        Eigen::Map<Lanes>(dst + r * dst_stride + g * kLanes) = sums[r][g];
    }
}

template <Eigen::Index kRows>
void multiply_small_rows(const float* lhs, Eigen::Index lhs_stride, const float* rhs,
                         Eigen::Index rhs_stride, float* dst, Eigen::Index dst_stride,
                         Eigen::Index depth, Eigen::Index cols) {
  const Eigen::Index full = cols / kLanes * kLanes, rest = cols - full;
  Eigen::Index c = 0;
  for (; c + kSmallGroups * kLanes <= full; c += kSmallGroups * kLanes)
    multiply_small_block<kRows, kSmallGroups, false>(lhs, lhs_stride, rhs + c, rhs_stride, dst + c,
                                                     dst_stride, depth, 0);
  for (; c < full; c += kLanes)
    multiply_small_block<kRows, 1, false>(lhs, lhs_stride, rhs + c, rhs_stride, dst + c, dst_stride,
                                          depth, 0);
  if (rest > 0)
    multiply_small_block<kRows, 1, true>(lhs, lhs_stride, rhs + full, rhs_stride, dst + full,
                                         dst_stride, depth, rest);
}

// Small products (at most kSmallProductFlops multiply-adds) by multiply_small_rows(), larger
// ones by multiply_into().
constexpr Eigen::Index kSmallProductFlops = 1 << 19;

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
  Eigen::Index i = 0;
  for (; i + kSmallRows <= rows; i += kSmallRows)
    multiply_small_rows<kSmallRows>(a + i * a_stride, a_stride, b, b_stride, c + i * c_stride, c_stride,
                                    depth, cols);
  for (; i + 4 <= rows; i += 4)
    multiply_small_rows<4>(a + i * a_stride, a_stride, b, b_stride, c + i * c_stride, c_stride, depth, cols);
  for (; i < rows; ++i)
    multiply_small_rows<1>(a + i * a_stride, a_stride, b, b_stride, c + i * c_stride, c_stride, depth, cols);
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Softmax
// -----------------------------------------------------------------------------

namespace {

// Rows are handled a block at a time, each pass over the whole block before the next: a short
// row is a chain of dependent steps (max, exp, sum, divide), and rows side by side let the CPU
// overlap those chains. A block is at most 64 rows and about 2048 floats (8 KiB: the raw, scaled
// and masked scores and the weights of a block stay in L1 cache together).
constexpr Eigen::Index kMaxBlockRows = 64;

Eigen::Index rows_per_block(Eigen::Index n_key) {
  constexpr Eigen::Index kBlockFloats = 2048;
  return std::clamp<Eigen::Index>(kBlockFloats / std::max<Eigen::Index>(n_key, 1), 1, kMaxBlockRows);
}

// The softmax of each of `rows` rows of masked scores (-inf = masked), n floats apart. A row
// whose every entry is masked gets weights 0 and fully_masked[i] = 1; the others 0.
void softmax_rows(const float* masked_scores, float* weights, Eigen::Index rows, Eigen::Index n,
                  std::uint8_t* fully_masked) {
  const Eigen::Index full = n / kLanes * kLanes, rest = n - full;
  float row_max[kMaxBlockRows], row_sum[kMaxBlockRows];
  // Pass 1: the largest allowed score of each row. Masked entries are -inf; none is NaN or +inf.
  for (Eigen::Index i = 0; i < rows; ++i) {
    const float* s = masked_scores + i * n;
    Lanes lanes_max = Lanes::Constant(-kInfinity);
    for (Eigen::Index j = 0; j < full; j += kLanes) lanes_max = lanes_max.max(Eigen::Map<const Lanes>(s + j));
    if (rest > 0) lanes_max = lanes_max.max(load_partial(s + full, rest, -kInfinity));
    row_max[i] = max_of_lanes(lanes_max);
    // Every key masked: no distribution, α = 0. Taking 0 as the maximum makes pass 2 give
    // exp(-inf) = 0 everywhere in the row, and pass 3 leaves it so.
    fully_masked[i] = row_max[i] == -kInfinity ? 1 : 0;
    if (fully_masked[i]) row_max[i] = 0.0f;
  }
  // Pass 2: exp(score - max) <= 1, so nothing overflows, and the sum of each row. A masked entry
  // (and the padding of the last partial group) must give 0 exactly, but Eigen's vectorized exp
  // of -inf is 0 only with AVX-512 (a denormal, about 1e-39, with SSE or AVX): so each exp is
  // multiplied by allowed(score), 1 for any finite score and 0 for -inf, made without a
  // comparison (Eigen does not vectorize select()): score + FLT_MAX >= 0 for a finite score and
  // -inf for -inf; + 1, then clamped to [0, 1].
  for (Eigen::Index i = 0; i < rows; ++i) {
    const float* s = masked_scores + i * n;
    float* a = weights + i * n;
    Lanes lanes_sum = Lanes::Zero();
    for (Eigen::Index j = 0; j < full; j += kLanes) {
      const Lanes scores = Eigen::Map<const Lanes>(s + j);
      const Lanes allowed = ((scores + kFloatMax) + 1.0f).max(0.0f).min(1.0f);
      const Lanes e = (scores - row_max[i]).exp() * allowed;
      Eigen::Map<Lanes>(a + j) = e;
      lanes_sum += e;
    }
    if (rest > 0) {
      const Lanes scores = load_partial(s + full, rest, -kInfinity);
      const Lanes allowed = ((scores + kFloatMax) + 1.0f).max(0.0f).min(1.0f);
      const Lanes e = (scores - row_max[i]).exp() * allowed;
      store_partial(e, a + full, rest);
      lanes_sum += e;
    }
    row_sum[i] = sum_of_lanes(lanes_sum);
  }
  // Pass 3: normalize. The sum is >= 1 (the maximum contributes exp(0) = 1); a fully masked row
  // is all 0 and stays so.
  for (Eigen::Index i = 0; i < rows; ++i) {
    if (fully_masked[i]) continue;
    float* a = weights + i * n;
    const float inverse_sum = 1.0f / row_sum[i];
    for (Eigen::Index j = 0; j < n; ++j) a[j] *= inverse_sum;
  }
}

}  // namespace

bool softmax_row(const float* masked_scores, float* weights, Eigen::Index n) {
  std::uint8_t fully_masked = 1;
  softmax_rows(masked_scores, weights, 1, n, &fully_masked);
  return !fully_masked;
}

bool hardmax_row(const float* masked_scores, float* weights, Eigen::Index n) {
  Eigen::Index best = -1;
  float best_score = -kInfinity;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (masked_scores[j] > best_score) {  // strict: ties go to the first key
      best_score = masked_scores[j];
      best = j;
    }
  }
  std::fill(weights, weights + n, 0.0f);
  if (best < 0) return false;
  weights[best] = 1.0f;
  return true;
}

// -----------------------------------------------------------------------------
// [SECTION] Compatibility functions
// -----------------------------------------------------------------------------
namespace {

// scores (rows, n_key) = queries · Kᵀ, queries being rows [first, first + rows) of Q (or of Q·W_a).
// A small product runs over Kᵀ copied row-major (key_transposed, made with the first band), so
// that a row of scores is a sum of rows of Kᵀ.
template <typename Queries>
void key_scores(HeadResult& head, const Eigen::MatrixBase<Queries>& queries, Eigen::Index first,
                Eigen::Index rows) {
  if (head.key_transposed.size() == 0) {
    multiply_into(queries, head.K.transpose(), head.raw_scores.middleRows(first, rows));  // (rows, n_key)
    return;
  }
  if (first == 0) head.key_transposed = head.K.transpose();  // (d_k, n_key)
  multiply_by_size(queries, head.key_transposed, head.raw_scores.middleRows(first, rows));  // (rows, n_key)
}

// Each computes rows [first, first + rows) of the raw scores; the work on the keys alone is done
// with the first band (first == 0).
void dot_scores(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  key_scores(head, head.Q.middleRows(first, rows), first, rows);  // (rows, n_key)
}

void general_scores(HeadResult& head, const HeadParameters& parameters, Eigen::Index first,
                    Eigen::Index rows) {
  multiply_into(head.Q.middleRows(first, rows), parameters.W_a,
                head.query_projection.middleRows(first, rows));  // (rows, d_k)
  key_scores(head, head.query_projection.middleRows(first, rows), first, rows);  // (rows, n_key)
}

void additive_scores(HeadResult& head, const HeadParameters& parameters, Eigen::Index first,
                     Eigen::Index rows) {
  multiply_into(head.Q.middleRows(first, rows), parameters.W_1,
                head.query_projection.middleRows(first, rows));  // (rows, d_att)
  if (first == 0) multiply_into(head.K, parameters.W_2, head.key_projection);  // (n_key, d_att)
  for (Eigen::Index i = first; i < first + rows; ++i) {
    // hidden(j, a) = tanh(q_i·W_1 + k_j·W_2)[a]                   (n_key, d_att)
    head.additive_hidden =
        (head.key_projection.rowwise() + head.query_projection.row(i)).array().tanh().matrix();
    // score(i, j) = Σ_a v_a[a] · hidden(j, a)                      (1, n_key)
    head.raw_scores.row(i).noalias() = parameters.v_a * head.additive_hidden.transpose();
  }
}

void cosine_scores(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  key_scores(head, head.Q.middleRows(first, rows), first, rows);                // (rows, n_key)
  head.query_norms.segment(first, rows) = head.Q.middleRows(first, rows).rowwise().norm();  // (rows)
  if (first == 0) head.key_norms = head.K.rowwise().norm();                   // (n_key)
  for (Eigen::Index i = first; i < first + rows; ++i) {
    for (Eigen::Index j = 0; j < head.raw_scores.cols(); ++j) {
      const float norms = head.query_norms[i] * head.key_norms[j];
      // A zero vector has no direction: its cosine with anything is defined as 0.
      const float cosine = norms > 0.0f ? head.raw_scores(i, j) / norms : 0.0f;
      head.raw_scores(i, j) = std::clamp(cosine, -1.0f, 1.0f);
    }
  }
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Stages (core/attention_stages.hpp)
// -----------------------------------------------------------------------------
namespace stages {

void multiply(const Matrix& lhs, const Matrix& rhs, Matrix& dst) { multiply_into(lhs, rhs, dst); }

void pack_projection_weights(const Parameters& parameters, const AttentionConfig& config,
                             Matrix& packed) {
  const Eigen::Index heads = config.heads, d_k = config.d_k, d_v = config.d_v;
  const Eigen::Index d_model = config.d_model, stride = packed.cols();
  for (Eigen::Index h = 0; h < heads; ++h) {
    const HeadParameters& p = parameters.heads[static_cast<std::size_t>(h)];
    copy_rows(p.W_Q.data(), d_k, packed.data() + h * d_k, stride, d_model, d_k);                    // (d_model, d_k)
    copy_rows(p.W_K.data(), d_k, packed.data() + (heads + h) * d_k, stride, d_model, d_k);          // (d_model, d_k)
    copy_rows(p.W_V.data(), d_v, packed.data() + 2 * heads * d_k + h * d_v, stride, d_model, d_v);  // (d_model, d_v)
  }
}

void extract_head_projections(HeadResult& head, int h, const AttentionConfig& config,
                              const Matrix& queries, Eigen::Index query_offset,
                              const Matrix& keys_values, Eigen::Index key_offset) {
  const Eigen::Index heads = config.heads, d_k = config.d_k, d_v = config.d_v;
  const Eigen::Index n_query = head.Q.rows(), n_key = head.K.rows();
  copy_rows(queries.data() + query_offset + h * d_k, queries.cols(), head.Q.data(), d_k, n_query,
            d_k);  // (n_query, d_k)
  copy_rows(keys_values.data() + key_offset + h * d_k, keys_values.cols(), head.K.data(), d_k, n_key,
            d_k);  // (n_key, d_k)
  copy_rows(keys_values.data() + key_offset + heads * d_k + h * d_v, keys_values.cols(), head.V.data(),
            d_v, n_key, d_v);  // (n_key, d_v)
}

void compatibility_scores(HeadResult& head, const HeadParameters& parameters,
                          const AttentionConfig& config, Eigen::Index first, Eigen::Index rows) {
  switch (config.compatibility) {
    case Compatibility::Dot:
    case Compatibility::ScaledDot: dot_scores(head, first, rows); break;
    case Compatibility::General: general_scores(head, parameters, first, rows); break;
    case Compatibility::Additive: additive_scores(head, parameters, first, rows); break;
    case Compatibility::Cosine: cosine_scores(head, first, rows); break;
  }
}

Eigen::Index rows_per_band(Eigen::Index n_key) {
  constexpr Eigen::Index kBandFloats = 1 << 18;  // 1 MiB of scores
  return std::max<Eigen::Index>(1, kBandFloats / std::max<Eigen::Index>(n_key, 1));
}

void scale_mask_softmax(HeadResult& head, const AttentionConfig& config,
                        const MaskMatrix* custom_mask, Eigen::Index band_first, Eigen::Index band_rows) {
  const float scale =
      (config.compatibility == Compatibility::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(config.d_k))
                                                        : 1.0f) /
      config.temperature;
  const Eigen::Index n_key = head.raw_scores.cols(), band_end = band_first + band_rows;
  if (band_first == 0) head.overflow = !all_finite(head.V);
  const Eigen::Index block = rows_per_block(n_key);
  for (Eigen::Index first = band_first; first < band_end; first += block) {
    const Eigen::Index last = std::min(first + block, band_end);
    // 3. Scale (1/√d_k for scaled_dot) and temperature, copied into the masked scores as well,
    // and checked: x - x is 0 for a finite x and NaN otherwise. The rows of a block are
    // contiguous: one loop over all of them.
    const Eigen::Index count = (last - first) * n_key;
    const Eigen::Index count_full = count / kLanes * kLanes, count_rest = count - count_full;
    const float* raw = head.raw_scores.row(first).data();
    float* scaled = head.scaled_scores.row(first).data();
    float* masked = head.masked_scores.row(first).data();
    Lanes check = Lanes::Zero();
    for (Eigen::Index j = 0; j < count_full; j += kLanes) {
      const Lanes s = Eigen::Map<const Lanes>(raw + j) * scale;
      Eigen::Map<Lanes>(scaled + j) = s;
      Eigen::Map<Lanes>(masked + j) = s;
      check += s - s;
    }
    if (count_rest > 0) {
      const Lanes s = load_partial(raw + count_full, count_rest, 0.0f) * scale;
      store_partial(s, scaled + count_full, count_rest);
      store_partial(s, masked + count_full, count_rest);
      check += s - s;
    }
    // 4. Mask. Scores that overflowed are clamped to ±FLT_MAX so that the softmax stays finite.
    if (std::isnan(sum_of_lanes(check))) {
      head.overflow = true;
      for (Eigen::Index j = 0; j < count; ++j) masked[j] = clamp_to_finite(scaled[j]);
    }
    for (Eigen::Index i = first; i < last; ++i) {
      float* row = head.masked_scores.row(i).data();
      if (config.causal && i + 1 < n_key) std::fill(row + i + 1, row + n_key, -kInfinity);
      if (custom_mask)
        for (Eigen::Index j = 0; j < n_key; ++j)
          if ((*custom_mask)(i, j) == 0) row[j] = -kInfinity;
    }
    // 5. Weights: the softmax of each row, or one-hot at its largest score when hard.
    if (config.hard) {
      for (Eigen::Index i = first; i < last; ++i)
        head.fully_masked_rows[i] =
            hardmax_row(head.masked_scores.row(i).data(), head.weights.row(i).data(), n_key) ? 0 : 1;
    } else {
      softmax_rows(head.masked_scores.row(first).data(), head.weights.row(first).data(), last - first,
                   n_key, head.fully_masked_rows.data() + first);
    }
  }
}

void weighted_sum(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  multiply_by_size(head.weights.middleRows(first, rows), head.V, head.output.middleRows(first, rows));  // (rows, d_v)
  head.overflow = head.overflow || !all_finite(head.output.middleRows(first, rows));
}

}  // namespace stages

// -----------------------------------------------------------------------------
// [SECTION] Engine
// -----------------------------------------------------------------------------

void AttentionEngine::prepare_buffers(Eigen::Index n_query, Eigen::Index n_key,
                                      const AttentionConfig& config, bool self_attention) {
  // Eigen's resize() keeps the allocation when the size is unchanged.
  const Eigen::Index heads = config.heads;
  result_.heads.resize(static_cast<std::size_t>(config.heads));
  for (HeadResult& head : result_.heads) {
    head.Q.resize(n_query, config.d_k);
    head.K.resize(n_key, config.d_k);
    head.V.resize(n_key, config.d_v);
    head.raw_scores.resize(n_query, n_key);
    head.scaled_scores.resize(n_query, n_key);
    head.masked_scores.resize(n_query, n_key);
    head.weights.resize(n_query, n_key);
    head.output.resize(n_query, config.d_v);
    head.fully_masked_rows.resize(n_query);
    // Kᵀ for the small products of the scores (key_scores()); empty when they are done by GEMM.
    const bool transposed_keys =
        config.compatibility != Compatibility::Additive && small_product(n_query, config.d_k, n_key);
    head.key_transposed.resize(transposed_keys ? config.d_k : 0, transposed_keys ? n_key : 0);
    switch (config.compatibility) {
      case Compatibility::General:
        head.query_projection.resize(n_query, config.d_k);
        break;
      case Compatibility::Additive:
        head.query_projection.resize(n_query, config.d_att);
        head.key_projection.resize(n_key, config.d_att);
        head.additive_hidden.resize(n_key, config.d_att);
        break;
      case Compatibility::Cosine:
        head.query_norms.resize(n_query);
        head.key_norms.resize(n_key);
        break;
      default:
        break;
    }
  }
  const Eigen::Index query_columns = heads * config.d_k;
  const Eigen::Index key_value_columns = heads * (config.d_k + config.d_v);
  packed_weights_.resize(config.d_model, query_columns + key_value_columns);
  if (self_attention) {
    projections_.resize(n_query, query_columns + key_value_columns);
  } else {
    query_projections_.resize(n_query, query_columns);
    projections_.resize(n_key, key_value_columns);
  }
  result_.concat.resize(n_query, heads * config.d_v);
  result_.output.resize(n_query, config.d_model);
  result_.n_query = n_query;
  result_.n_key = n_key;
  result_.config = config;
}

Status AttentionEngine::compute(const Matrix& X_query, const Matrix& X_key,
                                const Parameters& parameters, const AttentionConfig& config,
                                const MaskMatrix* custom_mask) {
  // Validate everything before touching the result, so that an error keeps the last one.
  if (std::string problem = validate(config); !problem.empty()) return Status::error(problem);
  if (X_query.rows() == 0) return Status::error("there are no query tokens");
  if (X_key.rows() == 0) return Status::error("there are no key tokens");
  if (X_query.cols() != config.d_model || X_key.cols() != config.d_model)
    return Status::error("embeddings have " + std::to_string(X_query.cols()) +
                         " dimensions but d_model is " + std::to_string(config.d_model));
  for (const Matrix* X : {&X_query, &X_key}) {
    if (all_finite(*X)) continue;
    for (Eigen::Index r = 0; r < X->rows(); ++r)
      for (Eigen::Index c = 0; c < X->cols(); ++c)
        if (!std::isfinite((*X)(r, c)))
          return Status::error(std::string(X == &X_query ? "X_query" : "X_key") + "[" +
                               std::to_string(r) + "][" + std::to_string(c) + "] " +
                               describe_non_finite((*X)(r, c)) +
                               ": embeddings must be finite numbers");
  }
  if (std::string problem = check_parameters(parameters, config); !problem.empty())
    return Status::error(problem);
  if (custom_mask && (custom_mask->rows() != X_query.rows() || custom_mask->cols() != X_key.rows()))
    return Status::error("the mask is " + std::to_string(custom_mask->rows()) + "x" +
                         std::to_string(custom_mask->cols()) + " but attention is " +
                         std::to_string(X_query.rows()) + "x" + std::to_string(X_key.rows()));

  const bool self_attention = &X_query == &X_key;
  prepare_buffers(X_query.rows(), X_key.rows(), config, self_attention);
  project(X_query, X_key, parameters, config, self_attention);
  result_.fully_masked_row_count = 0;
  result_.overflow = false;
  for (int h = 0; h < config.heads; ++h) {
    compute_head(h, parameters.heads[static_cast<std::size_t>(h)], config, self_attention,
                 custom_mask);
    const HeadResult& head = result_.heads[static_cast<std::size_t>(h)];
    copy_rows(head.output.data(), config.d_v, result_.concat.data() + static_cast<Eigen::Index>(h) * config.d_v,
              result_.concat.cols(), head.output.rows(), config.d_v);  // concat[:, h·d_v ...] = output (n_query, d_v)
    result_.fully_masked_row_count += static_cast<int>(head.fully_masked_rows.cast<int>().sum());
    result_.overflow = result_.overflow || head.overflow;
  }
  multiply_by_size(result_.concat, parameters.W_O, result_.output);  // (n_query, d_model)
  result_.overflow = result_.overflow || !all_finite(result_.output);
  ++result_.version;
  return Status::ok();
}

void AttentionEngine::project(const Matrix& X_query, const Matrix& X_key,
                              const Parameters& parameters, const AttentionConfig& config,
                              bool self_attention) {
  stages::pack_projection_weights(parameters, config, packed_weights_);
  const Eigen::Index query_columns = static_cast<Eigen::Index>(config.heads) * config.d_k;
  if (self_attention) {
    multiply_by_size(X_query, packed_weights_, projections_);  // (n, H·(2·d_k + d_v)): [Q … | K … | V …]
  } else {
    multiply_by_size(X_query, packed_weights_.leftCols(query_columns), query_projections_);  // (n_query, H·d_k)
    multiply_by_size(X_key, packed_weights_.rightCols(packed_weights_.cols() - query_columns),
                     projections_);  // (n_key, H·(d_k + d_v)): [K … | V …]
  }
}

void AttentionEngine::compute_head(int h, const HeadParameters& parameters,
                                   const AttentionConfig& config, bool self_attention,
                                   const MaskMatrix* custom_mask) {
  HeadResult& head = result_.heads[static_cast<std::size_t>(h)];
  // 1. Projections: this head's columns of the products of every head (project()).
  const Eigen::Index key_offset = self_attention ? static_cast<Eigen::Index>(config.heads) * config.d_k : 0;
  stages::extract_head_projections(head, h, config, self_attention ? projections_ : query_projections_, 0,
                                   projections_, key_offset);
  // 2 to 6, a band of queries at a time (all of them in a classroom): its scores, from raw to
  // weights, stay in L2 cache from the product that makes them to the one that uses them.
  const Eigen::Index n_query = head.Q.rows(), band = stages::rows_per_band(head.K.rows());
  for (Eigen::Index first = 0; first < n_query; first += band) {
    const Eigen::Index rows = std::min(band, n_query - first);
    // 2. Compatibility of these queries with every key.
    stages::compatibility_scores(head, parameters, config, first, rows);
    // 3 to 5. Scale, mask and the weights, row by row.
    stages::scale_mask_softmax(head, config, custom_mask, first, rows);
    // 6. Weighted sum of the values.
    stages::weighted_sum(head, first, rows);
  }
}

}  // namespace attnviz
