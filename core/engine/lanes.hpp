// 16 floats processed together: one AVX-512 register, or a fixed-size Eigen array that the
// compiler vectorizes for SSE or AVX. The engine's rows are short (a classroom sentence has 5 to
// 30 tokens, a head 4 to 64 dimensions), so its loops go 16 floats at a time with the last
// partial group masked; Eigen's dynamic-size loops spend more on aligning a short row than on
// the row itself. Internal to core/ (attention.cpp and its tests).
//
// With AVX-512 a Lanes is a register and every operation one or two instructions; in particular
// a partial load or store is one masked instruction (a lane-by-lane copy would stall on store
// forwarding, once per short row). The portable path is built and unit-tested by `make test`'s
// sanitizer build, which is compiled without -march=native.
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

// The AVX-512 path needs the F, DQ, VL and BW subsets (every AVX-512 CPU since Skylake-SP).
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__AVX512BW__)
#define ATTNVIZ_LANES_AVX512 1
#include <immintrin.h>
#else
#define ATTNVIZ_LANES_AVX512 0
#endif

namespace attnviz::lanes {

constexpr Eigen::Index kLanes = 16;
constexpr float kInfinity = std::numeric_limits<float>::infinity();

#if ATTNVIZ_LANES_AVX512

// GCC 12 warns inside its own AVX-512 headers, where an intrinsic starts from an undefined
// register (_mm512_undefined_ps); the warning is about GCC's code, not this file's.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

struct Lanes {
  __m512 v;
};

// The first n lanes (n in [0, 16]).
inline __mmask16 first_lanes(Eigen::Index n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

inline Lanes zero() {
  return {_mm512_setzero_ps()};
}
inline Lanes broadcast(float x) {
  return {_mm512_set1_ps(x)};
}
inline Lanes load(const float* x) {
  return {_mm512_loadu_ps(x)};
}
inline void store(float* x, Lanes a) {
  _mm512_storeu_ps(x, a.v);
}
// The first n < 16 floats at x, the other lanes `pad`; and the first n lanes back to x. Up to 8
// floats go through a 32-byte access: a masked 64-byte store whose footprint crosses a cache
// line costs about 5 cycles even when the lanes it writes do not (the rows of a head 8 wide, or
// of a weight matrix, lie at every 32 bytes).
inline Lanes load_partial(const float* x, Eigen::Index n, float pad) {
  if (n <= 8) {
    const __m256 low =
        _mm256_mask_loadu_ps(_mm256_set1_ps(pad), static_cast<__mmask8>(first_lanes(n)), x);
    return {_mm512_insertf32x8(_mm512_set1_ps(pad), low, 0)};
  }
  return {_mm512_mask_loadu_ps(_mm512_set1_ps(pad), first_lanes(n), x)};
}
inline void store_partial(float* x, Lanes a, Eigen::Index n) {
  if (n <= 8) {
    _mm256_mask_storeu_ps(x, static_cast<__mmask8>(first_lanes(n)), _mm512_castps512_ps256(a.v));
    return;
  }
  _mm512_mask_storeu_ps(x, first_lanes(n), a.v);
}

// 8 floats, for the products whose rows are at most 8 wide (a head's output, d_v = 8): 32-byte
// loads and sums. In a micro benchmark on a Xeon (docs/performance.md, its history), the same
// product in 16 lanes with the upper 8 unused took 1.7 to 2.5 times as long (its 512-bit
// multiply-adds are not faster per instruction than 256-bit ones, and each step paid a masked
// load and an insert).
struct EightLanes {
  __m256 v;
};
inline EightLanes zero_eight() {
  return {_mm256_setzero_ps()};
}
// The first n ≤ 8 floats at x, the other lanes 0; and the first n lanes back to x.
inline EightLanes load_eight(const float* x, Eigen::Index n) {
  return {_mm256_maskz_loadu_ps(static_cast<__mmask8>(first_lanes(n)), x)};
}
inline void store_eight(float* x, EightLanes a, Eigen::Index n) {
  _mm256_mask_storeu_ps(x, static_cast<__mmask8>(first_lanes(n)), a.v);
}
// a · x[0] + c, the scalar broadcast from memory.
inline EightLanes multiply_add(EightLanes a, const float* x, EightLanes c) {
  return {_mm256_fmadd_ps(a.v, _mm256_set1_ps(*x), c.v)};
}

// dst[0, n) = src[0, n) for n < 16: whole groups of 8 unmasked, the rest masked (a masked load
// waits for every earlier store whose address is not yet known; a copy of short rows would
// then run one row at a time).
inline void copy_partial(const float* src, float* dst, Eigen::Index n) {
  if (n >= 8) {
    _mm256_storeu_ps(dst, _mm256_loadu_ps(src));
    src += 8;
    dst += 8;
    n -= 8;
  }
  if (n > 0) {
    const __mmask8 mask = static_cast<__mmask8>(first_lanes(n));
    _mm256_mask_storeu_ps(dst, mask, _mm256_maskz_loadu_ps(mask, src));
  }
}

// Lanes 0-7 from lo[0, 8) and 8-15 from hi[0, 8); and back.
inline Lanes load_halves(const float* lo, const float* hi) {
  return {_mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(lo)), _mm256_loadu_ps(hi), 1)};
}
inline void store_halves(float* lo, float* hi, Lanes a) {
  // Both halves by extract-and-store; with a cast for the low half, GCC 12 copies the register
  // first (and, with 24 sums live in multiply_block(), spills them).
  _mm256_storeu_ps(lo, _mm512_extractf32x8_ps(a.v, 0));
  _mm256_storeu_ps(hi, _mm512_extractf32x8_ps(a.v, 1));
}

