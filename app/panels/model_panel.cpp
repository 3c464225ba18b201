// The Model view: every layer × head of the model as a small heatmap of its attention (rows:
// layers, bottom first at the top; columns: heads), each with its detected role as a badge. A
// click selects the head for every other view; the right button knocks it out or replaces its
// pattern; a filter shows one role only. The one-layer scenario is one row of it.
//
// Each layer's heads are one float texture (render::MatrixStackTexture) drawn by the heatmap
// shader: a layer costs one upload when the model ran again, a head one quad.
//
// An encoder–decoder has three stacks of attention (Run::stacks(): encoder self-attention,
// decoder self-attention, cross-attention): the view draws the three grids side by side, the
// stack the other views show (Run::shown_stack()) marked; a click on another stack's head shows
// that stack in every view (ModelSpec::part) with the head selected.
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/session/edits.hpp"
#include "app/view/attention_pool.hpp"
#include "core/figures/format.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

// How a role is named on a tile's badge (in full, and where room is short) and in its tooltip.
struct RoleLabel {
  HeadRole role;
  const char* badge;
  const char* tiny;
  const char* meaning;
};
constexpr std::array<RoleLabel, 10> kRoleLabels = {{
    {HeadRole::Induction, "induction", "ind",
     "induction: on a repeated sequence it attends to the token after the earlier copy of the "
     "current one (and so helps predict what came next last time)"},
    {HeadRole::PreviousToken, "previous", "prev",
     "previous-token: attends to the token just before"},
    {HeadRole::NextToken, "next", "next",
     "next-token: attends to the token just after (only an encoder can: in a decoder a token "
     "never sees the one after it)"},
    {HeadRole::FirstToken, "first/sink", "sink",
     "first-token (a sink): puts its weight on the first token when it has nothing better to do"},
    {HeadRole::SpecialToken, "[CLS]/[SEP]", "spec",
     "special-token: puts its weight on BERT's [CLS] and [SEP], a place to rest when nothing "
     "else matters"},
    {HeadRole::Self, "self", "self", "self: attends to the token itself"},
    {HeadRole::Broad, "broad", "broad", "broad: spreads its weight over many tokens"},
    {HeadRole::Positional, "positional", "pos",
     "positional: attends by position, whatever the words are"},
    {HeadRole::Alignment, "align", "aln",
     "alignment: writing a word of the translation, it looks at the source word that word "
     "translates (Bahdanau's alignment), measured on held-out verses of Mark against the links "
     "of the two Bibles' markup"},
    {HeadRole::Mixed, "", "", "mixed: no one pattern passes its threshold"},
}};

const RoleLabel& label_of(HeadRole role) {
  for (const RoleLabel& label : kRoleLabels)
    if (label.role == role) return label;
  return kRoleLabels.back();
}

// A tile shows a model's α pooled to at most this many cells across (app/view/attention_pool.hpp).
constexpr int kMostCellsAcross = 64;

constexpr std::array<HeadRole, 10> kFilterRoles = {
    HeadRole::Induction,    HeadRole::PreviousToken, HeadRole::NextToken, HeadRole::FirstToken,
    HeadRole::SpecialToken, HeadRole::Self,          HeadRole::Broad,     HeadRole::Positional,
    HeadRole::Alignment,    HeadRole::Mixed};

class ModelPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const Pipeline& pipeline = state.pipeline();
    const Run& run = pipeline.current();
    if (run.stacks().size() > 1) {
      draw_stacks(state, context, run);
      return;
    }
    const bool roles = run.can(Capability::HeadRoles);
    const int layers = pipeline.layer_count();
    const int heads = static_cast<int>(state.result().heads.size());
    upload(state, context, layers);
    if (roles) update_here(run, layers, heads);
    draw_header(state, run, layers, heads);

    const float font = ImGui::GetFontSize();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const float label_w = ImGui::CalcTextSize("layer 99").x + font * 0.5f;
    // Under grouped-query attention, a line over each group of heads that read one key/value head.
    const TransformerConfig* config =
        run.trained_model() ? &run.trained_model()->transformer.config() : nullptr;
    const bool grouped = config && config->n_kv_heads < config->n_heads;
    const float group_label_h = grouped ? font * 1.25f : 0.0f;
    const float head_label_h = font * 1.2f + group_label_h;
    const float badge_h = roles ? font * 1.1f : 0.0f;
    const float gap = std::max(3.0f, font * 0.3f);
    // Tiles as large as the view allows, at least 2.5 lines (the view scrolls past that).
    const float by_width = (available.x - label_w) / static_cast<float>(heads) - gap;  // per column
    const float by_height =
        (available.y - head_label_h) / static_cast<float>(layers) - gap - badge_h;
    const float tile = std::max(font * 2.5f, std::min({by_width, by_height, font * 12.0f}));
    const float column = tile + gap, row = tile + gap + badge_h;
    ImDrawList* list = ImGui::GetWindowDrawList();
    const Palette& colours = palette(state.ui.theme);
    const ImGuiIO& io = ImGui::GetIO();

    if (grouped) {
      const int per_group = config->queries_per_kv_head();
      for (int group = 0; group < config->n_kv_heads; ++group) {
        const float x0 = origin.x + label_w + static_cast<float>(group * per_group) * column;
        const float x1 = x0 + static_cast<float>(per_group) * column - gap;
        const float line_y = std::round(origin.y + group_label_h - font * 0.2f);
        list->AddLine(ImVec2(x0, line_y), ImVec2(x1, line_y), colours.text_dim, 1.0f);
        list->AddLine(ImVec2(x0, line_y), ImVec2(x0, line_y - font * 0.3f), colours.text_dim, 1.0f);
        list->AddLine(ImVec2(x1, line_y), ImVec2(x1, line_y - font * 0.3f), colours.text_dim, 1.0f);
        char label[32];
        std::snprintf(label, sizeof label, "key/value head %d", view::shown_number(group));
        if (ImGui::CalcTextSize(label).x > x1 - x0)
          std::snprintf(label, sizeof label, "kv %d", view::shown_number(group));
        const float w = ImGui::CalcTextSize(label).x;
        if (w <= x1 - x0 + gap)
          list->AddText(ImVec2(std::round((x0 + x1 - w) * 0.5f), origin.y), colours.text_dim,
                        label);
        if (ImGui::IsWindowHovered() &&
            ImGui::IsMouseHoveringRect(ImVec2(x0, origin.y), ImVec2(x1, line_y + 2.0f)))
          ImGui::SetTooltip(
              "heads %d to %d share key/value head %d: one W_K and one W_V, so their keys and "
              "values are the same (grouped-query attention); each has its own W_Q",
              view::shown_number(group * per_group),
              view::shown_number(group * per_group + per_group - 1), view::shown_number(group));
      }
    }
    for (int head = 0; head < heads; ++head) {
      char label[24];
      std::snprintf(label, sizeof label, tile > font * 3.5f ? "head %d" : "%d",
                    view::shown_number(head));
      const float x = origin.x + label_w + static_cast<float>(head) * column;
      list->AddText(ImVec2(x, origin.y + group_label_h),
                    head == state.selection.head ? colours.selection : colours.text_dim, label);
    }
    hovered_ = {-1, -1};
    for (int layer = 0; layer < layers; ++layer) {
      const float y = origin.y + head_label_h + static_cast<float>(layer) * row;
      char label[24];
      std::snprintf(label, sizeof label, "layer %d", view::shown_number(layer));
      list->AddText(ImVec2(origin.x, y + (tile - font) * 0.5f),
                    layer == state.selection.layer ? colours.selection : colours.text_dim, label);
      for (int head = 0; head < heads; ++head) {
        const ImVec2 p0(origin.x + label_w + static_cast<float>(head) * column, y);
        const ImVec2 p1(p0.x + tile, p0.y + tile);
        draw_tile(state, context, run, layer, head, p0, p1, list, colours);
        if (roles) draw_badge(state, run, layer, head, p0, tile, list, colours);
        const bool hovered = io.MousePos.x >= p0.x && io.MousePos.x < p1.x &&
                             io.MousePos.y >= p0.y && io.MousePos.y < p1.y + badge_h &&
                             ImGui::IsWindowHovered();
        if (hovered) hovered_ = {layer, head};
      }
    }
    // The whole grid, so the window scrolls when the tiles do not fit.
    const float grid_w = label_w + static_cast<float>(heads) * column;
    const float grid_h = head_label_h + static_cast<float>(layers) * row;
    state.frame.layout.model_grid = {
        origin.x + label_w, origin.y + head_label_h, column, row, tile, layers, heads};
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(std::max(grid_w, available.x * 0.5f), grid_h));
    handle_mouse(context, run);
  }

 private:
  struct Hovered {
    int layer = -1, head = -1;
  };

  // ---------------------------------------------------------------------------
  // [SECTION] Every stack side by side (an encoder–decoder)
  // ---------------------------------------------------------------------------
  // The part of an encoder–decoder a stack is (ModelSpec::part).
  static ModelPart part_of(const AttentionStack& stack) {
    return stack.kind == StackKind::Self    ? ModelPart::Encoder
           : stack.kind == StackKind::Cross ? ModelPart::Cross
                                            : ModelPart::Main;
  }

  // One texture per layer of each stack, its heads' α stacked (as upload() for one stack).
  void upload_stacks(const AppState& state, PanelContext& context, const Run& run) {
    const std::uint64_t version = run.run_count();
    const std::span<const AttentionStack> stacks = run.stacks();
    std::size_t rows = 0;
    for (const AttentionStack& stack : stacks) rows += static_cast<std::size_t>(stack.layers);
    if (version == stacks_uploaded_ && uploaded_contrast_ == state.ui.heatmap_contrast &&
        stack_textures_.size() == rows)
      return;
    stacks_uploaded_ = version;
    uploaded_contrast_ = state.ui.heatmap_contrast;
    while (stack_textures_.size() < rows)
      stack_textures_.push_back(std::make_unique<render::MatrixStackTexture>());
    stack_textures_.resize(rows);
    stack_weights_.resize(rows);
    stack_tops_.resize(rows);
    std::vector<const Matrix*> textures;
    std::size_t row = 0;
    for (int s = 0; s < static_cast<int>(stacks.size()); ++s) {
      const AttentionStack& stack = stacks[static_cast<std::size_t>(s)];
      for (int layer = 0; layer < stack.layers; ++layer, ++row) {
        stack_weights_[row].resize(static_cast<std::size_t>(stack.heads));
        stack_tops_[row].resize(static_cast<std::size_t>(stack.heads));
        textures.clear();
        for (int head = 0; head < stack.heads; ++head) {
          Matrix& weights = stack_weights_[row][static_cast<std::size_t>(head)];
          weights = run.stack_weights(s, layer, head);  // (n_query, n_key) of that stack
          if (weights.size() == 0) weights = Matrix::Zero(1, 1);
          stack_tops_[row][static_cast<std::size_t>(head)] = state.ui.heatmap_top(weights);
          textures.push_back(&weights);
        }
        if (context.heatmaps.ok()) stack_textures_[row]->update(textures, version + 1);
      }
    }
  }

  void draw_stacks(const AppState& state, PanelContext& context, const Run& run) {
    upload_stacks(state, context, run);
    const std::span<const AttentionStack> stacks = run.stacks();
    const ModelSpec* spec = state.document.scenario().model();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s",
                       run.can(Capability::HeadInterventions)
                           ? "the three kinds of attention; click a head to show it in every view "
                             "\xc2\xb7 right-click: knock out, patterns"
                           : "the three kinds of attention; click a head to show it in every view");
    ImGui::PopStyleColor();
    const float font = ImGui::GetFontSize();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const float label_w = ImGui::CalcTextSize("layer 99").x + font * 0.5f;
    const float title_h = font * 1.4f, head_label_h = font * 1.2f;
    const float gap = std::max(3.0f, font * 0.3f), grid_gap = font * 1.5f;
    int heads = 0, most_heads = 1, layers = 0, most_layers = 1;
    for (const AttentionStack& stack : stacks) {
      heads += stack.heads;
      most_heads = std::max(most_heads, stack.heads);
      layers += stack.layers;
      most_layers = std::max(most_layers, stack.layers);
    }
    const float count = static_cast<float>(stacks.size());
    const float heading_h = title_h + head_label_h;
    // Each head's measured role under its tile (a cross head's alignment score).
    const bool roles = run.can(Capability::HeadRoles);
    const float badge_h = roles ? font * 1.1f : 0.0f;
    // Side by side where the view is wide, one above the other where it is tall: whichever gives
    // the larger tiles.
    const float side_tile =
        std::min((available.x - label_w - grid_gap * (count - 1)) / static_cast<float>(heads),
                 (available.y - heading_h) / static_cast<float>(most_layers) - badge_h) -
        gap;
    const float stacked_tile = std::min((available.x - label_w) / static_cast<float>(most_heads),
                                        (available.y - heading_h * count - grid_gap * (count - 1)) /
                                                static_cast<float>(layers) -
                                            badge_h) -
                               gap;
    const bool one_above_another = stacked_tile > side_tile;
    const float tile =
        std::max(font * 1.5f, std::min(std::max(side_tile, stacked_tile), font * 9.0f));
    const float column = tile + gap, row_h = tile + gap + badge_h;
    ImDrawList* list = ImGui::GetWindowDrawList();
    const Palette& colours = palette(state.ui.theme);
    const ImGuiIO& io = ImGui::GetIO();
    const int shown = run.shown_stack();
    struct StackHover {
      int stack = -1, layer = -1, head = -1;
    } hovered;
    float x0 = origin.x + label_w, y0 = origin.y, right_edge = x0, bottom = y0;
    std::size_t texture_row = 0;
    for (int s = 0; s < static_cast<int>(stacks.size()); ++s) {
      const AttentionStack& stack = stacks[static_cast<std::size_t>(s)];
      const ModelPart part = part_of(stack);
      const float grid_w = static_cast<float>(stack.heads) * column - gap;
      const float top = y0 + heading_h;
      // The stack's name over its grid, the one shown in the other views underlined.
      const char* name = stack.name.c_str();
      const float name_w = ImGui::CalcTextSize(name).x;
      const ImVec2 name_at(std::round(x0 + std::max(0.0f, (grid_w - name_w) * 0.5f)), y0);
      list->AddText(name_at, s == shown ? colours.selection : colours.text, name);
      if (s == shown)
        list->AddLine(ImVec2(name_at.x, name_at.y + font * 1.1f),
                      ImVec2(name_at.x + name_w, name_at.y + font * 1.1f), colours.selection,
                      std::max(1.0f, font * 0.1f));
      for (int head = 0; head < stack.heads; ++head) {
        char label[24];
        std::snprintf(label, sizeof label, tile > font * 3.5f ? "head %d" : "%d",
                      view::shown_number(head));
        list->AddText(
            ImVec2(x0 + static_cast<float>(head) * column, y0 + title_h),
            s == shown && head == state.selection.head ? colours.selection : colours.text_dim,
            label);
      }
      for (int layer = 0; layer < stack.layers; ++layer, ++texture_row) {
        if (s == 0 || one_above_another) {  // the layers' labels, at the left
          char label[24];
          std::snprintf(label, sizeof label, "layer %d", view::shown_number(layer));
          list->AddText(
              ImVec2(origin.x, top + static_cast<float>(layer) * row_h + (tile - font) * 0.5f),
              s == shown && layer == state.selection.layer ? colours.selection : colours.text_dim,
              label);
        }
        for (int head = 0; head < stack.heads; ++head) {
          const ImVec2 p0(x0 + static_cast<float>(head) * column,
                          top + static_cast<float>(layer) * row_h);
          const ImVec2 p1(p0.x + tile, p0.y + tile);
          if (context.heatmaps.ok() && texture_row < stack_textures_.size())
            context.heatmaps.draw(list, *stack_textures_[texture_row], head, p0, p1,
                                  state.ui.colormap, 0.0f,
                                  stack_tops_[texture_row][static_cast<std::size_t>(head)]);
          else
            list->AddRectFilled(p0, p1, colours.chip);
          if (spec) draw_change(list, spec->intervention_in(part, layer, head), p0, p1, colours);
          if (s == shown && layer == state.selection.layer && head == state.selection.head)
            list->AddRect(ImVec2(p0.x - 2, p0.y - 2), ImVec2(p1.x + 2, p1.y + 2), colours.selection,
                          0, 0, highlight_width(state.ui, font));
          if (const HeadScores* scores = roles ? run.role_in(s, layer, head) : nullptr;
              scores && scores->role != HeadRole::Mixed) {
            char badge[32];
            if (scores->role == HeadRole::Alignment)
              std::snprintf(badge, sizeof badge, tile > font * 3.5f ? "align %.2f" : "%.2f",
                            scores->score(HeadRole::Alignment));
            else
              std::snprintf(
                  badge, sizeof badge, "%s",
                  tile > font * 3.5f ? label_of(scores->role).badge : label_of(scores->role).tiny);
            list->AddText(ImVec2(p0.x, p1.y + 1.0f),
                          head_colour(state.ui.theme, static_cast<int>(scores->role)), badge);
          }
          if (io.MousePos.x >= p0.x && io.MousePos.x < p1.x && io.MousePos.y >= p0.y &&
              io.MousePos.y < p1.y + badge_h && ImGui::IsWindowHovered())
            hovered = {s, layer, head};
        }
      }
      if (s == shown)
        state.frame.layout.model_grid = {x0, top, column, row_h, tile, stack.layers, stack.heads};
      right_edge = std::max(right_edge, x0 + grid_w);
      bottom = std::max(bottom, top + static_cast<float>(stack.layers) * row_h);
      if (one_above_another)
        y0 = top + static_cast<float>(stack.layers) * row_h + grid_gap;
      else
        x0 += grid_w + gap + grid_gap;
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(std::max(right_edge - origin.x, available.x * 0.5f), bottom - origin.y));
    if (hovered.stack >= 0)
      show_hovered_stack_head(context, run, hovered.stack, hovered.layer, hovered.head);
    // (after the hover: the menu stays open while the pointer is over it, off the tiles)
    if (run.can(Capability::HeadInterventions)) head_menu(context);
  }

  // The tooltip of the head under the pointer in one of an encoder–decoder's grids, and what a
  // click on it does: a click shows its part in every view with it selected; a right-click also
  // opens its context menu.
  void show_hovered_stack_head(PanelContext& context, const Run& run, int stack_index, int layer,
                               int head) {
    const AttentionStack& stack = run.stacks()[static_cast<std::size_t>(stack_index)];
    const int shown = run.shown_stack();
    ImGui::BeginTooltip();
    ImGui::Text("%s: layer %d, head %d", stack.name.c_str(), view::shown_number(layer),
                view::shown_number(head));
    if (const HeadScores* scores = run.role_in(stack_index, layer, head)) {
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
      if (scores->role != HeadRole::Mixed) ImGui::TextUnformatted(label_of(scores->role).meaning);
      if (stack.kind == StackKind::Cross)
        ImGui::TextDisabled(
            "alignment %.2f: the share of the translation's words for which its row looks most "
            "at a source word they translate (held-out verses of Mark)",
            scores->score(HeadRole::Alignment));
      ImGui::PopTextWrapPos();
    }
    const bool changes = run.can(Capability::HeadInterventions);
    if (stack_index == shown)
      ImGui::TextDisabled(changes ? "click: select it \xc2\xb7 right-click: change it"
                                  : "click: select it");
    else
      ImGui::TextDisabled("click: show the %s in every view, this head selected%s",
                          stack.name.c_str(), changes ? " \xc2\xb7 right-click: change it" : "");
    ImGui::EndTooltip();
    const bool left = ImGui::IsMouseClicked(ImGuiMouseButton_Left);
    const bool right = ImGui::IsMouseClicked(ImGuiMouseButton_Right);
    if (left || right) {
      if (stack_index != shown) context.edits.push(edits::set_model_part(part_of(stack)));
      context.selection.layer = layer;
      context.selection.head = head;
    }
    if (right && changes) {  // (the menu's commands act on the part shown: this one, by then)
      menu_head_ = {layer, head};
      ImGui::OpenPopup("##model_head_menu");
    }
  }

  // The context menu of the head a right-click chose (menu_head_, which it also selected): each
  // item is the app's command on the selected head, as in the Models menu (Ctrl+K knocks out).
  void head_menu(PanelContext& context) {
    if (!ImGui::BeginPopup("##model_head_menu")) return;
    ImGui::TextDisabled("layer %d, head %d", view::shown_number(menu_head_.layer),
                        view::shown_number(menu_head_.head));
    command_menu_item(context.commands, "model.knock_out", "Knock out");
    command_menu_item(context.commands, "model.uniform_attention");
    command_menu_item(context.commands, "model.previous_token");
    command_menu_item(context.commands, "model.as_trained");
    ImGui::EndPopup();
  }

  // A head's change drawn on its tile: knocked out (greyed and crossed), a pattern or a scale.
  static void draw_change(ImDrawList* list, const HeadIntervention& change, ImVec2 p0, ImVec2 p1,
                          const Palette& colours) {
    const float font = ImGui::GetFontSize();
    if (change.ablated()) {  // greyed out and crossed
      list->AddRectFilled(p0, p1, IM_COL32(128, 128, 128, 200));
      list->AddLine(p0, p1, colours.text, 2.0f);
      list->AddLine(ImVec2(p0.x, p1.y), ImVec2(p1.x, p0.y), colours.text, 2.0f);
      list->AddText(ImVec2(p0.x + font * 0.2f, p0.y + font * 0.1f), colours.text, "off");
    } else if (change.changes_anything()) {
      char mark[24];
      if (change.pattern == HeadIntervention::Pattern::Uniform)
        std::snprintf(mark, sizeof mark, "uniform");
      else if (change.pattern == HeadIntervention::Pattern::PreviousToken)
        std::snprintf(mark, sizeof mark, "prev");
      else
        std::snprintf(mark, sizeof mark, "\xc3\x97%s",
                      view::format_number(change.output_scale, 2).c_str());
      const ImVec2 size = ImGui::CalcTextSize(mark);
      list->AddRectFilled(p0, ImVec2(p0.x + size.x + font * 0.3f, p0.y + size.y),
                          colours.panel_background);
      list->AddText(ImVec2(p0.x + font * 0.15f, p0.y), colours.highlight, mark);
    }
  }

  std::vector<std::unique_ptr<render::MatrixStackTexture>> stack_textures_;  // by stack, layer
  std::vector<std::vector<Matrix>> stack_weights_;  // (n_query, n_key) per head, per row
  std::vector<std::vector<float>> stack_tops_;
  std::uint64_t stacks_uploaded_ = 0;
  // One texture per layer: its heads' α stacked.
  std::vector<std::unique_ptr<render::MatrixStackTexture>> textures_;
  std::vector<std::vector<Matrix>> layer_weights_;  // (n, n) per head, per layer
  std::vector<std::vector<float>> tops_;            // each head's colour-scale top
  std::vector<float> gathered_;                     // a row over the shown keys (upload)
  std::uint64_t uploaded_ = 0;                      // what was uploaded (see upload)
  bool uploaded_contrast_ = false;
  int filter_ = -1;  // an index into kFilterRoles, or -1: every head
  // Each head's score for its role on the text on screen (role_score_on_text), by layer and head;
  // nullopt where the text cannot measure it. Of run_count() here_version_.
  std::vector<std::optional<float>> here_;
  std::uint64_t here_version_ = 0;
  int heads_shown_ = 1;  // the heads per layer of here_
  Hovered hovered_;
  Hovered menu_head_;  // the head the context menu is for

  // Each layer's α into its texture, when the run computed again. A trained model's rows come
  // from its forward pass, pooled, without adapting every layer (its context may be long).
  void upload(const AppState& state, PanelContext& context, int layers) {
    const Run& run = state.pipeline().current();
    const TransformerForward* model = run.trained_forward();
    const std::uint64_t version = run.run_count();
    // (hiding special tokens is an edit: the model runs again, and run_count() moves)
    if (version == uploaded_ && uploaded_contrast_ == state.ui.heatmap_contrast &&
        static_cast<int>(textures_.size()) == layers)
      return;
    uploaded_ = version;
    uploaded_contrast_ = state.ui.heatmap_contrast;
    while (static_cast<int>(textures_.size()) < layers)
      textures_.push_back(std::make_unique<render::MatrixStackTexture>());
    textures_.resize(static_cast<std::size_t>(layers));
    layer_weights_.resize(static_cast<std::size_t>(layers));
    tops_.resize(static_cast<std::size_t>(layers));
    std::vector<const Matrix*> stack;
    for (int layer = 0; layer < layers; ++layer) {
      const auto l = static_cast<std::size_t>(layer);
      const AttentionResult* r = model ? nullptr : &state.pipeline().layer(layer);
      const int heads = model ? run.trained_model()->transformer.config().n_heads
                              : static_cast<int>(r->heads.size());
      layer_weights_[l].resize(static_cast<std::size_t>(heads));
      tops_[l].resize(static_cast<std::size_t>(heads));
      stack.clear();
      // The shown tokens (special ones may be hidden, a pair filter may pick one sentence's
      // queries and another's keys): query i's row over the shown keys.
      const std::vector<int> none;
      const std::vector<int>& queries = model ? run.shown_positions() : none;
      const std::vector<int>& keys = model ? run.key_positions() : none;
      const bool every_key = keys.size() == run.sequence_length();
      const int n_query = static_cast<int>(queries.size());
      const int n_key = static_cast<int>(keys.size());
      const int factor = view::pool_factor(std::max(n_query, n_key), kMostCellsAcross);
      for (int head = 0; head < heads; ++head) {
        Matrix& weights = layer_weights_[l][static_cast<std::size_t>(head)];
        const auto row = [&](int query) {
          const std::span<const float> all =
              model->attention_row(layer, head, queries[static_cast<std::size_t>(query)]);
          if (every_key) return all;  // a decoder's row: keys 0..query, the rest 0
          gathered_.assign(keys.size(), 0.0f);
          for (std::size_t key = 0; key < keys.size(); ++key)
            if (static_cast<std::size_t>(keys[key]) < all.size())
              gathered_[key] = all[static_cast<std::size_t>(keys[key])];
          return std::span<const float>(gathered_);
        };
        if (model)  // (blocks, blocks): the largest α of each block of queries and keys
          view::max_pool(n_query, n_key, factor, row, weights);
        else
          weights = r->heads[static_cast<std::size_t>(head)].weights;  // (n_query, n_key)
        tops_[l][static_cast<std::size_t>(head)] = state.ui.heatmap_top(weights);
        stack.push_back(&weights);
      }
      if (context.heatmaps.ok()) textures_[l]->update(stack, version + 1);
    }
  }

  void draw_header(const AppState& state, const Run& run, int layers, int heads) {
    const float font = ImGui::GetFontSize();
    const bool changes = run.can(Capability::HeadInterventions);
    if (run.can(Capability::HeadRoles)) {
      ImGui::TextUnformatted("show");
      ImGui::SameLine();
      ImGui::SetNextItemWidth(font * 9.0f);
      const char* preview = filter_ < 0
                                ? "every head"
                                : label_of(kFilterRoles[static_cast<std::size_t>(filter_)]).badge;
      if (filter_ >= 0 && kFilterRoles[static_cast<std::size_t>(filter_)] == HeadRole::Mixed)
        preview = "mixed";
      if (ImGui::BeginCombo("##model_role_filter", preview)) {
        if (ImGui::Selectable("every head", filter_ < 0)) filter_ = -1;
        for (int i = 0; i < static_cast<int>(kFilterRoles.size()); ++i) {
          const HeadRole role = kFilterRoles[static_cast<std::size_t>(i)];
          const std::string item = std::string(to_string(role)) + " heads";
          if (ImGui::Selectable(item.c_str(), filter_ == i)) filter_ = i;
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", label_of(role).meaning);
        }
        ImGui::EndCombo();
      }
      if (run.roles().empty() && ImGui::IsItemHovered())
        ImGui::SetTooltip("the roles could not be measured on this model");
      ImGui::SameLine(0, font);
      // A filter that finds no head says so, rather than dimming every tile without a word.
      if (filter_ >= 0 && !run.roles().empty()) {
        bool any = false;
        for (int layer = 0; layer < layers && !any; ++layer)
          for (int head = 0; head < heads && !any; ++head) any = !filtered_out(run, layer, head);
        state.frame.values.set("model.filter_finds", any ? 1 : 0);
        if (!any) {
          ImGui::PushStyleColor(ImGuiCol_Text, palette(state.ui.theme).highlight);
          ImGui::Text(
              "no %s head in this model",
              std::string(to_string(kFilterRoles[static_cast<std::size_t>(filter_)])).c_str());
          ImGui::PopStyleColor();
          ImGui::SameLine(0, font);
        }
      }
    }
    const char* hint = changes ? "click: select \xc2\xb7 right-click: knock out, patterns"
                       : run.layer_count() == 1
                           ? "each head of the one layer; click one to select it"
                           : "each head of every layer; click one to select it";
    if (fits_after_last_item(ImGui::CalcTextSize(hint).x) || !changes)
      ImGui::TextDisabled("%s", hint);
    else
      ImGui::NewLine();
    // What the two numbers of a badge are.
    if (run.can(Capability::HeadRoles) && !run.roles().empty())
      text_wrapped_at_spaces(
          "badges: role, its score on the detector's probe \xc2\xb7 on this text (\xe2\x80\x93: "
          "this text cannot measure it; hover a tile for both)",
          ImGui::GetContentRegionAvail().x, true);
  }

  bool filtered_out(const Run& run, int layer, int head) const {
    if (filter_ < 0) return false;
    const HeadScores* scores = run.role_of(layer, head);
    return !scores || scores->role != kFilterRoles[static_cast<std::size_t>(filter_)];
  }

  void draw_tile(const AppState& state, PanelContext& context, const Run& run, int layer, int head,
                 ImVec2 p0, ImVec2 p1, ImDrawList* list, const Palette& colours) {
    const auto l = static_cast<std::size_t>(layer);
    if (context.heatmaps.ok() && l < textures_.size())
      context.heatmaps.draw(list, *textures_[l], head, p0, p1, state.ui.colormap, 0.0f,
                            tops_[l][static_cast<std::size_t>(head)]);
    else
      list->AddRectFilled(p0, p1, colours.chip);
    const float font = ImGui::GetFontSize();
    if (run.can(Capability::HeadInterventions))
      draw_change(list,
                  state.document.scenario().model()
                      ? state.document.scenario().model()->intervention(layer, head)
                      : HeadIntervention{},
                  p0, p1, colours);
    if (filtered_out(run, layer, head))
      list->AddRectFilled(p0, p1, with_alpha(colours.panel_background, 0.8f));
    if (layer == state.selection.layer && head == state.selection.head)
      list->AddRect(ImVec2(p0.x - 2, p0.y - 2), ImVec2(p1.x + 2, p1.y + 2), colours.selection, 0, 0,
                    highlight_width(state.ui, font));
  }

  // Each head's score for its role on the text the model read now, when it ran again.
  void update_here(const Run& run, int layers, int heads) {
    const TransformerForward* forward = run.trained_forward();
    if (run.run_count() == here_version_ && !here_.empty()) return;
    here_version_ = run.run_count();
    heads_shown_ = heads;
    here_.assign(static_cast<std::size_t>(layers * heads), std::nullopt);
    if (!forward || !run.trained_model()) return;
    const auto& tokens = run.model_tokens();
    const int n = static_cast<int>(tokens.size());
    if (n < 2 || forward->size() != n) return;
    std::vector<int> ids;
    std::vector<bool> special;
    for (const ModelToken& token : tokens) {
      ids.push_back(token.id);
      special.push_back(token.special);
    }
    const bool causal = run.trained_model()->transformer.config().causal();
    std::vector<float> matrix(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    for (int layer = 0; layer < layers; ++layer)
      for (int head = 0; head < heads; ++head) {
        const HeadScores* scores = run.role_of(layer, head);
        if (!scores || scores->role == HeadRole::Mixed) continue;
        std::fill(matrix.begin(), matrix.end(), 0.0f);  // (n_query, n_key)
        for (int i = 0; i < n; ++i) {
          const std::span<const float> row = forward->attention_row(layer, head, i);
          std::copy(row.begin(), row.end(), matrix.begin() + static_cast<std::ptrdiff_t>(i) * n);
        }
        here_[static_cast<std::size_t>(layer * heads + head)] = role_score_on_text(
            scores->role, MatrixView{matrix.data(), n, n, n}, ids, special, causal);
      }
  }

  std::optional<float> here(int layer, int head, int heads) const {
    const auto index = static_cast<std::size_t>(layer * heads + head);
    return index < here_.size() ? here_[index] : std::nullopt;
  }

  // "induction 0.87 · here 0.05": the score on the detector's probe, then on the text on screen
  // (the header says which is which), shortened to fit the tile.
  void draw_badge(const AppState& state, const Run& run, int layer, int head, ImVec2 p0, float tile,
                  ImDrawList* list, const Palette& colours) {
    const HeadScores* scores = run.role_of(layer, head);
    if (!scores || scores->role == HeadRole::Mixed) return;
    char badge[48];
    const float score = scores->score(scores->role);
    const RoleLabel& label = label_of(scores->role);
    const std::optional<float> on_text =
        here(layer, head, static_cast<int>(state.result().heads.size()));
    const std::string probe_number = view::format_number(score, 2);
    const std::string here_number = on_text ? view::format_number(*on_text, 2) : "\xe2\x80\x93";
    const float room = tile + ImGui::GetFontSize() * 0.2f;
    std::snprintf(badge, sizeof badge, "%s %s \xc2\xb7 %s", label.badge, probe_number.c_str(),
                  here_number.c_str());
    if (ImGui::CalcTextSize(badge).x > room)
      std::snprintf(badge, sizeof badge, "%s %s\xc2\xb7%s", label.tiny, probe_number.c_str(),
                    here_number.c_str());
    // Narrow tiles (gpt2-web's 6 heads): both numbers in smaller type, else the role alone. Never
    // the probe's score alone: on a text where the head does nothing it reads as "it copies here".
    ImFont* font = ImGui::GetFont();
    float size = ImGui::GetFontSize();
    if (font->CalcTextSizeA(size, FLT_MAX, 0.0f, badge).x > room) size = std::round(size * 0.8f);
    if (font->CalcTextSizeA(size, FLT_MAX, 0.0f, badge).x > room) {
      size = ImGui::GetFontSize();
      std::snprintf(badge, sizeof badge, "%s", label.tiny);
    }
    const bool dim = filtered_out(run, layer, head);
    list->AddText(
        font, size, ImVec2(p0.x, p0.y + tile + 1.0f),
        dim ? colours.text_dim : head_colour(state.ui.theme, static_cast<int>(scores->role)),
        badge);
  }

  void handle_mouse(PanelContext& context, const Run& run) {
    const bool changes = run.can(Capability::HeadInterventions);
    if (hovered_.layer >= 0) {
      const Hovered h = hovered_;
      ImGui::BeginTooltip();
      ImGui::Text("layer %d, head %d", view::shown_number(h.layer), view::shown_number(h.head));
      if (const HeadScores* scores = run.role_of(h.layer, h.head)) {
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
        ImGui::TextUnformatted(label_of(scores->role).meaning);
        if (scores->role != HeadRole::Mixed) {
          const std::optional<float> on_text = here(h.layer, h.head, heads_shown_);
          const std::string role(to_string(scores->role));
          if (on_text)
            ImGui::Text("%s: %.2f on the detector's probe, %.2f on this text", role.c_str(),
                        static_cast<double>(scores->score(scores->role)),
                        static_cast<double>(*on_text));
          else
            ImGui::Text("%s: %.2f on the detector's probe; this text cannot measure it%s",
                        role.c_str(), static_cast<double>(scores->score(scores->role)),
                        scores->role == HeadRole::Induction ? " (no token occurs twice)" : "");
        }
        ImGui::PopTextWrapPos();
        if (run.stacks().front().kind == StackKind::Self)  // an encoder: next and special too
          ImGui::TextDisabled(
              "previous %.2f  next %.2f  first %.2f  [CLS]/[SEP] %.2f  self %.2f  broad %.2f  "
              "positional %.2f",
              scores->score(HeadRole::PreviousToken), scores->score(HeadRole::NextToken),
              scores->score(HeadRole::FirstToken), scores->score(HeadRole::SpecialToken),
              scores->score(HeadRole::Self), scores->score(HeadRole::Broad),
              scores->score(HeadRole::Positional));
        else
          ImGui::TextDisabled(
              "induction %.2f  previous %.2f  first %.2f  self %.2f  broad %.2f  positional %.2f",
              scores->score(HeadRole::Induction), scores->score(HeadRole::PreviousToken),
              scores->score(HeadRole::FirstToken), scores->score(HeadRole::Self),
              scores->score(HeadRole::Broad), scores->score(HeadRole::Positional));
      }
      if (changes)
        ImGui::TextDisabled("click: show it in every view \xc2\xb7 right-click: change it");
      ImGui::EndTooltip();
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        context.selection.layer = h.layer;
        context.selection.head = h.head;
      }
      if (changes && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) {
        menu_head_ = h;
        context.selection.layer = h.layer;
        context.selection.head = h.head;
        ImGui::OpenPopup("##model_head_menu");
      }
    }
    if (changes) head_menu(context);
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Model, ModelPanel);

}  // namespace attnviz::app
