// The Training view's part for the one-layer scenario: gradient descent on one head's W_Q and
// W_K (core/training/attention_fit.hpp) until its attention matches a target the teacher picks
// ("each word looks at the word before") or paints cell by cell. Every step is an edit of the
// document's weights, so the Weights panel, the heatmaps and every other view move with it; a run
// is one undo step. It says when a target cannot be reached and why (two words that ask the same
// question).
#pragma once

#include "app/panels/panel.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/session/app_state.hpp"
#include "core/training/attention_fit.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnviz::app {

// "weights": this part; "model": a new model trained on a task. Saved in the view state as
// "training" (a lesson step's "fit" sets it), with the target as "fit_target" and the painted
// cells as "fit_painted".
enum class TrainingKind { Weights, Model };
TrainingKind training_kind(const UiSettings& ui);
void set_training_kind(UiSettings& ui, TrainingKind kind);

class FitPart {
 public:
  void draw(const AppState& state, PanelContext& context);

 private:
  // The inputs of the frames since they last changed, made by prepare().
  struct Frame {
    int head = 0, key_head = 0;
    FitInput input;
    Matrix target;       // (n_query, n_key)
    MaskMatrix allowed;  // (n_query, n_key) 1 where the query may see the key
    Status config = Status::success();
    FitGradient now;  // the loss and α of the weights as they are
    bool computed = false;
    std::string problem;                     // why it was not (weights too large, ...)
    mutable std::optional<std::string> why;  // why_not_reachable, once asked
  };
  // What a Frame is made from: the document and the result, the target, the head.
  struct Key {
    std::uint64_t document = 0, computed = 0, loaded = 0;
    int target = -1, head = -1;
    std::uint64_t painted = 0;
    bool result_current = false;
    bool operator==(const Key&) const = default;
  };
  bool prepare(const AppState& state, Frame& frame);
  void draw_controls(const AppState& state, PanelContext& context, const Frame& frame);
  void run_steps(const AppState& state, PanelContext& context, Frame& frame);
  void draw_maps(const AppState& state, PanelContext& context, const Frame& frame);
  void draw_loss(const AppState& state, ImVec2 p0, ImVec2 p1) const;
  // A click on cell (query, key) of the target: paints it alone in its row (clicking the one
  // painted cell again clears the row), or with `add` toggles it.
  void paint(PanelContext& context, int query, int key, bool add, const Matrix& target);
  std::string why_not_reachable(const Frame& frame, const std::vector<Token>& query_tokens,
                                const std::vector<Token>& key_tokens) const;

  bool running_ = false;
  int speed_ = 1;
  float learning_rate_ = FitSettings{}.learning_rate;
  double step_credit_ = 0;  // steps owed at the chosen speed, carried between frames
  int steps_taken_ = 0;
  std::vector<float> losses_;  // every step's loss, the first before any step
  std::string message_;        // what the last run ended with
  render::MatrixStackTexture target_texture_;
  std::uint64_t target_version_ = 0;
  Matrix shown_target_;  // the target last uploaded
  int hovered_query_ = -1, hovered_key_ = -1;
  std::uint64_t loaded_ = 0;           // the Document::load_version() the run belongs to
  std::uint64_t painted_version_ = 0;  // bumped by every change to the painted cells
  Frame frame_;
  Key frame_key_;
  bool ready_ = false;
};

}  // namespace attnviz::app
