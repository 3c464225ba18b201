// Lessons. Index:
//   [SECTION] Built-in lessons
//   [SECTION] Parse
//   [SECTION] Checks
//   [SECTION] What the student changed
//   [SECTION] Text placeholders
#include "core/lessons/lesson.hpp"

#include "core/document/file_io.hpp"
#include "core/document/json.hpp"
#include "core/figures/views.hpp"
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
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>

namespace attnviz {

// -----------------------------------------------------------------------------
// [SECTION] Built-in lessons
// -----------------------------------------------------------------------------

std::optional<BuiltinLesson> find_builtin_lesson(std::string_view name) {
  const auto& lessons = builtin_lessons();
  for (const BuiltinLesson& lesson : lessons)
    if (lesson.id == name) return lesson;
  // "5" or "05": the lesson whose id starts with that number.
  if (!name.empty() &&
      std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int number = 0;
    if (std::from_chars(name.data(), name.data() + name.size(), number).ec != std::errc())
      return std::nullopt;  // too large to be a lesson's number
    for (const BuiltinLesson& lesson : lessons)
      if (std::atoi(std::string(lesson.id.substr(0, lesson.id.find('-'))).c_str()) == number)
        return lesson;
    return std::nullopt;
  }
  for (const BuiltinLesson& lesson : lessons)
    if (lesson.id.find(name) != std::string_view::npos) return lesson;
  return std::nullopt;
}

int resolve_token(const Tokenization& tokens, std::string_view reference) {
  if (reference.size() > 1 && reference[0] == '#') {  // "#3": the token at that position
    const std::string_view digits = reference.substr(1);
    std::size_t index = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error != std::errc() || end != digits.data() + digits.size())
      return -1;  // not a number, or too large
    return index < tokens.tokens.size() ? static_cast<int>(index) : -1;
  }
  const std::string key = lowercase_key(reference);
  for (std::size_t i = 0; i < tokens.tokens.size(); ++i)
    if (tokens.tokens[i].key == key) return static_cast<int>(i);
  return -1;
}

// -----------------------------------------------------------------------------
// [SECTION] Parse
// -----------------------------------------------------------------------------
namespace {

// A step names slots and centre views as users type them (core/figures/views.hpp); not the
// lesson band, which the lesson shows by itself.
bool is_panel_name(const std::string& name) {
  const std::optional<view::Slot> slot = view::parse_slot(name);
  return slot && view::user_may_name(*slot);
}

struct CheckName {
  std::string_view name;
  LessonCheck::Kind kind;
  bool needs_query, needs_key, needs_value;
};
constexpr CheckName kCheckNames[] = {
    {"argmax", LessonCheck::Kind::Argmax, true, true, false},
    {"weight_above", LessonCheck::Kind::WeightAbove, true, true, true},
    {"weight_below", LessonCheck::Kind::WeightBelow, true, true, true},
    {"max_weight_above", LessonCheck::Kind::MaxWeightAbove, true, false, true},
    {"max_weight_below", LessonCheck::Kind::MaxWeightBelow, true, false, true},
    {"diagonal_dominates", LessonCheck::Kind::DiagonalDominates, false, false, false},
    {"one_hot", LessonCheck::Kind::OneHot, false, false, false},
    {"output_equals_value", LessonCheck::Kind::OutputEqualsValue, true, true, false},
    {"upper_triangle_zero", LessonCheck::Kind::UpperTriangleZero, false, false, false},
    {"heads_disagree", LessonCheck::Kind::HeadsDisagree, true, false, false},
    {"permutation_equivariant", LessonCheck::Kind::PermutationEquivariant, false, false, false},
    {"not_permutation_equivariant", LessonCheck::Kind::NotPermutationEquivariant, false, false,
     false},
    {"role", LessonCheck::Kind::Role, false, false, false},
    {"top_token", LessonCheck::Kind::TopToken, false, false, false},
    {"ablation_changes_top", LessonCheck::Kind::AblationChangesTop, false, false, false},
    {"ablation_keeps_top", LessonCheck::Kind::AblationKeepsTop, false, false, false},
    {"kv_shared", LessonCheck::Kind::KvShared, false, false, false},
    {"kv_separate", LessonCheck::Kind::KvSeparate, false, false, false},
    {"lens_top", LessonCheck::Kind::LensTop, false, false, false},
    {"flash_exact", LessonCheck::Kind::FlashExact, false, false, false},
    {"flash_raises_max", LessonCheck::Kind::FlashRaisesMax, true, false, false},
    {"linformer_most_changed", LessonCheck::Kind::LinformerMostChanged, true, false, false},
    {"same_bucket", LessonCheck::Kind::SameBucket, true, true, false},
    {"different_bucket", LessonCheck::Kind::DifferentBucket, true, true, false},
    {"decode_matches_full", LessonCheck::Kind::DecodeMatchesFull, false, false, false},
    {"pattern_hides", LessonCheck::Kind::PatternHides, true, true, false},
    {"pairs_below", LessonCheck::Kind::PairsBelow, false, false, true},
};

bool needs_model(LessonCheck::Kind kind) {
  using Kind = LessonCheck::Kind;
  return kind == Kind::Role || kind == Kind::TopToken || kind == Kind::AblationChangesTop ||
         kind == Kind::AblationKeepsTop || kind == Kind::LensTop;
}

// The cheaper-attention checks: about the one-layer scenario (a real model is refused).
bool is_variant_check(LessonCheck::Kind kind) {
  using Kind = LessonCheck::Kind;
  return kind == Kind::FlashExact || kind == Kind::FlashRaisesMax ||
         kind == Kind::LinformerMostChanged || kind == Kind::SameBucket ||
         kind == Kind::DifferentBucket || kind == Kind::DecodeMatchesFull ||
         kind == Kind::PatternHides || kind == Kind::PairsBelow;
}

// A real model's layers and heads are known once it is open: a lesson names them freely, and a
// check on one the model lacks fails when it is evaluated.
constexpr int kMostModelLayersOrHeads = 4096;

struct Failure {
  std::string message;
};

// "mode, target, ...": what a step may invite, for messages.
std::string scenario_part_names() {
  std::string names;
  for (std::string_view part : kScenarioParts)
    names += (names.empty() ? "" : ", ") + std::string(part);
  return names;
}

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Failure{path + ": " + message};
}

