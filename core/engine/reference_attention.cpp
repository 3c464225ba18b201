// The reference of attention in numbered passes (see reference_attention.hpp). Each pass is the
// formula of core/engine/attention.hpp written out as loops over i (queries), j (keys) and the
// columns, in double precision; nothing here is tuned for speed.
#include "core/engine/reference_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace attnviz {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kFloatMax = std::numeric_limits<float>::max();

// a · b for row-vector-convention matrices: (rows, inner) · (inner, cols) -> (rows, cols).
ReferenceMatrix product(const ReferenceMatrix& a, const ReferenceMatrix& b) {
  ReferenceMatrix out = ReferenceMatrix::Zero(a.rows(), b.cols());
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < b.cols(); ++c) {
      double sum = 0;
      for (Eigen::Index k = 0; k < a.cols(); ++k) sum += a(r, k) * b(k, c);
      out(r, c) = sum;
    }
  return out;
}

ReferenceMatrix widen(const Matrix& m) {
  return m.cast<double>();
}

// The dot product of row i of a and row j of b (both `width` wide).
double row_dot(const ReferenceMatrix& a, Eigen::Index i, const ReferenceMatrix& b, Eigen::Index j) {
  double sum = 0;
  for (Eigen::Index c = 0; c < a.cols(); ++c) sum += a(i, c) * b(j, c);
  return sum;
}

// Whether a number would not fit in a float: the engine, working in float, would get ±inf or
// NaN there, and flags it.
bool past_float_range(double x) {
  return std::isnan(x) || std::abs(x) > kFloatMax;
}

// As the engine clamps a score that overflowed float: NaN ranks lowest, ±inf becomes ±FLT_MAX.
double clamp_to_float_range(double x) {
  if (std::isnan(x)) return -kFloatMax;
  return std::clamp(x, -kFloatMax, kFloatMax);
}

// compat(q_i, k_j) for one query and one key of one head.
double compatibility(const ReferenceHead& head, const HeadParameters& parameters,
                     const AttentionConfig& config, Eigen::Index i, Eigen::Index j) {
  const Eigen::Index d_k = head.Q.cols();
  switch (config.compatibility) {
    case Compatibility::Dot:
    case Compatibility::ScaledDot:  // the 1/√d_k comes with the scaling, pass 3
      return row_dot(head.Q, i, head.K, j);
    case Compatibility::General: {  // q_i · W_a · k_jᵀ
      double score = 0;
      for (Eigen::Index a = 0; a < d_k; ++a)
        for (Eigen::Index b = 0; b < d_k; ++b)
          score += head.Q(i, a) * double(parameters.W_a(a, b)) * head.K(j, b);
      return score;
    }
    case Compatibility::Additive: {  // v_a · tanh(q_i · W_1 + k_j · W_2)ᵀ
      double score = 0;
      for (Eigen::Index a = 0; a < parameters.W_1.cols(); ++a) {
        double hidden = 0;  // unit a of the hidden layer
        for (Eigen::Index c = 0; c < d_k; ++c)
          hidden += head.Q(i, c) * double(parameters.W_1(c, a)) +
                    head.K(j, c) * double(parameters.W_2(c, a));
        score += double(parameters.v_a[a]) * std::tanh(hidden);
      }
      return score;
    }
    case Compatibility::Cosine: {  // q_i · k_j / (|q_i| |k_j|), clamped to [-1, 1]
      const double norms =
          std::sqrt(row_dot(head.Q, i, head.Q, i)) * std::sqrt(row_dot(head.K, j, head.K, j));
      // A zero vector has no direction: its cosine with anything is defined as 0.
      if (!(norms > 0)) return 0;
      return std::clamp(row_dot(head.Q, i, head.K, j) / norms, -1.0, 1.0);
    }
  }
  return 0;
}

