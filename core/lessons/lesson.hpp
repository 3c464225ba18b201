// Lessons: a sequence of steps, each of which sets a scenario, the panels and view to show,
// what is highlighted, a short text, optionally a question to answer before the result is
// revealed, and the claims the text makes, as checks on the engine's numbers (the tests assert
// every one of them). The file format is described in docs/formats.md; the built-in lessons live
// in assets/lessons/ and are compiled into the binaries.
#pragma once

#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

inline constexpr std::string_view kLessonFormat = "attnviz-lesson";

namespace lessons {
struct LessonCheckKind;  // a row of the table of checks (core/lessons/lesson_checks.cpp)
}

// A claim about the computed numbers of a step: a kind of check (its name in the file: argmax,
// weight_above, top_token, flash_exact, ...; docs/formats.md lists them) and its parameters.
struct LessonCheck {
  const lessons::LessonCheckKind* kind = nullptr;
  int layer = 0;  // a real model's layer (the one-layer scenario has layer 0 only)
  int head = 0;
  int head_b = 1;
  std::string role;   // role: "previous-token", "induction", ...
  std::string token;  // top_token, lens_top: the token's text
  std::string query;  // a token: its text (first match, case-insensitive) or "#3" for index 3
  std::string key;
  double value = 0;
  std::vector<int> permutation;  // new order of the target's tokens
  int size = 4;                  // flash_*: "tile"; linformer_most_changed: "k"; *_bucket: buckets
  std::vector<int> tiles;        // flash_raises_max: key tiles, from 0
  std::string description;       // the check as written, for messages
};

struct LessonPredict {
  std::string prompt;  // "Which word will 'apple' attend to most?"
  int layer = 0;
  int head = 0;
  std::string query;  // whose largest weight the student predicts
};

// The parts of a scenario a student can change, by their keys in the scenario file: what a
// step's "invites" names.
inline constexpr std::string_view kScenarioParts[] = {
    "mode",  "target",        "source",      "d_model", "heads",  "d_k",       "d_v",
    "d_att", "compatibility", "temperature", "hard",    "causal", "kv_groups", "positional",
    "seed",  "max_tokens",    "embeddings",  "weights", "mask",   "model"};  // a real model's:
                                                                             // which one, and what
                                                                             // is done to its heads

struct LessonStep {
  std::string title;
  std::string text;   // may hold {placeholders}: see expand_lesson_text
  Scenario scenario;  // complete: the lesson's scenario with every step's patch so far
  std::vector<std::string> panels;  // panel names to show ("input", "heatmaps", ...); empty = all
  std::string view;                 // centre view: "heatmaps", "pipeline", ... ("" = unchanged)
  std::string method;               // with view "cheaper": its part (view::kCheaperMethods)
  // With view "train": gradient descent on W_Q and W_K toward this target ("previous-word", ...:
  // core/training/attention_fit.hpp), in the Training view.
  std::string fit;
  std::optional<int> layer;  // selected layer (a real model's)
  std::optional<int> head;   // selected head
  std::string query;         // selected query token ("" = unchanged)
  std::string key;           // highlighted key token ("" = none)
  std::optional<LessonPredict> predict;
  std::vector<LessonCheck> checks;  // claims of the text about the step as it begins
  // The parts of the scenario (kScenarioParts) the text asks the student to change ("drag ...",
  // "toggle ..."): changing them is what the step wants, not a departure from it.
  std::vector<std::string> invites;
};

struct Lesson {
  std::string id;  // file name without .json
  std::string title;
  std::string summary;
  std::vector<LessonStep> steps;
};

// The lesson, or one line naming what is wrong ("steps[2].checks[0].key: missing"); the
// warnings are unknown keys and its scenarios' warnings.
Result<Lesson> parse_lesson(std::string_view json_text, std::string id);
Result<Lesson> load_lesson_file(const std::string& path);

// The lessons built into the binary, in order (from assets/lessons/*.json).
struct BuiltinLesson {
  std::string_view id;
  std::string_view json;
};
const std::vector<BuiltinLesson>& builtin_lessons();
// A built-in lesson by id ("05-self-attention"), number ("5") or name part ("self-attention").
std::optional<BuiltinLesson> find_builtin_lesson(std::string_view name);

// The index of a token given as its text (first match, case-insensitive) or "#N"; -1 if none.
int resolve_token(const Tokenization& tokens, std::string_view reference);

// Evaluates a step's checks on the pipeline that computed its scenario. Returns one message
// per failed check (empty when every claim holds).
std::vector<std::string> failed_checks(const LessonStep& step, const Pipeline& pipeline);
// The same, split: the check as written (JSON) and why it fails, in words for a student.
struct CheckFailure {
  std::string check;        // {"check":"argmax","key":"bread","query":"loves"}
  std::string reason;       // "loves" attends most to "dog" (0.83), not to "bread" (0.00)
  bool words_gone = false;  // the claim is about words the sentence no longer has
};
std::vector<CheckFailure> check_failures(const LessonStep& step, const Pipeline& pipeline);

// The parts of `now` (kScenarioParts) that differ from `before`. Weights, embeddings and the mask
// count only when their shapes are the same: reshaped by a change of d_model, d_k, ... or of the
// sentence, they follow that change.
std::vector<std::string> changed_parts(const Scenario& before, const Scenario& now);

// What a lesson step says once the student has changed its scenario: what they changed, whether
// the step invited that, and which claims of its text no longer hold, as one message for the
// student ("" when there is nothing to say: nothing changed, or every claim still holds).
struct StudentChange {
  std::vector<std::string> parts;      // changed_parts(step.scenario, now)
  bool invited = false;                // every part is one the step invites
  std::vector<CheckFailure> failures;  // the claims that no longer hold
  std::string message;
};
// Whether student_change can say anything on this step: a step whose text makes checked claims.
// The app keeps room for the note on such a step.
inline bool tells_changes(const LessonStep& step) {
  return !step.checks.empty();
}
// `pipeline` has computed `now`.
StudentChange student_change(const LessonStep& step, const Scenario& now, const Pipeline& pipeline);

// Fills the placeholders of a step's text with live numbers:
//   {n_query} {n_key} {pairs} (= n_query·n_key) {d_model} {d_k} {d_v} {d_att} {heads}
//   {sqrt_d_k} {additive_evaluations} (= n_query·n_key, each a d_att-unit network)
//   {alpha:H:QUERY:KEY}  the weight, two decimals
//   {argmax:H:QUERY}     the token with QUERY's largest weight in head H
// When their tokens or head are not there any more (the student edited the sentence), these two
// read as a dash. An unknown placeholder is left as it is. They read layer `layer` of a real model
// (the step's layer: LessonStep::layer; clamped to the model's), the one-layer scenario's layer.
std::string expand_lesson_text(std::string_view text, const Pipeline& pipeline, int layer = 0);

}  // namespace attnviz