std::string string_at(const Json& object, const char* key, const std::string& path,
                      bool required = false) {
  const Json* value = find_member(object, key);
  if (!value) {
    if (required) fail(path + "." + key, "missing");
    return {};
  }
  if (!value->is_string()) fail(path + "." + key, "expected a string");
  return value->get<std::string>();
}

int int_at(const Json& object, const char* key, const std::string& path, int fallback, int low,
           int high) {
  const Json* value = find_member(object, key);
  if (!value) return fallback;
  if (!value->is_number_integer() || value->get<long long>() < low ||
      value->get<long long>() > high)
    fail(path + "." + key,
         "expected a whole number from " + std::to_string(low) + " to " + std::to_string(high));
  return value->get<int>();
}

// A token reference: a string (text or "#N") or a number (an index).
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

LessonCheck parse_check(const Json& value, const std::string& path, const Scenario& scenario,
                        const Tokenization& queries, const Tokenization& keys) {
  if (!value.is_object()) fail(path, "expected an object such as {\"check\": \"argmax\", ...}");
  LessonCheck check;
  const std::string name = string_at(value, "check", path, true);
  const CheckName* found = nullptr;
  for (const CheckName& candidate : kCheckNames)
    if (candidate.name == name) found = &candidate;
  if (!found) fail(path + ".check", "unknown check \"" + name + "\"");
  check.kind = found->kind;
  check.description = value.dump();
  const bool model = scenario.has_model();
  if (needs_model(check.kind) && !model)
    fail(path + ".check", "\"" + name + "\" is about a real model: the scenario names none");
  if (is_variant_check(check.kind) && model)
    fail(path + ".check", "\"" + name + "\" is about the one-layer scenario, not a real model");
  using Kind = LessonCheck::Kind;
  if (check.kind == Kind::FlashExact || check.kind == Kind::FlashRaisesMax)
    check.size = int_at(value, "tile", path, 4, 1, Limits::kMaxTokens);
  if (check.kind == Kind::LinformerMostChanged)
    check.size = int_at(value, "k", path, 4, 1, Limits::kMaxTokens);
  if (check.kind == Kind::SameBucket || check.kind == Kind::DifferentBucket) {
    check.size = int_at(value, "buckets", path, 4, 1, 64);
    if (check.size != 1 && check.size % 2 != 0)
      fail(path + ".buckets", "must be 1 or an even number up to 64");
    if (scenario.one_layer().mode != Mode::Self)
      fail(path, "Reformer's buckets need self-attention");
  }
  if (check.kind == Kind::FlashRaisesMax) {
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
  if ((check.kind == Kind::PatternHides || check.kind == Kind::PairsBelow) &&
      !scenario.one_layer().mask_pattern)
    fail(path + ".check", "\"" + name + "\" is about the mask pattern: the scenario has none");
  if (check.kind == Kind::DecodeMatchesFull && scenario.one_layer().mode != Mode::Self)
    fail(path + ".check", "decoding needs self-attention");
  const int heads = model ? kMostModelLayersOrHeads : scenario.one_layer().config.heads;
  check.layer = int_at(value, "layer", path, 0, 0, model ? kMostModelLayersOrHeads - 1 : 0);
  check.head = int_at(value, "head", path, 0, 0, heads - 1);
  check.head_b = int_at(value, "head_b", path, std::min(1, heads - 1), 0, heads - 1);
  check.query = token_at(value, "query", path);
  check.key = token_at(value, "key", path);
  check.role = string_at(value, "role", path, check.kind == LessonCheck::Kind::Role);
  check.token = string_at(
      value, "token", path,
      check.kind == LessonCheck::Kind::TopToken || check.kind == LessonCheck::Kind::LensTop);
  if (check.kind == LessonCheck::Kind::Role) {
    bool known = false;
    for (int r = 0; r <= static_cast<int>(HeadRole::Mixed); ++r)
      known = known || to_string(static_cast<HeadRole>(r)) == check.role;
    if (!known)
      fail(path + ".role", "unknown role \"" + check.role +
                               "\" (induction, previous-token, first-token, self, broad, "
                               "positional, mixed)");
  }
  if (found->needs_query && check.query.empty()) fail(path + ".query", "missing");
  if (found->needs_key && check.key.empty()) fail(path + ".key", "missing");
  if (!model) {  // a model's tokens are known once it is open: checked when evaluated
    require_token(queries, check.query, path + ".query", "target");
    require_token(keys, check.key, path + ".key",
                  scenario.one_layer().mode == Mode::Cross ? "source" : "target");
  }
  if (check.kind == LessonCheck::Kind::TopToken) {
    const auto it = value.find("value");
    if (it != value.end() && !it->is_number()) fail(path + ".value", "expected a number");
    check.value = it != value.end() ? it->get<double>() : 0.0;
  }
  if (found->needs_value) {
    const auto it = value.find("value");
    if (it == value.end() || !it->is_number()) fail(path + ".value", "expected a number");
    check.value = it->get<double>();
  }
  if (check.kind == LessonCheck::Kind::PermutationEquivariant ||
      check.kind == LessonCheck::Kind::NotPermutationEquivariant) {
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
    if (scenario.one_layer().mode != Mode::Self)
      fail(path, "permutation checks need self-attention");
  }
  return check;
}

LessonStep parse_step(const Json& value, const std::string& path, Json& scenario_json,
                      std::vector<std::string>& warnings) {
  if (!value.is_object()) fail(path, "expected an object");
  static const std::set<std::string> kKnown = {"title",   "text",   "scenario", "panels", "view",
                                               "method",  "layer",  "head",     "query",  "key",
                                               "predict", "checks", "invites"};
  for (const auto& [key, ignored] : value.items())
    if (!kKnown.contains(key)) warnings.push_back(path + ": unknown key \"" + key + "\" (ignored)");
  LessonStep step;
  step.title = string_at(value, "title", path, true);
  step.text = string_at(value, "text", path);
  // The step's scenario: the previous one with this step's changes merged in (RFC 7386).
  if (const auto it = value.find("scenario"); it != value.end()) {
    if (!it->is_object()) fail(path + ".scenario", "expected an object of scenario keys to change");
    scenario_json.merge_patch(*it);
  }
  Result<Scenario> load = parse_scenario(scenario_json.dump());
  if (!load.ok()) fail(path + ".scenario", load.error());
  for (const std::string& w : load.warnings) warnings.push_back(path + ".scenario: " + w);
  step.scenario = std::move(*load);

  if (const auto it = value.find("panels"); it != value.end()) {
    if (!it->is_array()) fail(path + ".panels", "expected a list of panel names");
    for (const Json& name : *it) {
      if (!name.is_string() || !is_panel_name(name.get<std::string>()))
        fail(path + ".panels",
             "unknown panel " + name.dump() + " (" + view::user_slot_names() + ")");
      step.panels.push_back(name.get<std::string>());
    }
  }
  step.view = string_at(value, "view", path);
  if (!step.view.empty() && !view::parse_centre_view(step.view))
    fail(path + ".view", "unknown view \"" + step.view + "\" (" + view::centre_view_names() + ")");
  step.method = string_at(value, "method", path);
  if (!step.method.empty()) {
    if (step.view != "cheaper") fail(path + ".method", "a method belongs to \"view\": \"cheaper\"");
    if (std::find(view::kCheaperMethods.begin(), view::kCheaperMethods.end(), step.method) ==
        view::kCheaperMethods.end())
      fail(path + ".method", "unknown method \"" + step.method +
                                 "\" (flash, linformer, reformer, sparse, shared_keys, decoding)");
  }

  const std::size_t max_tokens = static_cast<std::size_t>(step.scenario.max_tokens);
  const Tokenization queries = tokenize(step.scenario.target, max_tokens);
  const Tokenization keys = step.scenario.one_layer().mode == Mode::Cross
                                ? tokenize(step.scenario.one_layer().source, max_tokens)
                                : queries;
  const bool model = step.scenario.has_model();
  const int heads = model ? kMostModelLayersOrHeads : step.scenario.one_layer().config.heads;
  if (value.contains("layer"))
    step.layer = int_at(value, "layer", path, 0, 0, model ? kMostModelLayersOrHeads - 1 : 0);
  if (value.contains("head")) step.head = int_at(value, "head", path, 0, 0, heads - 1);
  step.query = token_at(value, "query", path);
  step.key = token_at(value, "key", path);
  if (!model) {  // a model's tokens are known once it is open
    require_token(queries, step.query, path + ".query", "target");
    require_token(keys, step.key, path + ".key",
                  step.scenario.one_layer().mode == Mode::Cross ? "source" : "target");
  }

  if (const auto it = value.find("predict"); it != value.end()) {
    const std::string predict_path = path + ".predict";
    if (!it->is_object())
      fail(predict_path, "expected {\"prompt\": ..., \"query\": ..., \"head\": ...}");
    LessonPredict predict;
    predict.prompt = string_at(*it, "prompt", predict_path, true);
    predict.layer = int_at(*it, "layer", predict_path, step.layer.value_or(0), 0,
                           model ? kMostModelLayersOrHeads - 1 : 0);
    predict.head = int_at(*it, "head", predict_path, step.head.value_or(0), 0, heads - 1);
    predict.query = token_at(*it, "query", predict_path);
    if (predict.query.empty()) fail(predict_path + ".query", "missing");
    if (!model) require_token(queries, predict.query, predict_path + ".query", "target");
    step.predict = predict;
  }
  if (const auto it = value.find("invites"); it != value.end()) {
    if (!it->is_array()) fail(path + ".invites", "expected a list of scenario keys");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const Json& part = (*it)[i];
      const std::string part_path = path + ".invites[" + std::to_string(i) + "]";
      if (!part.is_string() || std::find(std::begin(kScenarioParts), std::end(kScenarioParts),
                                         part.get<std::string>()) == std::end(kScenarioParts))
        fail(part_path, "unknown part " + part.dump() + " (" + scenario_part_names() + ")");
      step.invites.push_back(part.get<std::string>());
    }
  }
  if (const auto it = value.find("checks"); it != value.end()) {
    if (!it->is_array()) fail(path + ".checks", "expected a list");
    for (std::size_t i = 0; i < it->size(); ++i)
      step.checks.push_back(parse_check((*it)[i], path + ".checks[" + std::to_string(i) + "]",
                                        step.scenario, queries, keys));
  }
  return step;
}

}  // namespace

