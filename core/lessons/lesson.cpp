// Lessons. Index:
//   [SECTION] Built-in lessons
//   [SECTION] Parse
//   [SECTION] Checks
//   [SECTION] What the student changed
//   [SECTION] Text placeholders
#include "core/lessons/lesson.hpp"

#include "core/lessons/lesson_checks.hpp"

#include "core/document/file_io.hpp"
#include "core/document/json.hpp"
#include "core/document/model_changes.hpp"
#include "core/figures/views.hpp"
#include "core/models/across_layers.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"
#include "core/models/sampling.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/training/attention_fit.hpp"
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
#include <tuple>

namespace attnviz {

using lessons::check_problem;
using lessons::fail;
using lessons::Failure;
using lessons::int_at;
using lessons::kMostModelLayersOrHeads;
using lessons::MaybeProblem;
using lessons::parse_check;
using lessons::require_token;
using lessons::string_at;
using lessons::token_at;

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

// "mode, target, ...": what a step may invite, for messages.
std::string scenario_part_names() {
  std::string names;
  for (std::string_view part : kScenarioParts)
    names += (names.empty() ? "" : ", ") + std::string(part);
  return names;
}

LessonStep parse_step(const Json& value, const std::string& path, Json& scenario_json,
                      std::vector<std::string>& warnings) {
  if (!value.is_object()) fail(path, "expected an object");
  static const std::set<std::string> kKnown = {"title",   "text",   "scenario", "panels", "view",
                                               "method",  "layer",  "head",     "query",  "key",
                                               "predict", "checks", "invites",  "fit"};
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
  step.fit = string_at(value, "fit", path);
  if (!step.fit.empty()) {
    if (step.view != "train") fail(path + ".fit", "a target to fit belongs to \"view\": \"train\"");
    if (step.scenario.has_model())
      fail(path + ".fit", "gradient descent on W_Q and W_K is the one-layer scenario's");
    if (Result<TargetPattern> pattern = parse_target_pattern(step.fit); !pattern)
      fail(path + ".fit", pattern.error());
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
// What changed in a real model, in words: "the model (layer 2, head 4 knocked out)".
std::string model_in_words(const ModelSpec* before, const ModelSpec* now) {
  if (!now) return "the model (set aside)";
  if (!before || before->model != now->model) return "the model (now " + now->model + ")";
  const std::string changes = model_changes_in_words(*before, *now);
  return changes.empty() ? "the model" : "the model (" + changes + ")";
}

std::string part_in_words(const std::string& part, const Scenario& before, const Scenario& now) {
  if (part == "model") return model_in_words(before.model(), now.model());
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
  std::vector<std::string> parts;
  for (const std::string& part : change.parts)
    parts.push_back(part_in_words(part, step.scenario, now));
  // A step that claims nothing checked has nothing to say about a change.
  // Nor does one whose claims are only of words the student was asked to type away.
  if (told == change.failures.end() && (!tells_changes(step) || !change.failures.empty()))
    return change;
  if (told == change.failures.end()) {
    // Nothing the text claims has changed: say so, so that the student knows the text still
    // describes the screen (a claim about words typed away, after an invited change, is not one).
    change.message = "You changed " + listed(parts) +
                     (change.invited ? ", as the step suggests." : ".") +
                     " What the text above says still holds.";
    return change;
  }
  // One claim, the first the step makes (its most telling): the band stays short.
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
          Eigen::Index best = 0;
          w.row(q).maxCoeff(&best);
          value = pipeline.keys().tokens[static_cast<std::size_t>(best)].text;
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
