#include "app/session/status_line.hpp"

#include "core/models/model.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

namespace attnviz::app {

namespace {

constexpr const char* kDot = " \xc2\xb7 ";       // " · "
constexpr const char* kDash = " \xe2\x80\x94 ";  // " — "

std::string compatibility_name(Compatibility compatibility) {
  switch (compatibility) {
    case Compatibility::Dot:
      return "dot product";
    case Compatibility::ScaledDot:
      return "scaled dot-product";
    case Compatibility::General:
      return "general (bilinear)";
    case Compatibility::Additive:
      return "additive (Bahdanau)";
    case Compatibility::Cosine:
      return "cosine";
  }
  return "?";
}

std::string count(long long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string shortest(float value) {  // 0.5, 2, 0.001
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(value));
  return buffer;
}

}  // namespace

std::string window_title(const AppState& state) {
  std::string name;
  if (state.lesson.active()) {
    name = "Lesson: " + state.lesson.lesson->title;
  } else if (!state.document.path().empty()) {
    name = std::filesystem::path(state.document.path()).filename().string();
  } else {
    name = scenario_title(state.document.scenario());  // an untitled one's sentence
    if (name.empty()) name = "Untitled";
  }
  // Model mode says which model: "Once upon a time — stories260K — AttnViz".
  if (const Model* model = state.pipeline().current().trained_model()) name += kDash + model->name;
  // In a lesson the steps themselves change the scenario: nothing there asks to be saved
  // until the student edits it, and then the mark is as true as anywhere.
  return (state.unsaved() ? "\xe2\x80\xa2 " : "") + name + kDash + "AttnViz";
}

namespace {

std::string model_summary(const AppState& state, const Run& run, const Model& model) {
  const TransformerConfig& c = model.transformer.config();
  std::string text = model.name + kDot + c.architecture;
  text += kDot + count(static_cast<long long>(run.model_tokens().size()), "token", "tokens");
  text += kDot + count(c.n_layers, "layer", "layers") + " \xc3\x97 " +
          count(c.n_heads, "head", "heads");
  if (c.n_kv_heads != c.n_heads)
    text += " (" + count(c.n_kv_heads, "key/value head", "key/value heads") + ")";
  text += kDot + std::string("d_model ") + std::to_string(c.d_model) + ", d_head " +
          std::to_string(c.d_head);
  text += kDot + std::string("showing layer ") + std::to_string(state.selection.layer + 1);
  if (state.computed.computing()) text += kDot + std::string("computing\xe2\x80\xa6");
  const ModelSpec* spec =
      state.document.scenario().model() ? &*state.document.scenario().model() : nullptr;
  if (spec && !spec->interventions.empty())
    text += kDot + count(static_cast<long long>(spec->interventions.size()), "head changed",
                         "heads changed");
  if (spec && !spec->weight_edits.empty())
    text += kDot + count(static_cast<long long>(spec->weight_edits.size()), "weight edited",
                         "weights edited");
  if (spec && !spec->embedding_edits.empty())
    text += kDot + count(static_cast<long long>(spec->embedding_edits.size()),
                         "embedding number edited", "embedding numbers edited");
  return text;
}

// Any other run, from what every run says of itself: its stacks and the selected layer's shapes
// ("random self-attention · 5 tokens · 2 layers × 3 heads · d_model 4, d_head 2 · showing
// layer 1").
std::string run_summary(const AppState& state, const Run& run) {
  std::string text;
  for (const AttentionStack& stack : run.stacks()) text += (text.empty() ? "" : ", ") + stack.name;
  text += kDot + count(static_cast<long long>(run.target().tokens.size()), "token", "tokens");
  const int layers = run.layer_count();
  const AttentionConfig& c = run.layer(std::clamp(state.selection.layer, 0, layers - 1)).config;
  text += kDot + count(layers, "layer", "layers") + " \xc3\x97 " + count(c.heads, "head", "heads");
  text += kDot + std::string("d_model ") + std::to_string(c.d_model) + ", d_head " +
          std::to_string(c.d_k);
  if (layers > 1)
    text += kDot + std::string("showing layer ") + std::to_string(state.selection.layer + 1);
  return text;
}

}  // namespace

std::string shape_summary(const AppState& state) {
  if (!state.computed.downloading.empty())
    return "downloading the model " + state.computed.downloading + "\xe2\x80\xa6";
  const Run& run = state.pipeline().current();
  if (const Model* model = run.trained_model()) return model_summary(state, run, *model);
  if (!run.can(Capability::EditableParameters)) {
    if (!state.computed.has_result) return "";
    return run_summary(state, run);
  }
  const Scenario& scenario = state.document.scenario();
  const AttentionConfig& config = scenario.one_layer().config;
  std::string text =
      scenario.one_layer().mode == Mode::Cross ? "cross-attention" : "self-attention";
  if (state.computed.has_result) {
    const AttentionResult& result = state.result();
    text += kDot;
    if (scenario.one_layer().mode == Mode::Cross)
      text += count(result.n_query, "query", "queries") + " \xc3\x97 " +
              count(result.n_key, "key", "keys");
    else
      text += count(result.n_query, "token", "tokens");
  }
  text += kDot + std::string("d_model ") + std::to_string(config.d_model);
  text += kDot + count(config.heads, "head", "heads") + " of d_k " + std::to_string(config.d_k) +
          ", d_v " + std::to_string(config.d_v);
  if (shares_keys(config))
    text += ", " + (config.kv_groups == 1
                        ? std::string("one shared key/value head (multi-query)")
                        : count(config.kv_groups, "key/value head", "key/value heads"));
  text += kDot + compatibility_name(config.compatibility);
  if (config.compatibility == Compatibility::Additive)
    text += ", d_att " + std::to_string(config.d_att);
  if (config.temperature != 1.0f)
    text += kDot + std::string("temperature ") + shortest(config.temperature);
  if (config.hard) text += kDot + std::string("hard (argmax)");
  if (config.causal) text += kDot + std::string("causal");
  if (scenario.one_layer().mask.size() != 0) text += kDot + std::string("custom mask");
  if (const auto& p = scenario.one_layer().mask_pattern)
    text +=
        kDot + std::string(to_string(p->kind)) + " mask (" +
        (p->kind == MaskPattern::Kind::Blocks ? "b " + std::to_string(p->block)
                                              : "w " + std::to_string(p->width)) +
        (p->kind == MaskPattern::Kind::Dilated ? ", d " + std::to_string(p->dilation) : "") +
        (p->global_tokens.empty() ? ""
                                  : ", " + count(static_cast<long long>(p->global_tokens.size()),
                                                 "global token", "global tokens")) +
        ")";
  if (scenario.one_layer().positional != Positional::None)
    text += kDot + std::string(to_string(scenario.one_layer().positional)) + " positions";
  return text;
}

std::string file_name_for(std::string_view title) {
  std::string name;
  bool dash = false;  // a separator is owed before the next letter
  for (std::size_t i = 0; i < title.size();) {
    const unsigned char c = static_cast<unsigned char>(title[i]);
    std::size_t length = 1;  // of this character, in bytes
    if (c >= 0xC0) length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    length = std::min(length, title.size() - i);
    const bool keep = c >= 0x80 || std::isalnum(c);
    if (!keep) {
      dash = !name.empty();
      i += 1;
      continue;
    }
    if (name.size() + (dash ? 1 : 0) + length > 60) break;
    if (dash) name += '-';
    dash = false;
    if (c < 0x80)
      name += static_cast<char>(std::tolower(c));
    else
      name.append(title.substr(i, length));
    i += length;
  }
  return (name.empty() ? std::string("scenario") : name) + ".json";
}

std::string save_as_file_name(const AppState& state) {
  if (!state.document.path().empty())
    return std::filesystem::path(state.document.path()).filename().string();
  return file_name_for(scenario_title(state.document.scenario()));
}

std::string lesson_step_heading(const LessonState& lesson) {
  const LessonStep* step = lesson.current();
  if (!step) return "";
  return lesson.lesson->title + "  \xc2\xb7  step " + std::to_string(lesson.step + 1) + " of " +
         std::to_string(lesson.lesson->steps.size()) + ": " + step->title;
}

}  // namespace attnviz::app
