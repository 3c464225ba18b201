#include "app/session/document.hpp"

#include "app/session/edits.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <utility>

namespace attnviz::app {

namespace {

constexpr const char* kCausalOffNotice =
    "Causal mask off: cross-attention has none (the source is written whole before the first "
    "query)";

}  // namespace

void Document::keep_rules() {
  if (OneLayerSpec* one = scenario_.edit_one_layer(); one && turn_off_causal_in_cross(*one))
    notice_ = kCausalOffNotice;
}

void Document::load(Scenario scenario, std::string path) {
  scenario_ = std::move(scenario);
  one_layer_aside_.reset();  // another document's
  keep_rules();
  opened_ = scenario_;
  path_ = std::move(path);
  last_edit_.clear();
  ++load_version_;
  ++version_;
  saved_version_ = version_;
}

void Document::replace(Scenario scenario) {
  scenario_ = std::move(scenario);
  keep_rules();
  last_edit_.clear();
  ++version_;
}

void Document::apply(const Edit& edit) {
  const std::uint64_t before = version_;
  if (edit.apply) edit.apply(*this);
  if (version_ != before) last_edit_ = edit.label;
}

void Document::saved(std::string path, std::string view_json) {
  scenario_.view_json = std::move(view_json);
  path_ = std::move(path);
  saved_version_ = version_;
}

void Document::set_title(std::string title) {
  scenario_.title = std::move(title);
  ++version_;
}

void Document::set_mode(Mode mode) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  if (attnviz::set_mode(*one, mode, scenario_.target)) notice_ = kCausalOffNotice;
  ++version_;
}

void Document::set_target(const std::string& text) {
  scenario_.target = text;  // within its capacity while typing: no allocation
  ++version_;
}

void Document::set_model(std::optional<ModelSpec> model) {
  const ModelSpec* now = scenario_.model();
  if (model ? now && *now == *model : !now) return;
  if (model) {
    // The one-layer model is set aside, to come back as it was when the model is left, and with
    // it its title (a lesson's "Cross-attention: ..." says nothing true of a decoder) and its
    // source sentence, which a model reads none of: the notice says so.
    if (OneLayerSpec* one = scenario_.edit_one_layer()) {
      std::vector<std::string> aside;
      if (one->mode == Mode::Cross && !one->source.empty())
        aside.push_back("source sentence (\"" + one->source + "\")");
      if (!scenario_.title.empty()) aside.push_back("title (\"" + scenario_.title + "\")");
      if (!aside.empty())
        notice_ = "the one-layer scenario's " + aside[0] +
                  (aside.size() > 1 ? " and " + aside[1] + " are" : " is") +
                  " set aside (Ctrl+Z, or Models > Back to the one-layer scenario, brings " +
                  (aside.size() > 1 ? "them" : "it") + " back)";
      one_layer_aside_ = std::move(*one);
      title_aside_ = std::exchange(scenario_.title, {});
      // Its description too: the default's tells of "apple", which a real model knows nothing of.
      description_aside_ = std::exchange(scenario_.description, {});
    }
    scenario_.spec = std::move(*model);
  } else {
    scenario_.spec = one_layer_aside_ ? std::move(*one_layer_aside_)
                                      : OneLayerSpec::seeded(AttentionConfig{}, 7);
    one_layer_aside_.reset();
    if (scenario_.title.empty()) scenario_.title = std::exchange(title_aside_, {});
    if (scenario_.description.empty())
      scenario_.description = std::exchange(description_aside_, {});
  }
  ++version_;
}

void Document::set_head_intervention(int layer, int head, const HeadIntervention& change) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->intervention(layer, head) == change) return;
  model->set_intervention(layer, head, change);
  ++version_;
}

void Document::clear_interventions() {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->interventions.empty()) return;
  model->interventions.clear();
  ++version_;
}

void Document::set_hide_special_tokens(bool hide) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->hide_special_tokens == hide) return;
  model->hide_special_tokens = hide;
  ++version_;
}

void Document::set_text_b(const std::string& text) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->text_b == text) return;
  model->text_b = text;
  ++version_;
}

void Document::set_pair_filter(PairFilter filter) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->pair_filter == filter) return;
  model->pair_filter = filter;
  ++version_;
}

