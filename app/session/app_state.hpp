// The app's state: one struct that every panel reads, in four parts: the document (the scenario,
// saved), what is computed from it (the pipeline's result, derived), how it is looked at (the
// selection, the lesson, the UI settings) and what a frame collects (hover, layout). Panels are
// given it read-only: they ask for changes to the document as named edits (app/session/edits.hpp)
// in a queue the host applies between panels, and change how it is looked at through their
// PanelContext (app/panels/panel.hpp). The pipeline runs again whenever an edit bumps the
// document's version.
#pragma once

#include "app/session/compute_worker.hpp"
#include "app/session/document.hpp"
#include "app/session/edits.hpp"
#include "app/session/frame_values.hpp"
#include "app/session/model_before.hpp"
#include "app/session/view_settings.hpp"
#include "app/view/layout.hpp"
#include "app/view/visual_text.hpp"
#include "core/document/scenario.hpp"
#include "core/figures/colormap.hpp"
#include "core/lessons/lesson.hpp"
#include "core/models/sampling.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/pipeline/product_workers.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::app {

enum class Theme { Light, Dark };

// A token in a view: a query (target sentence) or a key (the key/value sentence).
enum class Side { Query, Key };
struct TokenRef {
  Side side = Side::Query;
  int index = -1;
  // In self-attention a token is both a query and a key, and both are marked; a heatmap cell's
  // row marks the query only (its column is another key: marking the token's own column misled).
  bool this_side_only = false;
  bool valid() const { return index >= 0; }
  bool operator==(const TokenRef&) const = default;
};

// What the views explain: a layer of the result, a head in it, a query and (when one is chosen)
// a key. AppState::recompute_if_needed keeps it within the result.
struct Selection {
  int layer = 0;
  int head = 0;
  int query = 0;
  int key = -1;  // none
};

// The views that share the centre of the window, as tabs: those of core/figures/views.hpp's
// table whose slot is the centre (ViewId::Heatmaps, Pipeline, Neuron, Geometry, Compare).
using CenterView = view::ViewId;
std::string_view to_string(CenterView view);  // "heatmaps", "pipeline", ... (command-line names)
std::optional<CenterView> parse_center_view(std::string_view name);  // centre tabs only

struct UiSettings {
  Theme theme = Theme::Light;
  float font_size = 16;  // pixels, before the monitor's content scale
  // The text size follows the window's size (view::suited_font_size) until one is chosen: with
  // Ctrl+=/-, --font-size or a file's view state. Ctrl+0 lets it follow again.
  bool font_size_chosen = false;
  // Presenter mode: one view fills the window, under the sentence (and the lesson's text), in
  // larger text (presenter_font_size); font_size is the dashboard's meanwhile.
  bool presenter = false;
  float presenter_font_size = 24;
  bool presenter_font_size_chosen = false;
  // The size text is drawn at now.
  float text_size() const { return presenter ? presenter_font_size : font_size; }
  view::ColormapId colormap = view::ColormapId::Sequential;
  view::PanelVisibility visible = view::kAllPanels;
  CenterView center_view = CenterView::Heatmaps;
  bool show_cell_values = true;
  // The heatmaps' colour scale: 0 to 1 (every head alike), or 0 to each head's largest α, for
  // contrast when many keys share the weight (40 tokens: every α near 0.025, every cell dark).
  bool heatmap_contrast = false;
  float arrow_threshold = 0.02f;  // lines for weights below this are not drawn
  // The views' own settings (the Next token view's sampling, the Across layers view's part, the
  // Cheaper attention view's method), each registered by its view's file
  // (app/session/view_settings.hpp).
  ViewSettingValues views;

  // The top of a head's heatmap colour scale (see heatmap_contrast): 1, or its largest finite α.
  float heatmap_top(const Matrix& weights) const;

  // The diverging map for signed values (weights, values, differences) in this theme.
  view::ColormapId diverging() const {
    return theme == Theme::Dark ? view::ColormapId::DivergingDark : view::ColormapId::Diverging;
  }
};