// x[0], x[stride], …, x[15·stride] (one gather); the partial one, the first n (n < 16).
inline __m512i column_offsets(Eigen::Index stride) {
  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(static_cast<int>(stride)));
}
inline Lanes load_column(const float* x, Eigen::Index stride) {
  return {_mm512_i32gather_ps(column_offsets(stride), x, 4)};
}
inline Lanes load_column_partial(const float* x, Eigen::Index stride, Eigen::Index n) {
  return {
      _mm512_mask_i32gather_ps(_mm512_setzero_ps(), first_lanes(n), column_offsets(stride), x, 4)};
}

// Groups of keys (the weighted sum of a head whose d_v divides 16: kKeys = 16 / d_v keys' values
// in one vector, so that no lane is idle). broadcast_keys: x[0, kKeys) repeated across the lanes,
// lane l = x[l % kKeys], one load (vpbroadcastq, vbroadcastf32x4, vbroadcastf32x8 or a plain
// load); the partial one, x[0, n) and 0 for the others (n < kKeys).
template <int kKeys>
inline Lanes broadcast_keys(const float* x) {
  static_assert(kKeys == 2 || kKeys == 4 || kKeys == 8 || kKeys == 16);
  if constexpr (kKeys == 2)
    return {_mm512_castsi512_ps(
        _mm512_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x))))};
  else if constexpr (kKeys == 4)
    return {_mm512_broadcast_f32x4(_mm_loadu_ps(x))};
  else if constexpr (kKeys == 8)
    return {_mm512_broadcast_f32x8(_mm256_loadu_ps(x))};
  else
    return {_mm512_loadu_ps(x)};
}
template <int kKeys>
inline Lanes broadcast_keys_partial(const float* x, Eigen::Index n) {
  const __m512i repeat =
      _mm512_and_si512(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                       _mm512_set1_epi32(kKeys - 1));
  return {_mm512_permutexvar_ps(repeat, _mm512_maskz_loadu_ps(first_lanes(n), x))};
}
// The 16 lanes as a (kRows, 16 / kRows) row-major matrix, transposed: lane c·kRows + r of the
// result is lane r·(16 / kRows) + c of a.
template <int kRows>
inline Lanes transpose(Lanes a) {
  constexpr int kCols = kLanes / kRows;
  static constexpr std::array<std::int32_t, kLanes> kFrom = [] {
    std::array<std::int32_t, kLanes> from{};
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) from[static_cast<std::size_t>(c * kRows + r)] = r * kCols + c;
    return from;
  }();
  return {_mm512_permutexvar_ps(_mm512_loadu_si512(kFrom.data()), a.v)};
}
// Lanes 2m and 2m + 1 added: lane m < 8 of the result from a, lane 8 + m from b.
inline Lanes add_adjacent_pairs(Lanes a, Lanes b) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return {
      _mm512_add_ps(_mm512_permutex2var_ps(a.v, even, b.v), _mm512_permutex2var_ps(a.v, odd, b.v))};
}