void Document::set_model_part(ModelPart part) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->part == part) return;
  model->part = part;
  ++version_;
}

void Document::set_decoder_text(const std::string& text) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || model->decoder_text == text) return;
  model->decoder_text = text;
  ++version_;
}

void Document::set_mask_pattern(std::optional<MaskPattern> pattern) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  if (one->mask_pattern == pattern && (!pattern || one->mask.size() == 0)) return;
  if (pattern) one->mask.resize(0, 0);  // never both
  one->mask_pattern = std::move(pattern);
  ++version_;
}

void Document::set_model_weight(const ModelWeightEdit& edit) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || !std::isfinite(edit.value)) return;
  model->set_weight(edit);
  ++version_;
}

void Document::set_model_weight_block(int layer, HeadMatrix matrix, int head, int rows, int cols,
                                      const float* values) {
  ModelSpec* model = scenario_.edit_model();
  if (!model) return;
  std::vector<ModelWeightEdit> cells;
  if (values) {
    cells.reserve(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const float value = values[static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) +
                                   static_cast<std::size_t>(c)];
        if (!std::isfinite(value)) return;  // no edit at all
        cells.push_back({layer, matrix, head, r, c, value});
      }
  }
  model->set_weight_block(layer, matrix, head, std::move(cells));
  ++version_;
}

void Document::set_model_embedding(const ModelEmbeddingEdit& edit) {
  ModelSpec* model = scenario_.edit_model();
  if (!model || !std::isfinite(edit.value)) return;
  model->set_embedding(edit);
  ++version_;
}

void Document::reset_model_embeddings(const std::vector<int>& tokens) {
  ModelSpec* model = scenario_.edit_model();
  if (!model) return;
  const std::size_t before = model->embedding_edits.size();
  for (int token : tokens) model->reset_embedding(token);
  if (model->embedding_edits.size() != before) ++version_;
}

void Document::reset_model_weights() {
  ModelSpec* model = scenario_.edit_model();
  if (!model || !model->weights_edited()) return;
  model->weight_edits.clear();
  model->embedding_edits.clear();
  ++version_;
}

void Document::set_source(const std::string& text) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  one->source = text;
  ++version_;
}

void Document::set_config(const AttentionConfig& config) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  apply_config(*one, config);
  keep_rules();
  ++version_;
}

void Document::set_positional(Positional positional) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  one->positional = positional;
  ++version_;
}

void Document::set_seed(std::uint64_t seed) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  if (one->seed == seed) return;
  one->seed = seed;
  ++version_;
}

void Document::draw_weights() {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  one->parameters = seeded_parameters(one->config, one->seed);
  ++version_;
}

namespace {

// A weight matrix as a flat row-major array (v_a is a row vector, the rest are matrices).
struct FlatWeights {
  float* data = nullptr;
  int rows = 0, cols = 0;
  std::size_t size() const {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  }
};

FlatWeights flat_weights(Parameters& p, ParameterName name, int head) {
  if (name == ParameterName::v_a) {
    RowVector& v = additive_vector(p, head);  // (1, d_att)
    return {v.data(), 1, static_cast<int>(v.cols())};
  }
  Matrix& m = parameter(p, name, head);
  return {m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols())};
}

// The override that gives this token its embedding: its exact text, else its lower-cased key
// (the order the engine looks them up in).
EmbeddingOverrides::iterator find_override(EmbeddingOverrides& overrides, const Token& token) {
  auto found = overrides.find(token.text);
  if (found == overrides.end()) found = overrides.find(token.key);
  return found;
}

}  // namespace

void Document::set_weight(ParameterName name, int head, int row, int col, float value) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  const FlatWeights w = flat_weights(one->parameters, name, head);
  if (row < 0 || col < 0 || row >= w.rows || col >= w.cols || !std::isfinite(value)) return;
  w.data[static_cast<std::size_t>(row) * static_cast<std::size_t>(w.cols) +
         static_cast<std::size_t>(col)] = value;
  ++version_;
}

void Document::set_projection(ParameterName name, int head, const Matrix& weights) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  parameter(one->parameters, name, head) = weights;  // same shape: no allocation
  ++version_;
}

