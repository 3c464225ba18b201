// What each head of a trained model does, measured on its attention weights (the detectors the
// issue names; a score is a mean of attention weights, so it lies in [0, 1]):
//   previous-token  mean α on key i − 1, over queries i ≥ 1 of a text
//   next-token      mean α on key i + 1, over queries i ≤ n − 2 of a text (0 in a decoder,
//                   whose query never sees the key after it: only an encoder has such heads)
//   first-token     mean α on key 0 (a "sink"; BERT's [CLS]), over queries i ≥ 1 of a text
//   special-token   mean α on the text's special tokens (BERT's [CLS] and [SEP]), over its
//                   queries i ≥ 1 (0 when the text has none but a decoder's start token)
//   self            mean α on key i itself, over queries i ≥ 1 of a text
//   broad           mean entropy of a row over its largest possible, log(keys it sees),
//                   queries i ≥ 1
//   induction       on m random tokens written twice, mean α from each position i of the
//                   second copy (i ≥ m) onto key i − m + 1, the token after the earlier
//                   occurrence of token i (uniform attention would give about 1 / (m + i))
//   positional      1 − the mean total variation distance between the head's rows on two
//                   different random texts of the same length: 1 when content changes nothing
// A head's role is the first of induction, previous-token, next-token, first-token,
// special-token, self, broad, positional whose score passes its threshold (role_threshold), or
// "mixed".
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace attnviz {

enum class HeadRole {
  Induction,
  PreviousToken,
  NextToken,
  FirstToken,
  SpecialToken,
  Self,
  Broad,
  Positional,
  // A cross-attention head (an encoder–decoder's) whose rows look at the source word the target
  // word being written translates: its alignment precision (core/models/alignment.hpp).
  Alignment,
  Mixed
};
inline constexpr int kHeadRoleScores = 9;  // every role but Mixed has a score

std::string_view to_string(HeadRole role);  // "induction", "previous-token", ...
float role_threshold(HeadRole role);

struct HeadScores {
  int layer = 0, head = 0;
  std::array<float, kHeadRoleScores> scores{};  // by HeadRole
  HeadRole role = HeadRole::Mixed;
  float score(HeadRole which) const { return scores[static_cast<std::size_t>(which)]; }
};

struct HeadRoleProbe {
  std::vector<int> text;        // ids of a text (for previous-token, first-token, self, broad)
  std::vector<int> text_types;  // their token types (BERT's; empty: all 0)
  std::vector<bool> special;    // which of them are special tokens (empty: none)
  int random_length = 48;       // m: random tokens, written twice, for induction; two random texts
                                // of 2m for positional
  int first_random_token = 0;   // random tokens are drawn from [first_random_token, vocab)
  std::uint64_t seed = 1;
};

// A head's score for `role` on one text, as the detectors measure it (the same numbers as
// detect_head_roles gives for its probe text): `weights` (n, n) is the head's attention on the
// text (a decoder's later keys 0), `tokens` its ids, `special` which are special (empty: none).
// Induction on a text is the mean α from each token that occurred earlier onto the token after
// its last earlier occurrence. nullopt when the text cannot measure the role: induction on a text
// that repeats no token, positional (two texts), alignment (a translation), a text under 2 tokens.
std::optional<float> role_score_on_text(HeadRole role, MatrixView weights /* (n, n) */,
                                        std::span<const int> tokens,
                                        const std::vector<bool>& special, bool causal);

// Every head's scores and role, from three runs of the model (the text, the repeated random
// tokens, a second random text). An error for an empty or too long text, or random texts longer
// than the model's context.
Result<std::vector<HeadScores>> detect_head_roles(const Transformer& model,
                                                  const HeadRoleProbe& probe);

}  // namespace attnviz
