// The one-layer scenario's gradient descent in the Training view (fit_part.hpp).
//   [SECTION] Saved settings
//   [SECTION] This frame's inputs
//   [SECTION] Controls and steps
//   [SECTION] The two heatmaps and the loss
#include "app/panels/fit_part.hpp"

#include "app/panels/heatmap_cells.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/session/edits.hpp"
#include "app/session/view_settings.hpp"
#include "app/view/values.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attnviz::app {

// -----------------------------------------------------------------------------
// [SECTION] Saved settings
// -----------------------------------------------------------------------------
namespace {

constexpr std::array<std::string_view, 2> kKindNames = {"weights", "model"};
const ViewSetting<TrainingKind> kKind{
    "training", 140, TrainingKind::Weights,
    [](const Json& value, const std::string& path, JsonReader&, const TrainingKind&) {
      return static_cast<TrainingKind>(
          view_json::one_of(value, path, kKindNames, "\"weights\" or \"model\""));
    },
    [](const TrainingKind& kind) {
      return kind == TrainingKind::Weights
                 ? OrderedJson()
                 : OrderedJson(std::string(kKindNames[static_cast<std::size_t>(kind)]));
    }};

// The target: one of kTargetPatterns by its index, or painted by hand (kPainted).
constexpr int kPatternCount = static_cast<int>(std::size(kTargetPatterns));
constexpr int kPainted = kPatternCount;
std::array<std::string_view, kPatternCount + 1> target_names() {
  std::array<std::string_view, kPatternCount + 1> names{};
  for (int i = 0; i < kPatternCount; ++i)
    names[static_cast<std::size_t>(i)] = to_string(kTargetPatterns[i]);
  names[kPainted] = "painted";
  return names;
}
const ViewSetting<int> kTarget{
    "fit_target", 141, 0,
    [](const Json& value, const std::string& path, JsonReader&, const int&) {
      static const auto names = target_names();
      return static_cast<int>(view_json::one_of(
          value, path, names, "a target: " + target_pattern_names() + ", or \"painted\""));
    },
    [](const int& target) {
      static const auto names = target_names();
      return target == 0 ? OrderedJson()
                         : OrderedJson(std::string(
                               names[static_cast<std::size_t>(std::clamp(target, 0, kPainted))]));
    }};

// The painted cells, saved with the view state as "fit_painted": for each query row, the keys
// painted in it ([[0], [0], [1, 2]]; a row of none is []). Kept when another target is chosen, so
// that choosing "painted" again brings the painting back; cells past the sentence are ignored.
using PaintedRows = std::vector<std::vector<int>>;
constexpr int kMostPaintedRows = 4096;  // a sentence longer than any the app reads
const ViewSetting<PaintedRows> kPaintedCells{
    "fit_painted",
    142,
    {},
    [](const Json& value, const std::string& path, JsonReader&, const PaintedRows&) {
      const std::string what = "a list of rows, each a list of the key positions painted in it";
      if (!value.is_array() || value.size() > kMostPaintedRows)
        view_json::expected(path, what, value);
      PaintedRows rows;
      for (std::size_t i = 0; i < value.size(); ++i) {
        const Json& row = value[i];
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!row.is_array() || row.size() > kMostPaintedRows) view_json::expected(at, what, row);
        std::vector<int> keys;
        for (std::size_t k = 0; k < row.size(); ++k)
          keys.push_back(view_json::whole_number(row[k], at + "[" + std::to_string(k) + "]", 0,
                                                 kMostPaintedRows - 1, "a key position"));
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        rows.push_back(std::move(keys));
      }
      return rows;
    },
    [](const PaintedRows& rows) {
      if (std::all_of(rows.begin(), rows.end(), [](const auto& row) { return row.empty(); }))
        return OrderedJson();
      return OrderedJson(rows);
    }};

