// The kinds of lesson checks as one table. Index:
//   [SECTION] Reading a lesson's values
//   [SECTION] What the evaluations share
//   [SECTION] Claims about a head's attention
//   [SECTION] Claims about a real model
//   [SECTION] Claims about cheaper attention
//   [SECTION] The table
//   [SECTION] Reading a check
//   [SECTION] Evaluating a check
#include "core/lessons/lesson_checks.hpp"

#include "core/models/across_layers.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"
#include "core/models/sampling.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/variants/flash_attention.hpp"
#include "core/variants/kv_cache.hpp"
#include "core/variants/linformer.hpp"
#include "core/variants/reformer.hpp"
#include "core/variants/sparse_masks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>

namespace attnviz::lessons {

// -----------------------------------------------------------------------------
// [SECTION] Reading a lesson's values
// -----------------------------------------------------------------------------

std::string string_at(const Json& object, const char* key, const std::string& path, bool required) {
  const Json* value = find_member(object, key);
  if (!value) {
    if (required) fail(path + "." + key, "missing");
    return {};
  }
  return JsonReader::string(*value, path + "." + key);
}

int int_at(const Json& object, const char* key, const std::string& path, int fallback, int low,
           int high) {
  const Json* value = find_member(object, key);
  if (!value) return fallback;
  return static_cast<int>(JsonReader::integer(*value, path + "." + key, low, high));
}

std::string token_at(const Json& object, const char* key, const std::string& path) {
  const Json* value = find_member(object, key);
  if (!value) return {};
  if (value->is_number_integer()) return "#" + std::to_string(value->get<int>());
  if (!value->is_string()) fail(path + "." + key, "expected a token (its text, or its index)");
  return value->get<std::string>();
}

void require_token(const Tokenization& tokens, const std::string& reference,
                   const std::string& path, const char* sentence) {
  if (!reference.empty() && resolve_token(tokens, reference) < 0)
    fail(path, "\"" + reference + "\" is not a token of the " + sentence + " sentence");
}

// -----------------------------------------------------------------------------
// [SECTION] What the evaluations share
// -----------------------------------------------------------------------------

// What a claim about the computed attention is evaluated on: the check, the scenario and the
// pipeline that computed it, the check's layer and head, its query and key resolved (−1: none).
struct OnAttention {
  const Scenario& scenario;
  const LessonCheck& check;
  const Pipeline& pipeline;
  const AttentionResult& layer;
  const HeadResult& head;
  int q = -1, k = -1;
  const Tokenization& queries() const { return pipeline.target(); }
  const Tokenization& keys() const { return pipeline.keys(); }
};

// What a claim about a real model is evaluated on: its trained weights and forward pass, and
// the check's query (the last token when it names none).
struct OnModel {
  const Scenario& scenario;
  const LessonCheck& check;
  const Run& run;
  const Model& model;
  const TransformerForward& forward;
  const std::vector<int>& tokens;  // the ids the model read
  int q = -1;
  std::string shown(int id) const { return "\"" + model.tokenizer.shown(id) + "\""; }
};

namespace {

Eigen::Index row_argmax(const Matrix& weights, Eigen::Index row) {
  Eigen::Index best = 0;
  weights.row(row).maxCoeff(&best);
  return best;
}

// A claim that a word attends "most" to one key must be visible in the views, which print two
// decimals: the runner-up must be this much lower, or the claim rests on a tie.
constexpr float kArgmaxMargin = 0.01f;

// Another key of the row whose weight is within kArgmaxMargin of key `best`'s; -1 when none.
Eigen::Index tied_with(const Matrix& weights, Eigen::Index row, Eigen::Index best) {
  for (Eigen::Index j = 0; j < weights.cols(); ++j)
    if (j != best && weights(row, j) > weights(row, best) - kArgmaxMargin) return j;
  return -1;
}

std::string token_text(const Tokenization& tokens, Eigen::Index index) {
  return "\"" + tokens.tokens[static_cast<std::size_t>(index)].text + "\"";
}

// A number as the views print it: two decimals (never "nan": the engine's numbers are finite).
std::string format(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

// "layer 2, head 3": as the app counts them.
std::string layer_head(int layer, int head) {
  return "layer " + std::to_string(layer + 1) + ", head " + std::to_string(head + 1);
}

// A token of the model's vocabulary as it reads in a text: its bytes, spaces around them aside.
std::string token_words(const Model& model, int previous, int id) {
  std::string text = model.tokenizer.text_of(previous, id);
  const std::size_t first = text.find_first_not_of(" \t\n\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\n\r") - first + 1);
}

int argmax_of(const RowVector& logits) {
  Eigen::Index best = 0;
  logits.maxCoeff(&best);
  return static_cast<int>(best);
}

// Whether the query's output equals the value of `key` (to float precision).
bool output_is_value(const HeadResult& head, Eigen::Index query, Eigen::Index key) {
  const double difference = (head.output.row(query) - head.V.row(key)).cwiseAbs().maxCoeff();
  return difference <= 1e-5 * std::max(1.0f, head.V.row(key).cwiseAbs().maxCoeff());
}

// -----------------------------------------------------------------------------
// [SECTION] Claims about a head's attention
// -----------------------------------------------------------------------------

MaybeProblem argmax(const OnAttention& in, bool) {
  const Matrix& w = in.head.weights;
  const Eigen::Index best = row_argmax(w, in.q);
  if (best == in.k) {
    const Eigen::Index tie = tied_with(w, in.q, in.k);
    if (tie < 0) return std::nullopt;
    return Problem{token_text(in.queries(), in.q) + " attends as much to " +
                   token_text(in.keys(), tie) + " (" + format(w(in.q, tie)) + ") as to " +
                   token_text(in.keys(), in.k) + " (" + format(w(in.q, in.k)) + ")"};
  }
  return Problem{token_text(in.queries(), in.q) + " attends most to " +
                 token_text(in.keys(), best) + " (" + format(w(in.q, best)) + "), not to " +
                 token_text(in.keys(), in.k) + " (" + format(w(in.q, in.k)) + ")"};
}

// above: α(query, key) > value; else < value.
MaybeProblem weight_compared(const OnAttention& in, bool above) {
  const double w = in.head.weights(in.q, in.k);
  if (above ? w > in.check.value : w < in.check.value) return std::nullopt;
  return Problem{token_text(in.queries(), in.q) + " gives " + token_text(in.keys(), in.k) + " " +
                 format(w) + ", not " + (above ? "more" : "less") + " than " +
                 format(in.check.value)};
}

// above: the largest weight of the query's row > value; else < value.
MaybeProblem max_weight_compared(const OnAttention& in, bool above) {
  const Eigen::Index best = row_argmax(in.head.weights, in.q);
  const double w = in.head.weights(in.q, best);
  if (above) {
    if (w > in.check.value) return std::nullopt;
    return Problem{token_text(in.queries(), in.q) + " gives at most " + format(w) + " (to " +
                   token_text(in.keys(), best) + "), not more than " + format(in.check.value)};
  }
  if (w < in.check.value) return std::nullopt;
  return Problem{token_text(in.queries(), in.q) + " gives " + token_text(in.keys(), best) + " " +
                 format(w) + ", not less than " + format(in.check.value)};
}

MaybeProblem diagonal_dominates(const OnAttention& in, bool) {
  // A claim about self-attention; switched to cross-attention, the diagonal means nothing (and
  // the source may have fewer words than the target).
  if (in.pipeline.cross())
    return Problem{
        "the queries and the keys come from two different sentences: no word meets itself"};
  const Matrix& w = in.head.weights;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    if (row_argmax(w, i) != i)
      return Problem{token_text(in.queries(), i) + " attends most to " +
                     token_text(in.keys(), row_argmax(w, i)) + ", not to itself"};
    else if (const Eigen::Index tie = tied_with(w, i, i); tie >= 0)
      return Problem{token_text(in.queries(), i) + " attends as much to " +
                     token_text(in.keys(), tie) + " as to itself"};
  return std::nullopt;
}

MaybeProblem one_hot(const OnAttention& in, bool) {
  const Matrix& w = in.head.weights;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    if (w.row(i).maxCoeff() != 1.0f || w.row(i).sum() != 1.0f) {
      const Eigen::Index best = row_argmax(w, i);
      return Problem{token_text(in.queries(), i) +
                     " spreads its weight over several keys (at most " + format(w(i, best)) +
                     ", on " + token_text(in.keys(), best) + ")"};
    }
  return std::nullopt;
}

MaybeProblem output_equals_value(const OnAttention& in, bool) {
  const HeadResult& head = in.head;
  if (output_is_value(head, in.q, in.k)) return std::nullopt;
  Eigen::Index equal = -1;  // the key whose value the output is instead, if any
  for (Eigen::Index j = 0; j < head.V.rows() && equal < 0; ++j)
    if (output_is_value(head, in.q, j)) equal = j;
  // One number per value (d_v = 1): the views print it, and so does the message.
  const bool one_number = head.V.cols() == 1;
  const auto number = [&](const Matrix& m, Eigen::Index row) {
    return one_number ? " (" + format(m(row, 0)) + ")" : std::string();
  };
  const std::string output = "the output of " + token_text(in.queries(), in.q);
  if (equal >= 0)
    return Problem{output + " is the value of " + token_text(in.keys(), equal) +
                   number(head.V, equal) + ", not that of " + token_text(in.keys(), in.k) +
                   number(head.V, in.k)};
  return Problem{output + number(head.output, in.q) +
                 " is a blend of several values, not exactly the value of " +
                 token_text(in.keys(), in.k) + number(head.V, in.k)};
}

MaybeProblem upper_triangle_zero(const OnAttention& in, bool) {
  const Matrix& w = in.head.weights;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    for (Eigen::Index j = i + 1; j < w.cols(); ++j)
      if (w(i, j) != 0.0f)
        return Problem{token_text(in.queries(), i) + " gives " + format(w(i, j)) + " to " +
                       token_text(in.keys(), j) + ", a word after it"};
  return std::nullopt;
}

MaybeProblem heads_disagree(const OnAttention& in, bool) {
  const LessonCheck& check = in.check;
  if (check.head_b >= static_cast<int>(in.layer.heads.size()))
    return Problem{"there is no head " + std::to_string(check.head_b)};
  const Eigen::Index a = row_argmax(in.head.weights, in.q);
  const Eigen::Index b =
      row_argmax(in.layer.heads[static_cast<std::size_t>(check.head_b)].weights, in.q);
  if (a != b) return std::nullopt;
  return Problem{token_text(in.queries(), in.q) + " attends most to " + token_text(in.keys(), a) +
                 " in both head " + std::to_string(check.head) + " and head " +
                 std::to_string(check.head_b)};
}

// Whether the outputs follow the target sentence's tokens when they are reordered (or, with
// `equivariant` false, do not).
MaybeProblem permutation(const OnAttention& in, bool expect_equivariant) {
  const LessonCheck& check = in.check;
  const auto& tokens = in.pipeline.target().tokens;
  // The student may have typed another sentence: the claim reorders words that are gone.
  if (check.permutation.size() != tokens.size() || in.pipeline.cross())
    return Problem{"the sentence no longer has the " + std::to_string(check.permutation.size()) +
                       " words the text reorders",
                   true};
  Scenario permuted = in.scenario;
  permuted.target.clear();
  for (int index : check.permutation)
    permuted.target += tokens[static_cast<std::size_t>(index)].text + " ";
  Pipeline other;
  if (Status status = other.run(permuted); !status)
    return Problem{"the reordered sentence does not compute: " + status.message()};
  if (other.target().tokens.size() != tokens.size())
    return Problem{"the reordered sentence splits into other words", true};
  const Matrix& original = in.pipeline.result().output;
  const Matrix& shuffled = other.result().output;
  double worst = 0;
  for (std::size_t k = 0; k < check.permutation.size(); ++k)
    worst = std::max(worst, static_cast<double>((shuffled.row(static_cast<Eigen::Index>(k)) -
                                                 original.row(check.permutation[k]))
                                                    .cwiseAbs()
                                                    .maxCoeff()));
  const double tolerance =
      1e-4 * std::max(1.0, static_cast<double>(original.cwiseAbs().maxCoeff()));
  const bool equivariant = worst <= tolerance;
  if (equivariant == expect_equivariant) return std::nullopt;
  return Problem{expect_equivariant
                     ? "reordering the words changes each word's output, not just the order of "
                       "the outputs"
                     : "reordering the words only reorders the outputs: each word's output "
                       "stays the same"};
}

// shared: query heads head and head_b read the same keys and values; else different ones.
MaybeProblem kv_heads(const OnAttention& in, bool shared_expected) {
  const AttentionConfig& config = in.pipeline.result().config;
  const LessonCheck& check = in.check;
  const bool shared = kv_source_head(config, check.head) == kv_source_head(config, check.head_b);
  if (shared == shared_expected) return std::nullopt;
  return Problem{"head " + std::to_string(check.head + 1) + " and head " +
                 std::to_string(check.head_b + 1) +
                 (shared ? " read the same keys and values" : " read different keys and values")};
}

// -----------------------------------------------------------------------------
// [SECTION] Claims about a real model
// -----------------------------------------------------------------------------

MaybeProblem role(const OnModel& in, bool) {
  const LessonCheck& check = in.check;
  in.run.wait_for_roles();  // a claim about roles is checked on them measured
  const HeadScores* scores = in.run.role_of(check.layer, check.head);
  if (!scores) return Problem{"the heads' roles could not be measured"};
  if (to_string(scores->role) == check.role) return std::nullopt;
  return Problem{layer_head(check.layer, check.head) + " is a " +
                 std::string(to_string(scores->role)) + " head, not a " + check.role + " one"};
}

MaybeProblem top_token(const OnModel& in, bool) {
  const LessonCheck& check = in.check;
  if (!in.model.transformer.config().causal())
    return Problem{in.model.name +
                   " is an encoder: it predicts no next token (\"fill\" checks "
                   "what it puts at a [MASK])"};
  const RowVector logits = in.forward.logits(in.q);
  const int top = argmax_of(logits);
  const std::vector<float> p = next_token_probabilities(
      std::span<const float>(logits.data(), static_cast<std::size_t>(logits.size())), {});
  const float probability = p[static_cast<std::size_t>(top)];
  const int previous = in.tokens[static_cast<std::size_t>(in.q)];
  if (token_words(in.model, previous, top) != check.token)
    return Problem{"after " + in.shown(previous) + " the model's most likely next token is " +
                   in.shown(top) + " (" + format(probability) + "), not \"" + check.token + "\""};
  if (probability <= check.value)
    return Problem{"the model gives " + in.shown(top) + " " + format(probability) +
                   ", not more than " + format(check.value)};
  return std::nullopt;
}

// next_rank: `token` is the `value`-th most likely next token (1: the first guess), so that a
// text saying "v is now third" is checked ("far down the list" was wrong: issue 40).
MaybeProblem next_rank(const OnModel& in, bool) {
  const LessonCheck& check = in.check;
  if (!in.model.transformer.config().causal())
    return Problem{in.model.name + " is an encoder: it predicts no next token"};
  const RowVector logits = in.forward.logits(in.q);  // (vocab)
  const std::vector<float> p = next_token_probabilities(
      std::span<const float>(logits.data(), static_cast<std::size_t>(logits.size())), {});
  std::vector<int> order(p.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return p[static_cast<std::size_t>(a)] > p[static_cast<std::size_t>(b)];
  });
  const int previous = in.tokens[static_cast<std::size_t>(in.q)];
  const int wanted = static_cast<int>(check.value);
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    if (token_words(in.model, previous, order[rank]) != check.token) continue;
    if (static_cast<int>(rank) + 1 == wanted) return std::nullopt;
    return Problem{"\"" + check.token + "\" is the model's guess number " +
                   std::to_string(rank + 1) + " (" +
                   format(p[static_cast<std::size_t>(order[rank])]) + "), not number " +
                   std::to_string(wanted)};
  }
  return Problem{"\"" + check.token + "\" is no token of the model's vocabulary"};
}