// Back to the scenario as opened where that matrix still has the same shape, else the seed.
void Document::reset_weights(ParameterName name, int head) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  Parameters& p = one->parameters;
  const Parameters& opened = opened_.one_layer().parameters;
  const auto h = static_cast<std::size_t>(head);
  if (name == ParameterName::v_a) {
    if (h < opened.heads.size() && opened.heads[h].v_a.cols() == p.heads[h].v_a.cols())
      p.heads[h].v_a = opened.heads[h].v_a;
    else
      seed_parameter(p, name, head, one->seed);
    return;
  }
  const bool per_head = name != ParameterName::W_O;
  if (per_head && h >= opened.heads.size()) {
    seed_parameter(p, name, head, one->seed);
    return;
  }
  const Matrix& before = parameter(opened, name, head);
  Matrix& now = parameter(p, name, head);
  if (before.rows() == now.rows() && before.cols() == now.cols())
    now = before;
  else
    seed_parameter(p, name, head, one->seed);
}

void Document::apply_to_matrix(ParameterName name, int head, MatrixAction action,
                               std::uint64_t randomize_seed) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  Parameters& p = one->parameters;
  const FlatWeights w = flat_weights(p, name, head);
  switch (action) {
    case MatrixAction::Randomize:
      seed_parameter(p, name, head, randomize_seed);
      break;
    case MatrixAction::Reset:
      reset_weights(name, head);
      break;
    case MatrixAction::Identity:
      for (int r = 0; r < w.rows; ++r)
        for (int c = 0; c < w.cols; ++c)
          w.data[static_cast<std::size_t>(r * w.cols + c)] = r == c ? 1.0f : 0.0f;
      break;
    case MatrixAction::Zero:
      std::fill(w.data, w.data + w.size(), 0.0f);
      break;
    case MatrixAction::Half:
    case MatrixAction::Double: {
      const float factor = action == MatrixAction::Half ? 0.5f : 2.0f;
      for (std::size_t i = 0; i < w.size(); ++i)
        w.data[i] = std::clamp(w.data[i] * factor, -FLT_MAX, FLT_MAX);
      break;
    }
  }
  ++version_;
}

// Writes a whole embedding (d_model values) for the token (its override, created if needed).
void Document::write_embedding(const Token& token, const float* values) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  const auto d_model = static_cast<std::size_t>(one->config.d_model);
  auto found = find_override(one->embeddings, token);
  if (found == one->embeddings.end())
    found = one->embeddings.emplace(token.text, std::vector<float>()).first;
  found->second.assign(values, values + d_model);
}

void Document::set_embeddings(const std::vector<const Token*>& tokens, const Matrix& rows) {
  for (std::size_t r = 0; r < tokens.size(); ++r)
    write_embedding(*tokens[r], rows.row(static_cast<Eigen::Index>(r)).data());
  ++version_;
}

void Document::set_embedding_value(const Token& token, int col, float value,
                                   const float* row_as_shown) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  // Start from the row as shown (no positions), so the other dimensions keep their values.
  auto found = find_override(one->embeddings, token);
  if (found == one->embeddings.end() ||
      found->second.size() != static_cast<std::size_t>(one->config.d_model))
    write_embedding(token, row_as_shown);
  found = find_override(one->embeddings, token);
  found->second[static_cast<std::size_t>(col)] = value;
  ++version_;
}

void Document::reset_embedding(const Token& token) {
  OneLayerSpec* one = scenario_.edit_one_layer();
  if (!one) return;
  one->embeddings.erase(token.text);
  one->embeddings.erase(token.key);
  // Back to the override the scenario was opened with, if it had one of this width.
  for (const std::string* word : {&token.text, &token.key}) {
    const auto it = opened_.one_layer().embeddings.find(*word);
    if (it != opened_.one_layer().embeddings.end() &&
        it->second.size() == static_cast<std::size_t>(one->config.d_model)) {
      one->embeddings[*word] = it->second;
      break;
    }
  }
}

void Document::reset_embeddings(const std::vector<const Token*>& tokens) {
  for (const Token* token : tokens) reset_embedding(*token);
  ++version_;
}

}  // namespace attnviz::app
