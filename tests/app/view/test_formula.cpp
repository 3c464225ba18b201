// Formulas filled with numbers (app/view/formula.hpp), one behaviour per case. Every expected
// string is worked out by hand from the inputs written next to it; indices print counted from 1
// (index 0 is "1").
#include "app/view/formula.hpp"

#include <doctest/doctest.h>

#include "tests/support/matrix_of.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace attnviz::view {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

Matrix matrix(Eigen::Index rows, Eigen::Index cols, std::initializer_list<float> values) {
  return testing::matrix_of(rows, cols, values);
}

TEST_CASE("subscript writes every digit as a Unicode subscript") {
  CHECK(subscript(0) == "₀");
  CHECK(subscript(12) == "₁₂");
  CHECK(subscript(907) == "₉₀₇");
}

TEST_CASE("one index is always a subscript") {
  CHECK(indexed("q", 4) == "q₅");  // index 4 is the fifth: counted from 1
  CHECK(indexed("q", 15) == "q₁₆");
}

TEST_CASE("two single digit indices are subscripts") {
  CHECK(indexed("s", 4, 3) == "s₅₄");
  CHECK(indexed("s", 8, 0) == "s₉₁");
}

TEST_CASE("two indices with a long one use brackets") {
  CHECK(indexed("s", 12, 3) == "s[13][4]");
  CHECK(indexed("s", 9, 0) == "s[10][1]");  // index 9 is shown as 10
  CHECK(indexed("s", 1, 10) == "s[2][11]");
}

TEST_CASE("products lists every term of a short sum") {
  const float a[] = {0, 1, 2}, b[] = {3, 0, 1};
  CHECK(products(a, 1, b, 1, 3) == "0.00·3.00 + 1.00·0.00 + 2.00·1.00");
}

TEST_CASE("products puts a negative second factor in brackets") {
  const float a[] = {-1, 0.5f}, b[] = {2, -0.5f};
  CHECK(products(a, 1, b, 1, 2) == "-1.00·2.00 + 0.50·(-0.50)");
}

TEST_CASE("products reads its factors with the given strides") {
  // a = 1, 2 (every other entry), b = 10, 20 (every third entry).
  const float a[] = {1, 9, 2, 9}, b[] = {10, 9, 9, 20, 9, 9};
  CHECK(products(a, 2, b, 3, 2) == "1.00·10.00 + 2.00·20.00");
}

TEST_CASE("products lists eight terms of a long sum and then counts them") {
  float a[10], b[10];
  for (int t = 0; t < 10; ++t) a[t] = 1, b[t] = static_cast<float>(t);
  CHECK(products(a, 1, b, 1, 10) ==
        "1.00·0.00 + 1.00·1.00 + 1.00·2.00 + 1.00·3.00 + 1.00·4.00 + 1.00·5.00 + 1.00·6.00 + "
        "1.00·7.00 + … (10 terms)");
}

TEST_CASE("products never prints NaN as a number") {
  const float a[] = {std::numeric_limits<float>::quiet_NaN()}, b[] = {1};
  CHECK(products(a, 1, b, 1, 1) == "overflow·1.00");
}

TEST_CASE("a projection entry is the sum over d of X row times W column") {
  // X row 2 = (0, 1, 2); W_Q column 1 = (3, 0, 1): 0·3 + 1·0 + 2·1 = 2.
  const Matrix X = matrix(3, 3, {9, 9, 9, 9, 9, 9, 0, 1, 2});
  const Matrix W = matrix(3, 2, {9, 3, 9, 0, 9, 1});
  CHECK(product_formula({"Q", "X", "W_Q", "d"}, X, W, 2, 1, 2.0f) ==
        "Q[3][2] = Σ_d X[3][d]·W_Q[d][2] = 0.00·3.00 + 1.00·0.00 + 2.00·1.00 = 2.00");
}

TEST_CASE("an embedding entry names its token and feature") {
  CHECK(embedding_formula("eat", 2, 4, 1.0f, "action", false) ==
        "X[3][5] = 1.00: \"eat\", dimension 5 (action)");
}