Result<Lesson> parse_lesson(std::string_view json_text, std::string id) {
  std::vector<std::string> warnings;
  try {
    Result<Json> parsed = parse_json(json_text);
    if (!parsed) fail("lesson", parsed.error());
    const Json root = std::move(*parsed);
    if (!root.is_object()) fail("lesson", "expected a JSON object");
    if (root.value("format", std::string()) != kLessonFormat)
      fail("format", "this is not an AttnViz lesson (expected \"attnviz-lesson\")");
    Lesson lesson;
    lesson.id = std::move(id);
    lesson.title = string_at(root, "title", "lesson", true);
    lesson.summary = string_at(root, "summary", "lesson");
    const auto scenario = root.find("scenario");
    if (scenario == root.end() || !scenario->is_object())
      fail("scenario", "missing: the lesson's starting scenario");
    Json scenario_json = *scenario;
    if (!scenario_json.contains("format")) scenario_json["format"] = kScenarioFormat;
    const auto steps = root.find("steps");
    if (steps == root.end() || !steps->is_array() || steps->empty())
      fail("steps", "expected a list of at least one step");
    for (std::size_t i = 0; i < steps->size(); ++i)
      lesson.steps.push_back(
          parse_step((*steps)[i], "steps[" + std::to_string(i) + "]", scenario_json, warnings));
    return Result<Lesson>(std::move(lesson), std::move(warnings));
  } catch (const Failure& failure) {
    return Result<Lesson>(Status::error(failure.message), std::move(warnings));
  } catch (const Json::exception& e) {
    return Result<Lesson>(Status::error(std::string("unexpected JSON content: ") + e.what()),
                          std::move(warnings));
  }
}

