// The stages of the attention engine (core/engine/attention_stages.hpp), with the kernels they
// run. Index:
//   [SECTION] Projections made in place
//   [SECTION] Softmax
//   [SECTION] Compatibility functions
//   [SECTION] Weighted sum over groups of keys
//   [SECTION] Stages
// The inner loops they share (16-lane loops, copies, products) are core/engine/kernels.hpp; the
// engine that runs the stages, and why it is fast, core/engine/attention.cpp.
#include "core/engine/attention_stages.hpp"

#include "core/engine/kernels.hpp"

namespace attnviz {

namespace {

float clamp_to_finite(float value) {
  if (std::isnan(value)) return -kFloatMax;  // undefined (inf - inf): ranked lowest
  return std::clamp(value, -kFloatMax, kFloatMax);
}

// dst (cols, rows) = srcᵀ, a row of dst (a column of src) 16 floats at a time.
void transpose_into(const Matrix& src, Matrix& dst) {
  const Eigen::Index rows = src.rows(), cols = src.cols();
  const Eigen::Index full = rows / kLanes * kLanes, rest = rows - full;
  for (Eigen::Index c = 0; c < cols; ++c) {
    float* out = dst.row(c).data();
    for (Eigen::Index r = 0; r < full; r += kLanes)
      lanes::store(out + r, lanes::load_column(src.data() + r * cols + c, cols));
    if (rest > 0)
      lanes::store_partial(
          out + full, lanes::load_column_partial(src.data() + full * cols + c, cols, rest), rest);
  }
}

// -----------------------------------------------------------------------------
// [SECTION] Projections made in place
// -----------------------------------------------------------------------------
// The projections of small products. A group of 16 columns of X · [W_Q⁰ … | W_K⁰ … | W_V⁰ …] is
// either 16 columns of one head's matrix (heads 16 or more wide), read where it is, or the 8
// columns of two heads side by side (heads 8 wide). Those two heads' rows are first copied side
// by side into a block of the engine's paired weights, (d_model, 16), checking that they are
// finite on the way (wider heads' weights are checked where they are): the one pass over W_Q,
// W_K and W_V before the product, which then loads a group's row whole (two heads' halves would
// be an insert per load, in every block of rows). The products are written where each head's Q,
// K and V go: packing the weights of every head into one matrix and copying each head's results
// out of one product moves them all through L2 cache twice more (at N=32, d_model=64 and 8 heads,
// 3 µs of 25).

// The pairs of heads of one matrix kind (W_Q, W_K or W_V) whose weights are paired: all of them
// when the heads are 8 wide, none otherwise.
Eigen::Index pairs_of(Eigen::Index width, Eigen::Index heads) {
  return width == 8 ? heads / 2 : 0;
}

struct ColumnGroup {
  const float*
      weights;        // row 0 of the group's weights: a paired block's, or 16 columns of one head's
  float* results[2];  // row 0 of the group's columns in Q, K or V (two heads: the second's)
};

// The column groups of the projections (multiply_block()'s Columns): row k of group g's weights,
// and group g of row i of Q, K or V, each matrix `width` wide. kHalves: each group is two heads
// 8 wide, from a paired block (rows 16 floats apart) to two places; else 16 columns of one head's
// weights (rows `width` apart) to one.
template <bool kHalves>
struct ProjectionColumns {
  using Vector = Lanes;
  const ColumnGroup* groups;
  Eigen::Index width;

  static Lanes zero() { return lanes::zero(); }
  Lanes load(Eigen::Index g, Eigen::Index k) const {
    return lanes::load(groups[g].weights + k * (kHalves ? kLanes : width));
  }
  struct Target {
    float* first;
    float* second;  // kHalves: the second head's
    Eigen::Index stride;
  };
  Target target(Eigen::Index g) const {
    return {groups[g].results[0], groups[g].results[1], width};
  }
  static void store(const Target& target, Eigen::Index i, Lanes sums) {
    const Eigen::Index offset = i * target.stride;
    if (kHalves)
      lanes::store_halves(target.first + offset, target.second + offset, sums);
    else
      lanes::store(target.first + offset, sums);
  }
  ProjectionColumns from(Eigen::Index g) const { return {groups + g, width}; }
};

bool groups_fit(Eigen::Index width, Eigen::Index heads) {
  return (width == 8 && heads % 2 == 0) || width % kLanes == 0;
}

// The column groups of one or more of Q, K and V, all `width` wide and from the same X, projected
// together (one list of panels: Q, K and V of self-attention with d_k = d_v are 3 x 4 groups at
// N=32, d_model=64, 8 heads, four panels of three).
class ColumnGroups {
 public:
  ColumnGroups(Eigen::Index width, Eigen::Index depth) : width_(width), depth_(depth) {}