TEST_CASE("an embedding entry with positions says the position is added") {
  CHECK(embedding_formula("zyx", 0, 9, -0.25f, "", true) ==
        "X[1][10] = -0.25: \"zyx\", dimension 10, with its sinusoidal position added");
}

TEST_CASE("a dot score is q times k summed") {
  // q₁ = (4, 0), k₀ = (2.4, 1): 4·2.4 + 0·1 = 9.6.
  const Matrix Q = matrix(2, 2, {9, 9, 4, 0});
  const Matrix K = matrix(1, 2, {2.4f, 1});
  CHECK(dot_score_formula(Q, K, 1, 0, 9.6f) == "S[2][1] = q₂·k₁ = 4.00·2.40 + 0.00·1.00 = 9.60");
}

TEST_CASE("a general score multiplies q W_a by k") {
  // q₀W_a = (1, 3), k₀ = (2, -1): 1·2 + 3·(-1) = -1.
  const Matrix QWa = matrix(1, 2, {1, 3});
  const Matrix K = matrix(1, 2, {2, -1});
  CHECK(general_score_formula(QWa, K, 0, 0, -1.0f) ==
        "S[1][1] = q₁·W_a·k₁ = (q₁W_a)·k₁ = 1.00·2.00 + 3.00·(-1.00) = -1.00");
}

TEST_CASE("an additive score sums v_a times tanh of the hidden units") {
  // q₀W₁ = (0.4, -1), k₁W₂ = (0.5, 1): hidden inputs 0.9 and 0; 0.5·tanh(0.9) + 2·tanh(0) = 0.358.
  const RowVector v_a = (RowVector(2) << 0.5f, 2.0f).finished();
  const Matrix QW1 = matrix(1, 2, {0.4f, -1});
  const Matrix KW2 = matrix(2, 2, {9, 9, 0.5f, 1});
  CHECK(additive_score_formula(v_a, QW1, KW2, 0, 1, 0.358f) ==
        "S[1][2] = v_a·tanh(q₁W₁ + k₂W₂) = 0.50·tanh(0.90) + 2.00·tanh(0.00) = 0.36");
}

TEST_CASE("a cosine score divides the dot product by the norms") {
  // q = (3, 4), k = (2, 0): 6 / (5·2) = 0.6.
  const Matrix Q = matrix(1, 2, {3, 4});
  const Matrix K = matrix(1, 2, {2, 0});
  CHECK(cosine_score_formula(Q, K, 0, 0, 0.6f) ==
        "S[1][1] = cos(q₁, k₁) = q₁·k₁ / (|q₁|·|k₁|) = 6.00 / (5.00·2.00) = 0.60");
}

TEST_CASE("a cosine with a zero vector says it is 0 by definition") {
  const Matrix Q = matrix(1, 2, {0, 0});
  const Matrix K = matrix(1, 2, {2, 0});
  CHECK(cosine_score_formula(Q, K, 0, 0, 0.0f) ==
        "S[1][1] = cos(q₁, k₁) = q₁·k₁ / (|q₁|·|k₁|) = 0.00 / (0.00·2.00) = 0.00: a zero vector "
        "has no direction, so "
        "its cosine is 0");
}

TEST_CASE("score_formula picks the general formula from the head's projection") {
  HeadResult head;
  head.Q = matrix(1, 2, {7, 7});
  head.K = matrix(1, 2, {2, -1});
  head.query_projection = matrix(1, 2, {1, 3});
  head.raw_scores = matrix(1, 1, {-1});
  const HeadParameters parameters;
  CHECK(score_formula(Compatibility::General, head, parameters, 0, 0) ==
        "S[1][1] = q₁·W_a·k₁ = (q₁W_a)·k₁ = 1.00·2.00 + 3.00·(-1.00) = -1.00");
}

TEST_CASE("a scaled dot score is divided by the root of d_k") {
  CHECK(scaled_formula(Compatibility::ScaledDot, 4, 1.0f, 4, 3, 9.6f, 4.8f) ==
        "s₅₄ = S₅₄ / √d_k = 9.60 / √4 = 4.80");
}

