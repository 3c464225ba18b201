// The Weights panel: every learnable number, editable with the mouse. On the left a head
// selector (shared with every view); beside it, side by side in one scrolling strip, the
// selected head's W_Q | W_K | W_V (and W_a, or W_1, W_2, v_a, for the general and additive
// scores), then W_O, then the embeddings X of the sentence's tokens. Dragging or typing a cell
// edits the scenario and every view follows on the same frame.
#include "app/panels/matrix_editor.hpp"
#include "app/panels/model_weights.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/view/memo.hpp"
#include "core/base/rng.hpp"
#include "core/figures/format.hpp"
#include "core/text/lexicon.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

namespace attnviz::app {
namespace {

// -----------------------------------------------------------------------------
// Labels (written into the caller's buffer; no allocation); rows, columns and heads counted from
// 1, as everywhere in the app (view::shown_number)
// -----------------------------------------------------------------------------

const char* no_label(const void*, int, char* buffer, int) {
  buffer[0] = '\0';
  return buffer;
}

class WeightsPanel;

// What the label functions read through MatrixGridSpec::label_context: W_O's d_v, the scenario
// (its dimension names), and for X's rows the panel and the state.
struct LabelContext {
  int d_v = 1;
  const Scenario* scenario = nullptr;
  const WeightsPanel* panel = nullptr;
  const AppState* state = nullptr;
};

// d_model dimensions: the scenario's names (or the lexicon's feature names), then numbers.
const char* feature_label(const void* context, int index, char* buffer, int size) {
  const auto* labels = static_cast<const LabelContext*>(context);
  const std::string_view name = labels && labels->scenario
                                    ? dimension_name(labels->scenario->one_layer(), index)
                                    : std::string_view();
  if (!name.empty())
    std::snprintf(buffer, static_cast<std::size_t>(size), "%.*s", static_cast<int>(name.size()),
                  name.data());
  else
    std::snprintf(buffer, static_cast<std::size_t>(size), "%d", view::shown_number(index));
  return buffer;
}

// How many of the first d_model dimensions have names (their columns are drawn wide).
int named_dimensions(const Scenario& scenario) {
  const std::size_t names = scenario.one_layer().dimension_names.empty()
                                ? kFeatureCount
                                : scenario.one_layer().dimension_names.size();
  return static_cast<int>(
      std::min(names, static_cast<std::size_t>(scenario.one_layer().config.d_model)));
}

// W_O's rows: the concatenated head outputs, "h2·3" = head 2, value dimension 3.
const char* concat_label(const void* context, int index, char* buffer, int size) {
  const int d_v = std::max(1, static_cast<const LabelContext*>(context)->d_v);
  std::snprintf(buffer, static_cast<std::size_t>(size), "h%d\xc2\xb7%d",
                view::shown_number(index / d_v), view::shown_number(index % d_v));
  return buffer;
}

float text_width(const char* text) {
  return ImGui::CalcTextSize(text).x;
}

float feature_labels_width(const LabelContext& labels) {
  char buffer[64];
  const int count = labels.scenario->one_layer().config.d_model;
  float width = text_width(number_label(nullptr, std::max(0, count - 1), buffer, sizeof buffer));
  for (int i = 0; i < named_dimensions(*labels.scenario); ++i)
    width = std::max(width, text_width(feature_label(&labels, i, buffer, sizeof buffer)));
  return width;
}

// -----------------------------------------------------------------------------
// Weights as flat row-major arrays (v_a is a row vector, the rest are matrices)
// -----------------------------------------------------------------------------

struct WeightView {
  const float* data = nullptr;
  int rows = 0, cols = 0;
  std::size_t size() const {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  }
};

// The head whose matrix `name` the selected head uses: under grouped-query attention W_K and W_V
// belong to the first head of its group (kv_source_head), which every head of the group edits.
int weight_head(const AttentionConfig& config, ParameterName name, int head) {
  const bool key_value = name == ParameterName::W_K || name == ParameterName::W_V;
  return key_value ? kv_source_head(config, head) : head;
}

WeightView weight_view(const Parameters& p, const AttentionConfig& config, ParameterName name,
                       int head) {
  head = weight_head(config, name, head);
  if (name == ParameterName::v_a) {
    const RowVector& v = p.heads[static_cast<std::size_t>(head)].v_a;  // (1, d_att)
    return {v.data(), 1, static_cast<int>(v.cols())};
  }
  const Matrix& m = parameter(p, name, head);
  return {m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols())};
}

float magnitude(const float* data, std::size_t size) {
  float largest = 0.0f;
  for (std::size_t i = 0; i < size; ++i) largest = std::max(largest, std::fabs(data[i]));
  return std::max(largest, 1e-6f);
}

// The grids, in the order they are drawn.
enum Slot { kWQ, kWK, kWV, kWa, kW1, kW2, kVa, kWO, kX, kSlotCount };

constexpr std::array<ParameterName, kX> kSlotParameter = {
    ParameterName::W_Q, ParameterName::W_K, ParameterName::W_V, ParameterName::W_a,
    ParameterName::W_1, ParameterName::W_2, ParameterName::v_a, ParameterName::W_O};

// -----------------------------------------------------------------------------
// The panel
// -----------------------------------------------------------------------------

class WeightsPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    // A trained model's per-head blocks and embeddings: app/panels/model_weights.hpp.
    if (state.pipeline().can(Capability::EditableModelWeights)) {
      model_weights_.draw(state, context);
      return;
    }
    if (!state.pipeline().can(Capability::EditableParameters)) {
      ImGui::TextDisabled("this model's weights are not editable here");
      return;
    }
    if (state.document.scenario().one_layer().parameters.heads.empty()) return;
    head_ = state.edited_head();

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    const float strip_w = draw_head_strip(state, context, origin, available.y);
    head_ = state.edited_head();  // a click may have changed it
    prepare_embeddings(state);
    update_limits(state);
    const float gap = std::round(font * 0.6f);