// An encoder's likeliest token at the query (by default the first [MASK]).
MaybeProblem fill(const OnModel& in, bool) {
  const LessonCheck& check = in.check;
  if (!in.run.can(Capability::FillsMask))
    return Problem{in.model.name + " fills no mask (\"top_token\" checks a decoder's next token)"};
  const int position = in.q;  // by default the first [MASK] (check_problem)
  if (check.query.empty() &&
      in.tokens[static_cast<std::size_t>(position)] != in.model.tokenizer.mask_token())
    return Problem{"the text has no [MASK]", true};
  const RowVector logits = in.forward.logits(position);  // (vocab)
  const int top = argmax_of(logits);
  const std::vector<float> p = next_token_probabilities(
      std::span<const float>(logits.data(), static_cast<std::size_t>(logits.size())), {});
  const float probability = p[static_cast<std::size_t>(top)];
  const std::string at = "at " + in.shown(in.tokens[static_cast<std::size_t>(position)]) +
                         " (token " + std::to_string(position + 1) + ")";
  if (in.model.tokenizer.shown(top) != check.token)
    return Problem{at + " the model's likeliest token is " + in.shown(top) + " (" +
                   format(probability) + "), not \"" + check.token + "\""};
  if (probability <= check.value)
    return Problem{at + " the model gives " + in.shown(top) + " " + format(probability) +
                   ", not more than " + format(check.value)};
  return std::nullopt;
}