// `key_value` is the head whose W_K and W_V this head uses: itself, or the first head of its
// group under grouped-query attention.
ReferenceHead reference_head(const ReferenceMatrix& X_query, const ReferenceMatrix& X_key,
                             const HeadParameters& parameters, const HeadParameters& key_value,
                             const AttentionConfig& config, const MaskMatrix* custom_mask) {
  const Eigen::Index n_query = X_query.rows(), n_key = X_key.rows();
  ReferenceHead head;

  // Pass 1: project Q, K, V.
  head.Q = product(X_query, widen(parameters.W_Q));  // (n_query, d_k)
  head.K = product(X_key, widen(key_value.W_K));     // (n_key, d_k)
  head.V = product(X_key, widen(key_value.W_V));     // (n_key, d_v)

  // Pass 2: the compatibility of every query with every key.
  head.raw_scores.resize(n_query, n_key);  // (n_query, n_key)
  for (Eigen::Index i = 0; i < n_query; ++i)
    for (Eigen::Index j = 0; j < n_key; ++j)
      head.raw_scores(i, j) = compatibility(head, parameters, config, i, j);

  // Pass 3: scale by s / T, s = 1/√d_k for scaled_dot, else 1.
  const double s =
      config.compatibility == Compatibility::ScaledDot ? 1.0 / std::sqrt(double(config.d_k)) : 1.0;
  head.scaled_scores = head.raw_scores * (s / double(config.temperature));  // (n_query, n_key)

  // Pass 4: mask. Causal: key j > query i is masked; custom: a 0 in the mask. A score past
  // float's range is clamped to it (and flagged), as the engine keeps its softmax finite.
  head.masked_scores.resize(n_query, n_key);  // (n_query, n_key)
  for (Eigen::Index i = 0; i < n_query; ++i)
    for (Eigen::Index j = 0; j < n_key; ++j) {
      const double scaled = head.scaled_scores(i, j);
      if (past_float_range(scaled)) head.overflow = true;
      const bool masked = (config.causal && j > i) || (custom_mask && (*custom_mask)(i, j) == 0);
      head.masked_scores(i, j) = masked ? -kInfinity : clamp_to_float_range(scaled);
    }

  // Pass 5: weights, row by row: the softmax (minus the row's largest score, so that no
  // exponential overflows), or one-hot at the first largest score when hard. A row whose every
  // key is masked has no distribution: α = 0, and it is flagged.
  head.weights = ReferenceMatrix::Zero(n_query, n_key);  // (n_query, n_key)
  head.fully_masked_rows.assign(static_cast<std::size_t>(n_query), false);
  for (Eigen::Index i = 0; i < n_query; ++i) {
    double largest = -kInfinity;
    Eigen::Index first_largest = -1;
    for (Eigen::Index j = 0; j < n_key; ++j)
      if (head.masked_scores(i, j) > largest) largest = head.masked_scores(i, j), first_largest = j;
    if (first_largest < 0) {
      head.fully_masked_rows[static_cast<std::size_t>(i)] = true;
      continue;
    }
    if (config.hard) {
      head.weights(i, first_largest) = 1;
      continue;
    }
    double sum = 0;
    for (Eigen::Index j = 0; j < n_key; ++j) {
      const double e = head.masked_scores(i, j) == -kInfinity
                           ? 0.0
                           : std::exp(head.masked_scores(i, j) - largest);
      head.weights(i, j) = e;
      sum += e;
    }
    for (Eigen::Index j = 0; j < n_key; ++j) head.weights(i, j) /= sum;
  }

  // Pass 6: the weighted sum of the values, output_i = Σ_j α_ij · v_j.
  head.output = product(head.weights, head.V);  // (n_query, d_v)
  for (Eigen::Index r = 0; r < head.V.rows(); ++r)
    for (Eigen::Index c = 0; c < head.V.cols(); ++c)
      head.overflow = head.overflow || past_float_range(head.V(r, c));
  for (Eigen::Index r = 0; r < head.output.rows(); ++r)
    for (Eigen::Index c = 0; c < head.output.cols(); ++c)
      head.overflow = head.overflow || past_float_range(head.output(r, c));
  return head;
}

}  // namespace

ReferenceResult reference_attention(const Matrix& X_query, const Matrix& X_key,
                                    const Parameters& parameters, const AttentionConfig& config,
                                    const MaskMatrix* custom_mask) {
  const ReferenceMatrix Xq = widen(X_query);  // (n_query, d_model)
  const ReferenceMatrix Xk = widen(X_key);    // (n_key, d_model)
  const Eigen::Index n_query = Xq.rows();
  ReferenceResult result;

  // Passes 1 to 6, head by head. Under grouped-query attention the heads of a group all take
  // their keys and values from the group's first head.
  for (int h = 0; h < config.heads; ++h) {
    const int group_head = (config.kv_groups > 0 ? h / (config.heads / config.kv_groups) *
                                                       (config.heads / config.kv_groups)
                                                 : h);
    result.heads.push_back(reference_head(Xq, Xk, parameters.heads[static_cast<std::size_t>(h)],
                                          parameters.heads[static_cast<std::size_t>(group_head)],
                                          config, custom_mask));
  }

  // Pass 7: concatenate the heads' outputs side by side, [output_0 | ... | output_{H-1}].
  result.concat.resize(n_query,
                       static_cast<Eigen::Index>(config.heads) * config.d_v);  // (n_query, H·d_v)
  for (int h = 0; h < config.heads; ++h) {
    const ReferenceHead& head = result.heads[static_cast<std::size_t>(h)];
    for (Eigen::Index i = 0; i < n_query; ++i)
      for (Eigen::Index c = 0; c < config.d_v; ++c)
        result.concat(i, h * config.d_v + c) = head.output(i, c);
    for (bool masked : head.fully_masked_rows) result.fully_masked_row_count += masked ? 1 : 0;
    result.overflow = result.overflow || head.overflow;
  }

  // Pass 8: the output projection.
  result.output = product(result.concat, widen(parameters.W_O));  // (n_query, d_model)
  for (Eigen::Index r = 0; r < result.output.rows(); ++r)
    for (Eigen::Index c = 0; c < result.output.cols(); ++c)
      result.overflow = result.overflow || past_float_range(result.output(r, c));
  return result;
}

}  // namespace attnviz