Result<Lesson> load_lesson_file(const std::string& path) {
  const Result<std::string> text = read_file(path, kMaxScenarioBytes);
  if (!text) return text.status();
  std::string id = path.substr(path.find_last_of('/') + 1);
  if (id.size() > 5 && id.substr(id.size() - 5) == ".json") id.resize(id.size() - 5);
  Result<Lesson> load = parse_lesson(*text, id);
  if (!load.ok())
    return Result<Lesson>(Status::error(path + ": " + load.error()), std::move(load.warnings));
  return load;
}

// -----------------------------------------------------------------------------
// [SECTION] Checks
// -----------------------------------------------------------------------------
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

// Why a claim does not hold, as a clause for a student ("\"al\" attends most to ..."), and
// whether it is about words the sentence no longer has.
struct Problem {
  std::string reason;
  bool words_gone = false;
};
using MaybeProblem = std::optional<Problem>;

// Whether the outputs follow the target sentence's tokens when they are reordered (or, with
// expect_equivariant false, do not); `pipeline` computed `scenario`.
MaybeProblem permutation_problem(const Scenario& scenario, const LessonCheck& check,
                                 const Pipeline& pipeline, bool expect_equivariant) {
  const auto& tokens = pipeline.target().tokens;
  // The student may have typed another sentence: the claim reorders words that are gone.
  if (check.permutation.size() != tokens.size() || pipeline.cross())
    return Problem{"the sentence no longer has the " + std::to_string(check.permutation.size()) +
                       " words the text reorders",
                   true};
  Scenario permuted = scenario;
  permuted.target.clear();
  for (int index : check.permutation)
    permuted.target += tokens[static_cast<std::size_t>(index)].text + " ";
  Pipeline other;
  if (Status status = other.run(permuted); !status)
    return Problem{"the reordered sentence does not compute: " + status.message()};
  if (other.target().tokens.size() != tokens.size())
    return Problem{"the reordered sentence splits into other words", true};
  const Matrix& original = pipeline.result().output;
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

// Whether the query's output equals the value of `key` (to float precision).
bool output_is_value(const HeadResult& head, Eigen::Index query, Eigen::Index key) {
  const double difference = (head.output.row(query) - head.V.row(key)).cwiseAbs().maxCoeff();
  return difference <= 1e-5 * std::max(1.0f, head.V.row(key).cwiseAbs().maxCoeff());
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

// The checks on a real model (LessonCheck::needs_model): `run` computed `scenario`.
MaybeProblem model_problem(const Scenario& scenario, const LessonCheck& check, const Run& run) {
  using Kind = LessonCheck::Kind;
  const Model& model = *run.trained_model();
  const TransformerForward& forward = *run.trained_forward();
  const TransformerConfig& config = model.transformer.config();
  const std::vector<int>& tokens = forward.tokens();
  const int n = static_cast<int>(tokens.size());
  const int q = check.query.empty() ? n - 1 : resolve_token(run.target(), check.query);
  if (q < 0) return Problem{"the text has no \"" + check.query + "\"", true};
  const auto shown = [&](int id) { return "\"" + model.tokenizer.shown(id) + "\""; };
  switch (check.kind) {
    case Kind::Role: {
      const HeadScores* scores = run.role_of(check.layer, check.head);
      if (!scores) return Problem{"the heads' roles could not be measured"};
      if (to_string(scores->role) == check.role) return std::nullopt;
      return Problem{layer_head(check.layer, check.head) + " is a " +
                     std::string(to_string(scores->role)) + " head, not a " + check.role + " one"};
    }
    case Kind::TopToken: {
      const RowVector logits = forward.logits(q);
      const int top = argmax_of(logits);
      const std::vector<float> p = next_token_probabilities(
          std::span<const float>(logits.data(), static_cast<std::size_t>(logits.size())), {});
      const float probability = p[static_cast<std::size_t>(top)];
      const std::string words = token_words(model, tokens[static_cast<std::size_t>(q)], top);
      if (words != check.token)
        return Problem{"after " + shown(tokens[static_cast<std::size_t>(q)]) +
                       " the model's most likely next token is " + shown(top) + " (" +
                       format(probability) + "), not \"" + check.token + "\""};
      if (probability <= check.value)
        return Problem{"the model gives " + shown(top) + " " + format(probability) +
                       ", not more than " + format(check.value)};
      return std::nullopt;
    }
    case Kind::AblationChangesTop:
    case Kind::AblationKeepsTop: {
      TransformerForward knocked(model.transformer);
      for (const ModelHeadChange& entry : scenario.model()->interventions)
        static_cast<void>(knocked.set_intervention(entry.layer, entry.head, entry.change));
      HeadIntervention ablate;
      ablate.output_scale = 0.0f;
      if (Status status = knocked.set_intervention(check.layer, check.head, ablate); !status)
        return Problem{status.message()};
      if (Status status = knocked.run(tokens); !status) return Problem{status.message()};
      const int before = argmax_of(forward.logits(q));
      const int after = argmax_of(knocked.logits(q));
      const bool changes = before != after;
      if (changes == (check.kind == Kind::AblationChangesTop)) return std::nullopt;
      return Problem{changes ? "knocking out " + layer_head(check.layer, check.head) +
                                   " changes the prediction from " + shown(before) + " to " +
                                   shown(after)
                             : "knocking out " + layer_head(check.layer, check.head) +
                                   " leaves the prediction at " + shown(before)};
    }
    case Kind::LensTop: {
      const std::vector<std::vector<LensPrediction>> lens = logit_lens(forward);
      const LensPrediction& p =
          lens[static_cast<std::size_t>(check.layer)][static_cast<std::size_t>(q)];
      if (p.token < 0)
        return Problem{"after layer " + std::to_string(check.layer + 1) +
                       " the numbers overflowed: no prediction"};
      if (token_words(model, tokens[static_cast<std::size_t>(q)], p.token) == check.token)
        return std::nullopt;
      return Problem{"after layer " + std::to_string(check.layer + 1) + " the stream at " +
                     shown(tokens[static_cast<std::size_t>(q)]) + " predicts " + shown(p.token) +
                     " (" + format(p.probability) + "), not \"" + check.token + "\""};
    }
    case Kind::KvShared:
    case Kind::KvSeparate: {
      if (check.head_b >= config.n_heads)
        return Problem{"there is no head " + std::to_string(check.head_b + 1)};
      const bool shared = config.kv_head_of(check.head) == config.kv_head_of(check.head_b);
      if (shared == (check.kind == Kind::KvShared)) return std::nullopt;
      return Problem{
          layer_head(check.layer, check.head) + " and head " + std::to_string(check.head_b + 1) +
          (shared ? " read the same keys and values" : " read different keys and values")};
    }
    default:
      break;
  }
  return std::nullopt;
}

// The cheaper-attention claims and kv_shared/kv_separate on the one-layer scenario: each method
// run on the head's Q, K and V as the Cheaper attention view runs it.
MaybeProblem variant_problem(const Scenario& scenario, const LessonCheck& check,
                             const Pipeline& pipeline, const HeadResult& head, int q, int k) {
  using Kind = LessonCheck::Kind;
  const AttentionConfig& config = pipeline.result().config;
  const Tokenization& queries = pipeline.target();
  const Tokenization& keys = pipeline.keys();
  if (check.kind == Kind::KvShared || check.kind == Kind::KvSeparate) {
    const bool shared = kv_source_head(config, check.head) == kv_source_head(config, check.head_b);
    if (shared == (check.kind == Kind::KvShared)) return std::nullopt;
    return Problem{"head " + std::to_string(check.head + 1) + " and head " +
                   std::to_string(check.head_b + 1) +
                   (shared ? " read the same keys and values" : " read different keys and values")};
  }
  if (check.kind == Kind::PatternHides || check.kind == Kind::PairsBelow) {
    const MaskMatrix* mask = pipeline.mask();
    if (!mask) return Problem{"the scenario has no mask pattern"};
    if (check.kind == Kind::PatternHides) {
      if ((*mask)(q, k) == 0) return std::nullopt;
      return Problem{token_text(queries, q) + " still sees " + token_text(keys, k)};
    }
    const PairCount count = count_pairs(*mask, config.causal);
    const double share = static_cast<double>(count.computed) /
                         static_cast<double>(std::max<std::int64_t>(1, count.full));
    if (share < check.value) return std::nullopt;
    return Problem{"the pattern computes " + std::to_string(count.computed) + " of " +
                   std::to_string(count.full) + " pairs (" + format(share) + ")"};
  }
  Result<float> scale = variant_score_scale(config, "this check");
  if (!scale) return Problem{scale.error()};
  switch (check.kind) {
    case Kind::FlashExact:
    case Kind::FlashRaisesMax: {
      Result<FlashResult> flash =
          flash_attention(head.Q, head.K, head.V, *scale, config.causal, pipeline.mask(),
                          {check.size, check.size}, check.kind == Kind::FlashRaisesMax);
      if (!flash) return Problem{flash.error()};
      if (check.kind == Kind::FlashExact) {
        const float difference = (flash->output - head.output).cwiseAbs().maxCoeff();
        if (difference <= 1e-5f) return std::nullopt;
        return Problem{"FlashAttention's output differs from full attention by " +
                       format(difference)};
      }
      std::vector<int> raised;  // the key tiles, in order, that raise row q's maximum
      for (const FlashTile& tile : flash->tiles) {
        if (q < tile.query_begin || q >= tile.query_end || tile.skipped) continue;
        const auto row = static_cast<std::size_t>(q - tile.query_begin);
        if (tile.max_after[row] > tile.max_before[row])
          raised.push_back(tile.key_begin / check.size);
      }
      if (raised == check.tiles) return std::nullopt;
      std::string list;
      for (const int t : raised) list += (list.empty() ? "" : ", ") + std::to_string(t + 1);
      return Problem{"the running maximum of " + token_text(queries, q) + " rises at key tile" +
                     (raised.size() == 1 ? " " : "s ") + list};
    }
    case Kind::LinformerMostChanged: {
      if (config.causal || pipeline.mask()) return Problem{"Linformer takes no mask"};
      Result<LinformerResult> lin =
          seeded_linformer(head.Q, head.K, head.V, *scale, check.size, kLinformerSeed, false);
      if (!lin) return Problem{lin.error()};
      const ColumnVector moved = (lin->output - head.output).cwiseAbs().rowwise().maxCoeff();
      Eigen::Index most = 0;
      moved.maxCoeff(&most);
      if (most == q) return std::nullopt;
      return Problem{"with k = " + std::to_string(check.size) + ", the output of " +
                     token_text(queries, most) + " moves most (" + format(moved(most)) +
                     "), not that of " + token_text(queries, q) + " (" + format(moved(q)) + ")"};
    }
    case Kind::SameBucket:
    case Kind::DifferentBucket: {
      ReformerSettings settings;
      settings.buckets = check.size;
      Result<ReformerResult> lsh =
          reformer_attention(head.Q, head.V, *scale, config.causal, settings);
      if (!lsh) return Problem{lsh.error()};
      const std::vector<int>& bucket = lsh->rounds.front().bucket;
      const bool same = bucket[static_cast<std::size_t>(q)] == bucket[static_cast<std::size_t>(k)];
      if (same == (check.kind == Kind::SameBucket)) return std::nullopt;
      return Problem{token_text(queries, q) + " lands in bucket " +
                     std::to_string(bucket[static_cast<std::size_t>(q)] + 1) + " and " +
                     token_text(keys, k) + " in bucket " +
                     std::to_string(bucket[static_cast<std::size_t>(k)] + 1)};
    }
    case Kind::DecodeMatchesFull: {
      if (pipeline.cross())
        return Problem{"a decoder feeds a sentence to itself: it needs self-attention"};
      Result<DecodedSentence> decoded = decode_sentence(scenario.one_layer().parameters, config,
                                                        check.head, pipeline.X_target(), *scale);
      if (!decoded) return Problem{decoded.error()};
      Result<FlashResult> full = full_attention(head.Q, head.K, head.V, *scale, true, nullptr);
      if (!full) return Problem{full.error()};
      float difference = 0;
      for (const DecodeStep& step : decoded->steps)
        difference = std::max(
            difference, (step.output - full->output.row(step.position)).cwiseAbs().maxCoeff());
      if (difference <= 1e-5f) return std::nullopt;
      return Problem{"the decoder's rows differ from the full causal computation by " +
                     format(difference)};
    }
    default:
      break;
  }
  return std::nullopt;
}

// Whether a check's claim holds on `pipeline`, which computed `scenario`: nothing, or why not, in
// words for a student.
MaybeProblem check_problem(const Scenario& scenario, const LessonCheck& check,
                           const Pipeline& pipeline) {
  const bool trained = pipeline.can(Capability::TrainedWeights);
  if (needs_model(check.kind) && !trained) return Problem{"the scenario runs no real model"};
  if (check.layer >= pipeline.layer_count())
    return Problem{"there is no layer " + std::to_string(check.layer + 1)};
  const AttentionResult& r = pipeline.layer(trained ? check.layer : pipeline.layer_count() - 1);
  if (check.head >= static_cast<int>(r.heads.size()))
    return Problem{"there is no head " + std::to_string(check.head)};
  using Kind = LessonCheck::Kind;
  const bool kv_check = check.kind == Kind::KvShared || check.kind == Kind::KvSeparate;
  if (needs_model(check.kind) || (kv_check && trained))
    return model_problem(scenario, check, pipeline.current());
  const HeadResult& head = r.heads[static_cast<std::size_t>(check.head)];
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
  if (kv_check || is_variant_check(check.kind))
    return variant_problem(scenario, check, pipeline, head, q, k);
  switch (check.kind) {
    case Kind::Argmax: {
      const Eigen::Index best = row_argmax(head.weights, q);
      if (best == k) {
        const Eigen::Index tie = tied_with(head.weights, q, k);
        if (tie < 0) return std::nullopt;
        return Problem{token_text(queries, q) + " attends as much to " + token_text(keys, tie) +
                       " (" + format(head.weights(q, tie)) + ") as to " + token_text(keys, k) +
                       " (" + format(head.weights(q, k)) + ")"};
      }
      return Problem{token_text(queries, q) + " attends most to " + token_text(keys, best) + " (" +
                     format(head.weights(q, best)) + "), not to " + token_text(keys, k) + " (" +
                     format(head.weights(q, k)) + ")"};
    }
    case Kind::WeightAbove:
    case Kind::WeightBelow: {
      const double w = head.weights(q, k);
      const bool above = check.kind == Kind::WeightAbove;
      if (above ? w > check.value : w < check.value) return std::nullopt;
      return Problem{token_text(queries, q) + " gives " + token_text(keys, k) + " " + format(w) +
                     ", not " + (above ? "more" : "less") + " than " + format(check.value)};
    }
    case Kind::MaxWeightAbove:
    case Kind::MaxWeightBelow: {
      const Eigen::Index best = row_argmax(head.weights, q);
      const double w = head.weights(q, best);
      if (check.kind == Kind::MaxWeightAbove) {
        if (w > check.value) return std::nullopt;
        return Problem{token_text(queries, q) + " gives at most " + format(w) + " (to " +
                       token_text(keys, best) + "), not more than " + format(check.value)};
      }
      if (w < check.value) return std::nullopt;
      return Problem{token_text(queries, q) + " gives " + token_text(keys, best) + " " + format(w) +
                     ", not less than " + format(check.value)};
    }
    case Kind::DiagonalDominates:
      // A claim about self-attention; switched to cross-attention, the diagonal means nothing (and
      // the source may have fewer words than the target).
      if (pipeline.cross())
        return Problem{
            "the queries and the keys come from two different sentences: no word meets "
            "itself"};
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i)
        if (row_argmax(head.weights, i) != i)
          return Problem{token_text(queries, i) + " attends most to " +
                         token_text(keys, row_argmax(head.weights, i)) + ", not to itself"};
        else if (const Eigen::Index tie = tied_with(head.weights, i, i); tie >= 0)
          return Problem{token_text(queries, i) + " attends as much to " + token_text(keys, tie) +
                         " as to itself"};
      return std::nullopt;
    case Kind::OneHot:
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i)
        if (head.weights.row(i).maxCoeff() != 1.0f || head.weights.row(i).sum() != 1.0f) {
          const Eigen::Index best = row_argmax(head.weights, i);
          return Problem{token_text(queries, i) +
                         " spreads its weight over several keys (at most " +
                         format(head.weights(i, best)) + ", on " + token_text(keys, best) + ")"};
        }
      return std::nullopt;
    case Kind::OutputEqualsValue: {
      if (output_is_value(head, q, k)) return std::nullopt;
      Eigen::Index equal = -1;  // the key whose value the output is instead, if any
      for (Eigen::Index j = 0; j < head.V.rows() && equal < 0; ++j)
        if (output_is_value(head, q, j)) equal = j;
      // One number per value (d_v = 1): the views print it, and so does the message.
      const bool one_number = head.V.cols() == 1;
      const auto number = [&](const Matrix& m, Eigen::Index row) {
        return one_number ? " (" + format(m(row, 0)) + ")" : std::string();
      };
      const std::string output = "the output of " + token_text(queries, q);
      if (equal >= 0)
        return Problem{output + " is the value of " + token_text(keys, equal) +
                       number(head.V, equal) + ", not that of " + token_text(keys, k) +
                       number(head.V, k)};
      return Problem{output + number(head.output, q) +
                     " is a blend of several values, not exactly the value of " +
                     token_text(keys, k) + number(head.V, k)};
    }
    case Kind::UpperTriangleZero:
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i)
        for (Eigen::Index j = i + 1; j < head.weights.cols(); ++j)
          if (head.weights(i, j) != 0.0f)
            return Problem{token_text(queries, i) + " gives " + format(head.weights(i, j)) +
                           " to " + token_text(keys, j) + ", a word after it"};
      return std::nullopt;
    case Kind::HeadsDisagree: {
      if (check.head_b >= static_cast<int>(r.heads.size()))
        return Problem{"there is no head " + std::to_string(check.head_b)};
      const Eigen::Index a = row_argmax(head.weights, q);
      const Eigen::Index b = row_argmax(r.heads[static_cast<std::size_t>(check.head_b)].weights, q);
      if (a != b) return std::nullopt;
      return Problem{token_text(queries, q) + " attends most to " + token_text(keys, a) +
                     " in both head " + std::to_string(check.head) + " and head " +
                     std::to_string(check.head_b)};
    }
    case Kind::PermutationEquivariant:
      return permutation_problem(scenario, check, pipeline, true);
    case Kind::NotPermutationEquivariant:
      return permutation_problem(scenario, check, pipeline, false);
    case Kind::Role:
    case Kind::TopToken:
    case Kind::AblationChangesTop:
    case Kind::AblationKeepsTop:
    case Kind::KvShared:
    case Kind::KvSeparate:
    case Kind::LensTop:
      break;  // model_problem
    default:
      break;  // variant_problem
  }
  return std::nullopt;
}