// changes: knocking out the head changes the most likely next token (an encoder's: the likeliest
// token at its first [MASK]); else it does not.
MaybeProblem ablation(const OnModel& in, bool changes_expected) {
  const LessonCheck& check = in.check;
  // The head's effect on the model as it is now, other changes kept: with the head as the model
  // computes it, and without it (a student who has knocked it out already sees "after").
  const auto run_with = [&](TransformerForward& forward, bool head_kept) -> MaybeProblem {
    for (const ModelHeadChange& entry : in.scenario.model()->interventions)
      if (entry.layer != check.layer || entry.head != check.head)
        static_cast<void>(forward.set_intervention(entry.layer, entry.head, entry.change));
    HeadIntervention ablate;
    ablate.output_scale = 0.0f;
    if (!head_kept)
      if (Status status = forward.set_intervention(check.layer, check.head, ablate); !status)
        return Problem{status.message()};
    if (Status status = forward.run(in.tokens, in.forward.token_types()); !status)
      return Problem{status.message()};
    return std::nullopt;
  };
  TransformerForward kept(in.model.transformer), knocked(in.model.transformer);
  if (MaybeProblem problem = run_with(kept, true)) return problem;
  if (MaybeProblem problem = run_with(knocked, false)) return problem;
  const int before = argmax_of(kept.logits(in.q));
  const int after = argmax_of(knocked.logits(in.q));
  const bool changes = before != after;
  if (changes == changes_expected) return std::nullopt;
  const std::string knocking = "knocking out " + layer_head(check.layer, check.head);
  return Problem{changes
                     ? knocking + " changes the prediction from " + in.shown(before) + " to " +
                           in.shown(after)
                     : knocking + " does not change the prediction: it stays " + in.shown(before)};
}