// The painted rows as a (n_query, n_key) mask, and back.
MaskMatrix painted_mask(const PaintedRows& rows, Eigen::Index n_query, Eigen::Index n_key) {
  MaskMatrix mask = MaskMatrix::Zero(n_query, n_key);
  for (std::size_t i = 0; i < rows.size() && static_cast<Eigen::Index>(i) < n_query; ++i)
    for (int key : rows[i])
      if (key < n_key) mask(static_cast<Eigen::Index>(i), key) = 1;
  return mask;
}
PaintedRows painted_rows(const MaskMatrix& mask) {
  PaintedRows rows(static_cast<std::size_t>(mask.rows()));
  for (Eigen::Index i = 0; i < mask.rows(); ++i)
    for (Eigen::Index k = 0; k < mask.cols(); ++k)
      if (mask(i, k)) rows[static_cast<std::size_t>(i)].push_back(static_cast<int>(k));
  return rows;
}

// Steps a second: slow enough to watch each one, or as fast as the frames go.
struct Speed {
  const char* label;
  double steps_per_second;  // 0: kFastSteps a frame
};
constexpr std::array<Speed, 4> kSpeeds = {{{"2 steps a second", 2},
                                           {"10 steps a second", 10},
                                           {"50 steps a second", 50},
                                           {"as fast as it goes", 0}}};
constexpr int kFastSteps = 25;
// A run gives up when it has not come this much closer in kPatience steps.
constexpr int kPatience = 150;
constexpr double kProgress = 5e-3;
constexpr int kMostSteps = 20000;

}  // namespace

TrainingKind training_kind(const UiSettings& ui) {
  return kKind.in(ui.views);
}

void set_training_kind(UiSettings& ui, TrainingKind kind) {
  kKind.in(ui.views) = kind;
}

// -----------------------------------------------------------------------------
// [SECTION] This frame's inputs
// -----------------------------------------------------------------------------

bool FitPart::prepare(const AppState& state, Frame& frame) {
  const Scenario& scenario = state.document.scenario();
  const OneLayerSpec& one = scenario.one_layer();
  const Pipeline& pipeline = state.pipeline();
  frame.head = std::clamp(state.selection.head, 0, one.config.heads - 1);
  frame.key_head = kv_source_head(one.config, frame.head);
  frame.config = check_fit_config(one.config);
  frame.input.X_query = &pipeline.X_target();
  frame.input.X_key = &pipeline.X_keys();
  frame.input.allowed = {pipeline.mask(), one.config.causal && !pipeline.cross()};
  frame.input.config = one.config;
  const auto n_query = pipeline.X_target().rows(), n_key = pipeline.X_keys().rows();
  frame.allowed.resize(n_query, n_key);
  for (Eigen::Index i = 0; i < n_query; ++i)
    for (Eigen::Index j = 0; j < n_key; ++j)
      frame.allowed(i, j) = frame.input.allowed.allowed(i, j) ? 1 : 0;
  const int target = std::clamp(kTarget.in(state.ui.views), 0, kPainted);
  if (target == kPainted) {  // the cells inside this sentence (it may have changed)
    frame.target = painted_target(painted_mask(kPaintedCells.in(state.ui.views), n_query, n_key),
                                  frame.input.allowed);
  } else {
    frame.target = target_attention(kTargetPatterns[target], pipeline.target(), pipeline.keys(),
                                    pipeline.cross(), frame.input.allowed);
  }
  frame.input.target = &frame.target;
  if (!frame.config.is_ok() || !state.computed.error.empty()) return false;
  const Parameters& p = one.parameters;
  const Status computed =
      fit_gradient(frame.input, p.heads[static_cast<std::size_t>(frame.head)].W_Q,
                   p.heads[static_cast<std::size_t>(frame.key_head)].W_K, frame.now);
  frame.computed = computed.is_ok();
  if (!frame.computed) frame.problem = computed.message();
  return frame.computed;
}