// The step's claims that do not hold on `pipeline`, which computed `scenario`.
std::vector<CheckFailure> failures_on(const LessonStep& step, const Scenario& scenario,
                                      const Pipeline& pipeline) {
  std::vector<CheckFailure> failures;
  for (const LessonCheck& check : step.checks)
    if (MaybeProblem problem = check_problem(scenario, check, pipeline))
      failures.push_back({check.description, std::move(problem->reason), problem->words_gone});
  return failures;
}

}  // namespace

std::vector<CheckFailure> check_failures(const LessonStep& step, const Pipeline& pipeline) {
  return failures_on(step, step.scenario, pipeline);
}

std::vector<std::string> failed_checks(const LessonStep& step, const Pipeline& pipeline) {
  std::vector<std::string> failures;
  for (const CheckFailure& failure : check_failures(step, pipeline))
    failures.push_back(failure.check + ": " + failure.reason);
  return failures;
}

// -----------------------------------------------------------------------------
// [SECTION] What the student changed
// -----------------------------------------------------------------------------
namespace {

template <typename A, typename B>
bool same_values(const A& a, const B& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}
template <typename A, typename B>
bool same_shape(const A& a, const B& b) {
  return a.rows() == b.rows() && a.cols() == b.cols();
}

// The weight matrices whose values changed while their shapes stayed ("W_Q", "W_O").
std::vector<std::string> changed_weights(const Parameters& before, const Parameters& now) {
  std::vector<std::string> names;
  if (before.heads.size() == now.heads.size())
    for (ParameterName name : kAllParameterNames) {
      if (name == ParameterName::W_O) continue;
      for (std::size_t h = 0; h < now.heads.size(); ++h) {
        const HeadParameters &a = before.heads[h], &b = now.heads[h];
        const bool changed = name == ParameterName::v_a
                                 ? same_shape(a.v_a, b.v_a) && !same_values(a.v_a, b.v_a)
                                 : same_shape(parameter(before, name, static_cast<int>(h)),
                                              parameter(now, name, static_cast<int>(h))) &&
                                       !same_values(parameter(before, name, static_cast<int>(h)),
                                                    parameter(now, name, static_cast<int>(h)));
        if (changed) {
          names.emplace_back(to_string(name));
          break;
        }
      }
    }
  if (same_shape(before.W_O, now.W_O) && !same_values(before.W_O, now.W_O))
    names.emplace_back("W_O");
  return names;
}

// A part as the student sees it named on screen.
std::string part_in_words(const std::string& part, const Scenario& before, const Scenario& now) {
  if (part == "mode") return "Self / Cross";
  if (part == "target")
    return now.one_layer().mode == Mode::Cross ? "the target sentence" : "the sentence";
  if (part == "source") return "the source sentence";
  if (part == "heads") return "the number of heads";
  if (part == "compatibility") return "the score";
  if (part == "temperature") return "the temperature";
  if (part == "hard") return "hard (argmax)";
  if (part == "causal") return "the causal mask";
  if (part == "kv_groups") return "the key/value groups";
  if (part == "positional") return "the positions";
  if (part == "seed") return "the seed";
  if (part == "embeddings") return "X (the embeddings)";
  if (part == "mask") return "the mask";
  if (part == "weights") {
    std::string names;
    for (const std::string& name :
         changed_weights(before.one_layer().parameters, now.one_layer().parameters))
      names += (names.empty() ? "" : ", ") + name;
    return "the weights (" + names + ")";
  }
  return part;  // d_model, d_k, d_v, d_att, max_tokens: as the Input panel names them
}

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

}  // namespace

