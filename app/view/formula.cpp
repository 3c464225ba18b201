#include "app/view/formula.hpp"

#include "app/view/values.hpp"
#include "core/figures/format.hpp"
#include "core/text/lexicon.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace attnviz::view {
namespace {

constexpr const char* kMinus = "\xe2\x88\x92";         // −
constexpr const char* kInfinity = "\xe2\x88\x9e";      // ∞
constexpr const char* kDot = "\xc2\xb7";               // ·
constexpr const char* kSigma = "\xce\xa3";             // Σ
constexpr const char* kRoot = "\xe2\x88\x9a";          // √
constexpr const char* kEllipsis = "\xe2\x80\xa6";      // …
constexpr const char* kAlpha = "\xce\xb1";             // α
constexpr const char* kSubscriptK = "\xe2\x82\x96";    // ₖ
constexpr const char* kSubscriptOne = "\xe2\x82\x81";  // ₁
constexpr const char* kSubscriptTwo = "\xe2\x82\x82";  // ₂

std::string number(float value) {
  return format_number(value, 2);
}

// A factor after "·" or "−": negative numbers in brackets.
std::string factor(float value) {
  std::string text = number(value);
  if (!text.empty() && text[0] == '-') return "(" + text + ")";
  return text;
}

// Up to four significant digits, no trailing zeros: 0.5, 2, 0.001, 1000.
std::string plain(float value) {
  if (!std::isfinite(value)) return number(value);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", static_cast<double>(value));
  return buffer;
}

// An index as it is shown: counted from 1 (core/figures/format.hpp).
std::string shown(Eigen::Index i) {
  return std::to_string(shown_number(i));
}

std::string element(std::string_view name, Eigen::Index i, Eigen::Index j) {
  return std::string(name) + "[" + shown(i) + "][" + shown(j) + "]";
}

}  // namespace

// -----------------------------------------------------------------------------
// Indices
// -----------------------------------------------------------------------------

std::string subscript(Eigen::Index n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  if (n < 0) out += "\xe2\x82\x8b";  // ₋
  for (const char d : digits) {
    // U+2080 + digit: E2 82 80+digit.
    out += '\xe2';
    out += '\x82';
    out += static_cast<char>(0x80 + (d - '0'));
  }
  return out;
}

std::string indexed(std::string_view name, Eigen::Index i) {
  return std::string(name) + subscript(shown_number(i));
}

std::string indexed(std::string_view name, Eigen::Index i, Eigen::Index j) {
  const auto one_digit = [](Eigen::Index k) {
    return shown_number(k) >= 0 && shown_number(k) < 10;
  };
  if (one_digit(i) && one_digit(j))
    return std::string(name) + subscript(shown_number(i)) + subscript(shown_number(j));
  return element(name, i, j);
}

// -----------------------------------------------------------------------------
// Sums of products
// -----------------------------------------------------------------------------

std::string products(const float* a, Eigen::Index a_stride, const float* b, Eigen::Index b_stride,
                     Eigen::Index n, int max_terms) {
  if (n <= 0) return "0 terms";
  const Eigen::Index listed = n <= max_terms ? n : std::max(1, max_terms);
  std::string out;
  for (Eigen::Index t = 0; t < listed; ++t) {
    if (t > 0) out += " + ";
    out += number(a[t * a_stride]);
    out += kDot;
    out += factor(b[t * b_stride]);
  }
  if (listed < n) out += std::string(" + ") + kEllipsis + " (" + std::to_string(n) + " terms)";
  return out;
}

std::string product_formula(const ProductNames& names, const Matrix& A, const Matrix& B,
                            Eigen::Index i, Eigen::Index j, float value) {
  const std::string sum = names.index == "k" ? std::string(kSigma) + kSubscriptK
                                             : std::string(kSigma) + "_" + std::string(names.index);
  std::string out = element(names.result, i, j) + " = " + sum + " " + std::string(names.left) +
                    "[" + shown(i) + "][" + std::string(names.index) + "]" + kDot +
                    std::string(names.right) + "[" + std::string(names.index) + "][" + shown(j) +
                    "] = ";
  // Row i of A (stride 1 in a row-major matrix) with column j of B (stride B's row length).
  out += products(A.row(i).data(), 1, B.data() + j, B.cols(), std::min(A.cols(), B.rows()));
  out += " = " + number(value);
  return out;
}