// Why the target cannot be reached, when two words are one to the head (unreachable_pair).
std::string FitPart::why_not_reachable(const Frame& frame, const std::vector<Token>& query_tokens,
                                       const std::vector<Token>& key_tokens) const {
  const std::optional<UnreachablePair> pair =
      unreachable_pair(*frame.input.X_query, *frame.input.X_key, frame.target, frame.input.allowed);
  if (!pair) return {};
  const std::vector<Token>& tokens = pair->keys ? key_tokens : query_tokens;
  const std::string which =
      std::string(pair->keys ? "Keys " : "Words ") + std::to_string(pair->first + 1) + " and " +
      std::to_string(pair->second + 1) + " (" + tokens[static_cast<std::size_t>(pair->first)].text +
      ", " + tokens[static_cast<std::size_t>(pair->second)].text + ") have the same embedding, so ";
  return which +
         (pair->keys ? "every query scores them the same: no W_Q and W_K can send a query to one "
                       "and not the other."
                     : "they ask the same question: no W_Q and W_K can send them to different "
                       "keys.") +
         " Give the words positions (Input: positional encoding) and they differ.";
}

// -----------------------------------------------------------------------------
// [SECTION] Controls and steps
// -----------------------------------------------------------------------------
void FitPart::draw(const AppState& state, PanelContext& context) {
  if (loaded_ != state.document.load_version()) {  // another scenario (a file, a lesson step)
    loaded_ = state.document.load_version();
    running_ = false;
    steps_taken_ = 0;
    losses_.clear();
    message_.clear();
  }
  // The inputs, the target and the loss only when something they read changed: not every frame.
  const Key key{state.document.version(),    state.computed.version, state.document.load_version(),
                kTarget.in(state.ui.views),  state.selection.head,   painted_version_,
                state.computed.error.empty()};
  if (!(key == frame_key_)) {
    frame_ = Frame{};
    ready_ = prepare(state, frame_);
    frame_key_ = key;
  }
  Frame& frame = frame_;
  const bool ready = ready_;
  draw_controls(state, context, frame);
  if (!frame.config.is_ok()) {
    text_wrapped_at_spaces(frame.config.message(), ImGui::GetContentRegionAvail().x, false);
    AttentionConfig fixed = frame.input.config;
    fixed.hard = false;
    if (fixed.compatibility != Compatibility::Dot) fixed.compatibility = Compatibility::ScaledDot;
    if (!(fixed.temperature > 0)) fixed.temperature = 1.0f;
    if (ImGui::Button("Use scaled dot-product scores and the softmax"))
      context.edits.push(edits::set_config(fixed, "scores for gradient descent"));
    running_ = false;
    return;
  }
  if (!ready) {
    running_ = false;
    if (!frame.problem.empty())
      text_wrapped_at_spaces(frame.problem, ImGui::GetContentRegionAvail().x, false);
    return;
  }
  run_steps(state, context, frame);
  state.frame.values.set("fit.steps", steps_taken_);
  state.frame.values.set("fit.loss", frame.now.loss);
  state.frame.values.set("fit.mismatch", frame.now.mismatch);
  state.frame.values.set("fit.target_rows", frame.now.target_rows);
  draw_maps(state, context, frame);
}

void FitPart::draw_controls(const AppState& state, PanelContext& context, const Frame& frame) {
  const float font = ImGui::GetFontSize();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  int target = std::clamp(kTarget.in(state.ui.views), 0, kPainted);
  continue_line_if_fits(font * 17.0f, spacing);  // after the Training view's "Learns" choice
  ImGui::SetNextItemWidth(font * 17.0f);
  if (ImGui::Combo(
          "##fit_target", &target,
          [](void*, int i, const char** out) {
            *out = i == kPainted ? "painted by hand (click the cells)"
                                 : describe(kTargetPatterns[i]).data();
            return true;
          },
          nullptr, kPainted + 1)) {
    kTarget.in(context.ui.views) = target;
    steps_taken_ = 0;
    losses_.clear();
    message_.clear();
  }
  record_item_centre(state, "fit.target");
  continue_line_if_fits(font * 9.0f, spacing);
  draw_head_selector(state, context, "##fit_head");

  const bool usable = frame.config.is_ok() && frame.computed && frame.now.target_rows > 0;
  continue_line_if_fits(font * 7.0f, spacing);
  ImGui::BeginDisabled(!usable);
  if (ImGui::Button(running_ ? "Pause" : "Start")) {
    running_ = !running_;
    if (running_) {
      message_.clear();
      step_credit_ = 0;
    }
  }
  record_item_centre(state, "fit.start");
  ImGui::SameLine();
  ImGui::BeginDisabled(running_);
  if (ImGui::Button("Step")) step_credit_ = -1;  // one step, this frame
  record_item_centre(state, "fit.step");
  ImGui::EndDisabled();
  ImGui::EndDisabled();
  continue_line_if_fits(font * 12.0f, spacing);
  ImGui::SetNextItemWidth(font * 10.0f);
  ImGui::Combo(
      "speed##fit", &speed_,
      [](void*, int i, const char** out) {
        *out = kSpeeds[static_cast<std::size_t>(i)].label;
        return true;
      },
      nullptr, static_cast<int>(kSpeeds.size()));
  continue_line_if_fits(font * 12.0f, spacing);
  ImGui::SetNextItemWidth(font * 6.0f);
  ImGui::SliderFloat("learning rate", &learning_rate_, 0.05f, 20.0f, "%.2f",
                     ImGuiSliderFlags_Logarithmic);
  if (!(learning_rate_ > 0) || !std::isfinite(learning_rate_)) learning_rate_ = 1.0f;
}