// What the last frame drew where, for hit-testing and for tests (--layout-out).
// What a view wrote of the tokens' names in a frame, for the GUI tests (--layout-out): every
// name the view has a row or column for is written, never smaller than the text size less a step.
struct LabelRecord {
  bool drawn = false;     // the view wrote names this frame
  int tokens = 0;         // names it has rows or columns for (the Pipeline: the rows it shows)
  int labelled = 0;       // names it wrote, scrolled out of sight or not
  float smallest_px = 0;  // the smallest size it wrote one at
  bool scrolls = false;   // the names do not all fit: the view scrolls
  // `written` names of `token_count`, at `size_px`.
  void add(int token_count, int written, float size_px, bool scrolling) {
    if (written > 0) smallest_px = labelled > 0 ? std::min(smallest_px, size_px) : size_px;
    drawn = true;
    tokens += token_count;
    labelled += written;
    scrolls = scrolls || scrolling;
  }
};

// The Model view's grid as drawn: tile (layer, head) is tile × tile pixels at
// (x + head · column, y + layer · row).
struct ModelGridGeometry {
  float x = 0, y = 0, column = 0, row = 0, tile = 0;
  int layers = 0, heads = 0;
};

struct FrameLayout {
  view::DashboardLayout dashboard;  // the panels' windows (presenter mode: the lesson, the view)
  view::PresenterLayout presenter;  // in presenter mode
  view::HeatmapGeometry heatmap;    // the selected head's big heatmap
  ModelGridGeometry model_grid;     // the Model view's (an encoder–decoder's: the part shown)
  int heatmap_head = -1;
  // The tab buttons drawn, each with its view and where (the tests click them); reset every frame.
  struct Tab {
    view::ViewId view;
    float x = 0, y = 0, w = 0, h = 0;
  };
  std::vector<Tab> tabs;
  view::Rect sentence_field;  // the Input panel's sentence field, when it was drawn
  // Per view (view::ViewId), what it wrote of the tokens' names; reset every frame.
  std::array<LabelRecord, view::kViewCount> labels{};
  LabelRecord& labels_of(view::ViewId id) { return labels[static_cast<std::size_t>(id)]; }
};

// A lesson in progress.
struct LessonState {
  std::optional<Lesson> lesson;  // none: free play
  int step = 0;
  std::optional<int> prediction;   // the key the student picked (predict steps)
  std::uint64_t step_version = 0;  // Document::version() when the step arrived
  bool active() const { return lesson.has_value(); }
  const LessonStep* current() const {
    return lesson && step >= 0 && step < static_cast<int>(lesson->steps.size())
               ? &lesson->steps[static_cast<std::size_t>(step)]
               : nullptr;
  }
  // A predict step whose answer is still hidden.
  bool awaiting_prediction() const {
    const LessonStep* s = current();
    return s && s->predict && !prediction;
  }
};

// What the pipeline computed from the document: derived, never saved.
struct ComputedState {
  Pipeline pipeline;
  std::uint64_t version = 0;  // the Document::version() the pipeline last ran on
  std::string error;          // why the last run failed; "" when the result is current
  bool has_result = false;    // the pipeline has computed at least once
  // A real model whose full recompute would take longer than `on_this_thread_ms` (as measured on
  // its last full one) is computed off the UI thread (compute_worker.hpp), and recompute_if_needed
  // waits `wait_for_model` for it, so that a quick result still shows in the frame of the edit. The
  // app waits 8 ms; the default waits for every result (screenshots, tests). A quicker model is
  // computed on this thread, at once.
  std::unique_ptr<ComputeWorker> worker;
  double on_this_thread_ms = 4.0;
  // A recompute on this thread splits its weight products over `product_threads` threads (this
  // one and helpers, made at the first such recompute): the frame waits for it, and the renderer's
  // threads with it, so the other cores are free then. The app asks for
  // default_product_threads(); the default, 1, splits nothing.
  int product_threads = 1;
  std::unique_ptr<ProductWorkers> products;
  std::chrono::nanoseconds wait_for_model = std::chrono::hours(1);
  // A model's recompute is running: the views show the result before it.
  bool computing() const { return version_in_flight != 0; }
  std::uint64_t version_in_flight = 0;
  // The browser build's shipped models are fetched from beside the page the first time they are
  // needed (app/platform/browser.cpp): this says whether a model's files are there, and starts
  // fetching them when not. Until they are, nothing is computed and `downloading` names the
  // model. Unset on the desktop, where every shipped model is on the disk.
  std::function<bool(const std::string& model)> model_files_ready;
  std::string downloading;
  // Model mode: the scenario the result on screen was computed from (unset when not known: a run
  // that failed, a worker's result older than the latest request), and the latest request's.
  std::optional<Scenario> shown_scenario, requested_scenario;
  std::uint64_t shown_generation = 0;  // the AppState::view_generation it was shown in
  // The model before the teacher changed it, for the before-and-after views (model_before.hpp).
  ModelBefore before;
};

