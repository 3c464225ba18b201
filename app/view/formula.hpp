// Formulas filled with numbers: the text of the tooltips that say how one number of the
// computation was produced ("Q[2][1] = Σ_d X[2][d]·W_Q[d][1] = 0.00·3.00 + 1.00·0.00 = 4.00").
// Pure functions on Eigen matrices: no ImGui, so they are unit-tested.
//
// Conventions: numbers print as view::format_number prints them (never "nan" or "inf" as a
// number); a negative factor after "·" is put in brackets; at most kMaxTerms terms of a sum are
// listed, then "… (n terms)". Indices are the engine's (from 0) and print as the app counts, from 1
// (core/figures/format.hpp: shown_number): row 0 of Q is "Q[1]", query 0's vector "q₁". They are
// subscripts where they stay readable (s₄₃), brackets otherwise (s[12][3]). Only glyphs the app's
// font atlas holds are used (no ᵀ or ⱼ: the key index of a sum is k, the transpose is ⊤).
#pragma once

#include "core/base/types.hpp"
#include "core/engine/attention.hpp"
#include "core/pipeline/run.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::view {

inline constexpr int kMaxTerms = 8;

// -----------------------------------------------------------------------------
// Indices
// -----------------------------------------------------------------------------
// "₁₂" for 12: Unicode subscript digits.
std::string subscript(Eigen::Index n);
// "q₄" for index 3: one index, as a subscript (counted from 1).
std::string indexed(std::string_view name, Eigen::Index i);
// "s₄₃" for indices 3 and 2, when both shown numbers are single digits, else "s[12][3]".
std::string indexed(std::string_view name, Eigen::Index i, Eigen::Index j);

// -----------------------------------------------------------------------------
// Sums of products
// -----------------------------------------------------------------------------
// "a₀·b₀ + a₁·b₁ + …" for n pairs read with strides: "0.00·3.00 + 1.00·(-0.50)"; past
// max_terms, "… (n terms)". "0 terms" for n = 0.
std::string products(const float* a, Eigen::Index a_stride, const float* b, Eigen::Index b_stride,
                     Eigen::Index n, int max_terms = kMaxTerms);

// Entry (i, j) of the product A·B:
//   "Q[2][1] = Σ_d X[2][d]·W_Q[d][1] = 0.00·3.00 + 1.00·0.00 = 4.00"
// `value` is the entry as the engine computed it. The index letter prints as a subscript of Σ
// when one exists (k: Σₖ), else after an underscore (Σ_d).
struct ProductNames {
  std::string_view result;  // "Q"
  std::string_view left;    // "X"
  std::string_view right;   // "W_Q"
  std::string_view index;   // "d"
};
std::string product_formula(const ProductNames& names, const Matrix& A, const Matrix& B,
                            Eigen::Index i, Eigen::Index j, float value);

// -----------------------------------------------------------------------------
// The stages of one head
// -----------------------------------------------------------------------------
// X[i][d]: "X[3][5] = 1.00: "eat", dimension 5 (action)" for i = 2, d = 4. `feature` may be empty;
// `with_position` adds that the sinusoidal position is included.
std::string embedding_formula(std::string_view token, Eigen::Index i, Eigen::Index d, float value,
                              std::string_view feature, bool with_position);

// dot, scaled_dot: "S[4][3] = q₄·k₃ = 4.00·2.40 + 0.00·1.00 = 9.60"
std::string dot_score_formula(const Matrix& Q, const Matrix& K, Eigen::Index i, Eigen::Index j,
                              float score);
// general (QW_a = Q·W_a): "S[4][3] = q₄·W_a·k₃ = (q₄W_a)·k₃ = 1.00·2.00 + … = 2.00"
std::string general_score_formula(const Matrix& QWa, const Matrix& K, Eigen::Index i,
                                  Eigen::Index j, float score);
// additive (QW1 = Q·W_1, KW2 = K·W_2):
//   "S[4][3] = v_a·tanh(q₄W₁ + k₃W₂) = 0.50·tanh(0.90) + … = 0.36"
std::string additive_score_formula(const RowVector& v_a, const Matrix& QW1, const Matrix& KW2,
                                   Eigen::Index i, Eigen::Index j, float score);
// cosine: "S[4][3] = cos(q₄, k₃) = q₄·k₃ / (|q₄|·|k₃|) = 6.00 / (5.00·2.00) = 0.60"; with a zero
// vector, that the cosine is 0 by definition.
std::string cosine_score_formula(const Matrix& Q, const Matrix& K, Eigen::Index i, Eigen::Index j,
                                 float score);
// Whichever of the four applies to `compatibility`, from the head's intermediates.
std::string score_formula(Compatibility compatibility, const HeadResult& head,
                          const HeadParameters& parameters, Eigen::Index i, Eigen::Index j);

// The scaling stage: "s₄₃ = S₄₃ / √d_k = 9.60 / √4 = 4.80", "… / √d_k / T = 9.60 / √4 / 0.5 = …",
// "s₄₃ = S₄₃ / T = 9.60 / 0.5 = 19.20", or "s₄₃ = S₄₃ = 9.60 (dot: no scaling)".
std::string scaled_formula(Compatibility compatibility, int d_k, float temperature, Eigen::Index i,
                           Eigen::Index j, float raw, float scaled);
// The name of the scaling stage (core/base/types.hpp): "÷√d_k", "÷√d_k ÷T", "÷T", "no scaling".
using attnviz::scaling_stage_name;

