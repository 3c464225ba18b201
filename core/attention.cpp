// Attention engine. Index:
//   [SECTION] Softmax
//   [SECTION] Compatibility functions
//   [SECTION] Engine
#include "core/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz {

namespace {
constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kFloatMax = std::numeric_limits<float>::max();
}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Softmax
// -----------------------------------------------------------------------------

bool softmax_row(const float* masked_scores, float* weights, Eigen::Index n) {
  Eigen::Map<const RowVector> scores(masked_scores, n);
  Eigen::Map<RowVector> alpha(weights, n);
  // Pass 1: the largest allowed score. Masked entries are -inf; none is NaN or +inf.
  const float row_max = n > 0 ? scores.maxCoeff() : -kInfinity;
  if (row_max == -kInfinity) {  // every key is masked: no distribution, α = 0
    alpha.setZero();
    return false;
  }
  // Pass 2: exp(score - max) <= 1, so nothing overflows; masked entries give exactly 0.
  alpha = (scores.array() == -kInfinity).select(0.0f, (scores.array() - row_max).exp());
  // Pass 3: normalize. The sum is >= 1 (the maximum contributes exp(0) = 1).
  alpha /= alpha.sum();
  return true;
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
  Eigen::Map<RowVector>(weights, n).setZero();
  if (best < 0) return false;
  weights[best] = 1.0f;
  return true;
}