TEST_CASE("a temperature other than 1 divides the scaled dot score again") {
  // 9.6 / 2 / 0.5 = 9.6.
  CHECK(scaled_formula(Compatibility::ScaledDot, 4, 0.5f, 4, 3, 9.6f, 9.6f) ==
        "s₅₄ = S₅₄ / √d_k / T = 9.60 / √4 / 0.5 = 9.60");
}

TEST_CASE("a dot score is divided by the temperature only") {
  CHECK(scaled_formula(Compatibility::Dot, 4, 2.0f, 0, 1, 3.0f, 1.5f) ==
        "s₁₂ = S₁₂ / T = 3.00 / 2 = 1.50");
}

TEST_CASE("a dot score at temperature 1 says it is not scaled") {
  CHECK(scaled_formula(Compatibility::Dot, 4, 1.0f, 0, 1, 3.0f, 3.0f) ==
        "s₁₂ = S₁₂ = 3.00 (dot: no scaling)");
}

TEST_CASE("the scaling stage is named by what it divides by") {
  CHECK(scaling_stage_name(Compatibility::ScaledDot, 1.0f) == "÷√d_k");
  CHECK(scaling_stage_name(Compatibility::ScaledDot, 2.0f) == "÷√d_k ÷T");
  CHECK(scaling_stage_name(Compatibility::Cosine, 0.5f) == "÷T");
  CHECK(scaling_stage_name(Compatibility::Additive, 1.0f) == "no scaling");
}

TEST_CASE("a causally masked score says the key comes later") {
  CHECK(mask_formula(MaskReason::Causal, 1, 3, 2.0f, kMinusInfinity) ==
        "m₂₄ = −∞: key 4 comes after query 2 (causal mask)");
}

TEST_CASE("a custom masked score names the custom mask") {
  CHECK(mask_formula(MaskReason::Custom, 2, 0, 2.0f, kMinusInfinity) ==
        "m₃₁ = −∞: the custom mask hides key 1 from query 3");
}

TEST_CASE("an unmasked score passes through the mask") {
  CHECK(mask_formula(MaskReason::None, 4, 3, 4.8f, 4.8f) == "m₅₄ = s₅₄ = 4.80 (not masked)");
}

TEST_CASE("an overflowed score says it was clamped") {
  CHECK(mask_formula(MaskReason::None, 0, 0, std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::max()) ==
        "m₁₁ = 3.4e+38: the score overflowed the float range and was clamped");
}

TEST_CASE("a masked cell says why it is masked") {
  CHECK(mask_reason(true, 1, 3) == MaskReason::Causal);   // key 4 after query 2
  CHECK(mask_reason(true, 3, 1) == MaskReason::Custom);   // before the query: not the causal mask
  CHECK(mask_reason(false, 1, 3) == MaskReason::Custom);  // no causal mask
  CHECK(masked_cell_note(MaskReason::Causal) ==
        "masked (causal mask: a query does not see later tokens)");
  CHECK(masked_cell_note(MaskReason::Custom) ==
        "masked (the scenario's mask hides this key from this query)");
  CHECK(masked_cell_note(MaskReason::None).empty());
}

TEST_CASE("softmax shows the shifted exponent and the row sum") {
  // Row (1, 0, -inf): max 1; exp(0) + exp(-1) = 1.368; α₀₀ = 1 / 1.368 = 0.731.
  const float row[] = {1, 0, kMinusInfinity};
  CHECK(softmax_formula(row, 3, 0, 0, 0.7311f) ==
        "α₁₁ = exp(s₁₁ − max) / Σₖ exp(s₁ₖ − max) = exp(1.00 − 1.00) / 1.368 = 0.731");
}

TEST_CASE("softmax puts a negative maximum in brackets") {
  // Row (-1, -2): max -1; sum 1 + exp(-1) = 1.368; α₀₁ = exp(-1) / 1.368 = 0.269.
  const float row[] = {-1, -2};
  CHECK(softmax_formula(row, 2, 0, 1, 0.2689f) ==
        "α₁₂ = exp(s₁₂ − max) / Σₖ exp(s₁ₖ − max) = exp(-2.00 − (-1.00)) / 1.368 = 0.269");
}