// Why a score is masked.
enum class MaskReason { None, Causal, Custom };
// "m₄₃ = s₄₃ = 4.80 (not masked)", "m₁₃ = −∞: key 3 comes after query 1 (causal mask)",
// "m₁₃ = −∞: the custom mask hides key 3 from query 1"; a score that overflowed says that it
// was clamped.
std::string mask_formula(MaskReason reason, Eigen::Index i, Eigen::Index j, float scaled,
                         float masked);
// Why a masked score (query i, key j) is masked: with a causal mask a key after the query is
// hidden by it; any other by the scenario's own mask.
MaskReason mask_reason(bool causal, Eigen::Index i, Eigen::Index j);
// What a masked cell says when it is hovered: "masked (causal mask: a query does not see later
// tokens)", "masked (the scenario's mask hides this key from this query)"; "" for None.
std::string masked_cell_note(MaskReason reason);

// α from one row of masked scores (-inf = masked), n entries:
//   "α₄₃ = exp(s₄₃ − max) / Σₖ exp(s₄ₖ − max) = exp(4.80 − 4.80) / 1.353 = 0.739"
// masked key: "α₄₃ = 0: masked (exp(−∞) = 0)"; every key masked: says so.
std::string softmax_formula(const float* masked_row, Eigen::Index n, Eigen::Index i, Eigen::Index j,
                            float alpha);
// Hard attention: "α₄₃ = 1: key 3 has the largest score of query 4 (4.80; hard attention)", or
// 0 with the winning key named.
std::string hardmax_formula(const float* masked_row, Eigen::Index n, Eigen::Index i, Eigen::Index j,
                            float alpha);

// The head's output: "out[4][1] = Σₖ α[4][k]·V[k][1] = 0.01·0.00 + … = 0.54".
std::string head_output_formula(const Matrix& weights, const Matrix& V, Eigen::Index i,
                                Eigen::Index j, float value);
// concat[i][c] comes from head c / d_v: "concat[4][5] = out[4][1] of head 2 = 0.54" (d_v = 4).
std::string concat_formula(int d_v, Eigen::Index i, Eigen::Index c, float value);
// The final output: "output[4][1] = Σ_c concat[4][c]·W_O[c][1] = … = 0.54".
std::string output_formula(const Matrix& concat, const Matrix& W_O, Eigen::Index i, Eigen::Index j,
                           float value);

// -----------------------------------------------------------------------------
// A real model's block (the Pipeline view in model mode)
// -----------------------------------------------------------------------------
// One entry of a normalized row, from the row itself (`row`, n entries), the norm's weight γ_d
// and (LayerNorm) bias β_d:
//   LayerNorm: "n[4][2] = (x[4][2] − μ) / σ · γ₂ + β₂ = (0.52 − 0.01) / 0.98 · 1.02 + 0.00 = 0.53"
//   RMSNorm:   "n[4][2] = x[4][2] / rms · γ₂ = 0.52 / 0.98 · 1.02 = 0.54"
// with μ, σ = √(var + ε) or rms = √(mean(x²) + ε) computed here (in double).
std::string norm_formula(bool layer_norm, const float* row, Eigen::Index n, Eigen::Index i,
                         Eigen::Index d, float gamma, float beta, float epsilon, float value);
// A sum of two matrices' entries: "x′[4][2] = x[4][2] + attn[4][2] = 0.50 + 0.20 = 0.70".
std::string sum_formula(std::string_view result, std::string_view left, std::string_view right,
                        Eigen::Index i, Eigen::Index j, float a, float b, float value);

// -----------------------------------------------------------------------------
// One dimension of a score (the Neuron view)
// -----------------------------------------------------------------------------
// "q₄[2]·k₃[2] = 4.00·2.40 = 9.60": one term of a dot product (the product is computed here).
std::string contribution_formula(std::string_view left, std::string_view right, Eigen::Index d,
                                 float a, float b);
// One hidden unit of the additive scorer: "h[2] = tanh(q₄W₁[2] + k₃W₂[2]) = tanh(0.40 + 0.50) =
// 0.72".
std::string hidden_unit_formula(Eigen::Index i, Eigen::Index j, Eigen::Index unit, float query_part,
                                float key_part);

// -----------------------------------------------------------------------------
// A cell of any stage of a block (the Pipeline view), from how the stage was computed
// -----------------------------------------------------------------------------
// The heading and formula of cell (i, j) of `stage`, for every family of model alike: the
// stage's recipe (core/pipeline/run.hpp) says which operands made it. `token_name(axis, k)` is
// how token k of the queries (StageAxis::Queries) or of the keys (StageAxis::Keys) reads. A
// recipe without its operands gives the number alone, and says why.
struct ExplainedCell {
  std::string heading;
  std::string formula;
};
ExplainedCell explain_cell(const BlockStage& stage, Eigen::Index i, Eigen::Index j,
                           const std::function<std::string(StageAxis, Eigen::Index)>& token_name);

// -----------------------------------------------------------------------------
// Wrapping
// -----------------------------------------------------------------------------
// The text's lines at most `max_width` wide as `width_of` measures them, broken only at spaces
// and at its own '\n's: a number ("0.30", "-1.20e+38") or a product ("0.50·(-0.54)") is never
// split, as ImGui's wrapping splits after a '.' or ','. A word wider than the line has a line of
// its own. Spaces at a break are dropped.
std::vector<std::string_view> wrap_at_spaces(
    std::string_view text, float max_width, const std::function<float(std::string_view)>& width_of);

}  // namespace attnviz::view