// -----------------------------------------------------------------------------
// The stages of one head
// -----------------------------------------------------------------------------

std::string embedding_formula(std::string_view token, Eigen::Index i, Eigen::Index d, float value,
                              std::string_view feature, bool with_position) {
  std::string out = element("X", i, d) + " = " + number(value) + ": \"" + std::string(token) +
                    "\", dimension " + shown(d);
  if (!feature.empty()) out += " (" + std::string(feature) + ")";
  if (with_position) out += ", with its sinusoidal position added";
  return out;
}

std::string dot_score_formula(const Matrix& Q, const Matrix& K, Eigen::Index i, Eigen::Index j,
                              float score) {
  return element("S", i, j) + " = " + indexed("q", i) + kDot + indexed("k", j) + " = " +
         products(Q.row(i).data(), 1, K.row(j).data(), 1, Q.cols()) + " = " + number(score);
}

std::string general_score_formula(const Matrix& QWa, const Matrix& K, Eigen::Index i,
                                  Eigen::Index j, float score) {
  const std::string q = indexed("q", i), k = indexed("k", j);
  return element("S", i, j) + " = " + q + kDot + "W_a" + kDot + k + " = (" + q + "W_a)" + kDot + k +
         " = " + products(QWa.row(i).data(), 1, K.row(j).data(), 1, QWa.cols()) + " = " +
         number(score);
}

std::string additive_score_formula(const RowVector& v_a, const Matrix& QW1, const Matrix& KW2,
                                   Eigen::Index i, Eigen::Index j, float score) {
  std::string out = element("S", i, j) + " = v_a" + kDot + "tanh(" + indexed("q", i) + "W" +
                    kSubscriptOne + " + " + indexed("k", j) + "W" + kSubscriptTwo + ") = ";
  const Eigen::Index n = std::min({v_a.size(), QW1.cols(), KW2.cols()});
  const Eigen::Index listed = n <= kMaxTerms ? n : kMaxTerms;
  for (Eigen::Index a = 0; a < listed; ++a) {
    if (a > 0) out += " + ";
    out += number(v_a[a]) + kDot + "tanh(" + number(QW1(i, a) + KW2(j, a)) + ")";
  }
  if (n == 0) out += "0 terms";
  if (listed < n) out += std::string(" + ") + kEllipsis + " (" + std::to_string(n) + " terms)";
  out += " = " + number(score);
  return out;
}

std::string cosine_score_formula(const Matrix& Q, const Matrix& K, Eigen::Index i, Eigen::Index j,
                                 float score) {
  const std::string q = indexed("q", i), k = indexed("k", j);
  const float dot = Q.row(i).dot(K.row(j));
  const float q_norm = Q.row(i).norm(), k_norm = K.row(j).norm();
  std::string out = element("S", i, j) + " = cos(" + q + ", " + k + ") = " + q + kDot + k +
                    " / (|" + q + "|" + kDot + "|" + k + "|) = ";
  if (!(q_norm * k_norm > 0.0f))
    return out + number(dot) + " / (" + number(q_norm) + kDot + number(k_norm) +
           ") = " + number(score) + ": a zero vector has no direction, so its cosine is 0";
  return out + number(dot) + " / (" + number(q_norm) + kDot + number(k_norm) +
         ") = " + number(score);
}

std::string score_formula(Compatibility compatibility, const HeadResult& head,
                          const HeadParameters& parameters, Eigen::Index i, Eigen::Index j) {
  const float score = head.raw_scores(i, j);
  switch (compatibility) {
    case Compatibility::Dot:
    case Compatibility::ScaledDot:
      return dot_score_formula(head.Q, head.K, i, j, score);
    case Compatibility::General:
      return general_score_formula(head.query_projection, head.K, i, j, score);
    case Compatibility::Additive:
      return additive_score_formula(parameters.v_a, head.query_projection, head.key_projection, i,
                                    j, score);
    case Compatibility::Cosine:
      return cosine_score_formula(head.Q, head.K, i, j, score);
  }
  return {};
}