TEST_CASE("softmax of a masked key is zero") {
  const float row[] = {1, 0, kMinusInfinity};
  CHECK(softmax_formula(row, 3, 0, 2, 0.0f) == "α₁₃ = 0: masked (exp(−∞) = 0)");
}

TEST_CASE("softmax of a fully masked row says every key is masked") {
  const float row[] = {kMinusInfinity, kMinusInfinity};
  CHECK(softmax_formula(row, 2, 5, 1, 0.0f) ==
        "α₆₂ = 0: every key is masked for query 6, so there is no softmax");
}

TEST_CASE("hard attention gives 1 to the largest score") {
  const float row[] = {1, 3, 2};
  CHECK(hardmax_formula(row, 3, 0, 1, 1.0f) ==
        "α₁₂ = 1: key 2 has the largest score of query 1 (3.00; hard attention)");
}

TEST_CASE("hard attention gives 0 to the other keys and names the winner") {
  const float row[] = {1, 3, 2};
  CHECK(hardmax_formula(row, 3, 0, 0, 0.0f) ==
        "α₁₁ = 0: key 2 has the largest score (3.00 > 1.00; hard attention)");
}

TEST_CASE("a head output is the alpha weighted sum of a value column") {
  // α₀ = (0.25, 0.75), V column 0 = (2, 4): 0.25·2 + 0.75·4 = 3.5.
  const Matrix weights = matrix(1, 2, {0.25f, 0.75f});
  const Matrix V = matrix(2, 2, {2, 0, 4, 1});
  CHECK(head_output_formula(weights, V, 0, 0, 3.5f) ==
        "out[1][1] = Σₖ α[1][k]·V[k][1] = 0.25·2.00 + 0.75·4.00 = 3.50");
}

TEST_CASE("a concat column names its head and the head's column") {
  // d_v = 4: column 5 is head 1's column 1.
  CHECK(concat_formula(4, 2, 5, 0.54f) == "concat[3][6] = out[3][2] of head 2 = 0.54");
}

TEST_CASE("an output entry is the concat row times a W_O column") {
  // concat₀ = (1, 2), W_O column 1 = (0, 3): 1·0 + 2·3 = 6.
  const Matrix concat = matrix(1, 2, {1, 2});
  const Matrix W_O = matrix(2, 2, {0.5f, 0, 1, 3});
  CHECK(output_formula(concat, W_O, 0, 1, 6.0f) ==
        "output[1][2] = Σ_c concat[1][c]·W_O[c][2] = 1.00·0.00 + 2.00·3.00 = 6.00");
}

TEST_CASE("a contribution multiplies one dimension of both vectors") {
  CHECK(contribution_formula("q₄", "k₃", 2, 4.0f, 2.4f) == "q₄[3]·k₃[3] = 4.00·2.40 = 9.60");
}

TEST_CASE("a negative contribution keeps its sign") {
  CHECK(contribution_formula("q₁", "k₂", 0, 0.5f, -3.0f) == "q₁[1]·k₂[1] = 0.50·(-3.00) = -1.50");
}

TEST_CASE("a hidden unit is tanh of the query part plus the key part") {
  // tanh(0.4 + 0.5) = tanh(0.9) = 0.716.
  CHECK(hidden_unit_formula(4, 3, 2, 0.4f, 0.5f) ==
        "h[3] = tanh(q₅W₁[3] + k₄W₂[3]) = tanh(0.40 + 0.50) = 0.72");
}

}  // namespace
namespace {
// One unit per byte: lines are measured in characters.
float characters(std::string_view text) {
  return static_cast<float>(text.size());
}
}  // namespace

TEST_CASE("wrapping breaks at spaces and never inside a number") {
  // 19 bytes fit before "0.30" (the "·" is two): ImGui's wrap would end the line with "0." there.
  const std::vector<std::string_view> lines =
      wrap_at_spaces("a = 0.50\xc2\xb7(-0.54) + 0.30 = 0.03", 21, characters);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "a = 0.50\xc2\xb7(-0.54) +");
  CHECK(lines[1] == "0.30 = 0.03");
}