// What one frame collects for the next, or for tests: never saved, never an edit.
struct FrameScratch {
  TokenRef hovered;       // hovered in the previous frame: what every view highlights
  TokenRef hovered_next;  // collected while this frame draws
  // Seconds from this frame's start until something it drew changes by itself (a tooltip's delay
  // runs out, a notice expires): the app draws a frame then even without input
  // (app/session/frame_pacing.hpp). Reset every frame; panels lower it with redraw_within().
  double redraw_in = std::numeric_limits<double>::infinity();
  void redraw_within(double seconds) {
    if (seconds > 0 && seconds < redraw_in) redraw_in = seconds;
  }
  // --bench-training: the Training view starts a run of a new model at its next draw, as its
  // Start button does (and clears this).
  bool start_training = false;
  FrameLayout layout;
  // What the views say of this frame, for the tests (--layout-out); cleared as it begins.
  FrameValues values;
  // Token labels as they are seen: Hebrew and Arabic right to left, Arabic letters joined. Every
  // token name a view draws goes through it (app/view/visual_text.hpp).
  view::VisualText visual_text;
};

struct AppState {
  // Saved: the document (the scenario, its file, its versions).
  Document document;
  std::vector<std::string> file_warnings;  // what opening the document said, until dismissed

  // Derived from the document.
  ComputedState computed;

  // What the user looks at and how.
  Selection selection;
  TokenRef pinned;  // highlighted until changed (a lesson step's key)
  LessonState lesson;
  UiSettings ui;
  StudentChange lesson_change_seen;  // lesson_change() as last computed, at lesson_change_version
  std::uint64_t lesson_change_version = 0;
  // Moves whenever what the panels show is replaced (a file opened, New, a lesson step, leaving a
  // lesson): the panel host then starts every panel at its top left, scrolled nowhere.
  std::uint64_t view_generation = 0;

  // Per frame: what drawing collects (hover, layout, test values) and caches (the visual text).
  // Written by panels, which are given the state read-only: it is drawing's output, never the
  // document or how it is looked at.
  mutable FrameScratch frame;

  // The edits the panels asked for and the host has not applied yet.
  EditQueue edits;

  // The host's way to change the document (a command, a file opened as a model): the edit now,
  // and the result computed again.
  void apply(const Edit& edit);
  // The panels' edits, in order, and the result computed again if anything changed; whether
  // there were any.
  bool apply_queued_edits();
  bool unsaved() const { return document.unsaved(); }
  // Runs the pipeline if anything changed since the last run, and keeps the selection in range
  // of the result (the one place it is kept in range: views use it as it is).
  void recompute_if_needed();
  // Model mode's part of it: the request to the worker, and what has come back.
  void recompute_model();
  // Sets a new scenario (a file opened, a preset), keeping the UI settings.
  void load(Scenario next, std::string path, std::vector<std::string> warnings);

  // Lessons: start one at a step, move between steps, leave (keeping the current state).
  void start_lesson(Lesson next, int step);
  void go_to_lesson_step(int step);
  void leave_lesson();
  // After the student changed the scenario a step arrived with: what they changed, whether the
  // step invited it, the claims of the step's text (its checks) that no longer hold and the note
  // that says so (core/lessons/lesson.hpp, student_change); empty when nothing changed, or when
  // every claim still holds. Recomputed only when the scenario changes.
  const StudentChange& lesson_change();

  // Convenience for views.
  const Pipeline& pipeline() const { return computed.pipeline; }
  // The selected layer's result (every view shows the selected layer).
  const AttentionResult& result() const { return computed.pipeline.layer(selection.layer); }
  // The selected head in the document, for the editors: the result may be older than the
  // document (its last run failed after the heads changed), and the selection follows the result.
  int edited_head() const;
  bool highlights_query(int index) const;
  bool highlights_key(int index) const;
};

}  // namespace attnviz::app