std::string scaled_formula(Compatibility compatibility, int d_k, float temperature, Eigen::Index i,
                           Eigen::Index j, float raw, float scaled) {
  const std::string s = indexed("s", i, j), S = indexed("S", i, j);
  const bool root = compatibility == Compatibility::ScaledDot, tempered = temperature != 1.0f;
  std::string symbols = s + " = " + S, numbers = number(raw);
  if (root) {
    symbols += std::string(" / ") + kRoot + "d_k";
    numbers += std::string(" / ") + kRoot + std::to_string(d_k);
  }
  if (tempered) {
    symbols += " / T";
    numbers += " / " + plain(temperature);
  }
  if (!root && !tempered)
    return symbols + " = " + number(scaled) + " (" + std::string(to_string(compatibility)) +
           ": no scaling)";
  return symbols + " = " + numbers + " = " + number(scaled);
}

std::string mask_formula(MaskReason reason, Eigen::Index i, Eigen::Index j, float scaled,
                         float masked) {
  const std::string m = indexed("m", i, j);
  const std::string minus_infinity = std::string(kMinus) + kInfinity;
  switch (reason) {
    case MaskReason::Causal:
      return m + " = " + minus_infinity + ": key " + shown(j) + " comes after query " + shown(i) +
             " (causal mask)";
    case MaskReason::Custom:
      return m + " = " + minus_infinity + ": the custom mask hides key " + shown(j) +
             " from query " + shown(i);
    case MaskReason::None:
      break;
  }
  if (!std::isfinite(scaled))
    return m + " = " + number(masked) + ": the score overflowed the float range and was clamped";
  return m + " = " + indexed("s", i, j) + " = " + number(masked) + " (not masked)";
}

MaskReason mask_reason(bool causal, Eigen::Index i, Eigen::Index j) {
  return causal && j > i ? MaskReason::Causal : MaskReason::Custom;
}

std::string masked_cell_note(MaskReason reason) {
  switch (reason) {
    case MaskReason::Causal:
      return "masked (causal mask: a query does not see later tokens)";
    case MaskReason::Custom:
      return "masked (the scenario's mask hides this key from this query)";
    case MaskReason::None:
      break;
  }
  return {};
}

std::string softmax_formula(const float* masked_row, Eigen::Index n, Eigen::Index i, Eigen::Index j,
                            float alpha) {
  const std::string a = indexed(kAlpha, i, j);
  float row_max = -std::numeric_limits<float>::infinity();
  for (Eigen::Index k = 0; k < n; ++k) row_max = std::max(row_max, masked_row[k]);
  if (is_masked(row_max))
    return a + " = 0: every key is masked for query " + shown(i) + ", so there is no softmax";
  if (is_masked(masked_row[j])) return a + " = 0: masked (exp(" + kMinus + kInfinity + ") = 0)";
  double sum = 0;
  for (Eigen::Index k = 0; k < n; ++k)
    if (!is_masked(masked_row[k])) sum += std::exp(static_cast<double>(masked_row[k]) - row_max);
  char sum_text[32];
  std::snprintf(sum_text, sizeof sum_text, "%.3f", sum);
  // The key index of the sum: a subscript k ("s₄ₖ") when i is a single digit.
  const std::string s_ij = indexed("s", i, j);
  const std::string s_ik = shown_number(i) >= 0 && shown_number(i) < 10
                               ? "s" + subscript(shown_number(i)) + kSubscriptK
                               : "s[" + shown(i) + "][k]";
  return a + " = exp(" + s_ij + " " + kMinus + " max) / " + kSigma + kSubscriptK + " exp(" + s_ik +
         " " + kMinus + " max) = exp(" + number(masked_row[j]) + " " + kMinus + " " +
         factor(row_max) + ") / " + sum_text + " = " + format_number(alpha, 3);
}

std::string hardmax_formula(const float* masked_row, Eigen::Index n, Eigen::Index i, Eigen::Index j,
                            float alpha) {
  const std::string a = indexed(kAlpha, i, j);
  Eigen::Index best = -1;
  float best_score = -std::numeric_limits<float>::infinity();
  for (Eigen::Index k = 0; k < n; ++k)
    if (masked_row[k] > best_score) best_score = masked_row[k], best = k;
  if (best < 0) return a + " = 0: every key is masked for query " + shown(i);
  if (is_masked(masked_row[j])) return a + " = 0: masked";
  if (best == j)
    return a + " = " + format_number(alpha, 0) + ": key " + shown(j) +
           " has the largest score of query " + shown(i) + " (" + number(best_score) +
           "; hard attention)";
  return a + " = " + format_number(alpha, 0) + ": key " + shown(best) + " has the largest score (" +
         number(best_score) + " > " + number(masked_row[j]) + "; hard attention)";
}