    ImGui::SetCursorScreenPos(ImVec2(origin.x + strip_w + gap, origin.y));
    const ImVec2 child_size(std::max(1.0f, available.x - strip_w - gap),
                            std::max(1.0f, available.y));
    ImGui::PushStyleVar(ImGuiStyleVar_ScrollbarSize, std::round(font * 0.8f));
    if (ImGui::BeginChild("##grids", child_size, false,
                          ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoBackground))
      draw_grids(state, context, child_size);
    ImGui::EndChild();
    ImGui::PopStyleVar();
  }

 private:
  MatrixEditor editor_;
  ModelWeights model_weights_;
  int head_ = 0;
  std::uint64_t randomize_count_ = 0;  // each Randomize draws from seed + this count

  std::array<MatrixGridSpec, kSlotCount> specs_{};
  std::array<bool, kSlotCount> shown_{};
  std::array<char[200], kSlotCount> tooltips_{};
  std::array<char[24], kSlotCount> titles_{};  // W_K and W_V: "W_K (kv 1)" when heads share them
  LabelContext labels_;                        // every grid's label_context

  // Colour scales (largest magnitude), recomputed when the scenario or the head changes.
  std::array<float, kSlotCount> limits_{};
  view::Memo<std::uint64_t, int> limits_of_;  // the document's version, the head

  // X before positional encoding: the target's tokens, then the source's in cross mode.
  Matrix x_rows_, x_scratch_;
  view::Memo<std::uint64_t, bool> x_of_;  // the result's version, positions on
  int x_target_rows_ = 0;
  float x_label_width_ = 0;
  int x_menu_row_ = -1;  // the token whose label menu is open

  // ---------------------------------------------------------------------------
  // Caches
  // ---------------------------------------------------------------------------

  const Token& token_of_row(const AppState& state, int row) const {
    return row < x_target_rows_
               ? state.pipeline().target().tokens[static_cast<std::size_t>(row)]
               : state.pipeline().keys().tokens[static_cast<std::size_t>(row - x_target_rows_)];
  }

  // The matrix editor's label callback (its type gives a buffer that this one does not need).
  static const char* token_label(const void* context, int index,
                                 char* buffer,  // NOLINT(readability-non-const-parameter)
                                 int size) {
    const auto* labels = static_cast<const LabelContext*>(context);
    (void)buffer;
    (void)size;
    return labels->state->frame.visual_text(
        labels->panel->token_of_row(*labels->state, index).text);
  }

  void prepare_embeddings(const AppState& state) {
    const bool positional =
        state.document.scenario().one_layer().positional == Positional::Sinusoidal;
    const bool changed = x_of_.changed(state.computed.version, positional);
    if (!changed && x_rows_.size() > 0) return;
    const Pipeline& p = state.pipeline();
    const bool cross = p.cross();
    x_target_rows_ = static_cast<int>(p.X_target().rows());
    const Eigen::Index d_model = p.X_target().cols();
    const Eigen::Index rows = p.X_target().rows() + (cross ? p.X_keys().rows() : 0);
    x_rows_.resize(rows, d_model);  // no allocation when the shape is unchanged
    if (!positional) {
      x_rows_.topRows(p.X_target().rows()) = p.X_target();
      if (cross) x_rows_.bottomRows(p.X_keys().rows()) = p.X_keys();
    } else {
      // The pipeline's X holds the positions; embed the tokens again without them.
      const int d = static_cast<int>(d_model);
      embed_tokens(p.target().tokens, d, state.document.scenario().one_layer().embeddings,
                   Positional::None, x_scratch_);
      x_rows_.topRows(x_scratch_.rows()) = x_scratch_;
      if (cross) {
        embed_tokens(p.keys().tokens, d, state.document.scenario().one_layer().embeddings,
                     Positional::None, x_scratch_);
        x_rows_.bottomRows(x_scratch_.rows()) = x_scratch_;
      }
    }
    x_label_width_ = 0;
    const float cap = ImGui::GetFontSize() * 7.0f;
    for (int r = 0; r < static_cast<int>(rows); ++r)
      x_label_width_ =
          std::min(cap, std::max(x_label_width_,
                                 text_width(state.frame.visual_text(token_of_row(state, r).text))));
    limits_of_.forget();  // X changed: its colour scale too
  }

  void update_limits(const AppState& state) {
    if (!limits_of_.changed(state.document.version(), head_)) return;
    for (int slot = 0; slot < kX; ++slot) {
      const Scenario& s = state.document.scenario();
      const WeightView w = weight_view(s.one_layer().parameters, s.one_layer().config,
                                       kSlotParameter[static_cast<std::size_t>(slot)], head_);
      limits_[static_cast<std::size_t>(slot)] = magnitude(w.data, w.size());
    }
    limits_[kX] = magnitude(x_rows_.data(), static_cast<std::size_t>(x_rows_.size()));
  }

  // ---------------------------------------------------------------------------
  // The head selector
  // ---------------------------------------------------------------------------

  float draw_head_strip(const AppState& state, PanelContext& context, ImVec2 origin, float height) {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const int heads =
        static_cast<int>(state.document.scenario().one_layer().parameters.heads.size());
    const float caption_h = std::round(font * 1.3f);
    const float button_h = std::round(font * 1.45f), spacing = std::round(font * 0.25f);
    const float help_h = std::round(font * 1.6f);
    const int fit = std::max(
        1, static_cast<int>((height - caption_h - help_h + spacing) / (button_h + spacing)));
    const bool compact = heads > fit;  // numbers only, in columns
    const int columns = compact ? (heads + fit - 1) / fit : 1;
    const float swatch = std::round(font * 0.55f);
    const float button_w = compact ? std::ceil(text_width("00")) + font * 1.0f
                                   : std::ceil(text_width("head 00")) + swatch + font * 1.1f;
    const float width =
        button_w * static_cast<float>(columns) + spacing * static_cast<float>(columns - 1);

    list->AddText(ImVec2(origin.x, origin.y + (caption_h - font) * 0.5f), colours.text_dim, "Head");
    char label[24];
    for (int h = 0; h < heads; ++h) {
      const int column = h / fit, row = h % fit;
      const ImVec2 p(origin.x + static_cast<float>(column) * (button_w + spacing),
                     origin.y + caption_h + static_cast<float>(row) * (button_h + spacing));
      ImGui::SetCursorScreenPos(p);
      ImGui::PushID(h);
      if (ImGui::InvisibleButton("##head", ImVec2(button_w, button_h))) context.selection.head = h;
      const bool hovered = ImGui::IsItemHovered();
      ImGui::PopID();
      const bool selected = h == head_;
      const ImU32 colour = head_colour(state.ui.theme, h);
      const ImVec2 q(p.x + button_w, p.y + button_h);
      const float rounding = ImGui::GetStyle().FrameRounding;
      if (selected) {
        list->AddRectFilled(p, q, colour, rounding);
      } else {
        list->AddRectFilled(p, q,
                            ImGui::GetColorU32(hovered ? ImGuiCol_ButtonHovered : ImGuiCol_FrameBg),
                            rounding);
        list->AddRect(p, q, ImGui::GetColorU32(ImGuiCol_Border), rounding);
        if (compact)  // the head's colour as a bar along the left edge
          list->AddRectFilled(ImVec2(p.x + 1.0f, p.y + 1.0f),
                              ImVec2(p.x + std::round(font * 0.22f), q.y - 1.0f), colour, rounding,
                              ImDrawFlags_RoundCornersLeft);
        else
          list->AddRectFilled(ImVec2(p.x + font * 0.35f, p.y + (button_h - swatch) * 0.5f),
                              ImVec2(p.x + font * 0.35f + swatch, p.y + (button_h + swatch) * 0.5f),
                              colour, 2.0f);
      }
      std::snprintf(label, sizeof label, compact ? "%d" : "head %d", view::shown_number(h));
      const view::Rgba8 on_colour =
          view::text_colour_on({static_cast<std::uint8_t>(colour >> IM_COL32_R_SHIFT),
                                static_cast<std::uint8_t>(colour >> IM_COL32_G_SHIFT),
                                static_cast<std::uint8_t>(colour >> IM_COL32_B_SHIFT), 255});
      const ImU32 text =
          selected ? IM_COL32(on_colour.r, on_colour.g, on_colour.b, 255) : colours.text;
      const float text_x = selected || compact ? p.x + (button_w - text_width(label)) * 0.5f +
                                                     (compact && !selected ? font * 0.1f : 0.0f)
                                               : p.x + font * 0.35f + swatch + font * 0.35f;
      list->AddText(ImVec2(std::round(text_x), std::round(p.y + (button_h - font) * 0.5f)), text,
                    label);
      if (hovered)
        ImGui::SetTooltip("head %d: edit its W_Q, W_K, W_V (every view shows the selected head)",
                          view::shown_number(h));
    }
    // How to edit, one hover away.
    const ImVec2 help(origin.x, origin.y + height - help_h);
    ImGui::SetCursorScreenPos(help);
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(font * 30.0f);
      ImGui::TextUnformatted(
          "Every cell is a number the model uses; colour shows its sign and size (blue negative, "
          "red positive, scaled to each matrix's largest value).");
      ImGui::BulletText(
          "Drag a cell sideways to change it; hold Shift for fine steps; Esc undoes the drag.");
      ImGui::BulletText("Double-click or Ctrl+click a cell to type a value.");
      ImGui::BulletText(
          "Click a matrix's name (or right-click it) for randomize, identity, zero, scale and "
          "reset.");
      ImGui::BulletText(
          "In X, hover a token to find it in every view; click to make it the query; right-click "
          "to reset it.");
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    return width;
  }

  // ---------------------------------------------------------------------------
  // The grids
  // ---------------------------------------------------------------------------

  void build_specs(const AppState& state) {
    const Scenario& s = state.document.scenario();
    const AttentionConfig& c = s.one_layer().config;
    const Theme theme = state.ui.theme;
    labels_ = {c.d_v, &s, this, &state};
    shown_.fill(false);
    const auto weights = [&](Slot slot, const char* title, LabelFunction rows,
                             LabelFunction columns, float row_width, int wide, bool per_head) {
      const WeightView w = weight_view(s.one_layer().parameters, c, kSlotParameter[slot], head_);
      MatrixGridSpec& spec = specs_[slot];
      spec = {};
      spec.id = title;
      spec.title = title;
      spec.title_tooltip = tooltips_[slot];
      spec.values = w.data;
      spec.rows = w.rows;
      spec.cols = w.cols;
      spec.limit = limits_[slot];
      spec.colormap = state.ui.diverging();
      spec.row_label = rows;
      spec.column_label = columns;
      spec.label_context = &labels_;
      spec.row_label_width = row_width;
      spec.wide_columns = wide;
      spec.accent = per_head ? head_colour(theme, head_) : 0;
      shown_[slot] = true;
    };
    char buffer[32];
    const float features_w = feature_labels_width(labels_);
    const float k_rows_w = text_width(number_label(nullptr, c.d_k - 1, buffer, sizeof buffer));
    const int named = named_dimensions(s);
    weights(kWQ, "W_Q", feature_label, number_label, features_w, 0, true);
    // Under grouped-query attention W_K and W_V are the group's: "W_K (kv 1)", as for a model.
    const int group = head_ / std::max(1, c.heads / kv_group_count(c));
    for (const auto& [slot, name] : {std::pair{kWK, "W_K"}, std::pair{kWV, "W_V"}}) {
      if (shares_keys(c))
        std::snprintf(titles_[slot], sizeof titles_[slot], "%s (kv %d)", name,
                      view::shown_number(group));
      else
        std::snprintf(titles_[slot], sizeof titles_[slot], "%s", name);
      weights(slot, titles_[slot], feature_label, number_label, features_w, 0, true);
    }
    std::snprintf(tooltips_[kWQ], sizeof tooltips_[kWQ],
                  "W_Q (d_model \xc3\x97 d_k = %d \xc3\x97 %d), head %d: turns each token's "
                  "embedding into its query, Q = X\xc2\xb7W_Q",
                  c.d_model, c.d_k, view::shown_number(head_));
    // Who uses W_K and W_V: this head, or (grouped-query) every head of its group.
    char users[80];
    const int per_group = c.heads / kv_group_count(c), first = group * per_group;
    if (shares_keys(c))
      std::snprintf(users, sizeof users, "kv group %d, shared by heads %d\xe2\x80\x93%d",
                    view::shown_number(group), view::shown_number(first),
                    view::shown_number(first + per_group - 1));
    else
      std::snprintf(users, sizeof users, "head %d", view::shown_number(head_));
    std::snprintf(tooltips_[kWK], sizeof tooltips_[kWK],
                  "W_K (d_model \xc3\x97 d_k = %d \xc3\x97 %d), %s: turns each token's "
                  "embedding into its key, K = X\xc2\xb7W_K",
                  c.d_model, c.d_k, users);
    std::snprintf(tooltips_[kWV], sizeof tooltips_[kWV],
                  "W_V (d_model \xc3\x97 d_v = %d \xc3\x97 %d), %s: turns each token's "
                  "embedding into its value, V = X\xc2\xb7W_V",
                  c.d_model, c.d_v, users);
    if (c.compatibility == Compatibility::General) {
      weights(kWa, "W_a", number_label, number_label, k_rows_w, 0, true);
      std::snprintf(tooltips_[kWa], sizeof tooltips_[kWa],
                    "W_a (d_k \xc3\x97 d_k = %d \xc3\x97 %d), head %d: the general score compares "
                    "query and key through it, "
                    "score = q\xc2\xb7W_a\xc2\xb7k\xe1\xb5\x80",
                    c.d_k, c.d_k, view::shown_number(head_));
    } else if (c.compatibility == Compatibility::Additive) {
      weights(kW1, "W_1", number_label, number_label, k_rows_w, 0, true);
      weights(kW2, "W_2", number_label, number_label, k_rows_w, 0, true);
      weights(kVa, "v_a", no_label, number_label, 0, 0, true);
      std::snprintf(tooltips_[kW1], sizeof tooltips_[kW1],
                    "W_1 (d_k \xc3\x97 d_att = %d \xc3\x97 %d), head %d: projects the query inside "
                    "the additive score "
                    "v_a\xc2\xb7tanh(q\xc2\xb7W_1 + k\xc2\xb7W_2)",
                    c.d_k, c.d_att, view::shown_number(head_));
      std::snprintf(tooltips_[kW2], sizeof tooltips_[kW2],
                    "W_2 (d_k \xc3\x97 d_att = %d \xc3\x97 %d), head %d: projects the key inside "
                    "the additive score "
                    "v_a\xc2\xb7tanh(q\xc2\xb7W_1 + k\xc2\xb7W_2)",
                    c.d_k, c.d_att, view::shown_number(head_));
      std::snprintf(
          tooltips_[kVa], sizeof tooltips_[kVa],
          "v_a (d_att = %d), head %d: weighs the additive score's %d hidden units into one number",
          c.d_att, view::shown_number(head_), c.d_att);
    }
    const float concat_w =
        text_width(concat_label(&labels_, c.heads * c.d_v - 1, buffer, sizeof buffer));
    weights(kWO, "W_O", concat_label, feature_label, concat_w, named, false);
    std::snprintf(
        tooltips_[kWO], sizeof tooltips_[kWO],
        "W_O (heads\xc2\xb7"
        "d_v \xc3\x97 d_model = %d \xc3\x97 %d): mixes the heads' joined outputs back into "
        "d_model dimensions, output = concat\xc2\xb7W_O",
        c.heads * c.d_v, c.d_model);

    // X: the tokens' embeddings.
    MatrixGridSpec& x = specs_[kX];
    x = {};
    x.id = "X";
    x.title = "X (embeddings)";
    x.title_tooltip = tooltips_[kX];
    x.values = x_rows_.data();
    x.rows = static_cast<int>(x_rows_.rows());
    x.cols = static_cast<int>(x_rows_.cols());
    x.limit = limits_[kX];
    x.colormap = state.ui.diverging();
    x.row_label = token_label;
    x.column_label = feature_label;
    x.label_context = &labels_;
    x.row_label_width = x_label_width_;
    x.wide_columns = std::min(x.cols, named);
    x.divider_row = state.pipeline().cross() ? x_target_rows_ : -1;
    x.selected_row = state.selection.query;
    x.editable = x.cols == c.d_model;
    if (state.frame.hovered.valid()) {
      const int i = state.frame.hovered.index;
      if (!state.pipeline().cross())
        x.highlight_row = state.highlights_query(i) ? i : -1;
      else if (state.frame.hovered.side == Side::Query)
        x.highlight_row = state.highlights_query(i) ? i : -1;
      else
        x.highlight_row = state.highlights_key(i) ? x_target_rows_ + i : -1;
    }
    std::snprintf(
        tooltips_[kX], sizeof tooltips_[kX],
        "X (tokens \xc3\x97 d_model = %d \xc3\x97 %d): each token's embedding, before positional "
        "encoding%s. "
        "An edit is kept as an override for that word.",
        x.rows, x.cols,
        state.pipeline().cross() ? "; target tokens above the line, source tokens below" : "");
    shown_[kX] = x.rows > 0 && x.cols > 0;
  }

  void draw_grids(const AppState& state, PanelContext& context, ImVec2 size) {
    build_specs(state);
    std::vector<MatrixEditor::StripGrid> grids;  // per head | all heads (W_O) | tokens (X)
    std::vector<Slot> slots;
    for (int slot = 0; slot < kSlotCount; ++slot)
      if (shown_[static_cast<std::size_t>(slot)]) {
        grids.push_back({&specs_[static_cast<std::size_t>(slot)], slot == kWO || slot == kX});
        slots.push_back(static_cast<Slot>(slot));
      }
    editor_.begin_frame(state.ui.theme, context.bold_font);
    editor_.draw_strip(
        grids, size, [&](int index, const MatrixGridSpec& spec, const MatrixGridEvents& events) {
          handle(state, context, slots[static_cast<std::size_t>(index)], spec, events);
        });
    state.frame.redraw_within(editor_.next_change_in());
  }

  // ---------------------------------------------------------------------------
  // Edits
  // ---------------------------------------------------------------------------

  void handle(const AppState& state, PanelContext& context, Slot slot, const MatrixGridSpec& spec,
              const MatrixGridEvents& events) {
    if (slot == kX) {
      handle_embeddings(state, context, spec, events);
      return;
    }
    const ParameterName name = kSlotParameter[slot];
    const int head = weight_head(state.document.scenario().one_layer().config, name, head_);
    if (events.edited)
      context.edits.push(edits::set_weight(name, head, events.row, events.col, events.value));
    if (editor_.begin_menu(spec, events.open_menu)) {
      if (name == ParameterName::W_O)
        ImGui::TextDisabled("W_O (all heads)");
      else
        ImGui::TextDisabled("%s, head %d", spec.title, view::shown_number(head));
      ImGui::Separator();
      std::optional<MatrixAction> action;
      if (ImGui::MenuItem("Randomize")) action = MatrixAction::Randomize;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("new values drawn from a new seed");
      if (ImGui::MenuItem("Identity-like")) action = MatrixAction::Identity;
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("1 on the diagonal of the top-left square, 0 elsewhere");
      if (ImGui::MenuItem("Zero")) action = MatrixAction::Zero;
      if (ImGui::MenuItem("Scale \xc3\x97 0.5")) action = MatrixAction::Half;
      if (ImGui::MenuItem("Scale \xc3\x97 2")) action = MatrixAction::Double;
      ImGui::Separator();
      if (ImGui::MenuItem("Reset")) action = MatrixAction::Reset;
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "back to the values the scenario had when it was opened (new cells: from its seed)");
      editor_.end_menu();
      if (action) apply_to_weights(state, context, name, *action);
    }
  }

  void apply_to_weights(const AppState& state, PanelContext& context, ParameterName name,
                        MatrixAction action) {
    // Each Randomize draws from the seed plus a count, so that it draws new values every time.
    const std::uint64_t seed = state.document.scenario().one_layer().seed +
                               (action == MatrixAction::Randomize ? ++randomize_count_ : 0);
    context.edits.push(edits::apply_to_matrix(
        name, weight_head(state.document.scenario().one_layer().config, name, head_), action,
        seed));
  }

  void handle_embeddings(const AppState& state, PanelContext& context, const MatrixGridSpec& spec,
                         const MatrixGridEvents& events) {
    const bool cross = state.pipeline().cross();
    if (events.hovered_row >= 0)
      state.frame.hovered_next =
          events.hovered_row < x_target_rows_
              ? TokenRef{Side::Query, events.hovered_row}
              : TokenRef{cross ? Side::Key : Side::Query, events.hovered_row - x_target_rows_};
    if (events.label_clicked >= 0 && events.label_clicked < x_target_rows_)
      context.selection.query = events.label_clicked;
    if (events.label_hovered >= 0) label_tooltip(state, events.label_hovered);

    if (events.edited && spec.editable && events.row < x_rows_.rows() &&
        events.col < x_rows_.cols()) {
      const auto shown = x_rows_.row(events.row);  // (d_model)
      context.edits.push(edits::set_embedding_value(token_of_row(state, events.row), events.col,
                                                    events.value, {shown.begin(), shown.end()}));
      x_rows_(events.row, events.col) = events.value;  // shown at once; rebuilt after the recompute
    }

    // The row menu: reset one word.
    if (events.label_menu >= 0) {
      x_menu_row_ = events.label_menu;
      ImGui::OpenPopup("##token menu");
    }
    if (ImGui::BeginPopup("##token menu")) {
      if (x_menu_row_ >= 0 && x_menu_row_ < x_rows_.rows()) {
        const Token& token = token_of_row(state, x_menu_row_);
        ImGui::TextDisabled("\"%s\"", state.frame.visual_text(token.text));
        ImGui::Separator();
        const EmbeddingOverrides& overrides = state.document.scenario().one_layer().embeddings;
        const bool has_override = overrides.contains(token.text) || overrides.contains(token.key);
        if (ImGui::MenuItem("Reset to its embedding when opened", nullptr, false,
                            has_override && spec.editable))
          context.edits.push(edits::reset_embeddings({&token}));
        if (!has_override) ImGui::TextDisabled("(not edited)");
      }
      ImGui::EndPopup();
    }

    if (editor_.begin_menu(spec, events.open_menu)) {
      ImGui::TextDisabled("X: the embeddings of these tokens");
      ImGui::Separator();
      std::optional<MatrixAction> action;
      if (ImGui::MenuItem("Randomize", nullptr, false, spec.editable))
        action = MatrixAction::Randomize;
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("new values in [-0.5, 0.5), the same for the same word");
      if (ImGui::MenuItem("One-hot", nullptr, false, spec.editable))
        action = MatrixAction::Identity;
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("token i gets 1 in dimension i and 0 elsewhere");
      if (ImGui::MenuItem("Zero", nullptr, false, spec.editable)) action = MatrixAction::Zero;
      if (ImGui::MenuItem("Scale \xc3\x97 0.5", nullptr, false, spec.editable))
        action = MatrixAction::Half;
      if (ImGui::MenuItem("Scale \xc3\x97 2", nullptr, false, spec.editable))
        action = MatrixAction::Double;
      ImGui::Separator();
      if (ImGui::MenuItem("Reset (embeddings as opened)", nullptr, false, spec.editable))
        action = MatrixAction::Reset;
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("these words go back to their lexicon or hashed embeddings");
      editor_.end_menu();
      if (action) apply_to_embeddings(state, context, *action);
    }
  }

  void apply_to_embeddings(const AppState& state, PanelContext& context, MatrixAction action) {
    const int rows = static_cast<int>(x_rows_.rows()), cols = static_cast<int>(x_rows_.cols());
    std::vector<const Token*> tokens;  // (rows)
    tokens.reserve(static_cast<std::size_t>(rows));
    for (int r = 0; r < rows; ++r) tokens.push_back(&token_of_row(state, r));
    if (action == MatrixAction::Reset) {
      context.edits.push(edits::reset_embeddings(tokens));
      return;
    }
    const std::uint64_t stream_seed = state.document.scenario().one_layer().seed +
                                      (action == MatrixAction::Randomize ? ++randomize_count_ : 0);
    Matrix next = x_rows_;
    for (int r = 0; r < rows; ++r) {
      const std::uint64_t stream = rng::combine(stream_seed, rng::hash(token_of_row(state, r).key));
      for (int c = 0; c < cols; ++c) {
        float& v = next(r, c);
        switch (action) {
          case MatrixAction::Randomize:
            v = 0.5f * rng::value(stream, static_cast<std::uint64_t>(c));
            break;
          case MatrixAction::Identity:
            v = r == c ? 1.0f : 0.0f;
            break;
          case MatrixAction::Zero:
            v = 0.0f;
            break;
          case MatrixAction::Half:
            v *= 0.5f;
            break;
          case MatrixAction::Double:
            v = std::clamp(v * 2.0f, -FLT_MAX, FLT_MAX);
            break;
          case MatrixAction::Reset:
            break;
        }
      }
    }
    context.edits.push(edits::set_embeddings(tokens, next));
  }

  void label_tooltip(const AppState& state, int row) const {
    const bool source = row >= x_target_rows_;
    const int index = source ? row - x_target_rows_ : row;
    const Token& token = token_of_row(state, row);
    const auto& sources =
        source ? state.pipeline().key_sources() : state.pipeline().target_sources();
    const EmbeddingSource from = static_cast<std::size_t>(index) < sources.size()
                                     ? sources[static_cast<std::size_t>(index)]
                                     : EmbeddingSource::Hashed;
    const char* origin = from == EmbeddingSource::Override ? "edited (an override in the scenario)"
                         : from == EmbeddingSource::Lexicon
                             ? "from the teaching lexicon"
                             : "derived from the word itself (not in the lexicon)";
    ImGui::BeginTooltip();
    ImGui::Text("\"%s\": %s %d", state.frame.visual_text(token.text),
                source ? "source token" : (state.pipeline().cross() ? "target token" : "token"),
                view::shown_number(index));
    ImGui::Text("embedding %s", origin);
    ImGui::TextDisabled(source ? "right-click to reset"
                               : "click: make it the query \xc2\xb7 right-click: reset");
    ImGui::EndTooltip();
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Weights, WeightsPanel);

}  // namespace attnviz::app