MaybeProblem lens_top(const OnModel& in, bool) {
  const LessonCheck& check = in.check;
  const std::vector<std::vector<LensPrediction>> lens = logit_lens(in.forward);
  const LensPrediction& p =
      lens[static_cast<std::size_t>(check.layer)][static_cast<std::size_t>(in.q)];
  if (p.token < 0)
    return Problem{"after layer " + std::to_string(check.layer + 1) +
                   " the numbers overflowed: no prediction"};
  const int previous = in.tokens[static_cast<std::size_t>(in.q)];
  // A decoder's next token is read as the words it adds; an encoder's as its vocabulary's piece.
  const std::string found = in.model.transformer.config().causal()
                                ? token_words(in.model, previous, p.token)
                                : in.model.tokenizer.shown(p.token);
  if (found == check.token) return std::nullopt;
  return Problem{"after layer " + std::to_string(check.layer + 1) + " the stream at " +
                 in.shown(previous) + " predicts " + in.shown(p.token) + " (" +
                 format(p.probability) + "), not \"" + check.token + "\""};
}

MaybeProblem model_kv_heads(const OnModel& in, bool shared_expected) {
  const LessonCheck& check = in.check;
  const TransformerConfig& config = in.model.transformer.config();
  if (check.head_b >= config.n_heads)
    return Problem{"there is no head " + std::to_string(check.head_b + 1)};
  const bool shared = config.kv_head_of(check.head) == config.kv_head_of(check.head_b);
  if (shared == shared_expected) return std::nullopt;
  return Problem{layer_head(check.layer, check.head) + " and head " +
                 std::to_string(check.head_b + 1) +
                 (shared ? " read the same keys and values" : " read different keys and values")};
}