std::string head_output_formula(const Matrix& weights, const Matrix& V, Eigen::Index i,
                                Eigen::Index j, float value) {
  return product_formula({"out", kAlpha, "V", "k"}, weights, V, i, j, value);
}

std::string concat_formula(int d_v, Eigen::Index i, Eigen::Index c, float value) {
  const Eigen::Index head = d_v > 0 ? c / d_v : 0, column = d_v > 0 ? c % d_v : c;
  return element("concat", i, c) + " = " + element("out", i, column) + " of head " + shown(head) +
         " = " + number(value);
}

std::string output_formula(const Matrix& concat, const Matrix& W_O, Eigen::Index i, Eigen::Index j,
                           float value) {
  return product_formula({"output", "concat", "W_O", "c"}, concat, W_O, i, j, value);
}

// -----------------------------------------------------------------------------
// A real model's block
// -----------------------------------------------------------------------------

std::string norm_formula(bool layer_norm, const float* row, Eigen::Index n, Eigen::Index i,
                         Eigen::Index d, float gamma, float beta, float epsilon, float value) {
  double mean = 0, squares = 0;
  for (Eigen::Index k = 0; k < n; ++k) mean += row[k];
  mean = n > 0 ? mean / static_cast<double>(n) : 0.0;
  for (Eigen::Index k = 0; k < n; ++k) {
    const double centred = layer_norm ? row[k] - mean : row[k];
    squares += centred * centred;
  }
  const double spread =
      std::sqrt((n > 0 ? squares / static_cast<double>(n) : 0.0) + static_cast<double>(epsilon));
  const std::string x = element("x", i, d), g = "\xce\xb3" + subscript(d + 1);
  const float x_value = row[d];
  if (!layer_norm)
    return element("n", i, d) + " = " + x + " / rms" + kDot + g + " = " + number(x_value) + " / " +
           number(static_cast<float>(spread)) + kDot + factor(gamma) + " = " + number(value);
  const std::string b = "\xce\xb2" + subscript(d + 1);
  return element("n", i, d) + " = (" + x + " \xe2\x88\x92 \xce\xbc) / \xcf\x83" + kDot + g + " + " +
         b + " = (" + number(x_value) + " \xe2\x88\x92 " + factor(static_cast<float>(mean)) +
         ") / " + number(static_cast<float>(spread)) + kDot + factor(gamma) + " + " + factor(beta) +
         " = " + number(value);
}

std::string sum_formula(std::string_view result, std::string_view left, std::string_view right,
                        Eigen::Index i, Eigen::Index j, float a, float b, float value) {
  return element(result, i, j) + " = " + element(left, i, j) + " + " + element(right, i, j) +
         " = " + number(a) + " + " + factor(b) + " = " + number(value);
}

// -----------------------------------------------------------------------------
// One dimension of a score
// -----------------------------------------------------------------------------

std::string contribution_formula(std::string_view left, std::string_view right, Eigen::Index d,
                                 float a, float b) {
  const std::string index = "[" + shown(d) + "]";
  return std::string(left) + index + kDot + std::string(right) + index + " = " + number(a) + kDot +
         factor(b) + " = " + number(a * b);
}

std::string hidden_unit_formula(Eigen::Index i, Eigen::Index j, Eigen::Index unit, float query_part,
                                float key_part) {
  const std::string index = "[" + shown(unit) + "]";
  return "h" + index + " = tanh(" + indexed("q", i) + "W" + kSubscriptOne + index + " + " +
         indexed("k", j) + "W" + kSubscriptTwo + index + ") = tanh(" + number(query_part) + " + " +
         factor(key_part) + ") = " + number(std::tanh(query_part + key_part));
}

// -----------------------------------------------------------------------------
// Wrapping
// -----------------------------------------------------------------------------

