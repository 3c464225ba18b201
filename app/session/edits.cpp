#include "app/session/edits.hpp"

#include "core/figures/format.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace attnviz::app::edits {

namespace {

std::string numbered(std::string_view what, int index) {
  return std::string(what) + " " + std::to_string(view::shown_number(index));
}

// "layer 2, head 3"
std::string layer_head(int layer, int head) {
  return numbered("layer", layer) + ", " + numbered("head", head);
}

// "W_Q of head 2"; W_O belongs to no head.
std::string matrix_of_head(ParameterName name, int head) {
  std::string text(to_string(name));
  if (name != ParameterName::W_O) text += " of " + numbered("head", head);
  return text;
}

std::string tokens_named(const std::vector<const Token*>& tokens) {
  if (tokens.size() != 1) return std::to_string(tokens.size()) + " tokens";
  return "\"" + tokens.front()->text + "\"";
}

std::vector<Token> copies(const std::vector<const Token*>& tokens) {
  std::vector<Token> copied;
  copied.reserve(tokens.size());
  for (const Token* token : tokens) copied.push_back(*token);
  return copied;
}

std::vector<const Token*> pointers(const std::vector<Token>& tokens) {
  std::vector<const Token*> pointed;
  pointed.reserve(tokens.size());
  for (const Token& token : tokens) pointed.push_back(&token);
  return pointed;
}

}  // namespace

Edit set_title(std::string title) {
  return {"rename the scenario",
          [title = std::move(title)](Document& document) { document.set_title(title); }};
}

Edit set_mode(Mode mode) {
  return {mode == Mode::Cross ? "cross-attention" : "self-attention",
          [mode](Document& document) { document.set_mode(mode); }};
}

Edit set_target(std::string text) {
  return {"edit the sentence",
          [text = std::move(text)](Document& document) { document.set_target(text); }};
}

Edit set_source(std::string text) {
  return {"edit the source sentence",
          [text = std::move(text)](Document& document) { document.set_source(text); }};
}

Edit set_config(const AttentionConfig& config, std::string label) {
  if (label.empty()) label = "change the settings";
  return {std::move(label), [config](Document& document) { document.set_config(config); }};
}

Edit set_positional(Positional positional) {
  return {positional == Positional::None ? "positions off" : "positions on",
          [positional](Document& document) { document.set_positional(positional); }};
}

Edit set_seed(std::uint64_t seed) {
  return {"change the seed", [seed](Document& document) { document.set_seed(seed); }};
}

Edit draw_weights() {
  return {"draw the weights", [](Document& document) { document.draw_weights(); }};
}

Edit set_weight(ParameterName name, int head, int row, int col, float value) {
  return {"edit " + matrix_of_head(name, head),
          [=](Document& document) { document.set_weight(name, head, row, col, value); }};
}

Edit set_projection(ParameterName name, int head, Matrix weights) {
  return {"drag " + matrix_of_head(name, head),
          [name, head, weights = std::move(weights)](Document& document) {
            document.set_projection(name, head, weights);
          }};
}

Edit descend_query_key(int head, int key_head, Matrix W_Q, Matrix W_K) {
  return {"gradient descent on head " + std::to_string(head + 1) + "'s W_Q and W_K",
          [head, key_head, W_Q = std::move(W_Q), W_K = std::move(W_K)](Document& document) {
            document.set_projection(ParameterName::W_Q, head, W_Q);
            document.set_projection(ParameterName::W_K, key_head, W_K);
          }};
}

Edit apply_to_matrix(ParameterName name, int head, MatrixAction action,
                     std::uint64_t randomize_seed) {
  const char* verb = "reset";
  switch (action) {
    case MatrixAction::Randomize:
      verb = "randomize";
      break;
    case MatrixAction::Identity:
      verb = "set to the identity";
      break;
    case MatrixAction::Zero:
      verb = "zero";
      break;
    case MatrixAction::Half:
      verb = "halve";
      break;
    case MatrixAction::Double:
      verb = "double";
      break;
    case MatrixAction::Reset:
      break;
  }
  return {std::string(verb) + " " + matrix_of_head(name, head), [=](Document& document) {
            document.apply_to_matrix(name, head, action, randomize_seed);
          }};
}

Edit set_embeddings(const std::vector<const Token*>& tokens, Matrix rows) {
  return {"move the embedding of " + tokens_named(tokens),
          [tokens = copies(tokens), rows = std::move(rows)](Document& document) {
            document.set_embeddings(pointers(tokens), rows);
          }};
}