std::vector<std::string> changed_parts(const Scenario& before, const Scenario& now) {
  std::vector<std::string> parts;
  const AttentionConfig &a = before.one_layer().config, &b = now.one_layer().config;
  const auto add_if = [&](bool changed, const char* part) {
    if (changed) parts.emplace_back(part);
  };
  add_if(before.one_layer().mode != now.one_layer().mode, "mode");
  add_if(before.target != now.target, "target");
  add_if(before.one_layer().source != now.one_layer().source, "source");
  add_if(a.d_model != b.d_model, "d_model");
  add_if(a.heads != b.heads, "heads");
  add_if(a.d_k != b.d_k, "d_k");
  add_if(a.d_v != b.d_v, "d_v");
  add_if(a.d_att != b.d_att, "d_att");
  add_if(a.compatibility != b.compatibility, "compatibility");
  add_if(a.temperature != b.temperature, "temperature");
  add_if(a.hard != b.hard, "hard");
  add_if(a.causal != b.causal, "causal");
  add_if(a.kv_groups != b.kv_groups, "kv_groups");
  add_if(before.one_layer().positional != now.one_layer().positional, "positional");
  add_if(before.one_layer().seed != now.one_layer().seed, "seed");
  add_if(before.max_tokens != now.max_tokens, "max_tokens");
  add_if(a.d_model == b.d_model && before.one_layer().embeddings != now.one_layer().embeddings,
         "embeddings");
  add_if(!changed_weights(before.one_layer().parameters, now.one_layer().parameters).empty(),
         "weights");
  add_if((same_shape(before.one_layer().mask, now.one_layer().mask) &&
          !same_values(before.one_layer().mask, now.one_layer().mask)) ||
             before.one_layer().mask_pattern != now.one_layer().mask_pattern,
         "mask");  // a custom mask, or a mask pattern
  const ModelSpec *model_before = before.model(), *model_now = now.model();
  add_if(!model_before != !model_now || (model_before && *model_before != *model_now), "model");
  return parts;
}