inline Lanes operator+(Lanes a, Lanes b) {
  return {_mm512_add_ps(a.v, b.v)};
}
inline Lanes operator-(Lanes a, Lanes b) {
  return {_mm512_sub_ps(a.v, b.v)};
}
inline Lanes operator*(Lanes a, Lanes b) {
  return {_mm512_mul_ps(a.v, b.v)};
}
inline Lanes operator/(Lanes a, Lanes b) {
  return {_mm512_div_ps(a.v, b.v)};
}
// a · b + c in one rounding.
inline Lanes multiply_add(Lanes a, Lanes b, Lanes c) {
  return {_mm512_fmadd_ps(a.v, b.v, c.v)};
}
// a · x[0] + c, the scalar broadcast from memory.
inline Lanes multiply_add(Lanes a, const float* x, Lanes c) {
  return {_mm512_fmadd_ps(a.v, _mm512_set1_ps(*x), c.v)};
}
inline Lanes max(Lanes a, Lanes b) {
  return {_mm512_max_ps(a.v, b.v)};
}

inline float reduce_max(Lanes a) {
  return _mm512_reduce_max_ps(a.v);
}
inline float reduce_sum(Lanes a) {
  return _mm512_reduce_add_ps(a.v);
}

// Lane i of the result is the sum (the largest) of the 16 lanes of rows[i]: 16 reductions in 15
// operations and 30 shuffles, where one at a time takes 4 dependent operations and 4 shuffles
// each. Stage 1 adds lanes 2 apart within each 128-bit quarter, pairing rows 2i and 2i + 1;
// stage 2 lanes 1 apart, pairing those; stages 3 and 4 the quarters; lane 4q + p ends as row
// 4q + p.
template <typename Operation>
inline Lanes reduce_rows(const Lanes* rows, Operation operation) {
  __m512 pairs[8], quads[4], halves[2];
  for (int i = 0; i < 8; ++i)
    pairs[i] = operation(_mm512_unpacklo_ps(rows[2 * i].v, rows[2 * i + 1].v),
                         _mm512_unpackhi_ps(rows[2 * i].v, rows[2 * i + 1].v));
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(pairs[2 * i]), b = _mm512_castps_pd(pairs[2 * i + 1]);
    quads[i] = operation(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  for (int i = 0; i < 2; ++i)
    halves[i] = operation(_mm512_shuffle_f32x4(quads[2 * i], quads[2 * i + 1], 0x88),
                          _mm512_shuffle_f32x4(quads[2 * i], quads[2 * i + 1], 0xDD));
  return {operation(_mm512_shuffle_f32x4(halves[0], halves[1], 0x88),
                    _mm512_shuffle_f32x4(halves[0], halves[1], 0xDD))};
}
inline Lanes reduce_sums(const Lanes* rows) {
  return reduce_rows(rows, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); });
}
inline Lanes reduce_maxima(const Lanes* rows) {
  return reduce_rows(rows, [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); });
}

// a with lanes [first, 16) set to value (first may be < 0 or > 16).
inline Lanes set_from_lane(Lanes a, Eigen::Index first, float value) {
  const __mmask16 keep = first_lanes(std::clamp<Eigen::Index>(first, 0, kLanes));
  return {_mm512_mask_mov_ps(_mm512_set1_ps(value), keep, a.v)};
}

// a with value in each lane j < n where flags[j] == 0.
inline Lanes set_where_zero(Lanes a, const std::uint8_t* flags, Eigen::Index n, float value) {
  const __m128i bytes = _mm_maskz_loadu_epi8(first_lanes(n), flags);
  const __mmask16 zero_flags =
      static_cast<__mmask16>(_mm_testn_epi8_mask(bytes, bytes) & first_lanes(n));
  return {_mm512_mask_mov_ps(a.v, zero_flags, _mm512_set1_ps(value))};
}

// tanh of each lane: Eigen's own (its rational approximation, the one Eigen's array tanh() uses
// for floats), on the register.
inline Lanes tanh(Lanes a) {
  return {Eigen::internal::ptanh(a.v)};
}

// e^x for each lane, for x <= 0 or -inf (the softmax's score - max; not NaN): within 1e-7 in
// absolute terms, and 1e-7·(1 + |x|) relative (t below is rounded to float); exactly 0 below -87
// (so for -inf). Results below -87 would be denormal floats (under
// 1.2e-38), and producing one costs a microcode assist of about 150 cycles (a causal mask makes
// half the scores -inf); next to the sum of a softmax row, which is >= 1, they are nothing.
// e^x = 2^t with t = x·log2 e = floor(t) + f: 2^f for f in [0, 1) by a polynomial of degree 6
// (fitted for relative error, 6e-8), then the scaling by 2^floor(t) in one instruction
// (vscalefps). The chain is 11 operations deep: a short row's exps are latency-bound.
inline Lanes exp_of_nonpositive(Lanes a) {
  const __mmask16 in_range = _mm512_cmp_ps_mask(a.v, _mm512_set1_ps(-87.0f), _CMP_GE_OQ);
  const __m512 t = _mm512_max_ps(_mm512_mul_ps(a.v, _mm512_set1_ps(1.44269504088896341f)),
                                 _mm512_set1_ps(-126.0f));
  const __m512 f = _mm512_reduce_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);  // t - floor(t)
  __m512 p = _mm512_set1_ps(2.170225240e-4f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.243968872e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.678840899e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.548334203e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402298363e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931469838e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.000000002e+0f));
  return {_mm512_maskz_scalef_ps(in_range, p, t)};
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#else  // portable: a fixed-size Eigen array