  // result(h) = X · weights for every head h, each (X.rows(), width); weights(h) is head h's
  // (width 16 or more), or the block of the pair h, h + 1 (width 8, h even).
  template <typename Weights, typename Results>
  void add(Eigen::Index heads, Weights weights, Results results) {
    if (width_ == 8) {
      for (Eigen::Index h = 0; h < heads; h += 2)
        groups_[count_++] = {weights(h), {results(h), results(h + 1)}};
    } else {
      for (Eigen::Index h = 0; h < heads; ++h)
        for (Eigen::Index c = 0; c < width_; c += kLanes)
          groups_[count_++] = {weights(h) + c, {results(h) + c, nullptr}};
    }
  }

  // Every product added so far, then none.
  void project(const Matrix& X) {
    const Eigen::Index rows = X.rows();
    if (width_ == 8)
      multiply_groups(X.data(), depth_, rows, depth_, ProjectionColumns<true>{groups_, width_},
                      count_);
    else
      multiply_groups(X.data(), depth_, rows, depth_, ProjectionColumns<false>{groups_, width_},
                      count_);
    count_ = 0;
  }

 private:
  ColumnGroup groups_[3 * Limits::kMaxHeadsWidth / kLanes];
  Eigen::Index count_ = 0;
  Eigen::Index width_;
  Eigen::Index depth_;
};

// Copies the rows of two matrices 8 wide (rows x 8 each) side by side into `block` (rows x 16).
// Returns the sum of their entries times 0: 0 when all are finite, NaN otherwise
// (lanes::all_finite()), in 4 independent sums so that the copy is not held up by one chain of
// additions.
Lanes pair_rows(const float* first, const float* second, Eigen::Index rows, float* block) {
  const Lanes zero = lanes::zero();
  Lanes finiteness[4] = {zero, zero, zero, zero};
  Eigen::Index k = 0;
  for (; k + 4 <= rows; k += 4)
#pragma GCC unroll 4
    for (Eigen::Index u = 0; u < 4; ++u) {
      const Lanes row = lanes::load_halves(first + (k + u) * 8, second + (k + u) * 8);
      finiteness[u] = lanes::add_finiteness(finiteness[u], row);
      lanes::store(block + (k + u) * kLanes, row);
    }
  for (; k < rows; ++k) {
    const Lanes row = lanes::load_halves(first + k * 8, second + k * 8);
    finiteness[0] = lanes::add_finiteness(finiteness[0], row);
    lanes::store(block + k * kLanes, row);
  }
  return (finiteness[0] + finiteness[1]) + (finiteness[2] + finiteness[3]);
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Softmax
// -----------------------------------------------------------------------------

namespace {

// The largest of n masked scores (-inf when every one is masked).
float row_maximum(const float* masked_scores, Eigen::Index n) {
  const Eigen::Index full = n / kLanes * kLanes, rest = n - full;
  Lanes maximum = lanes::broadcast(-kInfinity);
  for (Eigen::Index j = 0; j < full; j += kLanes)
    maximum = lanes::max(maximum, lanes::load(masked_scores + j));
  if (rest > 0)
    maximum = lanes::max(maximum, lanes::load_partial(masked_scores + full, rest, -kInfinity));
  return lanes::reduce_max(maximum);
}

// The softmax of `rows` rows of n masked scores each (-inf = masked, none NaN or +inf), given the
// largest of each row (row_max, pass 1). A row whose every key is masked gets weights 0 and
// fully_masked = 1; the others 0. Each pass goes over every row before the next: a short row is
// a chain of dependent steps (exp, sum, divide), and rows side by side let the CPU overlap them.
constexpr Eigen::Index kSoftmaxBlockRows = kLanes;  // one division for a block's sums

void softmax_rows(const float* masked_scores, float* weights, Eigen::Index rows, Eigen::Index n,
                  const float* row_max, std::uint8_t* fully_masked) {
  const Eigen::Index full = n / kLanes * kLanes, rest = n - full;
  // Pass 2: e^(score - max) <= 1, so nothing overflows, and the sum of each row. A masked score
  // (and the padding of the last partial group) is -inf and gives exactly 0
  // (lanes::exp_of_nonpositive). Every key masked: no distribution, α = 0; a shift of 0 makes
  // every e^-inf = 0.
  Lanes sums[kSoftmaxBlockRows];
  for (Eigen::Index i = 0; i < rows; ++i) {
    const float* s = masked_scores + i * n;
    float* a = weights + i * n;
    fully_masked[i] = row_max[i] == -kInfinity ? 1 : 0;
    const Lanes shift = lanes::broadcast(fully_masked[i] ? 0.0f : row_max[i]);
    Lanes sum = lanes::zero();
    for (Eigen::Index j = 0; j < full; j += kLanes) {
      const Lanes e = lanes::exp_of_nonpositive(lanes::load(s + j) - shift);
      lanes::store(a + j, e);
      sum = sum + e;
    }
    if (rest > 0) {
      const Lanes e =
          lanes::exp_of_nonpositive(lanes::load_partial(s + full, rest, -kInfinity) - shift);
      lanes::store_partial(a + full, e, rest);
      sum = sum + e;
    }
    sums[i] = sum;
  }
  for (Eigen::Index i = rows; i < kSoftmaxBlockRows; ++i) sums[i] = lanes::broadcast(1.0f);
  // The sums of every row at once and one division: a sum is >= 1 (the maximum contributes
  // e^0 = 1), or 0 when every key is masked, and then the row is multiplied by 0.
  float inverse_sum[kSoftmaxBlockRows];
  lanes::store(inverse_sum, lanes::broadcast(1.0f) / lanes::reduce_sums(sums));
  for (Eigen::Index i = 0; i < rows; ++i)
    if (fully_masked[i]) inverse_sum[i] = 0.0f;
  // Pass 3: normalize.
  for (Eigen::Index i = 0; i < rows; ++i) {
    float* a = weights + i * n;
    const Lanes scale = lanes::broadcast(inverse_sum[i]);
    for (Eigen::Index j = 0; j < full; j += kLanes) lanes::store(a + j, lanes::load(a + j) * scale);
    if (rest > 0)
      lanes::store_partial(a + full, lanes::load_partial(a + full, rest, 0.0f) * scale, rest);
  }
}

}  // namespace

bool softmax_row(const float* masked_scores, float* weights, Eigen::Index n) {
  const float row_max = row_maximum(masked_scores, n);
  std::uint8_t fully_masked = 1;
  softmax_rows(masked_scores, weights, 1, n, &row_max, &fully_masked);
  return fully_masked == 0;
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
    multiply_into(queries, head.K.transpose(),
                  head.raw_scores.middleRows(first, rows));  // (rows, n_key)
    return;
  }
  if (first == 0) transpose_into(head.K, head.key_transposed);  // (d_k, n_key)
  multiply_by_size(queries, head.key_transposed,
                   head.raw_scores.middleRows(first, rows));  // (rows, n_key)
}

// Each computes rows [first, first + rows) of the raw scores; the work on the keys alone is done
// with the first band (first == 0).
void dot_scores(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  key_scores(head, head.Q.middleRows(first, rows), first, rows);  // (rows, n_key)
}

void general_scores(HeadResult& head, const HeadParameters& parameters, Eigen::Index first,
                    Eigen::Index rows) {
  multiply_into(head.Q.middleRows(first, rows), parameters.W_a,
                head.query_projection.middleRows(first, rows));                  // (rows, d_k)
  key_scores(head, head.query_projection.middleRows(first, rows), first, rows);  // (rows, n_key)
}

void additive_scores(HeadResult& head, const HeadParameters& parameters, Eigen::Index first,
                     Eigen::Index rows) {
  multiply_into(head.Q.middleRows(first, rows), parameters.W_1,
                head.query_projection.middleRows(first, rows));  // (rows, d_att)
  if (first == 0) {
    multiply_into(head.K, parameters.W_2, head.key_projection);           // (n_key, d_att)
    transpose_into(head.key_projection, head.key_projection_transposed);  // (d_att, n_key)
  }
  // score(i, j) = Σ_a v_a[a] · tanh(q_i·W_1 + k_j·W_2)[a], 16 keys at a time: row a of
  // (K·W_2)ᵀ plus (q_i·W_1)[a], through tanh, times v_a[a] (the hidden layer is never stored).
  const Eigen::Index n_key = head.K.rows(), d_att = head.key_projection.cols();
  const Eigen::Index full = n_key / kLanes * kLanes, rest = n_key - full;
  const float* v_a = parameters.v_a.data();
  const auto key_group = [&](const float* query, Eigen::Index j, auto load) {
    Lanes score = lanes::zero();
    for (Eigen::Index a = 0; a < d_att; ++a) {
      const Lanes keys =
          load(head.key_projection_transposed.row(a).data() + j);  // (1, 16) of row a
      const Lanes hidden = lanes::tanh(keys + lanes::broadcast(query[a]));
      score = lanes::multiply_add(hidden, lanes::broadcast(v_a[a]), score);
    }
    return score;
  };
  for (Eigen::Index i = first; i < first + rows; ++i) {
    const float* query = head.query_projection.row(i).data();  // (1, d_att)
    float* scores = head.raw_scores.row(i).data();             // (1, n_key)
    for (Eigen::Index j = 0; j < full; j += kLanes)
      lanes::store(scores + j, key_group(query, j, [](const float* x) { return lanes::load(x); }));
    if (rest > 0)
      lanes::store_partial(
          scores + full,
          key_group(query, full,
                    [&](const float* x) { return lanes::load_partial(x, rest, 0.0f); }),
          rest);
  }
}

void cosine_scores(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  key_scores(head, head.Q.middleRows(first, rows), first, rows);  // (rows, n_key)
  head.query_norms.segment(first, rows) =
      head.Q.middleRows(first, rows).rowwise().norm();       // (rows)
  if (first == 0) head.key_norms = head.K.rowwise().norm();  // (n_key)
  for (Eigen::Index i = first; i < first + rows; ++i) {
    for (Eigen::Index j = 0; j < head.raw_scores.cols(); ++j) {
      const float norms = head.query_norms[i] * head.key_norms[j];
      // A zero vector has no direction: its cosine with anything is defined as 0.
      const float cosine = norms > 0.0f ? head.raw_scores(i, j) / norms : 0.0f;
      head.raw_scores(i, j) = std::clamp(cosine, -1.0f, 1.0f);
    }
  }
}

// Steps 3 and 4 for one row of n scores: scaled = raw · scale, checked (check gains NaN where a
// score is not finite), and masked = scaled with -inf for the keys j >= first_masked (causal) and
// where allowed[j] == 0 (a custom mask); returns 16 lanes whose largest is the row's largest
// masked score (pass 1 of the softmax). One version per kind of mask, so that a row without one
// costs no masking.
template <bool kCausal, bool kCustomMask>
Lanes scale_and_mask_row(const float* raw, float* scaled, float* masked, Eigen::Index n,
                         Lanes scale, Eigen::Index first_masked, const std::uint8_t* allowed,
                         Lanes& check) {
  const Eigen::Index full = n / kLanes * kLanes, rest = n - full;
  Lanes maximum = lanes::broadcast(-kInfinity);
  for (Eigen::Index j = 0; j < full; j += kLanes) {
    const Lanes s = lanes::load(raw + j) * scale;
    lanes::store(scaled + j, s);
    check = lanes::add_finiteness(check, s);
    Lanes m = s;
    if (kCausal) m = lanes::set_from_lane(m, first_masked - j, -kInfinity);
    if (kCustomMask) m = lanes::set_where_zero(m, allowed + j, kLanes, -kInfinity);
    lanes::store(masked + j, m);
    maximum = lanes::max(maximum, m);
  }
  if (rest > 0) {
    const Lanes s = lanes::load_partial(raw + full, rest, 0.0f) * scale;
    lanes::store_partial(scaled + full, s, rest);
    check = lanes::add_finiteness(check, s);
    // The padding lanes are masked too, so that they do not count in the maximum.
    Lanes m =
        lanes::set_from_lane(s, kCausal ? std::min(first_masked - full, rest) : rest, -kInfinity);
    if (kCustomMask) m = lanes::set_where_zero(m, allowed + full, rest, -kInfinity);
    lanes::store_partial(masked + full, m, rest);
    maximum = lanes::max(maximum, m);
  }
  return maximum;
}

// Steps 3 to 5 for `rows` (at most 16) rows from `first`: each row goes from raw scores to masked
// ones in one pass (scale_and_mask_row()), then the block's rows to weights in two
// (softmax_rows()); the largest score of each row and the sums are reduced for all the rows at
// once.
template <bool kCausal, bool kCustomMask>
void scale_mask_softmax_block(HeadResult& head, const AttentionConfig& config,
                              const MaskMatrix* custom_mask, float scale, Eigen::Index first,
                              Eigen::Index rows) {
  const Eigen::Index n_key = head.raw_scores.cols();
  const Lanes scale_lanes = lanes::broadcast(scale);
  Lanes maxima[kSoftmaxBlockRows];
  Lanes check = lanes::zero();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const Eigen::Index i = first + r;
    maxima[r] = scale_and_mask_row<kCausal, kCustomMask>(
        head.raw_scores.row(i).data(), head.scaled_scores.row(i).data(),
        head.masked_scores.row(i).data(), n_key, scale_lanes,
        kCausal ? i + 1 : n_key,  // causal: keys j > i are masked
        kCustomMask ? custom_mask->row(i).data() : nullptr, check);
  }
  for (Eigen::Index r = rows; r < kSoftmaxBlockRows; ++r) maxima[r] = lanes::broadcast(-kInfinity);
  float row_max[kSoftmaxBlockRows];
  lanes::store(row_max, lanes::reduce_maxima(maxima));
  if (!lanes::all_finite(check)) {
    // Scores that overflowed float are clamped to ±FLT_MAX so that the softmax stays finite.
    head.overflow = true;
    for (Eigen::Index r = 0; r < rows; ++r) {
      const Eigen::Index i = first + r;
      const Eigen::Index first_masked = kCausal ? i + 1 : n_key;
      const float* scaled = head.scaled_scores.row(i).data();
      float* masked = head.masked_scores.row(i).data();
      for (Eigen::Index j = 0; j < n_key; ++j)
        masked[j] = j >= first_masked || (kCustomMask && (*custom_mask)(i, j) == 0)
                        ? -kInfinity
                        : clamp_to_finite(scaled[j]);
      row_max[r] = row_maximum(masked, n_key);
    }
  }
  // 5. Weights: the softmax of each row, or one-hot at its largest score when hard.
  if (config.hard) {
    for (Eigen::Index i = first; i < first + rows; ++i)
      head.fully_masked_rows[i] =
          hardmax_row(head.masked_scores.row(i).data(), head.weights.row(i).data(), n_key) ? 0 : 1;
  } else {
    softmax_rows(head.masked_scores.row(first).data(), head.weights.row(first).data(), rows, n_key,
                 row_max, head.fully_masked_rows.data() + first);
  }
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Weighted sum over groups of keys
// -----------------------------------------------------------------------------
// output (n_query, d_v) = weights (n_query, n_key) · V (n_key, d_v) for a head whose d_v divides
// 16 (8, 4, 2 or 1), kKeys = 16 / d_v keys at a time. A row of output is shorter than a vector,
// so a product over rows of V would leave lanes idle (d_v = 8: 8-float multiply-adds, as many
// instructions as 16-float ones, at most two a cycle either way); instead one vector holds the
// values of kKeys keys, lane kKeys·d + q being V(k + q, d) (V's rows grouped once per head, the
// group's (kKeys, d_v) block transposed), and is multiplied by the weights of those keys repeated
// d_v times (one broadcast load): each lane then sums its own key's terms, and adding the kKeys
// lanes of each d gives the output. Half the multiply-adds at d_v = 8, a quarter at d_v = 4. Each
// output is the sum of kKeys partial sums, each over every kKeys-th key in order.
namespace {

// V's rows grouped: row g of `groups` (16 floats) holds keys [g·kKeys, (g + 1)·kKeys), the last
// group padded with 0s. Returns whether every value was finite.
template <int kKeys>
bool group_values(const Matrix& V, Matrix& groups) {
  const Eigen::Index floats = V.size(),
                     full = floats / kLanes * kLanes;  // V is (n_key, 16 / kKeys), contiguous
  Lanes finiteness = lanes::zero();
  float* group = groups.data();
  for (Eigen::Index f = 0; f < full; f += kLanes, group += kLanes) {
    const Lanes values = lanes::load(V.data() + f);
    finiteness = lanes::add_finiteness(finiteness, values);
    lanes::store(group, lanes::transpose<kKeys>(values));
  }
  if (full < floats) {
    const Lanes values = lanes::load_partial(V.data() + full, floats - full, 0.0f);
    finiteness = lanes::add_finiteness(finiteness, values);
    lanes::store(group, lanes::transpose<kKeys>(values));
  }
  return lanes::all_finite(finiteness);
}

// Rows [0, kRows) of output from the same rows of weights (n_key each): kRows sums (at least
// kKeys, the extra ones 0), each over the key groups, then the kKeys lanes of each output added
// (log2 kKeys rounds of add_adjacent_pairs(), each pairing sums of twice as many rows, until
// sums[r] holds rows r … r + kKeys - 1 side by side: 16 floats of output, whose rows are
// contiguous). finiteness gains NaN where an output is not finite.
template <int kKeys, int kRows>
void weighted_sum_block(const float* weights, Eigen::Index weights_stride, Eigen::Index n_key,
                        const float* value_groups, float* output, Lanes& finiteness) {
  constexpr int kSums = std::max(kRows, kKeys);
  constexpr int kWidth = kLanes / kKeys;  // d_v
  Lanes sums[kSums];
#pragma GCC unroll 16
  for (int r = 0; r < kSums; ++r) sums[r] = lanes::zero();
  const Eigen::Index full = n_key / kKeys * kKeys, rest = n_key - full;
  for (Eigen::Index k = 0; k < full; k += kKeys, value_groups += kLanes) {
    const Lanes values = lanes::load(value_groups);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r)
      sums[r] = lanes::multiply_add(lanes::broadcast_keys<kKeys>(weights + r * weights_stride + k),
                                    values, sums[r]);
  }
  if (rest > 0) {
    const Lanes values = lanes::load(value_groups);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r)
      sums[r] = lanes::multiply_add(
          lanes::broadcast_keys_partial<kKeys>(weights + r * weights_stride + full, rest), values,
          sums[r]);
  }
#pragma GCC unroll 4
  for (int span = 1; span < kKeys; span *= 2)
#pragma GCC unroll 16
    for (int r = 0; r < kSums; r += 2 * span)
      sums[r] = lanes::add_adjacent_pairs(sums[r], sums[r + span]);
#pragma GCC unroll 16
  for (int r = 0; r < kRows; r += kKeys) {
    finiteness = lanes::add_finiteness(finiteness, sums[r]);
    if constexpr (kRows >= kKeys)
      lanes::store(output + r * kWidth, sums[r]);
    else
      lanes::store_partial(output, sums[r], kRows * kWidth);
  }
}

// Rows [first, first + rows) of the head's output from its value groups: blocks of 8 rows, then
// 4, 2 and 1. Returns whether every output was finite.
template <int kKeys>
bool weighted_sum_of_groups(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  const Eigen::Index n_key = head.V.rows(), stride = head.weights.cols();
  const float* weights = head.weights.row(first).data();
  const float* groups = head.value_groups.data();
  float* output = head.output.row(first).data();
  Lanes finiteness = lanes::zero();
  Eigen::Index i = 0;
  const auto blocks = [&]<int kRows>(std::integral_constant<int, kRows>) {
    for (; i + kRows <= rows; i += kRows)
      weighted_sum_block<kKeys, kRows>(weights + i * stride, stride, n_key, groups,
                                       output + i * head.V.cols(), finiteness);
  };
  blocks(std::integral_constant<int, 8>{});
  blocks(std::integral_constant<int, 4>{});
  blocks(std::integral_constant<int, 2>{});
  blocks(std::integral_constant<int, 1>{});
  return lanes::all_finite(finiteness);
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Stages (core/engine/attention_stages.hpp)
// -----------------------------------------------------------------------------
namespace stages {

void multiply(const Matrix& lhs, const Matrix& rhs, Matrix& dst) {
  multiply_by_size(lhs, rhs, dst);
}

bool pack_projection_weights(const Parameters& parameters, const AttentionConfig& config,
                             Matrix& packed) {
  const Eigen::Index heads = config.heads, d_k = config.d_k, d_v = config.d_v;
  const Eigen::Index d_model = config.d_model, stride = packed.cols();
  bool finite = true;
  for (Eigen::Index h = 0; h < heads; ++h) {
    const HeadParameters& p = parameters.heads[static_cast<std::size_t>(h)];
    // Each matrix is checked, then copied while it is in L1 cache.
    finite = finite && all_finite(p.W_Q) && all_finite(p.W_K) && all_finite(p.W_V);
    copy_rows(p.W_Q.data(), d_k, packed.data() + h * d_k, stride, d_model, d_k);  // (d_model, d_k)
    copy_rows(p.W_K.data(), d_k, packed.data() + (heads + h) * d_k, stride, d_model,
              d_k);  // (d_model, d_k)
    copy_rows(p.W_V.data(), d_v, packed.data() + 2 * heads * d_k + h * d_v, stride, d_model,
              d_v);  // (d_model, d_v)
  }
  return finite;
}

bool projects_directly(const AttentionConfig& config, Eigen::Index n_query, Eigen::Index n_key) {
  const Eigen::Index heads = config.heads;
  // The queries' product and the keys' and values' are each small (in self-attention the three
  // are one list of panels, but its panels are done one at a time all the same).
  return groups_fit(config.d_k, heads) && groups_fit(config.d_v, heads) &&
         small_product(n_query, config.d_model, heads * config.d_k) &&
         small_product(n_key, config.d_model, heads * (config.d_k + config.d_v));
}

Eigen::Index paired_weights_rows(const AttentionConfig& config) {
  const Eigen::Index heads = config.heads;
  return (2 * pairs_of(config.d_k, heads) + pairs_of(config.d_v, heads)) * config.d_model;
}

bool check_and_pair_projection_weights(const Parameters& parameters, const AttentionConfig& config,
                                       Matrix& paired) {
  const Eigen::Index heads = config.heads, d_model = config.d_model;
  float* block = paired.data();
  bool finite = true;
  Lanes finiteness = lanes::zero();
  const auto kind = [&](Eigen::Index width, auto weights) {
    if (width == 8) {
      for (Eigen::Index h = 0; h < heads; h += 2, block += d_model * kLanes)
        finiteness = finiteness + pair_rows(weights(h), weights(h + 1), d_model, block);
    } else {
      for (Eigen::Index h = 0; h < heads; ++h)
        finite = finite && all_finite(weights(h), d_model * width);
    }
  };
  const auto head = [&](Eigen::Index h) -> const HeadParameters& {
    return parameters.heads[static_cast<std::size_t>(h)];
  };
  kind(config.d_k, [&](Eigen::Index h) { return head(h).W_Q.data(); });
  kind(config.d_k, [&](Eigen::Index h) { return head(h).W_K.data(); });
  kind(config.d_v, [&](Eigen::Index h) { return head(h).W_V.data(); });
  return finite && lanes::all_finite(finiteness);
}

void project_directly(std::vector<HeadResult>& heads, const Parameters& parameters,
                      const Matrix& paired, const AttentionConfig& config, const Matrix& X_query,
                      const Matrix& X_key, int first_head, int end_head) {
  const Eigen::Index count = end_head - first_head, d_model = config.d_model,
                     block = d_model * kLanes;
  const auto weights = [&](Eigen::Index h) -> const HeadParameters& {
    return parameters.heads[static_cast<std::size_t>(first_head + h)];
  };
  const auto head = [&](Eigen::Index h) -> HeadResult& {
    return heads[static_cast<std::size_t>(first_head + h)];
  };
  // Heads 8 wide: the block of their pair, among the kind's blocks from first_pair on (paired
  // holds the W_Q blocks, then the W_K blocks, then the W_V blocks); wider: the head's own weights.
  const Eigen::Index query_pairs = pairs_of(config.d_k, config.heads);
  const auto kind = [&](Eigen::Index width, Eigen::Index first_pair, auto own) {
    return [&, width, first_pair, own](Eigen::Index h) {
      return width == 8 ? paired.data() + (first_pair + (first_head + h) / 2) * block : own(h);
    };
  };
  ColumnGroups groups(config.d_k, d_model);
  groups.add(count, kind(config.d_k, 0, [&](Eigen::Index h) { return weights(h).W_Q.data(); }),
             [&](Eigen::Index h) { return head(h).Q.data(); });  // Q (n_query, d_k) per head
  if (&X_query != &X_key) groups.project(X_query);
  groups.add(count,
             kind(config.d_k, query_pairs, [&](Eigen::Index h) { return weights(h).W_K.data(); }),
             [&](Eigen::Index h) { return head(h).K.data(); });  // K (n_key, d_k) per head
  const auto add_values = [&](ColumnGroups& to) {
    to.add(count,
           kind(config.d_v, 2 * query_pairs, [&](Eigen::Index h) { return weights(h).W_V.data(); }),
           [&](Eigen::Index h) { return head(h).V.data(); });  // V (n_key, d_v) per head
  };
  if (config.d_v == config.d_k) {
    add_values(groups);
    groups.project(X_key);
  } else {
    groups.project(X_key);
    ColumnGroups value_groups(config.d_v, d_model);
    add_values(value_groups);
    value_groups.project(X_key);
  }
}

void extract_head_projections(HeadResult& head, int h, const AttentionConfig& config,
                              const Matrix& queries, Eigen::Index query_offset,
                              const Matrix& keys_values, Eigen::Index key_offset) {
  const Eigen::Index heads = config.heads, d_k = config.d_k, d_v = config.d_v;
  const Eigen::Index n_query = head.Q.rows(), n_key = head.K.rows();
  copy_rows(queries.data() + query_offset + h * d_k, queries.cols(), head.Q.data(), d_k, n_query,
            d_k);  // (n_query, d_k)
  copy_rows(keys_values.data() + key_offset + h * d_k, keys_values.cols(), head.K.data(), d_k,
            n_key,
            d_k);  // (n_key, d_k)
  copy_rows(keys_values.data() + key_offset + heads * d_k + h * d_v, keys_values.cols(),
            head.V.data(), d_v, n_key, d_v);  // (n_key, d_v)
}

void compatibility_scores(HeadResult& head, const HeadParameters& parameters,
                          const AttentionConfig& config, Eigen::Index first, Eigen::Index rows) {
  switch (config.compatibility) {
    case Compatibility::Dot:
    case Compatibility::ScaledDot:
      dot_scores(head, first, rows);
      break;
    case Compatibility::General:
      general_scores(head, parameters, first, rows);
      break;
    case Compatibility::Additive:
      additive_scores(head, parameters, first, rows);
      break;
    case Compatibility::Cosine:
      cosine_scores(head, first, rows);
      break;
  }
}

Eigen::Index rows_per_band(Eigen::Index n_key) {
  constexpr Eigen::Index kBandFloats = 1 << 18;  // 1 MiB of scores
  return std::max<Eigen::Index>(1, kBandFloats / std::max<Eigen::Index>(n_key, 1));
}

void scale_mask_softmax(HeadResult& head, const AttentionConfig& config,
                        const MaskMatrix* custom_mask, Eigen::Index band_first,
                        Eigen::Index band_rows) {
  const float scale = (config.compatibility == Compatibility::ScaledDot
                           ? 1.0f / std::sqrt(static_cast<float>(config.d_k))
                           : 1.0f) /
                      config.temperature;
  if (band_first == 0) head.overflow = false;  // the first band's weighted sum checks V
  const auto block_function = config.causal
                                  ? (custom_mask ? scale_mask_softmax_block<true, true>
                                                 : scale_mask_softmax_block<true, false>)
                                  : (custom_mask ? scale_mask_softmax_block<false, true>
                                                 : scale_mask_softmax_block<false, false>);
  // A block of 16 rows at a time, while it is in L1 cache.
  const Eigen::Index band_end = band_first + band_rows;
  for (Eigen::Index first = band_first; first < band_end; first += kSoftmaxBlockRows)
    block_function(head, config, custom_mask, scale, first,
                   std::min(kSoftmaxBlockRows, band_end - first));
}

Eigen::Index keys_per_value_group(const AttentionConfig& config, Eigen::Index n_query,
                                  Eigen::Index n_key) {
  const Eigen::Index d_v = config.d_v;
  const bool groups =
      kGroupKeys && d_v < kLanes && kLanes % d_v == 0 && small_product(n_query, n_key, d_v);
  return groups ? kLanes / d_v : 0;
}

void weighted_sum(HeadResult& head, Eigen::Index first, Eigen::Index rows) {
  if (head.value_groups.size() == 0) {
    if (first == 0) head.overflow = head.overflow || !all_finite(head.V);
    multiply_by_size(head.weights.middleRows(first, rows), head.V,
                     head.output.middleRows(first, rows));  // (rows, d_v)
    head.overflow =
        head.overflow || !all_finite(head.output.row(first).data(), rows * head.output.cols());
    return;
  }
  const auto grouped = [&]<int kKeys>(std::integral_constant<int, kKeys>) {
    if (first == 0)
      head.overflow = !group_values<kKeys>(head.V, head.value_groups) || head.overflow;
    head.overflow =
        !weighted_sum_of_groups<kKeys>(head, first, rows) || head.overflow;  // (rows, d_v)
  };
  switch (head.V.cols()) {
    case 8:
      return grouped(std::integral_constant<int, 2>{});
    case 4:
      return grouped(std::integral_constant<int, 4>{});
    case 2:
      return grouped(std::integral_constant<int, 8>{});
    case 1:
      return grouped(std::integral_constant<int, 16>{});
    default:
      break;
  }
}

}  // namespace stages

}  // namespace attnviz