StudentChange student_change(const LessonStep& step, const Scenario& now,
                             const Pipeline& pipeline) {
  StudentChange change;
  change.parts = changed_parts(step.scenario, now);
  if (change.parts.empty()) return change;
  change.invited = std::all_of(change.parts.begin(), change.parts.end(), [&](const auto& part) {
    return std::find(step.invites.begin(), step.invites.end(), part) != step.invites.end();
  });
  change.failures = failures_on(step, now, pipeline);
  // After a change the step asks for, a claim about words the student typed away says nothing
  // new: the text's numbers for them already read as a dash.
  const auto told =
      std::find_if(change.failures.begin(), change.failures.end(),
                   [&](const CheckFailure& f) { return !(change.invited && f.words_gone); });
  if (told == change.failures.end()) return change;
  // One claim, the first the step makes (its most telling): the band stays short.
  std::vector<std::string> parts;
  for (const std::string& part : change.parts)
    parts.push_back(part_in_words(part, step.scenario, now));
  change.message = "You changed " + listed(parts) +
                   (change.invited ? ", as the step suggests. Now "
                                   : ": the text above describes the step as it began. Now ") +
                   told->reason + ".";
  return change;
}

// -----------------------------------------------------------------------------
// [SECTION] Text placeholders
// -----------------------------------------------------------------------------