// -----------------------------------------------------------------------------
// [SECTION] Claims about cheaper attention
// -----------------------------------------------------------------------------
// Each method is run on the head's Q, K and V as the Cheaper attention view runs it.

MaybeProblem pattern_hides(const OnAttention& in, bool) {
  const MaskMatrix* mask = in.pipeline.mask();
  if (!mask) return Problem{"the scenario has no mask pattern"};
  if ((*mask)(in.q, in.k) == 0) return std::nullopt;
  return Problem{token_text(in.queries(), in.q) + " still sees " + token_text(in.keys(), in.k)};
}

MaybeProblem pairs_below(const OnAttention& in, bool) {
  const MaskMatrix* mask = in.pipeline.mask();
  if (!mask) return Problem{"the scenario has no mask pattern"};
  const PairCount count = count_pairs(*mask, in.pipeline.result().config.causal);
  const double share = static_cast<double>(count.computed) /
                       static_cast<double>(std::max<std::int64_t>(1, count.full));
  if (share < in.check.value) return std::nullopt;
  return Problem{"the pattern computes " + std::to_string(count.computed) + " of " +
                 std::to_string(count.full) + " pairs (" + format(share) + ")"};
}

// The scores' scale the methods use (a scaled dot product or a temperature), or why not.
Result<float> method_scale(const OnAttention& in) {
  return variant_score_scale(in.pipeline.result().config, "this check");
}

// exact: FlashAttention's output equals full attention's; else the key tiles where the query's
// running maximum rises are check.tiles.
MaybeProblem flash(const OnAttention& in, bool exact) {
  Result<float> scale = method_scale(in);
  if (!scale) return Problem{scale.error()};
  const LessonCheck& check = in.check;
  const HeadResult& head = in.head;
  Result<FlashResult> result =
      flash_attention(head.Q, head.K, head.V, *scale, in.pipeline.result().config.causal,
                      in.pipeline.mask(), {check.size, check.size}, !exact);
  if (!result) return Problem{result.error()};
  if (exact) {
    const float difference = (result->output - head.output).cwiseAbs().maxCoeff();
    if (difference <= 1e-5f) return std::nullopt;
    return Problem{"FlashAttention's output differs from full attention by " + format(difference)};
  }
  std::vector<int> raised;  // the key tiles, in order, that raise row q's maximum
  for (const FlashTile& tile : result->tiles) {
    if (in.q < tile.query_begin || in.q >= tile.query_end || tile.skipped) continue;
    const auto row = static_cast<std::size_t>(in.q - tile.query_begin);
    if (tile.max_after[row] > tile.max_before[row]) raised.push_back(tile.key_begin / check.size);
  }
  if (raised == check.tiles) return std::nullopt;
  std::string list;
  for (const int t : raised) list += (list.empty() ? "" : ", ") + std::to_string(t + 1);
  return Problem{"the running maximum of " + token_text(in.queries(), in.q) + " rises at key tile" +
                 (raised.size() == 1 ? " " : "s ") + list};
}

MaybeProblem linformer_most_changed(const OnAttention& in, bool) {
  Result<float> scale = method_scale(in);
  if (!scale) return Problem{scale.error()};
  const HeadResult& head = in.head;
  if (in.pipeline.result().config.causal || in.pipeline.mask())
    return Problem{"Linformer takes no mask"};
  Result<LinformerResult> lin =
      seeded_linformer(head.Q, head.K, head.V, *scale, in.check.size, kLinformerSeed, false);
  if (!lin) return Problem{lin.error()};
  const ColumnVector moved = (lin->output - head.output).cwiseAbs().rowwise().maxCoeff();
  Eigen::Index most = 0;
  moved.maxCoeff(&most);
  if (most == in.q) return std::nullopt;
  return Problem{"with k = " + std::to_string(in.check.size) + ", the output of " +
                 token_text(in.queries(), most) + " moves most (" + format(moved(most)) +
                 "), not that of " + token_text(in.queries(), in.q) + " (" + format(moved(in.q)) +
                 ")"};
}