// -----------------------------------------------------------------------------
// [SECTION] Compatibility functions
// -----------------------------------------------------------------------------
namespace {

void dot_scores(HeadResult& head) {
  head.raw_scores.noalias() = head.Q * head.K.transpose();  // (n_query, n_key)
}

void general_scores(HeadResult& head, const HeadParameters& parameters) {
  head.query_projection.noalias() = head.Q * parameters.W_a;               // (n_query, d_k)
  head.raw_scores.noalias() = head.query_projection * head.K.transpose();  // (n_query, n_key)
}

void additive_scores(HeadResult& head, const HeadParameters& parameters) {
  head.query_projection.noalias() = head.Q * parameters.W_1;  // (n_query, d_att)
  head.key_projection.noalias() = head.K * parameters.W_2;    // (n_key, d_att)
  for (Eigen::Index i = 0; i < head.raw_scores.rows(); ++i) {
    // hidden(j, a) = tanh(q_i·W_1 + k_j·W_2)[a]                   (n_key, d_att)
    head.additive_hidden =
        (head.key_projection.rowwise() + head.query_projection.row(i)).array().tanh().matrix();
    // score(i, j) = Σ_a v_a[a] · hidden(j, a)                      (1, n_key)
    head.raw_scores.row(i).noalias() = parameters.v_a * head.additive_hidden.transpose();
  }
}

void cosine_scores(HeadResult& head) {
  head.raw_scores.noalias() = head.Q * head.K.transpose();  // (n_query, n_key)
  head.query_norms = head.Q.rowwise().norm();               // (n_query)
  head.key_norms = head.K.rowwise().norm();                 // (n_key)
  for (Eigen::Index i = 0; i < head.raw_scores.rows(); ++i) {
    for (Eigen::Index j = 0; j < head.raw_scores.cols(); ++j) {
      const float norms = head.query_norms[i] * head.key_norms[j];
      // A zero vector has no direction: its cosine with anything is defined as 0.
      const float cosine = norms > 0.0f ? head.raw_scores(i, j) / norms : 0.0f;
      head.raw_scores(i, j) = std::clamp(cosine, -1.0f, 1.0f);
    }
  }
}

float clamp_to_finite(float value) {
  if (std::isnan(value)) return -kFloatMax;  // undefined (inf - inf): ranked lowest
  return std::clamp(value, -kFloatMax, kFloatMax);
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Engine
// -----------------------------------------------------------------------------

void AttentionEngine::prepare_buffers(Eigen::Index n_query, Eigen::Index n_key,
                                      const AttentionConfig& config) {
  // Eigen's resize() keeps the allocation when the size is unchanged.
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
  result_.concat.resize(n_query, static_cast<Eigen::Index>(config.heads) * config.d_v);
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
    if (X->allFinite()) continue;
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

  prepare_buffers(X_query.rows(), X_key.rows(), config);
  result_.fully_masked_row_count = 0;
  result_.overflow = false;
  for (int h = 0; h < config.heads; ++h) {
    HeadResult& head = result_.heads[static_cast<std::size_t>(h)];
    compute_head(head, parameters.heads[static_cast<std::size_t>(h)], X_query, X_key, config,
                 custom_mask);
    result_.concat.middleCols(static_cast<Eigen::Index>(h) * config.d_v, config.d_v) = head.output;
    result_.fully_masked_row_count += static_cast<int>(head.fully_masked_rows.cast<int>().sum());
    result_.overflow = result_.overflow || head.overflow;
  }
  result_.output.noalias() = result_.concat * parameters.W_O;  // (n_query, d_model)
  result_.overflow = result_.overflow || !result_.output.allFinite();
  ++result_.version;
  return Status::ok();
}

void AttentionEngine::compute_head(HeadResult& head, const HeadParameters& parameters,
                                   const Matrix& X_query, const Matrix& X_key,
                                   const AttentionConfig& config, const MaskMatrix* custom_mask) {
  // 1. Projections.
  head.Q.noalias() = X_query * parameters.W_Q;  // (n_query, d_k)
  head.K.noalias() = X_key * parameters.W_K;    // (n_key, d_k)
  head.V.noalias() = X_key * parameters.W_V;    // (n_key, d_v)

  // 2. Compatibility of every query with every key.
  switch (config.compatibility) {
    case Compatibility::Dot:
    case Compatibility::ScaledDot: dot_scores(head); break;
    case Compatibility::General: general_scores(head, parameters); break;
    case Compatibility::Additive: additive_scores(head, parameters); break;
    case Compatibility::Cosine: cosine_scores(head); break;
  }

  // 3. Scale (1/√d_k for scaled_dot) and temperature.
  const float scale =
      (config.compatibility == Compatibility::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(config.d_k))
                                                        : 1.0f) /
      config.temperature;
  head.scaled_scores = head.raw_scores * scale;  // (n_query, n_key)

  // 4. Mask. Scores that overflowed are clamped to ±FLT_MAX so that the softmax stays finite.
  head.overflow = !head.scaled_scores.allFinite() || !head.V.allFinite();
  if (head.overflow)
    head.masked_scores = head.scaled_scores.unaryExpr(&clamp_to_finite);
  else
    head.masked_scores = head.scaled_scores;
  const Eigen::Index n_query = head.masked_scores.rows();
  const Eigen::Index n_key = head.masked_scores.cols();
  for (Eigen::Index i = 0; i < n_query; ++i) {
    if (config.causal && i + 1 < n_key) head.masked_scores.row(i).tail(n_key - i - 1).setConstant(-kInfinity);
    if (custom_mask)
      for (Eigen::Index j = 0; j < n_key; ++j)
        if ((*custom_mask)(i, j) == 0) head.masked_scores(i, j) = -kInfinity;
  }

  // 5. Weights, row by row.
  for (Eigen::Index i = 0; i < n_query; ++i) {
    const float* scores = head.masked_scores.row(i).data();
    float* weights = head.weights.row(i).data();
    const bool any_allowed = config.hard ? hardmax_row(scores, weights, n_key)
                                         : softmax_row(scores, weights, n_key);
    head.fully_masked_rows[i] = any_allowed ? 0 : 1;
  }

  // 6. Weighted sum of the values.
  head.output.noalias() = head.weights * head.V;  // (n_query, d_v)
  head.overflow = head.overflow || !head.output.allFinite();
}

}  // namespace attnviz