std::string expand_lesson_text(std::string_view text, const Pipeline& pipeline, int layer) {
  const AttentionResult& r = pipeline.layer(std::clamp(layer, 0, pipeline.layer_count() - 1));
  const AttentionConfig& c = r.config;
  std::string out;
  std::size_t position = 0;
  while (position < text.size()) {
    const std::size_t open = text.find('{', position);
    const std::size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) {
      out.append(text.substr(position));
      break;
    }
    out.append(text.substr(position, open - position));
    const std::string name(text.substr(open + 1, close - open - 1));
    position = close + 1;
    const auto number = [](double v) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer,
                    v == std::floor(v) && std::fabs(v) < 1e15 ? "%.0f" : "%.2f", v);
      return std::string(buffer);
    };
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
      const std::size_t colon = name.find(':', start);
      parts.push_back(name.substr(start, colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    std::string value;
    bool needs_tokens = false;  // a known placeholder that names tokens, which edits may remove
    if (name == "n_query")
      value = number(static_cast<double>(r.n_query));
    else if (name == "n_key")
      value = number(static_cast<double>(r.n_key));
    else if (name == "pairs" || name == "additive_evaluations")
      value = number(static_cast<double>(r.n_query * r.n_key));
    else if (name == "d_model")
      value = number(c.d_model);
    else if (name == "d_k")
      value = number(c.d_k);
    else if (name == "d_v")
      value = number(c.d_v);
    else if (name == "d_att")
      value = number(c.d_att);
    else if (name == "heads")
      value = number(c.heads);
    else if (name == "sqrt_d_k")
      value = number(std::sqrt(static_cast<double>(c.d_k)));
    else if ((parts[0] == "alpha" && parts.size() == 4) ||
             (parts[0] == "argmax" && parts.size() == 3)) {
      needs_tokens = true;
      const int head = std::atoi(parts[1].c_str());
      const int q = resolve_token(pipeline.target(), parts[2]);
      if (head >= 0 && head < static_cast<int>(r.heads.size()) && q >= 0) {
        const Matrix& w = r.heads[static_cast<std::size_t>(head)].weights;
        if (parts[0] == "argmax") {
          value = pipeline.keys().tokens[static_cast<std::size_t>(row_argmax(w, q))].text;
        } else if (const int k = resolve_token(pipeline.keys(), parts[3]); k >= 0) {
          char buffer[32];
          std::snprintf(buffer, sizeof buffer, "%.2f", static_cast<double>(w(q, k)));
          value = buffer;
        }
      }
    }
    if (value.empty())
      value = needs_tokens ? "\xe2\x80\x94" : "{" + name + "}";  // the token is gone: a dash
    out += value;
  }
  return out;
}

}  // namespace attnviz