void FitPart::run_steps(const AppState& state, PanelContext& context, Frame& frame) {
  int due = 0;
  if (step_credit_ < 0) {
    due = 1;
    step_credit_ = 0;
  } else if (running_) {
    const double rate = kSpeeds[static_cast<std::size_t>(speed_)].steps_per_second;
    if (rate <= 0) {
      due = kFastSteps;
    } else {
      step_credit_ += rate * static_cast<double>(ImGui::GetIO().DeltaTime);
      due = static_cast<int>(std::min(step_credit_, 1000.0));
      step_credit_ -= due;
      state.frame.redraw_within(std::max(1.0 / 60.0, (1.0 - step_credit_) / rate));
    }
    if (rate <= 0) state.frame.redraw_within(1.0 / 60.0);
  }
  if (frame.now.target_rows == 0) {
    running_ = false;
    return;
  }
  if (frame.now.mismatch <= kFitMatched && due > 0) {
    running_ = false;
    message_ =
        "The heatmap matches the target: no row has more than a tenth of its attention "
        "out of place.";
    return;
  }
  if (due == 0) return;
  const Parameters& p = state.document.scenario().one_layer().parameters;
  Matrix W_Q = p.heads[static_cast<std::size_t>(frame.head)].W_Q;      // (d_model, d_k)
  Matrix W_K = p.heads[static_cast<std::size_t>(frame.key_head)].W_K;  // (d_model, d_k)
  if (losses_.empty()) losses_.push_back(static_cast<float>(frame.now.loss));
  FitSettings settings;
  settings.learning_rate = learning_rate_;
  FitGradient after;
  int taken = 0;
  for (int i = 0; i < due; ++i) {
    int one = 0;
    if (!gradient_descent(frame.input, settings, 1, W_Q, W_K, after, &one).is_ok() || one == 0)
      break;
    ++taken;
    ++steps_taken_;
    losses_.push_back(static_cast<float>(after.loss));
    if (after.mismatch <= kFitMatched) break;
  }
  if (taken == 0) return;
  context.edits.push(edits::descend_query_key(frame.head, frame.key_head, W_Q, W_K));
  frame.now = after;
  if (after.mismatch <= kFitMatched) {
    running_ = false;
    message_ = "Matched after " + std::to_string(steps_taken_) +
               " steps: no row has more than a tenth of its attention out of place.";
  } else if (static_cast<int>(losses_.size()) > kPatience &&
             losses_[losses_.size() - 1 - kPatience] - losses_.back() < kProgress) {
    running_ = false;
    message_ = "Stuck: the loss has not fallen in " + std::to_string(kPatience) + " steps.";
  } else if (steps_taken_ >= kMostSteps) {
    running_ = false;
    message_ = "Stopped after " + std::to_string(kMostSteps) + " steps.";
  }
  if (losses_.size() > 4 * static_cast<std::size_t>(kMostSteps)) losses_.clear();
}