// same: Reformer's first hash round puts the query and the key in one bucket; else in two.
MaybeProblem bucket(const OnAttention& in, bool same_expected) {
  Result<float> scale = method_scale(in);
  if (!scale) return Problem{scale.error()};
  ReformerSettings settings;
  settings.buckets = in.check.size;
  Result<ReformerResult> lsh = reformer_attention(in.head.Q, in.head.V, *scale,
                                                  in.pipeline.result().config.causal, settings);
  if (!lsh) return Problem{lsh.error()};
  const std::vector<int>& of = lsh->rounds.front().bucket;
  const int q_bucket = of[static_cast<std::size_t>(in.q)],
            k_bucket = of[static_cast<std::size_t>(in.k)];
  if ((q_bucket == k_bucket) == same_expected) return std::nullopt;
  return Problem{token_text(in.queries(), in.q) + " lands in bucket " +
                 std::to_string(q_bucket + 1) + " and " + token_text(in.keys(), in.k) +
                 " in bucket " + std::to_string(k_bucket + 1)};
}

MaybeProblem decode_matches_full(const OnAttention& in, bool) {
  Result<float> scale = method_scale(in);
  if (!scale) return Problem{scale.error()};
  if (in.pipeline.cross())
    return Problem{"a decoder feeds a sentence to itself: it needs self-attention"};
  const HeadResult& head = in.head;
  Result<DecodedSentence> decoded =
      decode_sentence(in.scenario.one_layer().parameters, in.pipeline.result().config,
                      in.check.head, in.pipeline.X_target(), *scale);
  if (!decoded) return Problem{decoded.error()};
  Result<FlashResult> full = full_attention(head.Q, head.K, head.V, *scale, true, nullptr);
  if (!full) return Problem{full.error()};
  float difference = 0;
  for (const DecodeStep& step : decoded->steps)
    difference =
        std::max(difference, (step.output - full->output.row(step.position)).cwiseAbs().maxCoeff());
  if (difference <= 1e-5f) return std::nullopt;
  return Problem{"the decoder's rows differ from the full causal computation by " +
                 format(difference)};
}

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] The table
// -----------------------------------------------------------------------------

// One kind of check: its name in lesson files, what it needs of the scenario, its parameters,
// and how it is evaluated.
struct LessonCheckKind {
  std::string_view name;
  enum class Scenarios { Any, OneLayer, Model } scenarios = Scenarios::Any;
  // Required members: "query", "key" (tokens), "value" (a number).
  bool query = false, key = false, value = false;
  // A whole-number setting and its member's name ("tile", "k", "buckets"), default 4.
  const char* size_name = nullptr;
  int size_most = Limits::kMaxTokens;
  bool tiles = false;         // "tiles": key tiles, from 0
  bool permutation = false;   // "permutation": the token positions in a new order
  bool mask_pattern = false;  // the scenario must have a mask pattern
  // The scenario must be self-attention: this message, at the check (or, `at_check` false, at
  // its setting).
  const char* self_only = nullptr;
  bool self_only_at_check = true;
  // The claim's sense where one evaluation serves two kinds (above or below, shared or not).
  bool sense = true;
  // On the computed attention (null: a real model's claim only), and with a real model's weights
  // (null: evaluated on the attention alone, for a model too).
  MaybeProblem (*on_attention)(const OnAttention&, bool) = nullptr;
  MaybeProblem (*on_model)(const OnModel&, bool) = nullptr;
};

namespace {

using Scenarios = LessonCheckKind::Scenarios;

// In the order docs/formats.md lists them.
// A row a line (or two), so that the table reads as one.
// clang-format off
const LessonCheckKind kCheckKinds[] = {
  {.name = "argmax", .query = true, .key = true, .on_attention = argmax},
  {.name = "weight_above", .query = true, .key = true, .value = true, .on_attention = weight_compared},
  {.name = "weight_below", .query = true, .key = true, .value = true, .sense = false,
   .on_attention = weight_compared},
  {.name = "max_weight_above", .query = true, .value = true, .on_attention = max_weight_compared},
  {.name = "max_weight_below", .query = true, .value = true, .sense = false,
   .on_attention = max_weight_compared},
  {.name = "diagonal_dominates", .on_attention = diagonal_dominates},
  {.name = "one_hot", .on_attention = one_hot},
  {.name = "output_equals_value", .query = true, .key = true, .on_attention = output_equals_value},
  {.name = "upper_triangle_zero", .on_attention = upper_triangle_zero},
  {.name = "heads_disagree", .query = true, .on_attention = heads_disagree},
  {.name = "permutation_equivariant", .permutation = true,
   .self_only = "permutation checks need self-attention", .self_only_at_check = false,
   .on_attention = permutation},
  {.name = "not_permutation_equivariant", .permutation = true,
   .self_only = "permutation checks need self-attention", .self_only_at_check = false,
   .sense = false, .on_attention = permutation},
  // A real model's (the scenario names one); kv_shared and kv_separate hold for either.
  {.name = "role", .scenarios = Scenarios::Model, .on_model = role},
  {.name = "top_token", .scenarios = Scenarios::Model, .on_model = top_token},
  {.name = "next_rank", .scenarios = Scenarios::Model, .value = true, .on_model = next_rank},
  {.name = "fill", .scenarios = Scenarios::Model, .on_model = fill},
  {.name = "ablation_changes_top", .scenarios = Scenarios::Model, .on_model = ablation},
  {.name = "ablation_keeps_top", .scenarios = Scenarios::Model, .sense = false, .on_model = ablation},
  {.name = "kv_shared", .on_attention = kv_heads, .on_model = model_kv_heads},
  {.name = "kv_separate", .sense = false, .on_attention = kv_heads, .on_model = model_kv_heads},
  {.name = "lens_top", .scenarios = Scenarios::Model, .on_model = lens_top},
  // Cheaper attention (core/variants/), on the one-layer scenario's head, with the settings the
  // Cheaper attention view starts with (tiles of 4 × 4, k = 4, 4 buckets, seed 7):
  {.name = "flash_exact", .scenarios = Scenarios::OneLayer, .size_name = "tile", .on_attention = flash},
  {.name = "flash_raises_max", .scenarios = Scenarios::OneLayer, .query = true, .size_name = "tile",
   .tiles = true, .sense = false, .on_attention = flash},
  {.name = "linformer_most_changed", .scenarios = Scenarios::OneLayer, .query = true,
   .size_name = "k", .on_attention = linformer_most_changed},
  {.name = "same_bucket", .scenarios = Scenarios::OneLayer, .query = true, .key = true,
   .size_name = "buckets", .size_most = 64, .self_only = "Reformer's buckets need self-attention",
   .self_only_at_check = false, .on_attention = bucket},
  {.name = "different_bucket", .scenarios = Scenarios::OneLayer, .query = true, .key = true,
   .size_name = "buckets", .size_most = 64, .self_only = "Reformer's buckets need self-attention",
   .self_only_at_check = false, .sense = false, .on_attention = bucket},
  {.name = "decode_matches_full", .scenarios = Scenarios::OneLayer,
   .self_only = "decoding needs self-attention", .on_attention = decode_matches_full},
  {.name = "pattern_hides", .scenarios = Scenarios::OneLayer, .query = true, .key = true,
   .mask_pattern = true, .on_attention = pattern_hides},
  {.name = "pairs_below", .scenarios = Scenarios::OneLayer, .value = true, .mask_pattern = true,
   .on_attention = pairs_below},
};
// clang-format on

}  // namespace