struct Lanes {
  Eigen::Array<float, 16, 1> v;
};

inline Lanes zero() {
  return {Eigen::Array<float, 16, 1>::Zero()};
}
inline Lanes broadcast(float x) {
  return {Eigen::Array<float, 16, 1>::Constant(x)};
}
inline Lanes load(const float* x) {
  return {Eigen::Map<const Eigen::Array<float, 16, 1> >(x)};
}
inline void store(float* x, Lanes a) {
  Eigen::Map<Eigen::Array<float, 16, 1> > target(x);
  target = a.v;
}
// A whole group of 8 as one fixed-size copy, the rest a float at a time (a loop over all n
// becomes a call to memcpy, and a short row a function call).
inline Lanes load_partial(const float* x, Eigen::Index n, float pad) {
  Lanes a = broadcast(pad);
  Eigen::Index j = 0;
  if (n >= 8) {
    a.v.head<8>() = Eigen::Map<const Eigen::Array<float, 8, 1> >(x);
    j = 8;
  }
  for (; j < n; ++j) a.v[j] = x[j];
  return a;
}
inline void store_partial(float* x, Lanes a, Eigen::Index n) {
  Eigen::Index j = 0;
  if (n >= 8) {
    Eigen::Map<Eigen::Array<float, 8, 1> > target(x);
    target = a.v.head<8>();
    j = 8;
  }
  for (; j < n; ++j) x[j] = a.v[j];
}

struct EightLanes {
  Eigen::Array<float, 8, 1> v;
};
inline EightLanes zero_eight() {
  return {Eigen::Array<float, 8, 1>::Zero()};
}
inline EightLanes load_eight(const float* x, Eigen::Index n) {
  if (n == 8) return {Eigen::Map<const Eigen::Array<float, 8, 1> >(x)};
  EightLanes a = zero_eight();
  for (Eigen::Index j = 0; j < n; ++j) a.v[j] = x[j];
  return a;
}
inline void store_eight(float* x, EightLanes a, Eigen::Index n) {
  if (n == 8) {
    Eigen::Map<Eigen::Array<float, 8, 1> > target(x);
    target = a.v;
    return;
  }
  for (Eigen::Index j = 0; j < n; ++j) x[j] = a.v[j];
}
inline EightLanes multiply_add(EightLanes a, const float* x, EightLanes c) {
  return {a.v * *x + c.v};
}

inline void copy_partial(const float* src, float* dst, Eigen::Index n) {
  std::copy(src, src + n, dst);
}

inline Lanes load_halves(const float* lo, const float* hi) {
  Lanes a;
  for (Eigen::Index j = 0; j < 8; ++j) a.v[j] = lo[j];
  for (Eigen::Index j = 0; j < 8; ++j) a.v[8 + j] = hi[j];
  return a;
}
inline void store_halves(float* lo, float* hi, Lanes a) {
  for (Eigen::Index j = 0; j < 8; ++j) lo[j] = a.v[j];
  for (Eigen::Index j = 0; j < 8; ++j) hi[j] = a.v[8 + j];
}

inline Lanes load_column(const float* x, Eigen::Index stride) {
  Lanes a;
  for (Eigen::Index j = 0; j < kLanes; ++j) a.v[j] = x[j * stride];
  return a;
}
inline Lanes load_column_partial(const float* x, Eigen::Index stride, Eigen::Index n) {
  Lanes a = zero();
  for (Eigen::Index j = 0; j < n; ++j) a.v[j] = x[j * stride];
  return a;
}