// -----------------------------------------------------------------------------
// [SECTION] The two heatmaps and the loss
// -----------------------------------------------------------------------------
void FitPart::paint(PanelContext& context, int query, int key, bool add, const Matrix& target) {
  ++painted_version_;
  MaskMatrix painted =
      painted_mask(kPaintedCells.in(context.ui.views), target.rows(), target.cols());
  if (add) {
    painted(query, key) = painted(query, key) ? 0 : 1;
  } else {
    const bool only = painted(query, key) && painted.row(query).cast<int>().sum() == 1;
    painted.row(query).setZero();
    if (!only) painted(query, key) = 1;  // clicking the one painted cell again clears the row
  }
  kPaintedCells.in(context.ui.views) = painted_rows(painted);
}

void FitPart::draw_maps(const AppState& state, PanelContext& context, const Frame& frame) {
  const float font = ImGui::GetFontSize();
  const Palette& colours = palette(state.ui.theme);
  const AttentionResult& result = state.result();
  const auto& query_tokens = state.pipeline().target().tokens;
  const auto& key_tokens = state.pipeline().keys().tokens;

  // The status line: where the run is.
  char line[256];
  std::snprintf(line, sizeof line,
                "Step %d \xc2\xb7 loss %.3f \xc2\xb7 %d of %d words have a target", steps_taken_,
                frame.now.loss, frame.now.target_rows, static_cast<int>(frame.target.rows()));
  ImGui::TextUnformatted(line);
  if (frame.now.target_rows == 0)
    text_wrapped_at_spaces(
        "No word of this sentence has a target. Choose another, or paint one: "
        "click a cell of the target.",
        ImGui::GetContentRegionAvail().x, true);
  if (!message_.empty()) text_wrapped_at_spaces(message_, ImGui::GetContentRegionAvail().x, false);
  if (frame.now.mismatch > kFitMatched && steps_taken_ > 50)  // not before it has tried
  {
    if (!frame.why) frame.why = why_not_reachable(frame, query_tokens, key_tokens);
    if (!frame.why->empty())
      text_wrapped_at_spaces(*frame.why, ImGui::GetContentRegionAvail().x, true);
  }

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // In a small slot the loss curve gives its room to the heatmaps (the status line has the loss).
  const bool small = avail.y < font * 16.0f;
  const float loss_h = small ? 0.0f : std::clamp(avail.y * 0.25f, font * 4.0f, font * 8.0f);
  const float maps_h = avail.y - loss_h - (small ? font * 1.3f : font);
  if (maps_h < font * 4.0f || avail.x < font * 16.0f) {
    draw_no_room_note();
    return;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float label_w = std::min(widest_token(state, query_tokens) + font * 0.5f, font * 7.0f);
  const float gap = font * 1.5f;
  const float half = (avail.x - gap) * 0.5f;
  view::HeatmapStyle style;
  style.row_label_width = label_w;
  style.column_label_width = std::min(widest_token(state, key_tokens) + font * 0.5f, font * 7.0f);
  style.line_height = font;
  style.max_cell_w = style.max_cell_h = font * 3.0f;
  style.value_text_width = ImGui::CalcTextSize("0.00").x + font * 0.3f;
  const int rows = static_cast<int>(frame.target.rows()),
            cols = static_cast<int>(frame.target.cols());
  const float title_h = font * 1.3f;
  // Each heatmap at the top of its half: laid out once for its size, then again in that height.
  view::HeatmapGeometry g[2];
  for (int m = 0; m < 2; ++m) {
    view::Rect area{origin.x + static_cast<float>(m) * (half + gap), origin.y + title_h, half,
                    maps_h - title_h};
    g[m] = view::layout_heatmap(area, rows, cols, style);
    if (g[m].cell_h < font * 0.8f || g[m].cell_w < font * 0.8f) {  // no room for the names:
      view::HeatmapStyle bare = style;                             // the cells take it all
      bare.row_label_width = bare.column_label_width = bare.line_height = 0;
      style = bare;
      g[m] = view::layout_heatmap(area, rows, cols, style);
    }
    area.h = std::min(area.h, g[m].grid.bottom() - g[m].column_labels.y + 1.0f);
    g[m] = view::layout_heatmap(area, rows, cols, style);
  }

  // The target's own texture, uploaded when it changes.
  if (shown_target_.rows() != frame.target.rows() || shown_target_.cols() != frame.target.cols() ||
      shown_target_ != frame.target) {
    shown_target_ = frame.target;
    ++target_version_;
  }
  target_texture_.update({&shown_target_}, target_version_, false);
  context.heatmaps.upload_weights(result);
  if (frame.head >= static_cast<int>(result.heads.size())) return;  // the result is catching up
  const HeadResult& head = result.heads[static_cast<std::size_t>(frame.head)];

  CellDrawing drawing;
  CellSource target_cells;
  target_cells.values = &shown_target_;
  target_cells.computed = &frame.allowed;
  target_cells.colormap = state.ui.colormap;
  target_cells.texture = context.heatmaps.ok() ? &target_texture_ : nullptr;
  target_cells.texture_marks_hatched = false;
  CellSource head_cells;
  head_cells.values = &head.weights;
  head_cells.masked_scores = &head.masked_scores;
  head_cells.colormap = state.ui.colormap;
  head_cells.texture = context.heatmaps.ok() ? &context.heatmaps.weights : nullptr;
  head_cells.block = frame.head;
  const bool same_shape = head.weights.rows() == rows && head.weights.cols() == cols;

  const char* titles[2] = {"The target (click to paint, Shift+click to add)",
                           "The head now: its attention with the weights as they are"};
  for (int m = 0; m < 2; ++m) {
    list->AddText(ImVec2(g[m].row_labels.x, origin.y), colours.text,
                  fit_text(titles[m], half).c_str());
    if (m == 1 && !same_shape) continue;
    drawing.numbers = g[m].show_values;
    draw_heatmap_cells(list, context, state.ui.theme, g[m], m == 0 ? target_cells : head_cells,
                       drawing);
    // Labels: the queries at the left of each, the keys along the top (when there is room).
    if (g[m].row_labels.w < font) continue;
    for (int i = 0; i < rows; ++i) {
      const view::Rect cell = g[m].cell(i, 0);
      const std::string text =
          fit_label(state.frame.visual_text, query_tokens[static_cast<std::size_t>(i)].text,
                    g[m].row_labels.w - font * 0.3f);
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      if (cell.h >= font * 0.8f)
        list->AddText(ImVec2(g[m].row_labels.right() - size.x - font * 0.2f,
                             cell.y + (cell.h - size.y) * 0.5f),
                      colours.text, text.c_str());
    }
    list->PushClipRect(ImVec2(g[m].column_labels.x, g[m].column_labels.y),
                       ImVec2(g[m].column_labels.right(), g[m].column_labels.bottom() + 1), true);
    for (int j = 0; j < cols; ++j) {
      const view::Rect cell = g[m].cell(0, j);
      if (cell.w < font * 0.8f) continue;
      const char* text = state.frame.visual_text(key_tokens[static_cast<std::size_t>(j)].text);
      const ImVec2 size = ImGui::CalcTextSize(text);
      const float centre = cell.x + cell.w * 0.5f;
      if (g[m].vertical_column_labels)
        add_text_upwards(list, ImVec2(centre - size.y * 0.5f, g[m].column_labels.bottom() - size.y),
                         colours.text, text, g[m].column_labels.h);
      else
        list->AddText(ImVec2(centre - size.x * 0.5f, g[m].column_labels.bottom() - size.y),
                      colours.text, text);
    }
    list->PopClipRect();
  }

  // Painting: a click makes the cell the row's one target, Shift+click adds it.
  ImGui::InvisibleButton("##fit_maps", ImVec2(avail.x, maps_h));
  const ImGuiIO& io = ImGui::GetIO();
  hovered_query_ = hovered_key_ = -1;
  for (int m = 0; m < 2; ++m)
    if (ImGui::IsItemHovered())
      if (const auto cell = g[m].hit(io.MousePos.x, io.MousePos.y)) {
        hovered_query_ = (*cell)[0];
        hovered_key_ = (*cell)[1];
        const float wanted = frame.target(hovered_query_, hovered_key_);
        const float now = same_shape ? head.weights(hovered_query_, hovered_key_) : 0.0f;
        ImGui::SetTooltip("%s \xe2\x86\x92 %s\ntarget %.2f, the head now %.2f%s",
                          query_tokens[static_cast<std::size_t>(hovered_query_)].text.c_str(),
                          key_tokens[static_cast<std::size_t>(hovered_key_)].text.c_str(),
                          static_cast<double>(wanted), static_cast<double>(now),
                          frame.allowed(hovered_query_, hovered_key_)
                              ? ""
                              : "\n(masked: this query may not see this key)");
        if (m == 0 && ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
          if (kTarget.in(state.ui.views) != kPainted) {  // start from the pattern chosen
            kPaintedCells.in(context.ui.views) =
                painted_rows((frame.target.array() > 0.0f).cast<std::uint8_t>());
            kTarget.in(context.ui.views) = kPainted;
          }
          paint(context, hovered_query_, hovered_key_, io.KeyShift, frame.target);
          message_.clear();
        }
      }
  if (hovered_query_ >= 0)
    for (int m = 0; m < 2; ++m)
      outline_heatmap_row(list, g[m], hovered_query_, colours.highlight,
                          highlight_width(state.ui, font));
  state.frame.values.set("fit.cell_x", static_cast<double>(g[0].cell(0, 0).x));
  state.frame.values.set("fit.cell_y", static_cast<double>(g[0].cell(0, 0).y));
  state.frame.values.set("fit.cell_w", static_cast<double>(g[0].cell_w));
  state.frame.values.set("fit.cell_h", static_cast<double>(g[0].cell_h));
  if (small) {
    if (!state.ui.presenter)
      list->AddText(ImVec2(origin.x, origin.y + maps_h + font * 0.2f), colours.text_dim,
                    "F5: presenter mode gives Training the whole window");
    ImGui::Dummy(ImVec2(avail.x, font));
    return;
  }
  draw_loss(state, ImVec2(origin.x, origin.y + maps_h + font * 0.5f),
            ImVec2(origin.x + avail.x, origin.y + maps_h + font * 0.5f + loss_h));
  ImGui::Dummy(ImVec2(avail.x, loss_h));
}

void FitPart::draw_loss(const AppState& state, ImVec2 p0, ImVec2 p1) const {
  const float font = ImGui::GetFontSize();
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  list->AddRect(p0, p1, colours.grid);
  list->AddText(ImVec2(p0.x + font * 0.3f, p0.y + font * 0.1f), colours.text,
                "loss: how far the head's attention is from the target (0: the same)");
  if (losses_.size() < 2) return;
  float top = 1e-3f;
  for (float loss : losses_)
    if (std::isfinite(loss)) top = std::max(top, loss);
  const float height = p1.y - p0.y - font * 1.4f;
  const float steps = static_cast<float>(std::max<std::size_t>(losses_.size() - 1, 20));
  const int columns = std::max(1, static_cast<int>(p1.x - p0.x));
  std::vector<ImVec2> points;
  points.reserve(std::min<std::size_t>(losses_.size(), static_cast<std::size_t>(columns) + 1));
  for (std::size_t i = 0; i < losses_.size();
       i += std::max<std::size_t>(1, losses_.size() / static_cast<std::size_t>(columns))) {
    const float x = p0.x + (p1.x - p0.x) * static_cast<float>(i) / steps;
    const float y = p1.y - height * std::clamp(losses_[i] / top, 0.0f, 1.0f);
    points.push_back(ImVec2(x, y));
  }
  list->AddPolyline(points.data(), static_cast<int>(points.size()), head_colour(state.ui.theme, 0),
                    0, 2.0f);
  char label[32];
  std::snprintf(label, sizeof label, "%.2f", static_cast<double>(top));
  list->AddText(ImVec2(p1.x - ImGui::CalcTextSize(label).x - font * 0.3f, p0.y + font * 0.1f),
                colours.text_dim, label);
}

}  // namespace attnviz::app