std::vector<std::string_view> wrap_at_spaces(
    std::string_view text, float max_width,
    const std::function<float(std::string_view)>& width_of) {
  std::vector<std::string_view> lines;
  std::size_t paragraph_start = 0;
  while (paragraph_start <= text.size()) {
    const std::size_t newline = text.find('\n', paragraph_start);
    const std::size_t paragraph_end = newline == std::string_view::npos ? text.size() : newline;
    const std::string_view paragraph =
        text.substr(paragraph_start, paragraph_end - paragraph_start);
    // Greedy: extend the line word by word while it fits.
    std::size_t line_start = 0;
    while (true) {
      while (line_start < paragraph.size() && paragraph[line_start] == ' ') ++line_start;
      if (line_start >= paragraph.size()) break;
      std::size_t line_end = paragraph.find(' ', line_start);  // at least one word
      if (line_end == std::string_view::npos) line_end = paragraph.size();
      while (line_end < paragraph.size()) {
        std::size_t next = paragraph.find(' ', line_end + 1);
        if (next == std::string_view::npos) next = paragraph.size();
        if (width_of(paragraph.substr(line_start, next - line_start)) > max_width) break;
        line_end = next;
      }
      lines.push_back(paragraph.substr(line_start, line_end - line_start));
      line_start = line_end;
    }
    if (paragraph.empty()) lines.push_back(paragraph);  // a blank line stays
    if (newline == std::string_view::npos) break;
    paragraph_start = newline + 1;
  }
  return lines;
}

// -----------------------------------------------------------------------------
// A cell of any stage of a block
// -----------------------------------------------------------------------------
namespace {

// Q, K, V: input·W (+ b), then for Q and K under RoPE the turn of the pair by position.
std::string projection_formula(const StageRecipe& recipe, Eigen::Index i, Eigen::Index j,
                               float value) {
  const Matrix& input = *recipe.input;
  const Matrix& W = *recipe.weight;
  const bool biased = recipe.bias && recipe.bias->size() > 0;
  // A one-layer run's: the engine's own value; a model's: the product recomputed here, then the
  // bias and the turn added to it.
  if (recipe.layer < 0 && !biased && !recipe.rotary)
    return product_formula({recipe.result_name, recipe.input_name, recipe.weight_name, "d"}, input,
                           W, i, j, value);
  const float product = input.row(i).dot(W.col(j));
  std::string formula = product_formula(
      {recipe.result_name, recipe.input_name, recipe.weight_name, "d"}, input, W, i, j, product);
  // The bias's entry; 0 without one (recipe.bias is then null or empty).
  const auto bias = [&](Eigen::Index col) { return biased ? (*recipe.bias)(col) : 0.0f; };
  if (biased)  // a negative term in brackets, as the formulas write it
    formula += "\n + b[" + std::to_string(shown_number(j)) + "] = " + format_number(product, 2) +
               " + " +
               (bias(j) < 0 ? "(" + format_number(bias(j), 2) + ")" : format_number(bias(j), 2)) +
               " = " + format_number(product + bias(j), 2);
  if (recipe.rotary && recipe.positions) {  // the pair (2m, 2m + 1) turned by position · θ^(−2m/d)
    const Eigen::Index first = j - j % 2;
    const int d_head = static_cast<int>(W.cols());
    const auto before = [&](Eigen::Index col) { return input.row(i).dot(W.col(col)) + bias(col); };
    const int position = (*recipe.positions)[static_cast<std::size_t>(i)];
    const double angle = position * std::pow(static_cast<double>(recipe.rope_theta),
                                             -static_cast<double>(first) / d_head);
    const std::string a = format_number(before(first), 2), b = format_number(before(first + 1), 2);
    char turn[200];
    std::snprintf(turn, sizeof turn,
                  "\nthen RoPE turns the pair (%s, %s) of dimensions %d, %d by position %d "
                  "\xc3\x97 %g^(\xe2\x88\x92%d/%d) = %.2f rad: %s",
                  a.c_str(), b.c_str(), shown_number(first), shown_number(first + 1), position,
                  static_cast<double>(recipe.rope_theta), static_cast<int>(first), d_head, angle,
                  j % 2 == 0 ? "a\xc2\xb7"
                               "cos \xe2\x88\x92 b\xc2\xb7sin"
                             : "a\xc2\xb7sin + b\xc2\xb7"
                               "cos");
    formula += std::string(turn) + " = " + format_number(value, 2);
  }
  return formula;
}

std::string cell_name(std::string_view matrix, Eigen::Index i, Eigen::Index j) {
  return std::string(matrix) + "[" + std::to_string(shown_number(i)) + "][" +
         std::to_string(shown_number(j)) + "]";
}

}  // namespace

