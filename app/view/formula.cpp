#include "app/view/formula.hpp"

#include "app/view/values.hpp"
#include "core/figures/format.hpp"

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

std::string_view scaling_stage_name(Compatibility compatibility, float temperature) {
  const bool root = compatibility == Compatibility::ScaledDot, tempered = temperature != 1.0f;
  if (root && tempered)
    return "\xc3\xb7\xe2\x88\x9a"
           "d_k \xc3\xb7T";
  if (root)
    return "\xc3\xb7\xe2\x88\x9a"
           "d_k";
  if (tempered) return "\xc3\xb7T";
  return "no scaling";
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

}  // namespace attnviz::view
