// The Weights panel in model mode: the selected head's W_Q, W_K, W_V and W_O of a real model and
// the embeddings of the tokens the model reads, editable as the one-layer scenario's weights are
// (drag, type, the matrix menu). Each edit is a document edit (Document::set_model_weight): the
// scenario records it, the weights on disk are never written, and Reset model takes every edit
// back. What the grids show is the weights on disk with the document's edits on top, so an edit
// shows in the frame it is made, whichever pipeline has computed it yet.
#pragma once

#include "app/panels/matrix_editor.hpp"
#include "app/panels/panel.hpp"
#include "app/view/memo.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace attnviz {
class Run;
class Transformer;
}  // namespace attnviz

namespace attnviz::app {

class ModelWeights {
 public:
  void draw(const AppState& state, PanelContext& context);

 private:
  // One of the head's matrices as shown: the block on disk with the document's edits.
  struct Block {
    HeadMatrix matrix = HeadMatrix::Query;
    int head = 0;        // the query head, or for W_K and W_V the key/value head
    Matrix values;       // (d_model, d_head), or (d_head, d_model) for W_O
    float limit = 1.0f;  // its largest magnitude: the colour scale
    int edited = 0;      // cells the document changes
    char title[48] = {};
    char tooltip[240] = {};
  };

  void draw_header(const AppState& state, PanelContext& context, const Run& run);
  void update(const AppState& state, const Run& run);
  void build_specs(const AppState& state, const Run& run);
  void handle_block(PanelContext& context, Block& block, const MatrixGridSpec& spec,
                    const MatrixGridEvents& events);
  void handle_embeddings(const AppState& state, PanelContext& context, const Run& run,
                         const MatrixGridSpec& spec, const MatrixGridEvents& events);

  MatrixEditor editor_;
  std::array<Block, 4> blocks_;  // W_Q, W_K, W_V, W_O
  // X: the shown tokens' embeddings (their rows of the embedding matrix, before positions).
  Matrix x_rows_;           // (shown tokens, d_model)
  std::vector<int> x_ids_;  // each row's token id
  float x_limit_ = 1.0f, x_label_width_ = 0;
  int x_edited_tokens_ = 0;  // tokens of the text whose embedding the document changes
  char x_tooltip_[360] = {};
  int x_menu_row_ = -1;
  std::array<MatrixGridSpec, 5> specs_{};
  const AppState* state_ = nullptr;  // while drawing: the token labels read it
  const Run* run_ = nullptr;
  static const char* token_label(const void* context, int index, char* buffer, int size);

  // What the grids were built from.
  // What the blocks were built from: the document's version, the model's run, the layer, the
  // head, the model.
  view::Memo<std::uint64_t, std::uint64_t, int, int, const Transformer*> built_of_;
  int built_layer_ = -1, built_head_ = -1;  // the layer and head the blocks show
};

}  // namespace attnviz::app
