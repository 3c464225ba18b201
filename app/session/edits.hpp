// Named edits: how a panel or a command asks for a change to the document. A panel reads the
// document and the run (it is given a const AppState) and pushes what it wants changed to an
// EditQueue; the host applies the queue between panels (app/shell/panel_host.cpp), so the views
// drawn after it show the change. Each edit is one method of Document (the one place that
// changes the scenario) with a label, which the undo history shows: "Undo knock out layer 2,
// head 3". An edit holds copies of what it needs (a token, a row of numbers), never a pointer
// into the result it was made from.
#pragma once

#include "app/session/document.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnviz::app {

struct Edit {
  std::string label;                     // "knock out layer 2, head 3": after "Undo "
  std::function<void(Document&)> apply;  // calls the Document method it names
};

class EditQueue {
 public:
  void push(Edit edit) { edits_.push_back(std::move(edit)); }
  bool empty() const { return edits_.empty(); }
  // The edits in the order they were pushed, leaving the queue empty.
  std::vector<Edit> take() { return std::exchange(edits_, {}); }

 private:
  std::vector<Edit> edits_;
};

// One builder per Document method (app/session/document.hpp says what each does); layers and
// heads as the program counts them (from 0), labels as the views number them (from 1).
namespace edits {

Edit set_title(std::string title);
Edit set_mode(Mode mode);
Edit set_target(std::string text);
Edit set_source(std::string text);
// `label`: what the change is called where it was made ("share the keys"); "" for "change the
// settings".
Edit set_config(const AttentionConfig& config, std::string label = {});
Edit set_positional(Positional positional);
Edit set_seed(std::uint64_t seed);
Edit draw_weights();
Edit set_weight(ParameterName name, int head, int row, int col, float value);
Edit set_projection(ParameterName name, int head, Matrix weights);  // (d_model, d_k)
// One step of gradient descent on head `head`'s W_Q and its key head's W_K (the Training view):
// both (d_model, d_k), set together.
Edit descend_query_key(int head, int key_head, Matrix W_Q, Matrix W_K);
Edit apply_to_matrix(ParameterName name, int head, MatrixAction action,
                     std::uint64_t randomize_seed);
Edit set_embeddings(const std::vector<const Token*>& tokens, Matrix rows);  // (n_tokens, d_model)
Edit set_embedding_value(const Token& token, int col, float value,
                         std::vector<float> row_as_shown);  // (d_model)
Edit set_mask_pattern(std::optional<MaskPattern> pattern);
Edit reset_embeddings(const std::vector<const Token*>& tokens);

Edit set_model(std::optional<ModelSpec> model);
// "knock out layer 2, head 3", "uniform attention on …", "restore …"
Edit set_head_intervention(int layer, int head, const HeadIntervention& change);
Edit clear_interventions();
Edit set_hide_special_tokens(bool hide);
Edit set_text_b(std::string text);
Edit set_pair_filter(PairFilter filter);
// An encoder–decoder: which attention the views show; the translation typed ("": the model's).
Edit set_model_part(ModelPart part);
Edit set_decoder_text(std::string text);
Edit set_model_weight(const ModelWeightEdit& edit);
// `values`: rows × cols, row-major; empty: the block as on disk.
Edit set_model_weight_block(int layer, HeadMatrix matrix, int head, int rows, int cols,
                            std::vector<float> values);
Edit set_model_embedding(const ModelEmbeddingEdit& edit);
Edit reset_model_embeddings(std::vector<int> tokens);
Edit reset_model_weights();

}  // namespace edits

}  // namespace attnviz::app
