// The one-layer toy's gradient descent (attention_fit.hpp): the targets, the fast loss and
// gradient, its plain reference, and the descent.
#include "core/training/attention_fit.hpp"

#include "core/text/lexicon.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

namespace attnviz {

namespace {

struct PatternName {
  TargetPattern pattern;
  std::string_view name;
  std::string_view description;
};
constexpr std::array<PatternName, 5> kPatternNames = {{
    {TargetPattern::PreviousWord, "previous-word", "each word looks at the word before"},
    {TargetPattern::NextWord, "next-word", "each word looks at the word after"},
    {TargetPattern::SameWord, "same-word", "each word looks at the same word"},
    {TargetPattern::FirstWord, "first-word", "every word looks at the first word"},
    {TargetPattern::PronounToNoun, "pronoun-noun", "pronouns look at their noun"},
}};

// The pronouns PronounToNoun knows, and what they agree with.
enum class Agreement { Person, Thing, Plural };
struct Pronoun {
  std::string_view word;
  Agreement agreement;
};
constexpr std::array<Pronoun, 14> kPronouns = {{
    {"he", Agreement::Person},
    {"him", Agreement::Person},
    {"his", Agreement::Person},
    {"she", Agreement::Person},
    {"her", Agreement::Person},
    {"hers", Agreement::Person},
    {"it", Agreement::Thing},
    {"its", Agreement::Thing},
    {"itself", Agreement::Thing},
    {"they", Agreement::Plural},
    {"them", Agreement::Plural},
    {"their", Agreement::Plural},
    {"theirs", Agreement::Plural},
    {"themselves", Agreement::Plural},
}};

const Pronoun* find_pronoun(std::string_view key) {
  for (const Pronoun& pronoun : kPronouns)
    if (pronoun.word == key) return &pronoun;
  return nullptr;
}

// A noun of the teaching lexicon: a word that names something (a person, food, a company, a
// place, an animal, a thing) and is no function word (the, it, my).
struct Noun {
  bool is_noun = false;
  bool person = false;
  bool plural = false;
};
Noun noun_of(std::string_view key) {
  const LexiconEntry* entry = Lexicon::builtin().find(key);
  if (!entry || find_pronoun(key)) return {};
  const FeatureVector& f = entry->features;
  auto feature = [&](std::string_view name) {
    for (std::size_t i = 0; i < kFeatureCount; ++i)
      if (kFeatureNames[i] == name) return f[i];
    return 0.0f;
  };
  if (feature("function") >= 0.5f || feature("action") >= 0.5f || feature("quality") >= 0.5f)
    return {};
  const float naming = std::max({feature("person"), feature("food"), feature("company"),
                                 feature("place"), feature("animal"), feature("thing")});
  if (naming < 0.5f) return {};
  return {true, feature("person") >= 0.5f, feature("plural") >= 0.5f};
}

bool agrees(const Noun& noun, Agreement agreement) {
  switch (agreement) {
    case Agreement::Person:
      return noun.person && !noun.plural;
    case Agreement::Thing:
      return !noun.person && !noun.plural;
    case Agreement::Plural:
      return noun.plural;
  }
  return false;
}

// The key PronounToNoun picks for query `query` (-1: none): see target_attention.
Eigen::Index noun_for(const Tokenization& keys, Eigen::Index query, Agreement agreement,
                      const AllowedKeys& allowed) {
  const auto n_key = static_cast<Eigen::Index>(keys.tokens.size());
  std::vector<Noun> nouns(keys.tokens.size());
  for (Eigen::Index j = 0; j < n_key; ++j) nouns[j] = noun_of(keys.tokens[j].key);
  auto usable = [&](Eigen::Index j) { return nouns[j].is_noun && allowed.allowed(query, j); };
  const Eigen::Index before = std::min(query, n_key);
  // "the animal ... the street because it": both agree; the nearest would be street. The
  // subject comes first more often than not, so among several that agree take the earliest.
  for (Eigen::Index j = 0; j < before; ++j)
    if (usable(j) && agrees(nouns[j], agreement)) return j;
  for (Eigen::Index j = before - 1; j >= 0; --j)
    if (usable(j)) return j;
  for (Eigen::Index j = query + 1; j < n_key; ++j)
    if (usable(j)) return j;
  return -1;
}

// Row `query` of `target`: evenly over the chosen keys it may see (none: the row stays 0).
void spread(Matrix& target, Eigen::Index query, const std::vector<Eigen::Index>& chosen,
            const AllowedKeys& allowed) {
  int count = 0;
  for (Eigen::Index key : chosen)
    if (allowed.allowed(query, key)) ++count;
  if (count == 0) return;
  for (Eigen::Index key : chosen)
    if (allowed.allowed(query, key)) target(query, key) = 1.0f / static_cast<float>(count);
}

// Weights so large that a score leaves float (1e38 typed into W_Q): no step can be taken.
const Status kScoresTooLarge = Status::error(
    "gradient descent: a score is too large to compute (beyond 3.4e38): make the weights smaller "
    "(Reset W_Q and W_K)");

float score_scale(const AttentionConfig& config) {
  const float s = config.compatibility == Compatibility::ScaledDot
                      ? 1.0f / std::sqrt(static_cast<float>(config.d_k))
                      : 1.0f;
  return s / config.temperature;
}

Status check_shapes(const FitInput& input, const Matrix& W_Q, const Matrix& W_K) {
  if (Status status = check_fit_config(input.config); !status.is_ok()) return status;
  if (!input.X_query || !input.X_key || !input.target)
    return Status::error("gradient descent: no sentence to fit");
  const Matrix& Xq = *input.X_query;
  const Matrix& Xk = *input.X_key;
  const Matrix& T = *input.target;
  if (Xq.rows() == 0 || Xk.rows() == 0) return Status::error("gradient descent: no tokens");
  if (Xq.cols() != Xk.cols() || W_Q.rows() != Xq.cols() || W_K.rows() != Xq.cols() ||
      W_Q.cols() != W_K.cols() || T.rows() != Xq.rows() || T.cols() != Xk.rows())
    return Status::error(
        "gradient descent: the sentence, the target and W_Q, W_K do not fit "
        "together (the scenario changed shape)");
  if (input.allowed.mask &&
      (input.allowed.mask->rows() != Xq.rows() || input.allowed.mask->cols() != Xk.rows()))
    return Status::error("gradient descent: the mask does not fit the sentence");
  if (!all_finite(Xq) || !all_finite(Xk) || !all_finite(W_Q) || !all_finite(W_K) || !all_finite(T))
    return Status::error("gradient descent: a weight or an embedding is not a finite number");
  return Status::success();
}

}  // namespace

std::string_view to_string(TargetPattern pattern) {
  for (const PatternName& entry : kPatternNames)
    if (entry.pattern == pattern) return entry.name;
  return "previous-word";
}

std::string_view describe(TargetPattern pattern) {
  for (const PatternName& entry : kPatternNames)
    if (entry.pattern == pattern) return entry.description;
  return "";
}

std::string target_pattern_names() {
  std::string names;
  for (std::size_t i = 0; i < kPatternNames.size(); ++i)
    names += std::string(i == 0                          ? ""
                         : i + 1 == kPatternNames.size() ? " or "
                                                         : ", ") +
             std::string(kPatternNames[i].name);
  return names;
}

Result<TargetPattern> parse_target_pattern(std::string_view name) {
  for (const PatternName& entry : kPatternNames)
    if (entry.name == name) return entry.pattern;
  return Status::error("unknown target \"" + std::string(name) + "\": " + target_pattern_names());
}

Matrix target_attention(TargetPattern pattern, const Tokenization& queries,
                        const Tokenization& keys, bool cross, const AllowedKeys& allowed) {
  const auto n_query = static_cast<Eigen::Index>(queries.tokens.size());
  const auto n_key = static_cast<Eigen::Index>(keys.tokens.size());
  Matrix target = Matrix::Zero(n_query, n_key);  // (n_query, n_key)
  if (n_key == 0) return target;
  for (Eigen::Index i = 0; i < n_query; ++i) {
    std::vector<Eigen::Index> chosen;
    switch (pattern) {
      case TargetPattern::PreviousWord:
        chosen.push_back(std::clamp<Eigen::Index>(i - 1, 0, n_key - 1));
        break;
      case TargetPattern::NextWord:
        chosen.push_back(std::min(i + 1, n_key - 1));
        break;
      case TargetPattern::SameWord:
        for (Eigen::Index j = 0; j < n_key; ++j)
          if (keys.tokens[j].key == queries.tokens[i].key) chosen.push_back(j);
        break;
      case TargetPattern::FirstWord:
        chosen.push_back(0);
        break;
      case TargetPattern::PronounToNoun:
        if (const Pronoun* pronoun = find_pronoun(queries.tokens[i].key)) {
          // In cross-attention the noun may be anywhere in the source: none of it lies ahead.
          const Eigen::Index noun = noun_for(keys, cross ? n_key : i, pronoun->agreement, allowed);
          if (noun >= 0) chosen.push_back(noun);
        }
        break;
    }
    spread(target, i, chosen, allowed);
  }
  return target;
}

Matrix painted_target(const MaskMatrix& painted, const AllowedKeys& allowed) {
  Matrix target = Matrix::Zero(painted.rows(), painted.cols());  // (n_query, n_key)
  for (Eigen::Index i = 0; i < painted.rows(); ++i) {
    std::vector<Eigen::Index> chosen;
    for (Eigen::Index j = 0; j < painted.cols(); ++j)
      if (painted(i, j)) chosen.push_back(j);
    spread(target, i, chosen, allowed);
  }
  return target;
}

std::optional<UnreachablePair> unreachable_pair(const Matrix& X_query, const Matrix& X_key,
                                                const Matrix& target, const AllowedKeys& allowed) {
  const auto same_rows = [](const Matrix& X, Eigen::Index a, Eigen::Index b) {
    return (X.row(a) - X.row(b)).cwiseAbs().maxCoeff() <= 1e-6f;
  };
  const auto same_keys_allowed = [&](Eigen::Index a, Eigen::Index b) {
    for (Eigen::Index j = 0; j < target.cols(); ++j)
      if (allowed.allowed(a, j) != allowed.allowed(b, j)) return false;
    return true;
  };
  if (X_query.rows() != target.rows() || X_key.rows() != target.cols()) return std::nullopt;
  for (Eigen::Index a = 0; a < X_query.rows(); ++a)
    for (Eigen::Index b = a + 1; b < X_query.rows(); ++b)
      if (target.row(a).sum() > 0 && target.row(b).sum() > 0 && same_rows(X_query, a, b) &&
          (target.row(a) - target.row(b)).cwiseAbs().maxCoeff() > 1e-6f && same_keys_allowed(a, b))
        return UnreachablePair{false, a, b};
  for (Eigen::Index a = 0; a < X_key.rows(); ++a)
    for (Eigen::Index b = a + 1; b < X_key.rows(); ++b) {
      if (!same_rows(X_key, a, b)) continue;
      for (Eigen::Index i = 0; i < target.rows(); ++i)
        if (allowed.allowed(i, a) && allowed.allowed(i, b) &&
            std::abs(target(i, a) - target(i, b)) > 1e-6f)
          return UnreachablePair{true, a, b};
    }
  return std::nullopt;
}

Status check_fit_config(const AttentionConfig& config) {
  if (config.hard)
    return Status::error(
        "hard attention has no gradient: a small change of a weight does not change which key "
        "wins, so gradient descent cannot tell which way to move it. Turn Hard off.");
  if (config.compatibility != Compatibility::ScaledDot &&
      config.compatibility != Compatibility::Dot)
    return Status::error(
        "gradient descent here moves W_Q and W_K of dot-product scores: choose scaled dot or "
        "dot as the score.");
  if (!(config.temperature > 0) || !std::isfinite(config.temperature))
    return Status::error("gradient descent needs a temperature above 0");
  return Status::success();
}

Status fit_gradient(const FitInput& input, const Matrix& W_Q, const Matrix& W_K, FitGradient& out) {
  if (Status status = check_shapes(input, W_Q, W_K); !status.is_ok()) return status;
  const Matrix& X_query = *input.X_query;  // (n_query, d_model)
  const Matrix& X_key = *input.X_key;      // (n_key, d_model)
  const Matrix& target = *input.target;    // (n_query, n_key)
  const Eigen::Index n_query = X_query.rows();
  const Eigen::Index n_key = X_key.rows();
  const float scale = score_scale(input.config);

  // 1-3. Queries, keys, scores.
  const Matrix Q = X_query * W_Q;                     // (n_query, d_k)
  const Matrix K = X_key * W_K;                       // (n_key, d_k)
  const Matrix scores = (Q * K.transpose()) * scale;  // (n_query, n_key)
  if (!all_finite(scores)) return kScoresTooLarge;
  // 4-6. Each row's softmax over the keys it may see, its KL to the target, ∂loss/∂S.
  out.weights.setZero(n_query, n_key);
  Matrix grad_scores = Matrix::Zero(n_query, n_key);  // (n_query, n_key)
  int rows = 0;
  for (Eigen::Index i = 0; i < n_query; ++i)
    if (target.row(i).sum() > 0) ++rows;
  double loss = 0, mismatch = 0;
  for (Eigen::Index i = 0; i < n_query; ++i) {
    float largest = -std::numeric_limits<float>::infinity();
    for (Eigen::Index j = 0; j < n_key; ++j)
      if (input.allowed.allowed(i, j)) largest = std::max(largest, scores(i, j));
    if (!std::isfinite(largest)) continue;  // every key masked: α = 0
    double sum = 0;
    for (Eigen::Index j = 0; j < n_key; ++j)
      if (input.allowed.allowed(i, j)) sum += std::exp(static_cast<double>(scores(i, j) - largest));
    const double log_sum = std::log(sum);
    const bool has_target = target.row(i).sum() > 0;
    double row_mismatch = 0;
    for (Eigen::Index j = 0; j < n_key; ++j) {
      if (!input.allowed.allowed(i, j)) continue;
      const double log_weight = static_cast<double>(scores(i, j) - largest) - log_sum;
      const double weight = std::exp(log_weight);
      out.weights(i, j) = static_cast<float>(weight);
      if (!has_target) continue;
      const double wanted = target(i, j);
      if (wanted > 0) loss += wanted * (std::log(wanted) - log_weight);
      grad_scores(i, j) = static_cast<float>((weight - wanted) / rows);
      row_mismatch += std::abs(weight - wanted);
    }
    mismatch = std::max(mismatch, row_mismatch / 2);
  }
  out.loss = rows > 0 ? loss / rows : 0.0;
  out.target_rows = rows;
  out.mismatch = mismatch;
  // 7-9. Back through the scale, the products and the projections.
  grad_scores *= scale;
  const Matrix grad_Q = grad_scores * K;                  // (n_query, d_k)
  const Matrix grad_K = grad_scores.transpose() * Q;      // (n_key, d_k)
  out.grad_W_Q.noalias() = X_query.transpose() * grad_Q;  // (d_model, d_k)
  out.grad_W_K.noalias() = X_key.transpose() * grad_K;    // (d_model, d_k)
  return Status::success();
}

Status reference_fit_gradient(const FitInput& input, const Matrix& W_Q, const Matrix& W_K,
                              FitGradient& out) {
  if (Status status = check_shapes(input, W_Q, W_K); !status.is_ok()) return status;
  const Matrix& X_query = *input.X_query;
  const Matrix& X_key = *input.X_key;
  const Matrix& target = *input.target;
  const int n_query = static_cast<int>(X_query.rows());
  const int n_key = static_cast<int>(X_key.rows());
  const int d_model = static_cast<int>(X_query.cols());
  const int d_k = static_cast<int>(W_Q.cols());
  const double scale = score_scale(input.config);
  using Table = std::vector<std::vector<double>>;
  auto table = [](int rows, int cols) { return Table(rows, std::vector<double>(cols, 0.0)); };

  // 1. q_ic = Σ_m x_im W_Q[m][c]
  Table q = table(n_query, d_k), k = table(n_key, d_k);
  for (int i = 0; i < n_query; ++i)
    for (int c = 0; c < d_k; ++c)
      for (int m = 0; m < d_model; ++m) q[i][c] += X_query(i, m) * W_Q(m, c);
  // 2. k_jc = Σ_m x_jm W_K[m][c]
  for (int j = 0; j < n_key; ++j)
    for (int c = 0; c < d_k; ++c)
      for (int m = 0; m < d_model; ++m) k[j][c] += X_key(j, m) * W_K(m, c);
  // 3. s_ij = Σ_c q_ic k_jc · scale
  Table s = table(n_query, n_key);
  for (int i = 0; i < n_query; ++i)
    for (int j = 0; j < n_key; ++j) {
      for (int c = 0; c < d_k; ++c) s[i][j] += q[i][c] * k[j][c];
      s[i][j] *= scale;
    }
  for (const std::vector<double>& row : s)
    for (double score : row)
      if (!std::isfinite(static_cast<float>(score))) return kScoresTooLarge;
  // 4. α_ij = exp(s_ij) / Σ_allowed exp(s_ij')
  Table alpha = table(n_query, n_key);
  for (int i = 0; i < n_query; ++i) {
    double sum = 0;
    for (int j = 0; j < n_key; ++j)
      if (input.allowed.allowed(i, j)) sum += std::exp(s[i][j]);
    for (int j = 0; j < n_key; ++j)
      if (input.allowed.allowed(i, j) && sum > 0) alpha[i][j] = std::exp(s[i][j]) / sum;
  }
  // 5. loss = mean over target rows of Σ_j t_ij (log t_ij − log α_ij)
  int rows = 0;
  for (int i = 0; i < n_query; ++i) {
    double row_sum = 0;
    for (int j = 0; j < n_key; ++j) row_sum += target(i, j);
    if (row_sum > 0) ++rows;
  }
  double loss = 0, mismatch = 0;
  Table grad_s = table(n_query, n_key);
  for (int i = 0; i < n_query; ++i) {
    double row_sum = 0, row_mismatch = 0;
    for (int j = 0; j < n_key; ++j) row_sum += target(i, j);
    if (row_sum <= 0) continue;
    for (int j = 0; j < n_key; ++j) {
      if (!input.allowed.allowed(i, j)) continue;
      const double t = target(i, j);
      if (t > 0) loss += t * (std::log(t) - std::log(alpha[i][j]));
      // 6. ∂loss/∂s_ij = (α_ij − t_ij) / rows, 7. times the scale
      grad_s[i][j] = (alpha[i][j] - t) / rows * scale;
      row_mismatch += std::abs(alpha[i][j] - t);
    }
    mismatch = std::max(mismatch, row_mismatch / 2);
  }
  // 8. ∂q_ic = Σ_j ∂s_ij k_jc;  ∂k_jc = Σ_i ∂s_ij q_ic
  Table grad_q = table(n_query, d_k), grad_k = table(n_key, d_k);
  for (int i = 0; i < n_query; ++i)
    for (int j = 0; j < n_key; ++j)
      for (int c = 0; c < d_k; ++c) {
        grad_q[i][c] += grad_s[i][j] * k[j][c];
        grad_k[j][c] += grad_s[i][j] * q[i][c];
      }
  // 9. ∂W_Q[m][c] = Σ_i x_im ∂q_ic;  ∂W_K[m][c] = Σ_j x_jm ∂k_jc
  out.grad_W_Q.setZero(d_model, d_k);
  out.grad_W_K.setZero(d_model, d_k);
  for (int m = 0; m < d_model; ++m)
    for (int c = 0; c < d_k; ++c) {
      double gq = 0, gk = 0;
      for (int i = 0; i < n_query; ++i) gq += X_query(i, m) * grad_q[i][c];
      for (int j = 0; j < n_key; ++j) gk += X_key(j, m) * grad_k[j][c];
      out.grad_W_Q(m, c) = static_cast<float>(gq);
      out.grad_W_K(m, c) = static_cast<float>(gk);
    }
  out.weights.setZero(n_query, n_key);
  for (int i = 0; i < n_query; ++i)
    for (int j = 0; j < n_key; ++j) out.weights(i, j) = static_cast<float>(alpha[i][j]);
  out.loss = rows > 0 ? loss / rows : 0.0;
  out.target_rows = rows;
  out.mismatch = mismatch;
  return Status::success();
}

Status gradient_descent(const FitInput& input, const FitSettings& settings, int steps, Matrix& W_Q,
                        Matrix& W_K, FitGradient& last, int* steps_taken) {
  if (!(settings.learning_rate > 0) || !std::isfinite(settings.learning_rate))
    return Status::error("gradient descent needs a learning rate above 0");
  int taken = 0;
  for (int step = 0; step < steps; ++step) {
    if (Status status = fit_gradient(input, W_Q, W_K, last); !status.is_ok()) return status;
    if (last.target_rows == 0 || last.mismatch <= kFitMatched) break;
    double norm = std::sqrt(static_cast<double>(last.grad_W_Q.squaredNorm()) +
                            static_cast<double>(last.grad_W_K.squaredNorm()));
    double rate = settings.learning_rate;
    if (settings.max_step > 0 && norm * rate > settings.max_step) rate = settings.max_step / norm;
    if (!std::isfinite(norm)) return kScoresTooLarge;  // nothing moved: W_Q, W_K as they were
    W_Q -= static_cast<float>(rate) * last.grad_W_Q;
    W_K -= static_cast<float>(rate) * last.grad_W_K;
    ++taken;
  }
  if (steps_taken) *steps_taken = taken;
  if (taken > 0) return fit_gradient(input, W_Q, W_K, last);  // the weights as they are now
  return Status::success();
}

}  // namespace attnviz