Edit set_embedding_value(const Token& token, int col, float value,
                         std::vector<float> row_as_shown) {
  return {"edit the embedding of \"" + token.text + "\"",
          [token, col, value, row = std::move(row_as_shown)](Document& document) {
            document.set_embedding_value(token, col, value, row.empty() ? nullptr : row.data());
          }};
}

Edit set_mask_pattern(std::optional<MaskPattern> pattern) {
  return {
      pattern ? "change the mask pattern" : "no mask pattern",
      [pattern = std::move(pattern)](Document& document) { document.set_mask_pattern(pattern); }};
}

Edit reset_embeddings(const std::vector<const Token*>& tokens) {
  return {"reset the embedding of " + tokens_named(tokens),
          [tokens = copies(tokens)](Document& document) {
            document.reset_embeddings(pointers(tokens));
          }};
}

Edit set_model(std::optional<ModelSpec> model) {
  std::string label = model ? "open " + model->model : "back to the one-layer scenario";
  return {std::move(label),
          [model = std::move(model)](Document& document) { document.set_model(model); }};
}

Edit set_head_intervention(int layer, int head, const HeadIntervention& change) {
  std::string label;
  if (!change.changes_anything())
    label = "restore ";
  else if (change.ablated())
    label = "knock out ";
  else if (change.pattern == HeadIntervention::Pattern::Uniform)
    label = "uniform attention on ";
  else if (change.pattern == HeadIntervention::Pattern::PreviousToken)
    label = "previous-token attention on ";
  else
    label = "scale ";
  return {label + layer_head(layer, head),
          [=](Document& document) { document.set_head_intervention(layer, head, change); }};
}

Edit clear_interventions() {
  return {"restore every head", [](Document& document) { document.clear_interventions(); }};
}

Edit set_hide_special_tokens(bool hide) {
  return {hide ? "hide special tokens" : "show special tokens",
          [hide](Document& document) { document.set_hide_special_tokens(hide); }};
}

Edit set_text_b(std::string text) {
  return {text.empty() ? "remove the second sentence" : "edit the second sentence",
          [text = std::move(text)](Document& document) { document.set_text_b(text); }};
}

Edit set_pair_filter(PairFilter filter) {
  return {filter == PairFilter::All ? std::string("show all the attention")
                                    : "show attention " + std::string(pair_filter_label(filter)),
          [filter](Document& document) { document.set_pair_filter(filter); }};
}

Edit set_model_part(ModelPart part) {
  return {"show the " + std::string(model_part_label(part)),
          [part](Document& document) { document.set_model_part(part); }};
}

Edit set_decoder_text(std::string text) {
  return {text.empty() ? "show the model's own translation" : "edit the translation",
          [text = std::move(text)](Document& document) { document.set_decoder_text(text); }};
}

Edit set_model_weight(const ModelWeightEdit& edit) {
  return {
      "edit " + std::string(to_string(edit.matrix)) + " of " + layer_head(edit.layer, edit.head),
      [edit](Document& document) { document.set_model_weight(edit); }};
}

Edit set_model_weight_block(int layer, HeadMatrix matrix, int head, int rows, int cols,
                            std::vector<float> values) {
  std::string label = (values.empty() ? "reset " : "change ") + std::string(to_string(matrix)) +
                      " of " + layer_head(layer, head);
  return {std::move(label), [=, values = std::move(values)](Document& document) {
            const std::size_t cells = static_cast<std::size_t>(std::max(rows, 0)) *
                                      static_cast<std::size_t>(std::max(cols, 0));
            if (!values.empty() && values.size() != cells) return;  // not the block's shape
            document.set_model_weight_block(layer, matrix, head, rows, cols,
                                            values.empty() ? nullptr : values.data());
          }};
}

Edit set_model_embedding(const ModelEmbeddingEdit& edit) {
  return {"edit a token's embedding",
          [edit](Document& document) { document.set_model_embedding(edit); }};
}

Edit reset_model_embeddings(std::vector<int> tokens) {
  return {tokens.size() == 1 ? "reset a token's embedding" : "reset the embeddings",
          [tokens = std::move(tokens)](Document& document) {
            document.reset_model_embeddings(tokens);
          }};
}

Edit reset_model_weights() {
  return {"reset the model", [](Document& document) { document.reset_model_weights(); }};
}

}  // namespace attnviz::app::edits
