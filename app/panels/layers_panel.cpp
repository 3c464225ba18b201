// The Across layers view (model mode): what the layers do together, for the text as it is.
//   Logit lens   each layer's residual stream read out as if it were the last: the token it
//                would predict at each position, shaded by its probability (the last row is the
//                model's own prediction);
//   Rollout      attention rollout (Abnar & Zuidema, 2020) after the selected layer: how much
//                each position draws on each input token, through attention and the residual;
//   Residual     the residual stream's size ‖x‖ at the selected token, at the input and after
//                each layer.
// All three come from core/models/across_layers.hpp, computed when the view is shown and the
// model has run again.
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/view/memo.hpp"
#include "core/figures/format.hpp"
#include "core/models/across_layers.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

// The lens reads every layer's stream through the unembedding at every position, on the UI
// thread: for a large model on a long text that is seconds of work, not a frame's. Past this many
// multiply-adds (some tens of milliseconds here) it is not computed (the view says so).
constexpr double kMostLensWork = 2e8;

// The part shown, saved in the view state as "layers_view" (written when not the lens).
enum class Section { Lens, Rollout, Residual };
constexpr std::array<std::string_view, 3> kSectionNames = {"lens", "rollout", "residual"};
const ViewSetting<Section> kSection{
    "layers_view", 120, Section::Lens,
    [](const Json& value, const std::string& path, JsonReader&, const Section&) {
      return static_cast<Section>(
          view_json::one_of(value, path, kSectionNames, "\"lens\", \"rollout\" or \"residual\""));
    },
    [](const Section& section) {
      return section == Section::Lens
                 ? OrderedJson()
                 : OrderedJson(std::string(kSectionNames[static_cast<std::size_t>(section)]));
    }};

class LayersPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    // The panel host shows this view for a run with a residual stream that predicts (its needs
    // in core/figures/views.hpp): a trained model's forward pass holds every layer's stream.
    const Run* model = &state.pipeline().current();
    if (!model->trained_forward() || !model->trained_model()) return;
    section_ = static_cast<int>(kSection.in(state.ui.views));
    ImGui::RadioButton("Logit lens", &section_, 0);
    ImGui::SameLine();
    ImGui::RadioButton("Rollout", &section_, 1);
    ImGui::SameLine();
    ImGui::RadioButton("Residual stream", &section_, 2);
    kSection.in(context.ui.views) = static_cast<Section>(section_);
    update(*model);
    if (section_ == 0) draw_lens(state, *model);
    if (section_ == 1) draw_rollout(state, context, *model);
    if (section_ == 2) draw_residual(state, context, *model);
  }

 private:
  int section_ = 0;                             // kSection, as the radio buttons take it
  view::Memo<std::uint64_t, int> computed_of_;  // the model's run, the section
  bool lens_too_large_ = false;
  // The lens opens on its last positions (the prediction's): asked for a few frames, as the
  // table's width is known only once it has been laid out.
  int scroll_to_last_ = 3;
  std::vector<std::vector<LensPrediction>> lens_;  // (n_layers) × (n)
  std::vector<Matrix> rollout_;                    // per layer (n, n)
  Matrix norms_;                                   // (n_layers + 1, n)
  render::MatrixStackTexture rollout_texture_;

  void update(const Run& model) {
    if (!computed_of_.changed(model.run_count(), section_)) return;
    scroll_to_last_ = 3;
    const TransformerForward& forward = *model.trained_forward();
    const TransformerConfig& c = model.trained_model()->transformer.config();
    if (section_ == 0) {
      const double work =
          static_cast<double>(c.n_layers) * forward.size() * c.vocab_size * c.d_model;
      lens_too_large_ = work > kMostLensWork;
      if (lens_too_large_)
        lens_.clear();
      else
        lens_ = logit_lens(forward);
    } else if (section_ == 1) {
      rollout_ = attention_rollout(forward);
      std::vector<const Matrix*> stack;
      for (const Matrix& m : rollout_) stack.push_back(&m);
      rollout_texture_.update(stack, model.run_count());
    } else {
      norms_ = residual_norms(forward);
    }
  }

  void draw_lens(const AppState& state, const Run& model) {
    text_wrapped_at_spaces(
        model.can(Capability::FillsMask)
            ? "Each row reads a layer's residual stream as if it were the last layer's, through "
              "the masked-language-model head: the token it would put at each position, darker "
              "the surer (at a [MASK], its guess for the hidden word). The last row is the "
              "model's own guess."
            : "Each row reads a layer's residual stream as if it were the last layer's: the token "
              "it would predict next at each position, darker the surer. The last row is the "
              "model's own prediction.",
        ImGui::GetContentRegionAvail().x, true);
    if (lens_too_large_) {
      text_wrapped_at_spaces(
          "This model is too large for the lens on a text this long: shorten the text.",
          ImGui::GetContentRegionAvail().x, true);
      return;
    }
    const auto& tokens = model.model_tokens();
    const int n = static_cast<int>(tokens.size());
    const int layers = static_cast<int>(lens_.size());
    const float font = ImGui::GetFontSize();
    const Palette& colours = palette(state.ui.theme);
    // An ImGui table has at most 64 columns: a longer text shows its last 63 positions (the
    // prediction's end), after the layers' names.
    constexpr int kMostPositions = 63;
    const int first = std::max(0, n - kMostPositions);
    if (first > 0) ImGui::TextDisabled("the last %d of %d positions", n - first, n);
    if (!ImGui::BeginTable("##lens", n - first + 1,
                           ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                               ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
      return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("after", ImGuiTableColumnFlags_WidthFixed, font * 4.5f);
    for (int i = first; i < n; ++i)
      ImGui::TableSetupColumn(state.frame.visual_text(tokens[static_cast<std::size_t>(i)].shown),
                              ImGuiTableColumnFlags_WidthFixed, font * 4.0f);
    ImGui::TableHeadersRow();
    for (int l = 0; l < layers; ++l) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::Text("layer %d", l + 1);
      for (int i = first; i < n; ++i) {
        ImGui::TableSetColumnIndex(i - first + 1);
        const LensPrediction& p = lens_[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)];
        const float shade = std::clamp(p.probability, 0.0f, 1.0f);
        ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg,
                               with_alpha(colours.highlight, 0.08f + 0.6f * shade));
        const std::string shown =  // a dash where the numbers overflowed: no prediction
            p.token < 0 ? std::string("\xe2\x80\x94")
                        : state.frame.visual_text(model.trained_model()->tokenizer.shown(p.token));
        ImGui::TextUnformatted(fit_text(shown, font * 3.8f).c_str());

        if (ImGui::IsItemHovered()) {
          ImGui::SetTooltip("after layer %d, at \"%s\": \"%s\" (%s)", l + 1,
                            state.frame.visual_text(tokens[static_cast<std::size_t>(i)].shown),
                            shown.c_str(), view::format_number(p.probability, 2).c_str());
          state.frame.hovered_next = {Side::Query, i};
        }
      }
    }
    if (scroll_to_last_ > 0) {  // the table's own window: its far right
      ImGui::SetScrollX(ImGui::GetScrollMaxX());
      --scroll_to_last_;
    }
    ImGui::EndTable();
    state.frame.layout.labels_of(view::ViewId::Layers).add(n, n - first, font, n * 4 > 40);
  }

  void draw_rollout(const AppState& state, PanelContext& context, const Run& model) {
    const int layers = static_cast<int>(rollout_.size());
    if (layers == 0) return;
    int layer = std::clamp(state.selection.layer, 0, layers - 1);
    const float font = ImGui::GetFontSize();
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    ImGui::TextUnformatted("after layer");
    ImGui::SameLine();
    if (draw_layer_combo("##rollout_layer", layers, layer)) context.selection.layer = layer;
    // The colour scale at the right of the line: a share of the row, 0 to 1.
    ImGui::SameLine();
    const float scale_w = std::min(font * 8.0f, ImGui::GetContentRegionAvail().x - font * 2.5f);
    if (scale_w >= font * 2.0f) {
      const ImVec2 at = ImGui::GetCursorScreenPos();
      draw_colour_scale(list, ImVec2(at.x + font * 1.0f, at.y + ImGui::GetStyle().FramePadding.y),
                        scale_w, state.ui.colormap, "1", colours.text_dim, colours.text_dim);
      state.frame.values.set("rollout.colour_scale", 1);
    }
    ImGui::NewLine();
    text_wrapped_at_spaces(
        "rows: each position \xc2\xb7 columns: the input tokens it draws on, through attention "
        "and the residual (each row sums to 1)",
        ImGui::GetContentRegionAvail().x, true);
    const auto& tokens = model.model_tokens();
    const int n = static_cast<int>(tokens.size());
    // Names at the left of the rows and under the columns (turned): every one when the cells
    // are a line tall, else every `stride`-th, so that they do not run into each other.
    const float label_w = font * 5.0f, label_h = font * 4.0f;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const float side =
        std::max(font * 4.0f, std::min(available.x - label_w, available.y - label_h));
    const float cell = side / static_cast<float>(n);
    const int stride = std::max(1, static_cast<int>(std::ceil(font * 0.95f / cell)));
    const ImVec2 p0(origin.x + label_w, origin.y), p1(p0.x + side, p0.y + side);
    if (context.heatmaps.ok())
      context.heatmaps.draw(list, rollout_texture_, layer, p0, p1, state.ui.colormap, 0.0f, 1.0f);
    int labelled = 0;
    const float text_h = ImGui::GetTextLineHeight();
    for (int i = 0; i < n; i += stride) {
      const std::string name =
          fit_label(state.frame.visual_text, tokens[static_cast<std::size_t>(i)].shown,
                    label_w - font * 0.3f);
      const float middle = cell * (static_cast<float>(i) + 0.5f);
      list->AddText(ImVec2(origin.x, p0.y + middle - text_h * 0.5f), colours.text, name.c_str());
      const std::string column =
          fit_label(state.frame.visual_text, tokens[static_cast<std::size_t>(i)].shown,
                    label_h - font * 0.3f);
      // Turned to read upwards, its last letter just under the column.
      add_vertical_text(list, ImVec2(p0.x, p1.y + font * 0.2f),
                        ImVec2(p0.x + middle - text_h * 0.5f, p1.y + font * 0.2f), colours.text,
                        column.c_str());
      ++labelled;
    }
    state.frame.layout.labels_of(view::ViewId::Layers).add(n, labelled, font, false);
    state.frame.values.set("rollout.labelled", labelled);
    ImGui::Dummy(ImVec2(label_w + side, side + label_h));
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (ImGui::IsItemHovered() && mouse.x >= p0.x && mouse.y >= p0.y && mouse.x < p1.x &&
        mouse.y < p1.y) {
      const int i = std::min(n - 1, static_cast<int>((mouse.y - p0.y) / cell));
      const int j = std::min(n - 1, static_cast<int>((mouse.x - p0.x) / cell));
      ImGui::SetTooltip(
          "after layer %d, \"%s\" draws %s on input \"%s\"", layer + 1,
          state.frame.visual_text(tokens[static_cast<std::size_t>(i)].shown),
          view::format_number(rollout_[static_cast<std::size_t>(layer)](i, j), 2).c_str(),
          state.frame.visual_text(tokens[static_cast<std::size_t>(j)].shown));
      state.frame.hovered_next = {Side::Query, i};
    }
  }

  void draw_residual(const AppState& state, PanelContext& context, const Run& model) {
    const auto& tokens = model.model_tokens();
    const int n = static_cast<int>(tokens.size());
    const int query = std::clamp(state.selection.query, 0, n - 1);
    draw_query_selector(state, context, "##residual_query", 8.0f, 0.4f);
    ImGui::SameLine();
    ImGui::TextDisabled("\xe2\x80\x96x\xe2\x80\x96 of the residual stream, layer by layer");
    const float font = ImGui::GetFontSize();
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const int rows = static_cast<int>(norms_.rows());
    const float largest = std::max(1e-6f, norms_.col(query).maxCoeff());
    const float label_w = font * 5.0f;
    const float bar_w =
        std::max(font * 4.0f, ImGui::GetContentRegionAvail().x - label_w - font * 4.0f);
    for (int r = 0; r < rows; ++r) {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float line = ImGui::GetTextLineHeightWithSpacing();
      char label[32];
      if (r == 0)
        std::snprintf(label, sizeof label, "input");
      else
        std::snprintf(label, sizeof label, "layer %d", r);
      list->AddText(p, colours.text_dim, label);
      const float value = norms_(r, query);
      list->AddRectFilled(ImVec2(p.x + label_w, p.y + 2.0f),
                          ImVec2(p.x + label_w + bar_w * value / largest, p.y + line - 3.0f),
                          colours.highlight);
      const std::string number = view::format_number(value, 1);
      list->AddText(ImVec2(p.x + label_w + bar_w + font * 0.4f, p.y), colours.text, number.c_str());
      ImGui::Dummy(ImVec2(label_w + bar_w + font * 3.0f, line));
    }
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Layers, LayersPanel);

}  // namespace attnviz::app
