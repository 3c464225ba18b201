// Lessons. Index:
//   [SECTION] Built-in lessons
//   [SECTION] Parse
//   [SECTION] Checks
//   [SECTION] Text placeholders
#include "core/lessons/lesson.hpp"

#include "core/document/file_io.hpp"
#include "core/document/json.hpp"
#include "core/figures/views.hpp"

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
};

struct Failure {
  std::string message;
};

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
  const int heads = scenario.config.heads;
  check.head = int_at(value, "head", path, 0, 0, heads - 1);
  check.head_b = int_at(value, "head_b", path, std::min(1, heads - 1), 0, heads - 1);
  check.query = token_at(value, "query", path);
  check.key = token_at(value, "key", path);
  if (found->needs_query && check.query.empty()) fail(path + ".query", "missing");
  if (found->needs_key && check.key.empty()) fail(path + ".key", "missing");
  require_token(queries, check.query, path + ".query", "target");
  require_token(keys, check.key, path + ".key", scenario.mode == Mode::Cross ? "source" : "target");
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
    if (scenario.mode != Mode::Self) fail(path, "permutation checks need self-attention");
  }
  return check;
}

LessonStep parse_step(const Json& value, const std::string& path, Json& scenario_json,
                      std::vector<std::string>& warnings) {
  if (!value.is_object()) fail(path, "expected an object");
  static const std::set<std::string> kKnown = {"title", "text",  "scenario", "panels",  "view",
                                               "head",  "query", "key",      "predict", "checks"};
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

  const std::size_t max_tokens = static_cast<std::size_t>(step.scenario.max_tokens);
  const Tokenization queries = tokenize(step.scenario.target, max_tokens);
  const Tokenization keys =
      step.scenario.mode == Mode::Cross ? tokenize(step.scenario.source, max_tokens) : queries;
  const int heads = step.scenario.config.heads;
  if (value.contains("head")) step.head = int_at(value, "head", path, 0, 0, heads - 1);
  step.query = token_at(value, "query", path);
  step.key = token_at(value, "key", path);
  require_token(queries, step.query, path + ".query", "target");
  require_token(keys, step.key, path + ".key",
                step.scenario.mode == Mode::Cross ? "source" : "target");

  if (const auto it = value.find("predict"); it != value.end()) {
    const std::string predict_path = path + ".predict";
    if (!it->is_object())
      fail(predict_path, "expected {\"prompt\": ..., \"query\": ..., \"head\": ...}");
    LessonPredict predict;
    predict.prompt = string_at(*it, "prompt", predict_path, true);
    predict.head = int_at(*it, "head", predict_path, step.head.value_or(0), 0, heads - 1);
    predict.query = token_at(*it, "query", predict_path);
    if (predict.query.empty()) fail(predict_path + ".query", "missing");
    require_token(queries, predict.query, predict_path + ".query", "target");
    step.predict = predict;
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

std::string format(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

// Whether the outputs follow the target sentence's tokens when they are reordered (or, with
// expect_equivariant false, do not): ok, or why not.
Status permutation_problem(const LessonStep& step, const LessonCheck& check,
                           const Pipeline& pipeline, bool expect_equivariant) {
  const auto& tokens = pipeline.target().tokens;
  Scenario permuted = step.scenario;
  permuted.target.clear();
  for (int index : check.permutation)
    permuted.target += tokens[static_cast<std::size_t>(index)].text + " ";
  Pipeline other;
  if (Status status = other.run(permuted); !status)
    return Status::error("the permuted sentence does not compute: " + status.message());
  if (other.target().tokens.size() != tokens.size())
    return Status::error("the permuted sentence tokenizes differently");
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
  if (equivariant == expect_equivariant) return Status::ok();
  return Status::error(expect_equivariant
                           ? "the outputs are not permuted with the tokens (max |Δ| " +
                                 format(worst) + ")"
                           : "the outputs are permuted with the tokens although positions are on");
}

// Whether a check's claim holds: ok, or why not, in words for a student.
Status check_problem(const LessonStep& step, const LessonCheck& check, const Pipeline& pipeline) {
  const AttentionResult& r = pipeline.result();
  if (check.head >= static_cast<int>(r.heads.size())) return Status::error("no such head");
  const HeadResult& head = r.heads[static_cast<std::size_t>(check.head)];
  const Tokenization& queries = pipeline.target();
  const Tokenization& keys = pipeline.keys();
  const int q = check.query.empty() ? -1 : resolve_token(queries, check.query);
  const int k = check.key.empty() ? -1 : resolve_token(keys, check.key);
  if ((!check.query.empty() && q < 0) || (!check.key.empty() && k < 0))
    return Status::error("a token is missing");
  using Kind = LessonCheck::Kind;
  switch (check.kind) {
    case Kind::Argmax: {
      const Eigen::Index best = row_argmax(head.weights, q);
      if (best == k) {
        const Eigen::Index tie = tied_with(head.weights, q, k);
        if (tie < 0) return Status::ok();
        return Status::error(token_text(keys, k) + " (" + format(head.weights(q, k)) +
                             ") is tied with " + token_text(keys, tie) + " (" +
                             format(head.weights(q, tie)) + ")");
      }
      return Status::error("the largest weight is on " + token_text(keys, best) + " (" +
                           format(head.weights(q, best)) + "), not on " + token_text(keys, k) +
                           " (" + format(head.weights(q, k)) + ")");
    }
    case Kind::WeightAbove:
    case Kind::WeightBelow: {
      const double w = head.weights(q, k);
      const bool holds = check.kind == Kind::WeightAbove ? w > check.value : w < check.value;
      if (holds) return Status::ok();
      return Status::error("the weight is " + format(w));
    }
    case Kind::MaxWeightAbove:
    case Kind::MaxWeightBelow: {
      const double w = head.weights.row(q).maxCoeff();
      const bool holds = check.kind == Kind::MaxWeightAbove ? w > check.value : w < check.value;
      if (holds) return Status::ok();
      return Status::error("the largest weight is " + format(w));
    }
    case Kind::DiagonalDominates:
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i)
        if (row_argmax(head.weights, i) != i)
          return Status::error(token_text(queries, i) + " attends most to " +
                               token_text(keys, row_argmax(head.weights, i)));
        else if (const Eigen::Index tie = tied_with(head.weights, i, i); tie >= 0)
          return Status::error(token_text(queries, i) + " attends as much to " +
                               token_text(keys, tie) + " as to itself");
      return Status::ok();
    case Kind::OneHot:
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i)
        if (head.weights.row(i).maxCoeff() != 1.0f || head.weights.row(i).sum() != 1.0f)
          return Status::error("row " + token_text(queries, i) + " is not one-hot");
      return Status::ok();
    case Kind::OutputEqualsValue: {
      const double difference = (head.output.row(q) - head.V.row(k)).cwiseAbs().maxCoeff();
      if (difference <= 1e-5 * std::max(1.0f, head.V.row(k).cwiseAbs().maxCoeff()))
        return Status::ok();
      return Status::error("the output differs from the value by up to " + format(difference));
    }
    case Kind::UpperTriangleZero:
      for (Eigen::Index i = 0; i < head.weights.rows(); ++i)
        for (Eigen::Index j = i + 1; j < head.weights.cols(); ++j)
          if (head.weights(i, j) != 0.0f)
            return Status::error(token_text(queries, i) + " gives weight " +
                                 format(head.weights(i, j)) + " to the later " +
                                 token_text(keys, j));
      return Status::ok();
    case Kind::HeadsDisagree: {
      if (check.head_b >= static_cast<int>(r.heads.size())) return Status::error("no such head");
      const Eigen::Index a = row_argmax(head.weights, q);
      const Eigen::Index b = row_argmax(r.heads[static_cast<std::size_t>(check.head_b)].weights, q);
      if (a != b) return Status::ok();
      return Status::error("both heads put the largest weight on " + token_text(keys, a));
    }
    case Kind::PermutationEquivariant:
      return permutation_problem(step, check, pipeline, true);
    case Kind::NotPermutationEquivariant:
      return permutation_problem(step, check, pipeline, false);
  }
  return Status::ok();
}

}  // namespace

std::vector<CheckFailure> check_failures(const LessonStep& step, const Pipeline& pipeline) {
  std::vector<CheckFailure> failures;
  for (const LessonCheck& check : step.checks)
    if (Status status = check_problem(step, check, pipeline); !status)
      failures.push_back({check.description, status.message()});
  return failures;
}

std::vector<std::string> failed_checks(const LessonStep& step, const Pipeline& pipeline) {
  std::vector<std::string> failures;
  for (const CheckFailure& failure : check_failures(step, pipeline))
    failures.push_back(failure.check + ": " + failure.reason);
  return failures;
}

// -----------------------------------------------------------------------------
// [SECTION] Text placeholders
// -----------------------------------------------------------------------------

std::string expand_lesson_text(std::string_view text, const Pipeline& pipeline) {
  const AttentionResult& r = pipeline.result();
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