template <int kKeys>
inline Lanes broadcast_keys(const float* x) {
  static_assert(kKeys == 2 || kKeys == 4 || kKeys == 8 || kKeys == 16);
  Lanes a;
  for (Eigen::Index l = 0; l < kLanes; ++l) a.v[l] = x[l % kKeys];
  return a;
}
template <int kKeys>
inline Lanes broadcast_keys_partial(const float* x, Eigen::Index n) {
  Lanes a;
  for (Eigen::Index l = 0; l < kLanes; ++l) a.v[l] = l % kKeys < n ? x[l % kKeys] : 0.0f;
  return a;
}
template <int kRows>
inline Lanes transpose(Lanes a) {
  constexpr int kCols = kLanes / kRows;
  Lanes b;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) b.v[c * kRows + r] = a.v[r * kCols + c];
  return b;
}
inline Lanes add_adjacent_pairs(Lanes a, Lanes b) {
  Lanes c;
  for (Eigen::Index m = 0; m < 8; ++m) {
    c.v[m] = a.v[2 * m] + a.v[2 * m + 1];
    c.v[8 + m] = b.v[2 * m] + b.v[2 * m + 1];
  }
  return c;
}

inline Lanes operator+(Lanes a, Lanes b) {
  return {a.v + b.v};
}
inline Lanes operator-(Lanes a, Lanes b) {
  return {a.v - b.v};
}
inline Lanes operator*(Lanes a, Lanes b) {
  return {a.v * b.v};
}
inline Lanes operator/(Lanes a, Lanes b) {
  return {a.v / b.v};
}
inline Lanes multiply_add(Lanes a, Lanes b, Lanes c) {
  return {a.v * b.v + c.v};
}
inline Lanes multiply_add(Lanes a, const float* x, Lanes c) {
  return {a.v * *x + c.v};
}
inline Lanes max(Lanes a, Lanes b) {
  return {a.v.max(b.v)};
}

// Halves folded together in registers (Eigen's own reductions of a fixed-size array go through
// memory with GCC 12).
inline float reduce_max(Lanes a) {
  const Eigen::Array<float, 8, 1> eight = a.v.head<8>().max(a.v.tail<8>());
  const Eigen::Array<float, 4, 1> four = eight.head<4>().max(eight.tail<4>());
  return std::max(std::max(four[0], four[1]), std::max(four[2], four[3]));
}
inline float reduce_sum(Lanes a) {
  const Eigen::Array<float, 8, 1> eight = a.v.head<8>() + a.v.tail<8>();
  const Eigen::Array<float, 4, 1> four = eight.head<4>() + eight.tail<4>();
  return (four[0] + four[1]) + (four[2] + four[3]);
}

// Lane i of the result is the sum (the largest) of the 16 lanes of rows[i].
inline Lanes reduce_sums(const Lanes* rows) {
  Lanes a;
  for (Eigen::Index i = 0; i < kLanes; ++i) a.v[i] = reduce_sum(rows[i]);
  return a;
}
inline Lanes reduce_maxima(const Lanes* rows) {
  Lanes a;
  for (Eigen::Index i = 0; i < kLanes; ++i) a.v[i] = reduce_max(rows[i]);
  return a;
}

inline Lanes set_from_lane(Lanes a, Eigen::Index first, float value) {
  for (Eigen::Index j = std::max<Eigen::Index>(first, 0); j < kLanes; ++j) a.v[j] = value;
  return a;
}
inline Lanes set_where_zero(Lanes a, const std::uint8_t* flags, Eigen::Index n, float value) {
  for (Eigen::Index j = 0; j < n; ++j)
    if (flags[j] == 0) a.v[j] = value;
  return a;
}

inline Lanes tanh(Lanes a) {
  return {a.v.tanh()};
}

// Eigen's exp, with results below -87 made exactly 0 as in the AVX-512 path (Eigen's vectorized
// exp of a very negative x is a denormal, about 1e-39, with SSE or AVX).
inline Lanes exp_of_nonpositive(Lanes a) {
  // Times a step that is 1 from -87 on and 0 below, in vector arithmetic: (x + 87)·2^24 + 1 is at
  // least 1 for x >= -87 and at most -127 for a float below it (floats near -87 are 2^-17 apart),
  // or -inf. (A lane-by-lane fix-up was a compare and a branch per lane; a comparison inside an
  // Eigen expression makes the whole expression, exp included, scalar.)
  const Eigen::Array<float, 16, 1> e = a.v.max(-87.0f).exp();
  const Eigen::Array<float, 16, 1> step = ((a.v + 87.0f) * 16777216.0f + 1.0f).max(0.0f).min(1.0f);
  return {e * step};
}

#endif

// sum + a·0, one multiply-add: a·0 is 0 for a finite a (however large) and NaN for ±inf or NaN,
// so a sum of them stays 0 until it meets one, and then stays NaN (all_finite()).
inline Lanes add_finiteness(Lanes sum, Lanes a) {
  return multiply_add(a, zero(), sum);
}
inline bool all_finite(Lanes finiteness_sum) {
  return !std::isnan(reduce_sum(finiteness_sum));
}

}  // namespace attnviz::lanes