// -----------------------------------------------------------------------------
// [SECTION] Reading a check
// -----------------------------------------------------------------------------

LessonCheck parse_check(const Json& value, const std::string& path, const Scenario& scenario,
                        const Tokenization& queries, const Tokenization& keys) {
  if (!value.is_object()) fail(path, "expected an object such as {\"check\": \"argmax\", ...}");
  LessonCheck check;
  const std::string name = string_at(value, "check", path, true);
  const LessonCheckKind* kind = nullptr;
  for (const LessonCheckKind& candidate : kCheckKinds)
    if (candidate.name == name) kind = &candidate;
  if (!kind) fail(path + ".check", "unknown check \"" + name + "\"");
  check.kind = kind;
  check.description = value.dump();
  const bool model = scenario.has_model();
  const OneLayerSpec& one = scenario.one_layer();
  if (kind->scenarios == Scenarios::Model && !model)
    fail(path + ".check", "\"" + name + "\" is about a real model: the scenario names none");
  if (kind->scenarios == Scenarios::OneLayer && model)
    fail(path + ".check", "\"" + name + "\" is about the one-layer scenario, not a real model");
  if (kind->size_name) {
    check.size = int_at(value, kind->size_name, path, 4, 1, kind->size_most);
    if (std::string_view(kind->size_name) == "buckets" && check.size != 1 && check.size % 2 != 0)
      fail(path + ".buckets", "must be 1 or an even number up to 64");
  }
  const bool self = one.mode == Mode::Self;
  if (kind->self_only && !kind->self_only_at_check && !kind->permutation && !self)
    fail(path, kind->self_only);
  if (kind->tiles) {
    const auto it = value.find("tiles");
    if (it == value.end() || !it->is_array())
      fail(path + ".tiles", "expected a list of key tiles, from 0");
    for (const Json& tile : *it) {
      if (!tile.is_number_integer() || tile.get<std::int64_t>() < 0 ||
          tile.get<std::int64_t>() >= Limits::kMaxTokens)
        fail(path + ".tiles", "expected key tiles from 0, got " + tile.dump());
      check.tiles.push_back(tile.get<int>());
    }
  }
  if (kind->mask_pattern && !one.mask_pattern)
    fail(path + ".check", "\"" + name + "\" is about the mask pattern: the scenario has none");
  if (kind->self_only && kind->self_only_at_check && !self) fail(path + ".check", kind->self_only);
  const int heads = model ? kMostModelLayersOrHeads : one.config.heads;
  check.layer = int_at(value, "layer", path, 0, 0, model ? kMostModelLayersOrHeads - 1 : 0);
  check.head = int_at(value, "head", path, 0, 0, heads - 1);
  check.head_b = int_at(value, "head_b", path, std::min(1, heads - 1), 0, heads - 1);
  check.query = token_at(value, "query", path);
  check.key = token_at(value, "key", path);
  const bool about_role = kind->on_model == role;
  const bool about_token = kind->on_model == top_token || kind->on_model == lens_top ||
                           kind->on_model == fill || kind->on_model == next_rank;
  check.role = string_at(value, "role", path, about_role);
  check.token = string_at(value, "token", path, about_token);
  if (about_role) {
    bool known = false;
    for (int r = 0; r <= static_cast<int>(HeadRole::Mixed); ++r)
      known = known || to_string(static_cast<HeadRole>(r)) == check.role;
    if (!known)
      fail(path + ".role", "unknown role \"" + check.role +
                               "\" (induction, previous-token, next-token, first-token, "
                               "special-token, self, broad, positional, alignment, mixed)");
  }
  if (kind->query && check.query.empty()) fail(path + ".query", "missing");
  if (kind->key && check.key.empty()) fail(path + ".key", "missing");
  if (!model) {  // a model's tokens are known once it is open: checked when evaluated
    require_token(queries, check.query, path + ".query", "target");
    require_token(keys, check.key, path + ".key", one.mode == Mode::Cross ? "source" : "target");
  }
  if (kind->on_model == top_token || kind->on_model == fill) {  // an optional least probability
    const auto it = value.find("value");
    if (it != value.end() && !it->is_number()) fail(path + ".value", "expected a number");
    check.value = it != value.end() ? it->get<double>() : 0.0;
  }
  if (kind->value) {
    const auto it = value.find("value");
    if (it == value.end() || !it->is_number()) fail(path + ".value", "expected a number");
    check.value = it->get<double>();
  }
  if (kind->permutation) {
    const auto it = value.find("permutation");
    const auto n = static_cast<int>(queries.tokens.size());
    if (it == value.end() || !it->is_array() || static_cast<int>(it->size()) != n)
      fail(path + ".permutation",
           "expected a list of the " + std::to_string(n) + " token positions in a new order");
    std::vector<bool> seen(static_cast<std::size_t>(n), false);
    for (const Json& index : *it) {
      // Compared as 64-bit: as an int, 4294967296 would read as 0 and pass.
      if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
          index.get<std::int64_t>() >= n || seen[index.get<std::size_t>()])
        fail(path + ".permutation",
             "must hold each position 0.." + std::to_string(n - 1) + " once");
      seen[index.get<std::size_t>()] = true;
      check.permutation.push_back(index.get<int>());
    }
    if (!self) fail(path, kind->self_only);
  }
  return check;
}

