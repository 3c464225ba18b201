// The document: the scenario being edited, where it is saved, and the versions that say what
// changed. It is the one place that changes the scenario: every edit is a method here that
// applies the change and bumps version(). Panels and commands ask for them by name (apply(),
// app/session/edits.hpp), so that the last one's name is known. Nothing here records the undo
// step itself:
// History (app/session/history.hpp) watches version() once a frame and makes one step of a
// whole drag or burst of typing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/document/scenario.hpp"
#include "core/engine/parameters.hpp"
#include "core/text/tokenizer.hpp"

namespace attnviz::app {

struct Edit;

// What the weights' menu does to a whole matrix.
enum class MatrixAction { Randomize, Identity, Zero, Half, Double, Reset };

class Document {
 public:
  const Scenario& scenario() const { return scenario_; }
  // The scenario as opened: what Reset goes back to.
  const Scenario& opened() const { return opened_; }
  const std::string& path() const { return path_; }  // "" for a scenario in no file

  std::uint64_t version() const { return version_; }            // bumped by every edit
  std::uint64_t load_version() const { return load_version_; }  // bumped by load()
  // The version last saved or opened: unsaved when different.
  std::uint64_t saved_version() const { return saved_version_; }
  bool unsaved() const { return version_ != saved_version_; }

  // Whole scenarios.
  // A new scenario (a file opened, a lesson step): as it is on disk, with a new history.
  void load(Scenario scenario, std::string path);
  // The whole scenario at once, as one edit (undo and redo put back a step this way).
  void replace(Scenario scenario);
  // After a save to `path`: the file now holds this version, with the view written into it.
  void saved(std::string path, std::string view_json);
  // When the version that History restores is the one on disk.
  void mark_saved() { saved_version_ = version_; }
  // The work is in no file yet (recovered after a crash): unsaved until saved.
  void mark_never_saved() { saved_version_ = 0; }
  // Save asks where next time (a lesson's scenario is in no file).
  void forget_path() { path_.clear(); }

  // Edits. Each applies one change and bumps version().
  void set_title(std::string title);
  // Self or cross attention; cross starts with the target as its source when it has none, and
  // turns the causal mask off (cross mode has none: kCausalOffInCross), saying so in notice().
  void set_mode(Mode mode);
  void set_target(const std::string& text);
  void set_source(const std::string& text);
  // The shapes and settings (apply_config: weights whose cells remain are kept); in cross mode
  // with the causal mask off whatever `config` says.
  void set_config(const AttentionConfig& config);
  void set_positional(Positional positional);
  // The seed (the Input panel's field): an edit as any other, saved with the scenario and undone
  // as a step of its own; the same seed is no edit. The weights are drawn from it again only by
  // draw_weights() (and new cells, Reset and Randomize read it).
  void set_seed(std::uint64_t seed);
  // Every weight drawn again from the seed.
  void draw_weights();
  // One cell of a weight matrix (v_a: row 0); a cell outside it or a value not finite is no edit.
  void set_weight(ParameterName name, int head, int row, int col, float value);
  // A whole W_Q or W_K (the geometry view's drags), of the shape it has.
  void set_projection(ParameterName name, int head, const Matrix& weights);  // (d_model, d_k)
  // The weights' menu on one matrix; `randomize_seed` draws Randomize's values.
  void apply_to_matrix(ParameterName name, int head, MatrixAction action,
                       std::uint64_t randomize_seed);
  // Token embeddings. `rows` (n_tokens, d_model) holds each token's new embedding; each is kept
  // as an override of the token's text (or of its key, when that has one already).
  void set_embeddings(const std::vector<const Token*>& tokens, const Matrix& rows);
  // One number of a token's embedding; `row_as_shown` (d_model) is the rest of it, for a token
  // that has no override yet.
  void set_embedding_value(const Token& token, int col, float value, const float* row_as_shown);
  // A sparse or local mask pattern, or none; a pattern replaces a custom mask the scenario had.
  void set_mask_pattern(std::optional<MaskPattern> pattern);
  // The tokens' embeddings back to the overrides the scenario was opened with (or none).
  void reset_embeddings(const std::vector<const Token*>& tokens);

  // Model mode. A real model (its name or path) for the scenario's text, or none: back to the
  // one-layer scenario, whose settings and weights were kept meanwhile. Opening a model keeps
  // the text (the target sentence) and starts with no interventions.
  void set_model(std::optional<ModelSpec> model);
  // What is done to one head of the model (nothing: as the model computes it). No edit outside
  // model mode or when it changes nothing.
  void set_head_intervention(int layer, int head, const HeadIntervention& change);
  // Every head as the model computes it.
  void clear_interventions();
  // Whether the attention views leave out the model's special tokens (ModelSpec).
  void set_hide_special_tokens(bool hide);
  // An encoder's second sentence (ModelSpec::text_b; empty: none).
  void set_text_b(const std::string& text);
  // With a pair, the attention the views show (ModelSpec::pair_filter).
  void set_pair_filter(PairFilter filter);
  // An encoder–decoder: the attention the views show, and the translation typed by hand ("":
  // the model's own).
  void set_model_part(ModelPart part);
  void set_decoder_text(const std::string& text);
  // One weight of the model (ModelWeightEdit: W_K and W_V by key/value head); a value that is not
  // finite is no edit. The weights on disk are never written: the scenario records the change.
  void set_model_weight(const ModelWeightEdit& edit);
  // A whole block (`values`, rows × cols, row-major: its cells from (0, 0)) at once, as the
  // matrix menu does; no values: the block as on disk.
  void set_model_weight_block(int layer, HeadMatrix matrix, int head, int rows, int cols,
                              const float* values);
  // One number of a token's embedding (by its id); a value that is not finite is no edit.
  void set_model_embedding(const ModelEmbeddingEdit& edit);
  // Tokens' embeddings as on disk.
  void reset_model_embeddings(const std::vector<int>& tokens);
  // Every weight and embedding as on disk (Reset model).
  void reset_model_weights();

  // A named edit (app/session/edits.hpp): the method it names, remembering its name when it
  // changed something.
  void apply(const Edit& edit);
  // The name of the last edit apply() made ("knock out layer 2, head 3"); "" after load() or
  // replace().
  const std::string& last_edit() const { return last_edit_; }

  // What the edits since it was last taken did besides what was asked (switching to cross mode
  // turned the causal mask off), for the notice bar; "" when nothing. Taking it clears it.
  std::string take_notice() { return std::exchange(notice_, {}); }

 private:
  // Every scenario the document holds keeps "cross mode has no causal mask" (a scenario made in
  // code, a recovered one); turning the mask off is said in the notice.
  void keep_rules();
  void reset_weights(ParameterName name, int head);
  void write_embedding(const Token& token, const float* values);
  void reset_embedding(const Token& token);

  Scenario scenario_;
  Scenario opened_;
  // The one-layer model while a real model is open (set_model): it comes back when the model is
  // left.
  std::optional<OneLayerSpec> one_layer_aside_;
  std::string title_aside_;        // the one-layer scenario's title, likewise
  std::string description_aside_;  // and its description
  std::string path_;
  std::string notice_;
  std::string last_edit_;
  std::uint64_t version_ = 1;
  std::uint64_t load_version_ = 0;
  std::uint64_t saved_version_ = 0;
};

}  // namespace attnviz::app