TEST_CASE("wrapping keeps a long word whole and the text's own line breaks") {
  const std::vector<std::string_view> lines = wrap_at_spaces("x 123456789012\ny z", 6, characters);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "x");
  CHECK(lines[1] == "123456789012");
  CHECK(lines[2] == "y z");
}

TEST_CASE("wrapping text that fits gives it back whole") {
  const std::vector<std::string_view> lines =
      wrap_at_spaces("q \xc2\xb7 k = 7.24", 100, characters);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "q \xc2\xb7 k = 7.24");
}

}  // namespace attnviz::view

namespace attnviz::view {

TEST_CASE("a normalized entry shows the mean and spread of its row, computed from the row") {
  const float row[4] = {1.0f, 3.0f, -1.0f, 1.0f};  // mean 1, variance 2, mean square 3
  CHECK(norm_formula(true, row, 4, 2, 1, 2.0f, 0.5f, 0.0f, 1.9142f) ==
        "n[3][2] = (x[3][2] \xe2\x88\x92 \xce\xbc) / \xcf\x83\xc2\xb7\xce\xb3\xe2\x82\x82 + "
        "\xce\xb2\xe2\x82\x82 = (3.00 \xe2\x88\x92 1.00) / 1.41\xc2\xb7"
        "2.00 + 0.50 = 1.91");
  CHECK(norm_formula(false, row, 4, 0, 2, 1.0f, 0.0f, 0.0f, -0.577f) ==
        "n[1][3] = x[1][3] / rms\xc2\xb7\xce\xb3\xe2\x82\x83 = -1.00 / 1.73\xc2\xb7"
        "1.00 = -0.58");
}

TEST_CASE("a residual sum names both terms") {
  CHECK(sum_formula("x\xe2\x80\xb2", "x", "attn", 3, 1, 0.5f, -0.2f, 0.3f) ==
        "x\xe2\x80\xb2[4][2] = x[4][2] + attn[4][2] = 0.50 + (-0.20) = 0.30");
}

// -----------------------------------------------------------------------------
// A cell of any stage, from its recipe (explain_cell): the Pipeline view's tooltips
// -----------------------------------------------------------------------------
std::string token(StageAxis axis, Eigen::Index k) {
  static const char* const queries[] = {"the", "cat", "sat"};
  static const char* const keys[] = {"le", "chat", "dort"};
  return (axis == StageAxis::Keys ? keys : queries)[k];
}

TEST_CASE("a model's query cell: its layer and head, the product, then the bias") {
  // n row 1 = (1, 2); W_Q column 1 = (0.5, 1): 1·0.5 + 2·1 = 2.5, + b = 0.25: 2.75.
  const Matrix n = matrix(2, 2, {9, 9, 1, 2});
  const Matrix W = matrix(2, 1, {0.5f, 1});
  const RowVector b = RowVector::Constant(1, 0.25f);
  const Matrix Q = matrix(2, 1, {9, 2.75f});
  BlockStage stage;
  stage.id = StageId::Q;
  stage.matrix = &Q;
  stage.rows = StageAxis::Queries;
  stage.recipe.kind = StageRecipe::Kind::Projection;
  stage.recipe.layer = 1;
  stage.recipe.head = 2;
  stage.recipe.input = &n;
  stage.recipe.weight = &W;
  stage.recipe.bias = &b;
  stage.recipe.result_name = "Q";
  stage.recipe.input_name = "n";
  stage.recipe.weight_name = "W_Q";
  const ExplainedCell cell = explain_cell(stage, 1, 0, token);
  CHECK(cell.heading == "query vector of \"cat\", layer 2, head 3");
  CHECK(cell.formula ==
        "Q[2][1] = Σ_d n[2][d]·W_Q[d][1] = 1.00·0.50 + 2.00·1.00 = 2.50\n + b[1] = 2.50 + 0.25 = "
        "2.75");
  // The same stage in a run of one layer, without a bias: no layer named, the engine's value.
  stage.recipe.layer = -1;
  stage.recipe.bias = nullptr;
  CHECK(explain_cell(stage, 1, 0, token).heading == "query vector of \"cat\", head 3");
  CHECK(explain_cell(stage, 1, 0, token).formula ==
        "Q[2][1] = Σ_d n[2][d]·W_Q[d][1] = 1.00·0.50 + 2.00·1.00 = 2.75");
}

TEST_CASE("a key cell under grouped-query attention names its key/value head and key token") {
  const Matrix X = matrix(1, 1, {2});
  const Matrix W = matrix(1, 1, {3});
  const Matrix K = matrix(1, 1, {6});
  BlockStage stage;
  stage.id = StageId::K;
  stage.matrix = &K;
  stage.rows = StageAxis::Keys;
  stage.recipe.kind = StageRecipe::Kind::Projection;
  stage.recipe.layer = 0;
  stage.recipe.head = 3;
  stage.recipe.kv_head = 1;
  stage.recipe.input = &X;
  stage.recipe.weight = &W;
  stage.recipe.result_name = "K";
  stage.recipe.input_name = "n";
  stage.recipe.weight_name = "W_K";
  CHECK(explain_cell(stage, 0, 0, token).heading ==
        "key vector of \"le\", layer 1, key/value head 2");
}

TEST_CASE("a concat cell of a knocked-out head says so, a set α says how it was set") {
  const Matrix concat = matrix(1, 4, {0.1f, 0.2f, 0, 0});
  BlockStage stage;
  stage.id = StageId::Concat;
  stage.matrix = &concat;
  stage.rows = StageAxis::Queries;
  stage.recipe.kind = StageRecipe::Kind::Concat;
  stage.recipe.d_v = 2;
  stage.recipe.head_scales = {1.0f, 0.0f};
  const ExplainedCell cell = explain_cell(stage, 0, 3, token);
  CHECK(cell.heading == "every head's output side by side, \"the\"");
  CHECK(cell.formula == concat_formula(2, 0, 3, 0.0f) + "\n(head 2's output × 0.00: knocked out)");
  CHECK(explain_cell(stage, 0, 1, token).formula == concat_formula(2, 0, 1, 0.2f));

  const Matrix alpha = matrix(2, 2, {1, 0, 1, 0});
  BlockStage set;
  set.id = StageId::Weights;
  set.matrix = &alpha;
  set.rows = StageAxis::Queries;
  set.cols = StageAxis::Keys;
  set.recipe.kind = StageRecipe::Kind::SetPattern;
  set.recipe.pattern = HeadIntervention::Pattern::PreviousToken;
  CHECK(explain_cell(set, 1, 0, token).heading == "weight: query \"cat\", set by hand");
  CHECK(explain_cell(set, 1, 0, token).formula ==
        "α[2][1] = 1.000: all on the previous token (the pattern was set to previous token)");
}

TEST_CASE("a residual cell, and a stage whose operands are gone, still give the number") {
  const Matrix x = matrix(1, 1, {0.5f}), attn = matrix(1, 1, {-0.2f}), sum = matrix(1, 1, {0.3f});
  BlockStage stage;
  stage.id = StageId::ResidualMid;
  stage.matrix = &sum;
  stage.rows = StageAxis::Queries;
  stage.recipe.kind = StageRecipe::Kind::Sum;
  stage.recipe.layer = 3;
  stage.recipe.input = &x;
  stage.recipe.other = &attn;
  stage.recipe.result_name = "x\xe2\x80\xb2";
  stage.recipe.input_name = "x";
  stage.recipe.other_name = "attn";
  CHECK(explain_cell(stage, 0, 0, token).heading == "\"the\" after attention, layer 4");
  CHECK(explain_cell(stage, 0, 0, token).formula ==
        sum_formula("x\xe2\x80\xb2", "x", "attn", 0, 0, 0.5f, -0.2f, 0.3f));
  stage.recipe.other = nullptr;  // an operand the run no longer has
  CHECK(explain_cell(stage, 0, 0, token).formula ==
        "= 0.300 (the weights changed since this result was computed)");
}

}  // namespace attnviz::view
