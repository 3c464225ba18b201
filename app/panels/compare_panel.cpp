// The Compare view: two attention-weight heatmaps side by side and their difference on a
// diverging colormap whose range is ±its largest magnitude: A − B for two heads (red: A larger),
// B − A for a snapshot against now, now − then (red: larger now). Two modes:
//   - two heads of the current result (A: the selected head, B: by default the next one);
//   - a snapshot against now: "Take snapshot" keeps a copy of every head's weights and the
//     tokens; A is the snapshot, B the current state, both for the selected head. When the
//     token counts differ there is no cell-by-cell difference, and the view says so.
// Each heatmap is a texture (the shared one for the current weights; the snapshot's and the
// difference's are this panel's, uploaded only when their data changes), with the token labels,
// the numbers in the cells when they fit, and a tooltip with A, B and A − B.
//   [SECTION] Helpers
//   [SECTION] Header: the mode and its selectors
//   [SECTION] What A and B are this frame
//   [SECTION] Drawing one heatmap
#include "app/panels/heatmap_cells.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/view/attention_difference.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

using view::format_signed;
using view::label_stride;

// -----------------------------------------------------------------------------
// [SECTION] Helpers
// -----------------------------------------------------------------------------

enum class Mode { Heads, Snapshot };

// The numbers in the cells are a little smaller than the labels: three heatmaps share the room.
constexpr float kValueScale = 0.75f;
constexpr float kSignedValueScale = 0.62f;

// One heatmap to draw: where, from which texture block, its values and labels.
struct HeatmapSpec {
  const render::MatrixStackTexture* texture = nullptr;
  int block = 0;
  const Matrix* values = nullptr;
  const Matrix* masked = nullptr;  // the scores, -inf where a cell is masked (no weight); or none
  const std::vector<Token>* row_tokens = nullptr;  // nullptr: no row labels (shared with the left)
  const std::vector<Token>* column_tokens = nullptr;
  view::ColormapId colormap = view::ColormapId::Sequential;
  float low = 0, high = 1;
  bool signed_values = false;  // the difference: negative numbers too
  bool current_tokens = true;  // the rows are the current queries (hover and click apply)
};

class ComparePanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const AttentionResult& r = state.result();
    font_ = ImGui::GetFontSize();
    label_tokens_ = labelled_ = 0;
    visual_text_ = &state.frame.visual_text;
    // The current weights of every head, in the texture the views share (uploaded once per result).
    context.heatmaps.upload_weights(r);

    draw_header(state, context);
    const int heads = static_cast<int>(r.heads.size());
    const int head = state.selection.head;
    previous_cell_ = hovered_cell_;
    previous_map_ = hovered_map_;
    hovered_cell_ = {-1, -1};
    hovered_map_ = -1;

    if (mode_ == Mode::Snapshot && !snapshot_.taken && before_missing_) {
      draw_centred_note(state,
                        "The text is too long to have kept every head of this layer from before "
                        "the change. Take a snapshot, or choose a lower layer.");
      return;
    }
    if (mode_ == Mode::Snapshot && !snapshot_.taken) {
      draw_centred_note(
          state,
          "Take a snapshot, then change anything \xe2\x80\x94 a weight, a word, the temperature, "
          "a setting \xe2\x80\x94 to see how the attention weights moved.");
      return;
    }
    if (mode_ == Mode::Snapshot && head >= static_cast<int>(snapshot_.weights.size())) {
      char note[160];
      std::snprintf(note, sizeof note,
                    "The snapshot has %d head%s; head %d is not in it. Choose a head up to %d, or "
                    "take a new snapshot.",
                    static_cast<int>(snapshot_.weights.size()),
                    snapshot_.weights.size() == 1 ? "" : "s", view::shown_number(head),
                    static_cast<int>(snapshot_.weights.size()));
      draw_centred_note(state, note);
      return;
    }

    // A and B.
    const int head_a = head;
    const int head_b = mode_ == Mode::Heads ? current_head_b(heads, head_a) : head;
    HeatmapSpec a, b;
    a.colormap = b.colormap = state.ui.colormap;
    b.texture = &context.heatmaps.weights;
    b.block = head_b;
    b.values = &r.heads[static_cast<std::size_t>(head_b)].weights;
    b.masked = &r.heads[static_cast<std::size_t>(head_b)].masked_scores;
    b.row_tokens = &state.pipeline().target().tokens;
    b.column_tokens = &state.pipeline().keys().tokens;
    if (mode_ == Mode::Heads) {
      a = b;
      a.block = head_a;
      a.values = &r.heads[static_cast<std::size_t>(head_a)].weights;
      a.masked = &r.heads[static_cast<std::size_t>(head_a)].masked_scores;
    } else {
      upload_snapshot();
      a.texture = &snapshot_texture_;
      a.block = head_a;
      a.values = &snapshot_.weights[static_cast<std::size_t>(head_a)];
      a.masked = &snapshot_.masked_scores[static_cast<std::size_t>(head_a)];
      a.row_tokens = &snapshot_.query_tokens;
      a.column_tokens = &snapshot_.key_tokens;
    }
    const bool same_shape =
        a.values->rows() == b.values->rows() && a.values->cols() == b.values->cols();
    pairs_cells_ = same_shape;
    a.current_tokens = same_shape;
    if (same_shape) update_difference(r, a, b, head_a, head_b);

    // Layout: titles, three heatmaps (the row labels once, on the left, when the rows are the
    // same), and a summary line.
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 available = ImGui::GetContentRegionAvail();
    if (available.x < font_ * 10 || available.y < font_ * 6) return;
    // When the snapshot had other words at the same places, B gets its own row labels.
    const bool same_words =
        mode_ == Mode::Heads ||
        (same_shape && same_texts(snapshot_.query_tokens, state.pipeline().target().tokens) &&
         same_texts(snapshot_.key_tokens, state.pipeline().keys().tokens));
    compose_summary(state, same_shape, same_words, *a.values, *b.values);
    const float title_h = font_ * 1.5f, gap = font_ * 0.7f;
    const float summary_h = font_ * (0.4f + 1.3f * static_cast<float>(summary_lines(available.x)));
    view::Rect area{origin.x, origin.y + title_h, available.x, available.y - title_h - summary_h};
    if (!same_shape || !same_words)
      b.row_tokens = &state.pipeline().target().tokens;
    else
      b.row_tokens = nullptr;
    HeatmapSpec d;
    d.texture = &difference_texture_;
    d.values = &difference_.values;
    d.colormap = state.ui.diverging();
    d.low = -difference_limit_;
    d.high = difference_limit_;
    d.signed_values = true;
    d.masked = &difference_.masked;
    d.column_tokens = b.column_tokens;

    const float label_a = row_label_width(*a.row_tokens);
    const float label_b = b.row_tokens ? row_label_width(*b.row_tokens) : 0.0f;
    const float share = std::max(font_ * 2.0f, (area.w - label_a - label_b - 2.0f * gap) / 3.0f);
    float widths[3] = {label_a + share, label_b + share, share};
    view::Rect slots[3];
    const auto place_slots = [&] {
      float x = area.x;
      for (int k = 0; k < 3; ++k) {
        slots[k] = {x, area.y, widths[k], area.h};
        x = slots[k].right() + gap;
      }
    };
    place_slots();
    const HeatmapSpec* specs[3] = {&a, &b, &d};
    const int count = same_shape ? 3 : 2;
    view::HeatmapGeometry g[3];
    layout_all(specs, slots, count, g);
    // Cells a line at least, so that every name is written: when the heatmaps need more room
    // than the view has, each slot takes what its grid needs and the three scroll together (a
    // child window over them and their titles; the summary stays under it).
    bool scrolling = false;
    for (int k = 0; k < count; ++k) scrolling = scrolling || g[k].scrolls_x || g[k].scrolls_y;
    ImVec2 top_left = origin;
    if (scrolling) {
      float needed_h = area.h;
      for (int k = 0; k < count; ++k) {
        widths[k] = std::max(widths[k], g[k].grid.right() - slots[k].x);
        needed_h = std::max(needed_h, g[k].grid.bottom() - area.y + font_ * 2.0f);
      }
      ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
      ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
      ImGui::BeginChild("##compare_maps", ImVec2(available.x, available.y - summary_h), false,
                        ImGuiWindowFlags_HorizontalScrollbar);
      ImGui::PopStyleColor();
      ImGui::PopStyleVar();
      top_left = ImGui::GetCursorScreenPos();  // scrolled
      area = {top_left.x, top_left.y + title_h, area.w, needed_h};
      place_slots();
      layout_all(specs, slots, count, g);
    }

    char title[96];
    // A real model's heads are named with their layer ("A: layer 2, head 3").
    char layer[24] = "";
    if (state.pipeline().layer_count() > 1)
      std::snprintf(layer, sizeof layer, "layer %d, ", view::shown_number(state.selection.layer));
    if (mode_ == Mode::Heads)
      std::snprintf(title, sizeof title, "A: %shead %d", layer, view::shown_number(head_a));
    else
      std::snprintf(title, sizeof title,
                    pinned_before_ != 0 ? "A: before the change" : "A: snapshot");
    draw_title(state, g[0], slots[0], top_left.y, title, head_colour(state.ui.theme, head_a));
    if (mode_ == Mode::Heads)
      std::snprintf(title, sizeof title, "B: %shead %d", layer, view::shown_number(head_b));
    else
      std::snprintf(title, sizeof title, "B: now");
    draw_title(state, g[1], slots[1], top_left.y, title, head_colour(state.ui.theme, head_b));

    ImDrawList* list = ImGui::GetWindowDrawList();
    draw_heatmap(state, context, list, a, g[0], 0);
    draw_heatmap(state, context, list, b, g[1], 1);
    if (same_shape) {
      draw_difference_title(state, g[2], slots[2], top_left.y);
      draw_heatmap(state, context, list, d, g[2], 2);
    } else {
      draw_shape_note(state, slots[2], *a.values, *b.values);
    }
    if (scrolling) {
      // The content's extent: every slot, and the tallest grid with room for a scale under it.
      float bottom = area.bottom();
      for (int k = 0; k < count; ++k) bottom = std::max(bottom, g[k].grid.bottom() + font_ * 2.0f);
      ImGui::SetCursorScreenPos(top_left);
      ImGui::Dummy(ImVec2(slots[count - 1].right() - top_left.x, bottom - top_left.y));
      ImGui::EndChild();
    }
    state.frame.layout.labels_of(view::ViewId::Compare)
        .add(label_tokens_, labelled_, font_, scrolling);
    draw_summary(state, ImVec2(origin.x, origin.y + available.y - summary_h + font_ * 0.3f),
                 available.x);
    if (hovered_cell_[0] >= 0) {
      masked_a_ = a.masked, masked_b_ = b.masked;
      draw_cell_tooltip(state, *a.values, *b.values, same_shape, head_a, head_b);
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(available);
  }

 private:
  float font_ = 16;
  int label_tokens_ = 0, labelled_ = 0;  // this frame's token names: to write, and written
  const view::VisualText* visual_text_ =
      nullptr;  // this frame's AppState::visual_text, for token labels' widths
  Mode mode_ = Mode::Heads;
  int chosen_b_ = -1;                 // head B as chosen; -1: the head after A
  std::vector<const Matrix*> stack_;  // the snapshot's heads, for its texture upload

  view::AttentionSnapshot snapshot_;  // "Take snapshot", or "Before the change"
  // The snapshot is the app's before of this id (0: not) and of this layer; or that layer's
  // before was not kept.
  std::uint64_t pinned_before_ = 0;
  int pinned_layer_ = 0;
  bool before_missing_ = false;
  render::MatrixStackTexture snapshot_texture_;
  const Matrix* masked_a_ = nullptr;  // this frame's masked scores of A and B, for the tooltip
  const Matrix* masked_b_ = nullptr;
  std::uint64_t snapshot_uploaded_ = 0;

  // A − B, recomputed when its inputs change (app/view/attention_difference.hpp).
  view::AttentionDifference difference_;
  float difference_limit_ = 1e-6f;
  render::MatrixStackTexture difference_texture_;
  std::uint64_t difference_version_ = 0;  // of the texture's data
  struct DifferenceKey {
    Mode mode = Mode::Heads;
    int head_a = -1, head_b = -1;
    std::uint64_t result_version = 0, snapshot_id = 0;
    bool operator==(const DifferenceKey&) const = default;
  } difference_key_;
  std::vector<const Matrix*> difference_stack_;

  view::DifferenceSummary summary_;  // the line under the heatmaps

  std::array<int, 2> hovered_cell_ = {-1, -1};   // under the mouse this frame
  int hovered_map_ = -1;                         // in which heatmap (0 A, 1 B, 2 A − B)
  std::array<int, 2> previous_cell_ = {-1, -1};  // last frame's: outlined in the other heatmaps
  int previous_map_ = -1;
  bool pairs_cells_ = true;  // A and B have the same shape

  // -----------------------------------------------------------------------------
  // [SECTION] Header: the mode and its selectors
  // -----------------------------------------------------------------------------

  int current_head_b(int heads, int head_a) const {
    if (chosen_b_ >= 0 && chosen_b_ < heads) return chosen_b_;
    return heads > 1 ? (head_a + 1) % heads : head_a;
  }

  void draw_header(const AppState& state, PanelContext& context) {
    const AttentionResult& r = state.result();
    const Palette& colours = palette(state.ui.theme);
    const int heads = static_cast<int>(r.heads.size());
    int head = state.selection.head;
    if (ImGui::RadioButton("two heads", mode_ == Mode::Heads)) mode_ = Mode::Heads;
    ImGui::SameLine();
    if (ImGui::RadioButton("snapshot vs now", mode_ == Mode::Snapshot && pinned_before_ == 0))
      mode_ = Mode::Snapshot;
    // A real model changed by hand: its heads as they were before, kept by the app
    // (state.computed.before), as A.
    if (const ModelBefore& before = state.computed.before; before.held) {
      ImGui::SameLine();
      if (ImGui::RadioButton("before the change vs now",
                             mode_ == Mode::Snapshot && pinned_before_ != 0)) {
        mode_ = Mode::Snapshot;
        pin_before(state);
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "A: every head as it was before the model was changed (%s); B: now. It follows the "
            "layer you choose.",
            state.document.scenario().model()
                ? before.changes_to(*state.document.scenario().model()).c_str()
                : "");
    }
    state.frame.values.set("compare.before_pinned",
                           pinned_before_ != 0 && mode_ == Mode::Snapshot ? 1 : 0);
    // The selectors beside the switch when they fit (a model's layer selector too), else under it.
    const float selectors_w =
        font_ * (mode_ == Mode::Heads && state.pipeline().layer_count() > 1 ? 21.0f : 15.0f);
    if (fits_after_last_item(selectors_w, font_ * 1.2f)) ImGui::SameLine(0, font_ * 1.2f);
    if (mode_ == Mode::Heads) {
      ImGui::AlignTextToFramePadding();
      draw_layer_selector(state, context,
                          "##compare");  // a real model's: both heads are of that layer
      ImGui::TextUnformatted("A: head");
      ImGui::SameLine();
      if (draw_head_combo("##compare_a", heads, head)) context.selection.head = head;
      ImGui::SameLine(0, font_);
      ImGui::TextUnformatted("B: head");
      ImGui::SameLine();
      int head_b = current_head_b(heads, head);
      if (draw_head_combo("##compare_b", heads, head_b)) chosen_b_ = head_b;
      if (heads > 1 && fits_after_last_item(ImGui::CalcTextSize("swap").x + font_)) {
        ImGui::SameLine();
        if (ImGui::SmallButton("swap")) {
          chosen_b_ = head;
          context.selection.head = head_b;
        }
      }
      if (heads == 1) {
        ImGui::SameLine(0, font_);
        ImGui::PushStyleColor(ImGuiCol_Text, colours.highlight);
        ImGui::TextUnformatted("one head only: A = B");
        ImGui::PopStyleColor();
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("add heads in Settings, or compare with a snapshot");
      }
      return;
    }
    if (ImGui::Button("Take snapshot")) take_snapshot(state);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "keep a copy of every head's weights and the tokens, to compare later edits with");
    // The before pinned follows the layer chosen, and a new before (after Clear and a new change).
    const ModelBefore& before = state.computed.before;
    if (pinned_before_ != 0 && before.held &&
        (pinned_before_ != before.id || pinned_layer_ != state.selection.layer))
      pin_before(state);
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("head");
    ImGui::SameLine();
    if (draw_head_combo("##compare_head", heads, head)) context.selection.head = head;
    if (snapshot_.taken) {
      // The whole label when it fits on the line, else its time (the tooltip has the rest).
      const bool whole = fits_after_last_item(ImGui::CalcTextSize(snapshot_.label).x + font_);
      const bool beside =
          whole || fits_after_last_item(ImGui::CalcTextSize(snapshot_.short_label).x + font_);
      const char* text = whole || !beside ? snapshot_.label
                                          : snapshot_.short_label;  // a line of its own: all of it
      if (beside) ImGui::SameLine(0, font_);
      ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
      ImGui::TextUnformatted(text);
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s\n%s attention, d_k = %d, d_v = %d, %.*s, temperature %.3g%s%s", snapshot_.label,
            snapshot_.cross ? "cross" : "self", snapshot_.config.d_k, snapshot_.config.d_v,
            static_cast<int>(to_string(snapshot_.config.compatibility).size()),
            to_string(snapshot_.config.compatibility).data(),
            static_cast<double>(snapshot_.config.temperature),
            snapshot_.config.hard ? ", hard" : "", snapshot_.config.causal ? ", causal" : "");
    }
  }

  void take_snapshot(const AppState& state) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    pinned_before_ = 0;
    before_missing_ = false;
    view::take_snapshot(state.result(), state.pipeline().target(), state.pipeline().keys(),
                        state.pipeline().cross(), local, snapshot_);
  }

  // The app's before (state.computed.before) of the selected layer as the snapshot.
  void pin_before(const AppState& state) {
    const ModelBefore& before = state.computed.before;
    const std::size_t layer = static_cast<std::size_t>(state.selection.layer);
    pinned_before_ = before.id;
    pinned_layer_ = state.selection.layer;
    const std::uint64_t next_id = snapshot_.id + 1;
    if (layer >= before.layers.size() || !before.layers[layer].taken) {
      snapshot_ = {};  // not kept (a text too long to keep every head): the view says so
      snapshot_.id = next_id;
      before_missing_ = true;
      return;
    }
    before_missing_ = false;
    snapshot_ = before.layers[layer];
    snapshot_.id = next_id;
    const ModelSpec* now = state.document.scenario().model();
    std::snprintf(snapshot_.label, sizeof snapshot_.label, "layer %d before the change (%s)",
                  pinned_layer_ + 1, now ? before.changes_to(*now).c_str() : "");
  }

  void upload_snapshot() {
    if (snapshot_uploaded_ == snapshot_.id) return;
    stack_.clear();
    for (const Matrix& m : snapshot_.shown_weights) stack_.push_back(&m);
    snapshot_texture_.update(stack_, snapshot_.id, true);
    snapshot_uploaded_ = snapshot_.id;
  }

  // -----------------------------------------------------------------------------
  // [SECTION] What A and B are this frame
  // -----------------------------------------------------------------------------

  // Two heads: A − B. A snapshot (A) against now (B): B − A, so that what grew since is positive.
  float signed_difference(float a, float b) const { return mode_ == Mode::Heads ? a - b : b - a; }
  const char* difference_name() const {
    return mode_ == Mode::Heads ? "A \xe2\x88\x92 B" : "B \xe2\x88\x92 A";
  }

  // A − B (or B − A) cell by cell. A cell masked in both is no difference of weights but no
  // weight at all: it is marked masked (drawn hatched, no number) and left out of the largest
  // difference and the mean, which are over the cells a query can see.
  void update_difference(const AttentionResult& r, const HeatmapSpec& spec_a,
                         const HeatmapSpec& spec_b, int head_a, int head_b) {
    const Matrix& a = *spec_a.values;
    const Matrix& b = *spec_b.values;
    const DifferenceKey key{mode_, head_a, head_b, r.version,
                            mode_ == Mode::Snapshot ? snapshot_.id : 0};
    if (key == difference_key_ && difference_.values.rows() == a.rows() &&
        difference_.values.cols() == a.cols())
      return;
    difference_key_ = key;
    view::compute_difference(a, spec_a.masked, b, spec_b.masked, mode_ == Mode::Snapshot,
                             difference_);
    difference_limit_ = std::max(1e-6f, difference_.largest);
    difference_stack_.clear();
    difference_stack_.push_back(&difference_.values);
    difference_texture_.update(difference_stack_, ++difference_version_);
  }

  // -----------------------------------------------------------------------------
  // [SECTION] Drawing one heatmap
  // -----------------------------------------------------------------------------

  static bool same_texts(const std::vector<Token>& a, const std::vector<Token>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k].text != b[k].text) return false;
    return true;
  }

  float column_label_width(const std::vector<Token>& tokens) const {
    float widest = 0;
    for (const Token& t : tokens)
      widest = std::max(widest, ImGui::CalcTextSize((*visual_text_)(t.text)).x);
    return std::min(widest, font_ * 8.0f);
  }

  float row_label_width(const std::vector<Token>& tokens) const {
    return column_label_width(tokens) + std::round(font_ * 0.4f);
  }

  view::HeatmapStyle style_for(const HeatmapSpec& spec, float max_cell_w, float max_cell_h) const {
    view::HeatmapStyle style;
    style.line_height = font_;
    style.max_cell_w = max_cell_w;
    style.max_cell_h = max_cell_h;
    // A line at least, so that every name fits beside its row (past that the maps scroll).
    style.min_cell_w = style.min_cell_h = font_;
    // The differences ("-0.71") may shrink a little more to fit.
    style.value_text_width = spec.signed_values ? ImGui::CalcTextSize("-0.00").x * kSignedValueScale
                                                : ImGui::CalcTextSize("0.00").x * kValueScale;
    style.row_label_width =
        spec.row_tokens ? row_label_width(*spec.row_tokens) - std::round(font_ * 0.4f) : 0.0f;
    style.column_label_width = spec.column_tokens ? column_label_width(*spec.column_tokens) : 0.0f;
    return style;
  }

  // The same cell size for all, the smallest that each slot allows across and down, when the
  // matrices have the same shape; else (a snapshot of another sentence) each its own, so that a
  // small one is not drawn at the cells of a large one, a speck.
  void layout_all(const HeatmapSpec* const* specs, const view::Rect* slots, int count,
                  view::HeatmapGeometry* out) const {
    float cell_w = font_ * 4.0f, cell_h = font_ * 4.0f;
    float label_w = 0;
    bool same_shape = true;
    for (int k = 0; k < count; ++k) {
      const HeatmapSpec& s = *specs[k];
      if (s.column_tokens) label_w = std::max(label_w, column_label_width(*s.column_tokens));
      same_shape = same_shape && s.values->rows() == specs[0]->values->rows() &&
                   s.values->cols() == specs[0]->values->cols();
    }
    for (int pass = same_shape ? 0 : 1; pass < 2; ++pass)
      for (int k = 0; k < count; ++k) {
        const HeatmapSpec& s = *specs[k];
        view::HeatmapStyle style = style_for(s, cell_w, cell_h);
        style.column_label_width = label_w;  // the same label band above every heatmap
        out[k] = view::layout_heatmap(slots[k], static_cast<int>(s.values->rows()),
                                      static_cast<int>(s.values->cols()), style);
        if (pass == 0 && !out[k].grid.empty()) {
          cell_w = std::min(cell_w, out[k].cell_w);
          cell_h = std::min(cell_h, out[k].cell_h);
        }
      }
  }

  void draw_title(const AppState& state, const view::HeatmapGeometry& g, const view::Rect& slot,
                  float y, const char* text, ImU32 swatch) const {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float x = g.grid.empty() ? slot.x : g.grid.x;
    list->AddRectFilled(ImVec2(x, y + font_ * 0.3f), ImVec2(x + font_ * 0.6f, y + font_ * 0.9f),
                        swatch, font_ * 0.1f);
    list->PushClipRect(ImVec2(x, y), ImVec2(slot.right(), y + font_ * 1.5f), true);
    list->AddText(ImVec2(x + font_ * 0.85f, y + font_ * 0.1f), colours.text, text);
    list->PopClipRect();
  }

  // "A − B" above the grid, and its scale under it (or beside the name when there is no room
  // under the grid): −limit (blue, B larger) .. +limit (red, A larger).
  void draw_difference_title(const AppState& state, const view::HeatmapGeometry& g,
                             const view::Rect& slot, float y) const {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float x = g.grid.empty() ? slot.x : g.grid.x;
    const char* name = difference_name();
    list->AddText(ImVec2(x, y + font_ * 0.1f), colours.text, name);
    char low[32], high[32];
    format_signed(high, sizeof high, difference_limit_);
    format_signed(low, sizeof low, -difference_limit_);
    const float low_w = ImGui::CalcTextSize(low).x, high_w = ImGui::CalcTextSize(high).x;
    float bx = 0, by = 0, right = 0;
    if (!g.grid.empty() && g.grid.bottom() + font_ * 1.6f <= slot.bottom()) {
      bx = x;
      by = g.grid.bottom() + font_ * 0.5f;
      right = std::max(g.grid.right(), x + low_w + high_w + font_ * 3.0f);
    } else {
      bx = x + ImGui::CalcTextSize(name).x + font_ * 0.6f;
      by = y + font_ * 0.1f;
      right = slot.right();
    }
    const float bar_w = std::min(right - bx - low_w - high_w - font_ * 0.6f, font_ * 8.0f);
    if (bar_w < font_ * 1.5f) return;
    const float x0 = bx;
    list->AddText(ImVec2(bx, by), colours.text_dim, low);
    bx += low_w + font_ * 0.3f;
    const int steps = 32;
    for (int k = 0; k < steps; ++k) {
      const float t0 = static_cast<float>(k) / steps, t1 = static_cast<float>(k + 1) / steps;
      list->AddRectFilled(ImVec2(bx + bar_w * t0, by + font_ * 0.2f),
                          ImVec2(bx + bar_w * t1 + 0.5f, by + font_ * 0.9f),
                          to_imgui(view::sample(state.ui.diverging(), (t0 + t1) * 0.5f)));
    }
    list->AddText(ImVec2(bx + bar_w + font_ * 0.3f, by), colours.text_dim, high);
    if (ImGui::IsMouseHoveringRect(ImVec2(x0, by),
                                   ImVec2(bx + bar_w + font_ * 0.3f + high_w, by + font_ * 1.2f)) &&
        ImGui::IsWindowHovered())
      ImGui::SetTooltip("%s, %s: the same.\nThe scale is \xc2\xb1 the largest |A \xe2\x88\x92 B|.",
                        mode_ == Mode::Heads
                            ? "red: A is larger, blue: B is larger"
                            : "red: larger now than in the snapshot, blue: smaller now",
                        state.ui.theme == Theme::Dark ? "dark grey" : "white");
  }

  void draw_heatmap(const AppState& state, PanelContext& context, ImDrawList* list,
                    const HeatmapSpec& spec, const view::HeatmapGeometry& g, int which) {
    if (g.grid.empty()) return;
    const Palette& colours = palette(state.ui.theme);
    const Matrix& values = *spec.values;
    const int rows = static_cast<int>(values.rows()), cols = static_cast<int>(values.cols());
    // 1. The cells, the lines between them and the numbers (the difference's texture holds
    // signed numbers, not marked cells: its masked cells are hatched over it).
    const CellSource cells{.values = &values,
                           .masked_scores = spec.masked,
                           .colormap = spec.colormap,
                           .low = spec.low,
                           .high = spec.high,
                           .texture = spec.texture,
                           .block = spec.block,
                           .texture_marks_hatched = !spec.signed_values};
    CellDrawing drawing{.numbers = g.show_values && state.ui.show_cell_values};
    if (drawing.numbers) {  // a little smaller than the labels: three heatmaps share the room
      const float widest = ImGui::CalcTextSize(spec.signed_values ? "-0.00" : "0.00").x;
      drawing.number_size =
          font_ * std::min(kValueScale, (g.cell_w - 6.0f) / std::max(1.0f, widest));
    }
    draw_heatmap_cells(list, context, state.ui.theme, g, cells, drawing);
    // 3. Labels: queries on the left (when this heatmap has them), keys above.
    const int hovered_row = spec.current_tokens || which == 1 ? hovered_query(state, rows) : -1;
    const int hovered_column = spec.current_tokens || which == 1 ? hovered_key(state, cols) : -1;
    const int selected = spec.current_tokens || which == 1 ? state.selection.query : -1;
    if (spec.row_tokens) {
      label_tokens_ += rows;
      const int stride = label_stride(g.cell_h, font_);
      // Half a line of room above and below, for the first and last labels of small rows.
      list->PushClipRect(ImVec2(g.row_labels.x, g.row_labels.y - font_ * 0.5f),
                         ImVec2(g.row_labels.right(), g.row_labels.bottom() + font_ * 0.5f), true);
      for (int i = 0; i < rows; ++i) {
        if (i % stride != 0 && i != selected && i != hovered_row) continue;
        ++labelled_;
        const char* text =
            state.frame.visual_text((*spec.row_tokens)[static_cast<std::size_t>(i)].text);
        const ImVec2 size = ImGui::CalcTextSize(text);
        const ImU32 colour = i == hovered_row ? colours.highlight
                                              : (i == selected ? colours.selection : colours.text);
        list->AddText(ImVec2(g.row_labels.right() - size.x,
                             g.grid.y + g.cell_h * (static_cast<float>(i) + 0.5f) - size.y * 0.5f),
                      colour, text);
      }
      list->PopClipRect();
    }
    if (spec.column_tokens) {
      const std::vector<Token>& columns = *spec.column_tokens;
      label_tokens_ += cols;
      const float extent = g.vertical_column_labels ? font_ : column_label_width(columns);
      const int stride = label_stride(g.cell_w, extent);
      list->PushClipRect(ImVec2(g.column_labels.x, g.column_labels.y),
                         ImVec2(g.column_labels.right(), g.column_labels.bottom() + 1), true);
      for (int j = 0; j < cols; ++j) {
        if (j % stride != 0 && j != hovered_column) continue;
        ++labelled_;
        const char* text = state.frame.visual_text(columns[static_cast<std::size_t>(j)].text);
        const ImVec2 size = ImGui::CalcTextSize(text);
        const ImU32 colour = j == hovered_column ? colours.highlight : colours.text;
        const float centre = g.grid.x + g.cell_w * (static_cast<float>(j) + 0.5f);
        if (g.vertical_column_labels)
          add_text_upwards(list, ImVec2(centre - size.y * 0.5f, g.column_labels.bottom() - size.y),
                           colour, text, g.column_labels.h);
        else
          list->AddText(ImVec2(centre - size.x * 0.5f, g.column_labels.bottom() - size.y), colour,
                        text);
      }
      list->PopClipRect();
    }
    // 4. The selected query's row, the hovered row or column, and the largest difference.
    const float thick = std::max(2.0f, font_ * 0.12f);
    if (selected >= 0) outline_heatmap_row(list, g, selected, colours.selection, thick);
    if (hovered_row >= 0 && hovered_row != selected)
      outline_heatmap_row(list, g, hovered_row, colours.highlight, thick);
    if (hovered_column >= 0)
      outline_heatmap_column(list, g, hovered_column, colours.highlight, thick);
    if (previous_cell_[0] >= 0 && previous_map_ != which && previous_cell_[0] < rows &&
        previous_cell_[1] < cols && (spec.current_tokens || which == 1) && pairs_cells_) {
      const view::Rect c = g.cell(previous_cell_[0], previous_cell_[1]);
      list->AddRect(ImVec2(c.x, c.y), ImVec2(c.right(), c.bottom()), colours.text, 0, 0, thick);
    }
    // 5. Hover and click (this frame's cell; the other heatmaps outline it next frame).
    const ImGuiIO& io = ImGui::GetIO();
    if (!ImGui::IsWindowHovered()) return;
    if (const auto cell = g.hit(io.MousePos.x, io.MousePos.y)) {
      hovered_cell_ = *cell;
      hovered_map_ = which;
      if (spec.current_tokens || which == 1) {
        state.frame.hovered_next = {Side::Query, (*cell)[0]};
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = (*cell)[0];
      }
    } else if ((spec.current_tokens || which == 1) &&
               g.row_labels.contains(io.MousePos.x, io.MousePos.y)) {
      const int i =
          std::clamp(static_cast<int>((io.MousePos.y - g.grid.y) / g.cell_h), 0, rows - 1);
      state.frame.hovered_next = {Side::Query, i};
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = i;
    } else if ((spec.current_tokens || which == 1) &&
               g.column_labels.contains(io.MousePos.x, io.MousePos.y)) {
      state.frame.hovered_next = {
          Side::Key,
          std::clamp(static_cast<int>((io.MousePos.x - g.grid.x) / g.cell_w), 0, cols - 1)};
    }
  }

  static int hovered_query(const AppState& state, int rows) {
    for (int i = 0; i < rows; ++i)
      if (state.highlights_query(i) && state.frame.hovered.side == Side::Query) return i;
    return -1;
  }
  static int hovered_key(const AppState& state, int cols) {
    for (int j = 0; j < cols; ++j)
      if (state.highlights_key(j) && state.frame.hovered.side == Side::Key) return j;
    return -1;
  }

  void draw_shape_note(const AppState& state, const view::Rect& slot, const Matrix& a,
                       const Matrix& b) const {
    const Palette& colours = palette(state.ui.theme);
    char text[320];
    std::snprintf(text, sizeof text,
                  "No difference to draw: the tokens changed.\n\nThe snapshot has %d \xc3\x97 %d "
                  "weights (queries \xc3\x97 keys), "
                  "now there are %d \xc3\x97 %d, so the cells no longer pair up.\n\nTake a new "
                  "snapshot to compare from here.",
                  static_cast<int>(a.rows()), static_cast<int>(a.cols()),
                  static_cast<int>(b.rows()), static_cast<int>(b.cols()));
    ImGui::SetCursorScreenPos(ImVec2(slot.x, slot.y + font_ * 0.5f));
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + slot.w);
    ImGui::PushStyleColor(ImGuiCol_Text, colours.highlight);
    ImGui::TextWrapped("%s", text);
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
  }

  void draw_centred_note(const AppState& state, const char* text) const {
    const Palette& colours = palette(state.ui.theme);
    const float width = std::min(ImGui::GetContentRegionAvail().x, font_ * 26.0f);
    const float indent = std::max(0.0f, (ImGui::GetContentRegionAvail().x - width) * 0.5f);
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + ImGui::GetContentRegionAvail().y * 0.3f);
    ImGui::Indent(indent);
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
    ImGui::TextWrapped("%s", text);
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    ImGui::Unindent(indent);
  }

  // The line (or lines) under the heatmaps: a warning when the words changed, the largest change
  // and the mean change (app/view/attention_difference.hpp).
  void compose_summary(const AppState& state, bool same_shape, bool same_words, const Matrix& a,
                       const Matrix& b) {
    summary_.parts = 0;
    if (!same_shape) return;  // the note in the third slot says it all
    const int i = difference_.largest_at[0], j = difference_.largest_at[1];
    summary_ = view::summarize_difference(
        difference_, same_words, mode_ == Mode::Snapshot,
        state.frame.visual_text(state.pipeline().target().tokens[static_cast<std::size_t>(i)].text),
        state.frame.visual_text(state.pipeline().keys().tokens[static_cast<std::size_t>(j)].text),
        a(i, j), b(i, j));
  }

  // One line when the parts fit across, else one line per part.
  int summary_lines(float width) const {
    if (summary_.parts == 0) return 0;
    float total = 0;
    for (int k = 0; k < summary_.parts; ++k)
      total += ImGui::CalcTextSize(summary_.text[k]).x + (k > 0 ? font_ * 1.5f : 0.0f);
    return total <= width ? 1 : summary_.parts;
  }

  void draw_summary(const AppState& state, ImVec2 at, float width) const {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const bool one_line = summary_lines(width) == 1;
    list->PushClipRect(
        at, ImVec2(at.x + width, at.y + font_ * 1.3f * static_cast<float>(summary_.parts)), true);
    ImVec2 p = at;
    for (int k = 0; k < summary_.parts; ++k) {
      list->AddText(p, summary_.warning[k] ? colours.highlight : colours.text_dim,
                    summary_.text[k]);
      if (one_line)
        p.x += ImGui::CalcTextSize(summary_.text[k]).x + font_ * 1.5f;
      else
        p.y += font_ * 1.3f;
    }
    list->PopClipRect();
  }

  void draw_cell_tooltip(const AppState& state, const Matrix& a, const Matrix& b, bool same_shape,
                         int head_a, int head_b) const {
    const int i = hovered_cell_[0], j = hovered_cell_[1];
    const bool in_a = hovered_map_ == 0;
    // Without a pairing, a cell of A is read from the snapshot's tokens and one of B from today's.
    const std::vector<Token>& queries =
        in_a && !same_shape ? snapshot_.query_tokens : state.pipeline().target().tokens;
    const std::vector<Token>& keys =
        in_a && !same_shape ? snapshot_.key_tokens : state.pipeline().keys().tokens;
    if (i >= static_cast<int>(queries.size()) || j >= static_cast<int>(keys.size())) return;
    char text[32];
    ImGui::BeginTooltip();
    ImGui::Text("query %d \"%s\" \xe2\x86\x92 key %d \"%s\"", view::shown_number(i),
                state.frame.visual_text(queries[static_cast<std::size_t>(i)].text),
                view::shown_number(j),
                state.frame.visual_text(keys[static_cast<std::size_t>(j)].text));
    ImGui::Separator();
    char name_a[48], name_b[48];
    if (mode_ == Mode::Heads) {
      std::snprintf(name_a, sizeof name_a, "A (head %d)", view::shown_number(head_a));
      std::snprintf(name_b, sizeof name_b, "B (head %d)", view::shown_number(head_b));
    } else {
      std::snprintf(name_a, sizeof name_a, "A (snapshot %s)", snapshot_.time);
      std::snprintf(name_b, sizeof name_b, "B (now)");
    }
    const auto masked = [&](const Matrix* scores) {
      return scores && i < scores->rows() && j < scores->cols() && view::is_masked((*scores)(i, j));
    };
    if (same_shape || in_a) {
      view::format_significant_into(text, sizeof text, a(i, j), 3);
      ImGui::Text("%s  \xce\xb1 = %s", name_a, masked(masked_a_) ? "0 (masked)" : text);
    }
    if (same_shape || !in_a) {
      view::format_significant_into(text, sizeof text, b(i, j), 3);
      ImGui::Text("%s  \xce\xb1 = %s", name_b, masked(masked_b_) ? "0 (masked)" : text);
    }
    if (same_shape) {
      format_signed(text, sizeof text, signed_difference(a(i, j), b(i, j)));
      ImGui::Text("%s = %s", difference_name(), text);
      if (mode_ == Mode::Snapshot &&
          (snapshot_.query_tokens[static_cast<std::size_t>(i)].text !=
               state.pipeline().target().tokens[static_cast<std::size_t>(i)].text ||
           snapshot_.key_tokens[static_cast<std::size_t>(j)].text !=
               state.pipeline().keys().tokens[static_cast<std::size_t>(j)].text))
        ImGui::TextDisabled(
            "the snapshot had other words here: \"%s\" \xe2\x86\x92 \"%s\"",
            state.frame.visual_text(snapshot_.query_tokens[static_cast<std::size_t>(i)].text),
            state.frame.visual_text(snapshot_.key_tokens[static_cast<std::size_t>(j)].text));
    } else {
      ImGui::TextDisabled("no A \xe2\x88\x92 B: the token counts differ");
    }
    ImGui::EndTooltip();
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Compare, ComparePanel);

}  // namespace attnviz::app
