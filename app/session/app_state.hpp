// The app's state: one plain struct that every panel reads and edits. The scenario is the
// document; everything shown is computed from it by the pipeline, rerun whenever an edit bumps
// edit_version.
#pragma once

#include "core/figures/colormap.hpp"
#include "app/view/layout.hpp"
#include "app/view/visual_text.hpp"
#include "core/lessons/lesson.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/document/scenario.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <string>
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

struct Selection {
  int head = 0;
  int query = 0;
};

// The views that share the centre of the window, as tabs: those of core/figures/views.hpp's
// table whose slot is the centre (ViewId::Heatmaps, Pipeline, Neuron, Geometry, Compare).
using CenterView = view::ViewId;
std::string_view to_string(CenterView view);  // "heatmaps", "pipeline", ... (command-line names)
std::optional<CenterView> parse_center_view(std::string_view name);  // centre tabs only

struct UiSettings {
  Theme theme = Theme::Light;
  float font_size = 16;  // pixels, before the monitor's content scale
  view::ColormapId colormap = view::ColormapId::Sequential;
  view::PanelVisibility visible = view::kAllPanels;
  CenterView center_view = CenterView::Heatmaps;
  bool show_cell_values = true;
  // The heatmaps' colour scale: 0 to 1 (every head alike), or 0 to each head's largest α, for
  // contrast when many keys share the weight (40 tokens: every α near 0.025, every cell dark).
  bool heatmap_contrast = false;
  float arrow_threshold = 0.02f;  // lines for weights below this are not drawn

  // The top of a head's heatmap colour scale (see heatmap_contrast): 1, or its largest finite α.
  float heatmap_top(const Matrix& weights) const;

  // The diverging map for signed values (weights, values, differences) in this theme.
  view::ColormapId diverging() const {
    return theme == Theme::Dark ? view::ColormapId::DivergingDark : view::ColormapId::Diverging;
  }
};

// What the last frame drew where, for hit-testing and for tests (--layout-out).
struct FrameLayout {
  view::DashboardLayout panels{};
  view::HeatmapGeometry heatmap;  // the selected head's big heatmap
  int heatmap_head = -1;
};

// A lesson in progress.
struct LessonState {
  std::optional<Lesson> lesson;        // none: free play
  int step = 0;
  std::optional<int> prediction;       // the key the student picked (predict steps)
  std::uint64_t step_version = 0;      // AppState::edit_version when the step arrived
  bool active() const { return lesson.has_value(); }
  const LessonStep* current() const {
    return lesson && step >= 0 && step < static_cast<int>(lesson->steps.size())
               ? &lesson->steps[static_cast<std::size_t>(step)] : nullptr;
  }
  // A predict step whose answer is still hidden.
  bool awaiting_prediction() const {
    const LessonStep* s = current();
    return s && s->predict && !prediction;
  }
};

struct AppState {
  Scenario scenario;
  Pipeline pipeline;
  std::uint64_t edit_version = 1;      // bumped by every edit
  std::uint64_t load_version = 0;      // bumped when a whole scenario is loaded (file, lesson step)
  std::uint64_t saved_version = 0;     // the edit_version last saved or opened: unsaved when different
  std::uint64_t computed_version = 0;  // the edit_version the pipeline last ran on
  std::string compute_error;           // why the last run failed; "" when the result is current
  bool has_result = false;             // the pipeline has computed at least once
  std::vector<std::string> file_warnings;
  std::string scenario_path;  // "" for the built-in scenario
  Scenario opened;            // the scenario as opened: what Reset goes back to

  Selection selection;
  TokenRef hovered;       // hovered in the previous frame: what every view highlights
  TokenRef hovered_next;  // collected while this frame draws
  TokenRef pinned;        // highlighted until changed (a lesson step's key)
  // Seconds from this frame's start until something it drew changes by itself (a tooltip's delay
  // runs out, a notice expires): the app draws a frame then even without input
  // (app/session/frame_pacing.hpp). Reset every frame; panels lower it with redraw_within().
  double redraw_in = std::numeric_limits<double>::infinity();
  void redraw_within(double seconds) {
    if (seconds > 0 && seconds < redraw_in) redraw_in = seconds;
  }
  LessonState lesson;
  UiSettings ui;
  std::vector<std::string> broken_claims;  // broken_lesson_claims(), as of claims_version
  std::uint64_t claims_version = 0;
  FrameLayout layout;
  // Token labels as they are seen: Hebrew and Arabic right to left, Arabic letters joined. Every
  // token name a view draws goes through it (app/view/visual_text.hpp).
  view::VisualText visual_text;

  void mark_edited() { ++edit_version; }
  bool unsaved() const { return edit_version != saved_version; }
  // Runs the pipeline if anything changed since the last run; keeps the selection in range.
  void recompute_if_needed();
  // Sets a new scenario (a file opened, a preset), keeping the UI settings.
  void load(Scenario scenario, std::string path, std::vector<std::string> warnings);

  // Lessons: start one at a step, move between steps, leave (keeping the current state).
  void start_lesson(Lesson lesson, int step);
  void go_to_lesson_step(int step);
  void leave_lesson();
  // After the student changed the scenario a step arrived with: the claims of the step's text
  // (its checks) that no longer hold, why each fails in words for the student; empty when nothing changed, or when
  // every claim still holds. Recomputed only when the scenario changes.
  const std::vector<std::string>& broken_lesson_claims();

  // Convenience for views.
  const AttentionResult& result() const { return pipeline.result(); }
  bool highlights_query(int index) const;
  bool highlights_key(int index) const;
};

}  // namespace attnviz::app