// -----------------------------------------------------------------------------
// [SECTION] Evaluating a check
// -----------------------------------------------------------------------------

MaybeProblem check_problem(const Scenario& scenario, const LessonCheck& check,
                           const Pipeline& pipeline) {
  const LessonCheckKind& kind = *check.kind;
  const Run& run = pipeline.current();
  const bool trained = run.can(Capability::TrainedWeights);
  if (kind.scenarios == Scenarios::Model && !trained)
    return Problem{"the scenario runs no real model"};
  if (check.layer >= pipeline.layer_count())
    return Problem{"there is no layer " + std::to_string(check.layer + 1)};
  const AttentionResult& layer = pipeline.layer(trained ? check.layer : pipeline.layer_count() - 1);
  if (check.head >= static_cast<int>(layer.heads.size()))
    return Problem{"there is no head " + std::to_string(check.head)};
  if (trained && kind.on_model) {
    const TransformerForward& forward = *run.trained_forward();
    const std::vector<int>& tokens = forward.tokens();
    const int n = static_cast<int>(tokens.size());
    // The query's model position (the views' index, mapped past hidden tokens); by default the
    // last.
    const int shown = check.query.empty() ? -1 : resolve_token(run.target(), check.query);
    if (!check.query.empty() && shown < 0)
      return Problem{"the text has no \"" + check.query + "\"", true};
    int q = shown < 0 ? n - 1 : run.shown_positions()[static_cast<std::size_t>(shown)];
    // An encoder's claims are about its first [MASK] when they name no token.
    if (shown < 0 && !run.trained_model()->transformer.config().causal()) {
      const auto mask =
          std::find(tokens.begin(), tokens.end(), run.trained_model()->tokenizer.mask_token());
      if (mask != tokens.end()) q = static_cast<int>(mask - tokens.begin());
    }
    return kind.on_model({scenario, check, run, *run.trained_model(), forward, tokens, q},
                         kind.sense);
  }
  if (!kind.on_attention) return std::nullopt;
  const Tokenization& queries = pipeline.target();
  const Tokenization& keys = pipeline.keys();
  const int q = check.query.empty() ? -1 : resolve_token(queries, check.query);
  const int k = check.key.empty() ? -1 : resolve_token(keys, check.key);
  const auto gone = [&](const std::string& word, bool source) {
    const std::string sentence = source ? "the source sentence" : "the sentence";
    return Problem{
        word[0] == '#' ? sentence + " has no word " + word : sentence + " has no \"" + word + "\"",
        true};
  };
  if (!check.query.empty() && q < 0) return gone(check.query, false);
  if (!check.key.empty() && k < 0) return gone(check.key, pipeline.cross());
  const HeadResult& head = layer.heads[static_cast<std::size_t>(check.head)];
  return kind.on_attention({scenario, check, pipeline, layer, head, q, k}, kind.sense);
}

}  // namespace attnviz::lessons