ExplainedCell explain_cell(const BlockStage& stage, Eigen::Index i, Eigen::Index j,
                           const std::function<std::string(StageAxis, Eigen::Index)>& token_name) {
  using Kind = StageRecipe::Kind;
  const StageRecipe& recipe = stage.recipe;
  const float value = (*stage.matrix)(i, j);
  // Token i of the rows, token j of the columns: asked only where rows or columns are tokens.
  const auto query = [&] { return token_name(StageAxis::Queries, i); };
  const auto key = [&] { return token_name(StageAxis::Keys, j); };
  const auto row_name = [&] { return token_name(stage.rows, i); };
  // ", layer 2": the layer, in a run of more than one.
  const std::string in_layer =
      recipe.layer >= 0 ? ", layer " + std::to_string(shown_number(recipe.layer)) : "";
  // Only for stages whose columns are keys: another stage's column j is no token.
  const auto pair = [&] { return "query \"" + query() + "\" \xe2\x86\x92 key \"" + key() + "\""; };
  const HeadResult* h = recipe.head_result;
  const AttentionConfig* c = recipe.config;
  ExplainedCell out;
  switch (recipe.kind) {
    case Kind::None:
      break;
    case Kind::Embedding: {
      const bool source = stage.rows == StageAxis::Keys;
      const bool lexicon =
          recipe.sources && static_cast<std::size_t>(i) < recipe.sources->size() &&
          (*recipe.sources)[static_cast<std::size_t>(i)] == EmbeddingSource::Lexicon;
      const std::string_view feature = lexicon && static_cast<std::size_t>(j) < kFeatureCount
                                           ? kFeatureNames[static_cast<std::size_t>(j)]
                                           : std::string_view();
      out.heading = std::string("embedding of ") + (source ? "key" : "token") + " " +
                    std::to_string(shown_number(i)) + " \"" + row_name() + "\"";
      out.formula = embedding_formula(row_name(), i, j, value, feature, recipe.with_position);
      break;
    }
    case Kind::Residual:
      out.heading =
          "\"" + query() + "\" entering layer " + std::to_string(shown_number(recipe.layer));
      out.formula = cell_name("x", i, j) + " = " + format_number(value, 3) +
                    (recipe.layer > 0 ? ": the residual stream after layer " +
                                            std::to_string(shown_number(recipe.layer - 1))
                     : recipe.norms_after
                         ? ": LayerNorm of the token's embedding + its position's + its type's"
                     : recipe.rotary ? ": the token's embedding (positions enter through RoPE)"
                                     : ": the token's embedding + its position's");
      break;
    case Kind::Norm:
      out.heading =
          "\"" + query() + "\" normalized (" + (recipe.layer_norm ? "LayerNorm" : "RMSNorm") + ")";
      if (recipe.input && recipe.gamma)
        out.formula = norm_formula(recipe.layer_norm, recipe.input->row(i).data(),
                                   recipe.input->cols(), i, j, recipe.gamma[j],
                                   recipe.beta ? recipe.beta[j] : 0.0f, recipe.epsilon, value);
      break;
    case Kind::Projection: {
      const bool query_side = stage.id == StageId::Q;
      const char* what = query_side ? "query" : (stage.id == StageId::K ? "key" : "value");
      out.heading =
          std::string(what) + " vector of \"" + row_name() + "\"" + in_layer + ", " +
          (recipe.kv_head >= 0 ? "key/value head " : "head ") +
          std::to_string(shown_number(recipe.kv_head >= 0 ? recipe.kv_head : recipe.head));
      if (recipe.input && recipe.weight) out.formula = projection_formula(recipe, i, j, value);
      break;
    }
    case Kind::Scores: {
      static const HeadParameters no_parameters{};
      out.heading = "score: " + pair();
      if (h && c && (c->compatibility != Compatibility::Additive || recipe.parameters))
        out.formula = score_formula(c->compatibility, *h,
                                    recipe.parameters ? *recipe.parameters : no_parameters, i, j);
      break;
    }
    case Kind::Scaling:
      out.heading = "scaled score: " + pair();
      if (h && c)
        out.formula = scaled_formula(c->compatibility, c->d_k, c->temperature, i, j,
                                     h->raw_scores(i, j), value);
      break;
    case Kind::Mask: {
      out.heading = "masked score: " + pair();
      if (h && c) {
        const MaskReason reason =
            is_masked(value) ? mask_reason(c->causal, i, j) : MaskReason::None;
        out.formula = mask_formula(reason, i, j, h->scaled_scores(i, j), value);
      }
      break;
    }
    case Kind::Softmax:
    case Kind::Hardmax:
      out.heading = "weight: " + pair();
      if (h)
        out.formula = recipe.kind == Kind::Hardmax
                          ? hardmax_formula(h->masked_scores.row(i).data(), h->masked_scores.cols(),
                                            i, j, value)
                          : softmax_formula(h->masked_scores.row(i).data(), h->masked_scores.cols(),
                                            i, j, value);
      break;
    case Kind::SetPattern:
      out.heading = "weight: query \"" + query() + "\", set by hand";
      out.formula = "\xce\xb1" + cell_name("", i, j) + " = " + format_number(value, 3) +
                    (recipe.pattern == HeadIntervention::Pattern::Uniform
                         ? ": every key up to the query alike (the pattern was set to uniform)"
                         : ": all on the previous token (the pattern was set to previous token)");
      break;
    case Kind::WeightedSum:
      out.heading = "output of head " + std::to_string(shown_number(recipe.head)) + " for \"" +
                    query() + "\"";
      if (h) out.formula = head_output_formula(h->weights, h->V, i, j, value);
      break;
    case Kind::Concat: {
      out.heading = "every head's output side by side, \"" + query() + "\"";
      out.formula = concat_formula(recipe.d_v, i, j, value);
      const std::size_t of = recipe.d_v > 0 ? static_cast<std::size_t>(j / recipe.d_v) : 0;
      const float scale = of < recipe.head_scales.size() ? recipe.head_scales[of] : 1.0f;
      if (scale != 1.0f)
        out.formula += "\n(head " + std::to_string(shown_number(static_cast<Eigen::Index>(of))) +
                       "'s output \xc3\x97 " + format_number(scale, 2) +
                       (scale == 0.0f ? ": knocked out)" : ")");
      break;
    }
    case Kind::OutputProjection: {
      out.heading = recipe.layer >= 0 ? "the attention output for \"" + query() + "\"" + in_layer
                                      : "the layer's output for \"" + query() + "\"";
      if (!recipe.other || !recipe.weight) break;
      const bool biased = recipe.bias && recipe.bias->size() > 0;
      const float bias = biased ? (*recipe.bias)(j) : 0.0f;
      out.formula = output_formula(*recipe.other, *recipe.weight, i, j, value - bias);
      if (biased)
        out.formula += "\n + b_O[" + std::to_string(shown_number(j)) + "] (" +
                       format_number(bias, 2) + ") = " + format_number(value, 2);
      break;
    }
    case Kind::Sum:
      out.heading =
          stage.id == StageId::ResidualOut
              ? "\"" + query() + "\" leaving layer " + std::to_string(shown_number(recipe.layer))
          : stage.id == StageId::MlpSum
              ? "\"" + query() + "\" after the MLP, before its norm" + in_layer
              : "\"" + query() + "\" after attention" + in_layer;
      if (recipe.input && recipe.other)
        out.formula = sum_formula(recipe.result_name, recipe.input_name, recipe.other_name, i, j,
                                  (*recipe.input)(i, j), (*recipe.other)(i, j), value);
      break;
    case Kind::Mlp:
      out.heading = "the MLP's output for \"" + query() + "\"" + in_layer;
      out.formula = cell_name("m", i, j) + " = " + format_number(value, 3) +
                    (recipe.norms_after ? ": x\xe2\x80\xb2" : ": norm\xe2\x82\x82(x\xe2\x80\xb2)") +
                    " through " + std::to_string(recipe.d_ff) + " hidden units (" +
                    (recipe.swiglu ? "SwiGLU" : "GELU") + ") and back to " +
                    std::to_string(recipe.d_model) + " dimensions, for this token alone";
      break;
  }
  if (out.formula.empty())
    out.formula =
        "= " + format_number(value, 3) + " (the weights changed since this result was computed)";
  return out;
}

}  // namespace attnviz::view
