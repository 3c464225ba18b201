// The one-layer toy, trained: gradient descent moves one head's W_Q and W_K until its attention
// matches a target the teacher chose ("each word looks at the word before") or painted.
//
// For the head's queries X_query (n_query, d_model) and keys X_key (n_key, d_model):
//   1. Q = X_query · W_Q                      (n_query, d_k)
//   2. K = X_key · W_K                        (n_key, d_k)
//   3. S = Q · Kᵀ · s / T                     (n_query, n_key)  s = 1/√d_k (scaled dot) or 1
//   4. α = softmax of each row of S, masked keys left out
//   5. loss = mean over the rows with a target of KL(target_i ‖ α_i)
//            = Σ_j target_ij (log target_ij − log α_ij), 0 when the heatmap matches exactly
// and backward:
//   6. ∂loss/∂S_ij = (α_ij − target_ij) / rows    (rows with a target; 0 elsewhere and masked)
//   7. ∂S = ∂loss/∂S · s / T
//   8. ∂Q = ∂S · K;   ∂K = ∂Sᵀ · Q
//   9. ∂W_Q = X_queryᵀ · ∂Q;   ∂W_K = X_keyᵀ · ∂K
// Only dot-product scores (dot, scaled dot) with the softmax have this gradient here; W_V and
// W_O do not change the weights, so they are left alone. Under grouped-query attention W_K is
// the group's (kv_source_head): moving it moves the keys of every head of the group.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/text/tokenizer.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

// What the head should look at, chosen from a list or painted cell by cell.
enum class TargetPattern {
  PreviousWord,   // each word at the word before it (the first word at itself)
  NextWord,       // each word at the word after it (the last word at itself)
  SameWord,       // each word at the keys that are the same word (a name at its own name)
  FirstWord,      // every word at the first word
  PronounToNoun,  // a pronoun at the noun it stands for (a guess: see target_attention)
};
inline constexpr TargetPattern kTargetPatterns[] = {
    TargetPattern::PreviousWord, TargetPattern::NextWord, TargetPattern::SameWord,
    TargetPattern::FirstWord, TargetPattern::PronounToNoun};
// "previous-word", "next-word", "same-word", "first-word", "pronoun-noun": the names the CLI and
// lesson files use.
std::string_view to_string(TargetPattern pattern);
Result<TargetPattern> parse_target_pattern(std::string_view name);
// The names, for messages: "previous-word, next-word, same-word, first-word or pronoun-noun".
std::string target_pattern_names();
// What the pattern asks, for a teacher: "each word looks at the word before".
std::string_view describe(TargetPattern pattern);

// Which keys a query may see: the custom mask (1 = allowed; null: every key) and, in
// self-attention with config.causal, none after the query.
struct AllowedKeys {
  const MaskMatrix* mask = nullptr;  // (n_query, n_key) or null
  bool causal = false;
  bool allowed(Eigen::Index query, Eigen::Index key) const {
    if (causal && key > query) return false;
    return !mask || (*mask)(query, key) != 0;
  }
};

// The target weights (n_query, n_key): each row sums to 1 over keys the query may see, or is all
// 0 when the pattern asks nothing of that query (a word that is no pronoun) or asks only for keys
// it may not see. PronounToNoun is a guess from the teaching lexicon: the pronoun looks at the
// first earlier noun that agrees with it (a person for he and she, a thing or animal for it, the
// plural for they: the subject comes first more often than not), else the nearest earlier noun,
// else the nearest later one; a teacher who disagrees paints the row.
Matrix target_attention(TargetPattern pattern, const Tokenization& queries,
                        const Tokenization& keys, bool cross, const AllowedKeys& allowed);

// Painted cells as a target: row i spreads evenly over the keys painted in it that the query may
// see (`painted` is (n_query, n_key), nonzero = painted).
Matrix painted_target(const MaskMatrix& painted, const AllowedKeys& allowed);

// Two queries with the same embedding ask the same question, and two keys with the same
// embedding give the same answer: whatever W_Q and W_K are, their rows (columns) of α are the
// same. A target that treats such a pair differently cannot be reached. The first such pair
// (queries first), or none.
struct UnreachablePair {
  bool keys = false;  // false: two queries (rows); true: two keys (columns)
  Eigen::Index first = 0, second = 0;
};
std::optional<UnreachablePair> unreachable_pair(const Matrix& X_query, const Matrix& X_key,
                                                const Matrix& target, const AllowedKeys& allowed);

// Ok when gradient descent can move this head's weights under `config`; otherwise why not, in
// words for a teacher ("hard attention has no gradient: ...").
Status check_fit_config(const AttentionConfig& config);

// Everything one step reads. Shapes: X_query (n_query, d_model), X_key (n_key, d_model), target
// (n_query, n_key), W_Q and W_K (d_model, d_k).
struct FitInput {
  const Matrix* X_query = nullptr;
  const Matrix* X_key = nullptr;
  AllowedKeys allowed;
  AttentionConfig config;
  const Matrix* target = nullptr;
};

struct FitGradient {
  double loss = 0;      // mean KL over the rows with a target (0: none has one)
  int target_rows = 0;  // how many rows have a target
  double mismatch = 0;  // the largest row's ½ Σ_j |α_ij − target_ij| (0 to 1)
  Matrix weights;       // α (n_query, n_key), as the head computes it
  Matrix grad_W_Q;      // (d_model, d_k)
  Matrix grad_W_K;      // (d_model, d_k)
};

// The loss and gradient with Eigen's products (the fast path). An error for shapes that do not
// fit together, a config check_fit_config refuses, or values that are not finite.
Status fit_gradient(const FitInput& input, const Matrix& W_Q, const Matrix& W_K, FitGradient& out);
// The same in plain loops, the numbered passes one number at a time (the reference the tests
// hold the fast path to).
Status reference_fit_gradient(const FitInput& input, const Matrix& W_Q, const Matrix& W_K,
                              FitGradient& out);

// The heatmap matches when no row's weights are further than this from its target (half the sum
// of absolute differences: the share of attention in the wrong place).
inline constexpr double kFitMatched = 0.1;

// Gradient descent: W ← W − learning_rate · ∂loss/∂W, `steps` times, each step's gradient norm
// clipped to `max_step` / learning_rate (so no cell moves more than max_step in one step's
// norm), stopping early once the heatmap matches. Returns the last step's gradient (whose loss
// and weights are those before its update) and leaves W_Q, W_K moved.
struct FitSettings {
  float learning_rate = 1.0f;
  float max_step = 0.5f;  // the largest norm of one step's change of W_Q and W_K together
};
Status gradient_descent(const FitInput& input, const FitSettings& settings, int steps, Matrix& W_Q,
                        Matrix& W_K, FitGradient& last, int* steps_taken = nullptr);

}  // namespace attnviz
