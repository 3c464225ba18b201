#include "app/panels/pair_grid.hpp"

#include "app/panels/heatmap_cells.hpp"

#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/colormap.hpp"
#include "core/figures/format.hpp"
#include "core/pipeline/variants_run.hpp"

#include <algorithm>
#include <cfloat>
#include <cstdio>

namespace attnviz::app {

PairGridHover draw_pair_grid(const AppState& state, PanelContext& context, const PairGridSpec& spec,
                             ImVec2 origin, ImVec2 size) {
  PairGridHover hover;
  if (spec.weights == nullptr || spec.weights->size() == 0) return hover;
  const Matrix& weights = *spec.weights;  // (n_query, n_key)
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const auto& queries = state.pipeline().target().tokens;
  const int n_query = static_cast<int>(weights.rows()), n_key = static_cast<int>(weights.cols());
  const float strip = font * 0.45f;
  const float label_w = std::min(widest_token(state, queries) + font * 0.4f, font * 7.0f) +
                        (spec.query_colours ? strip + font * 0.2f : 0.0f);
  const float title_h = spec.title ? font * 1.3f : 0.0f;
  const float header_h = title_h + font * 1.2f + (spec.key_colours ? strip + font * 0.15f : 0.0f);
  const float cell = std::clamp(std::min((size.x - label_w) / static_cast<float>(n_key),
                                         (size.y - header_h) / static_cast<float>(n_query)),
                                font * 1.1f, font * 2.2f);
  const ImVec2 grid(origin.x + label_w, origin.y + header_h);
  const float grid_w = cell * static_cast<float>(n_key),
              grid_h = cell * static_cast<float>(n_query);
  if (spec.title) list->AddText(origin, colours.text_dim, spec.title);
  // Key numbers across the top, none over another; the keys' colour strip under them.
  char text[16];
  float numbers_end = -FLT_MAX;
  for (int j = 0; j < n_key; ++j) {
    std::snprintf(text, sizeof text, "%d", view::shown_number(j));
    const ImVec2 ts = ImGui::CalcTextSize(text);
    const float x = grid.x + cell * (static_cast<float>(j) + 0.5f) - ts.x * 0.5f;
    if (x >= numbers_end + font * 0.25f) {
      list->AddText(ImVec2(x, origin.y + title_h), colours.text_dim, text);
      numbers_end = x + ts.x;
    }
    if (spec.key_colours && static_cast<std::size_t>(j) < spec.key_colours->size()) {
      const float y = grid.y - strip - font * 0.15f;
      list->AddRectFilled(ImVec2(grid.x + cell * static_cast<float>(j) + 1.0f, y),
                          ImVec2(grid.x + cell * static_cast<float>(j + 1) - 1.0f, y + strip),
                          (*spec.key_colours)[static_cast<std::size_t>(j)]);
    }
  }
  const float label_size = std::min(font, std::max(font - 2.0f, cell));
  int labelled = 0;
  for (int i = 0; i < n_query; ++i) {
    const float row_y = grid.y + cell * static_cast<float>(i);
    if (i < static_cast<int>(queries.size())) {
      const char* name = state.frame.visual_text(queries[static_cast<std::size_t>(i)].text);
      const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(label_size, FLT_MAX, 0, name);
      const float right = grid.x - font * 0.3f - (spec.query_colours ? strip + font * 0.2f : 0.0f);
      list->PushClipRect(ImVec2(origin.x, grid.y), ImVec2(right + font * 0.1f, grid.y + grid_h),
                         true);
      list->AddText(ImGui::GetFont(), label_size,
                    ImVec2(right - ts.x, row_y + cell * 0.5f - ts.y * 0.5f),
                    i == spec.highlight_query ? colours.selection : colours.text, name);
      list->PopClipRect();
      ++labelled;
    }
    if (spec.query_colours && static_cast<std::size_t>(i) < spec.query_colours->size())
      list->AddRectFilled(ImVec2(grid.x - strip - font * 0.2f, row_y + 1.0f),
                          ImVec2(grid.x - font * 0.2f, row_y + cell - 1.0f),
                          (*spec.query_colours)[static_cast<std::size_t>(i)]);
  }
  // The pairs, each α on the colour scale, those never computed hatched.
  view::HeatmapGeometry geometry;
  geometry.rows = n_query;
  geometry.cols = n_key;
  geometry.grid = {grid.x, grid.y, grid_w, grid_h};
  geometry.cell_w = geometry.cell_h = cell;
  draw_heatmap_cells(list, context, state.ui.theme, geometry,
                     {.values = &weights, .computed = spec.computed, .colormap = state.ui.colormap},
                     {.grid_lines = false});
  state.frame.layout.labels_of(view::ViewId::Cheaper).add(n_query, labelled, label_size, false);
  list->AddRect(ImVec2(grid.x - 1, grid.y - 1), ImVec2(grid.x + grid_w + 1, grid.y + grid_h + 1),
                with_alpha(colours.text_dim, 0.5f));
  if (spec.highlight_query >= 0 && spec.highlight_query < n_query)
    list->AddRect(
        ImVec2(grid.x, grid.y + cell * static_cast<float>(spec.highlight_query)),
        ImVec2(grid.x + grid_w, grid.y + cell * static_cast<float>(spec.highlight_query + 1)),
        colours.selection, 0.0f, 0, std::max(2.0f, font * 0.12f));
  if (spec.highlight_key >= 0 && spec.highlight_key < n_key)
    list->AddRect(
        ImVec2(grid.x + cell * static_cast<float>(spec.highlight_key), grid.y),
        ImVec2(grid.x + cell * static_cast<float>(spec.highlight_key + 1), grid.y + grid_h),
        colours.highlight, 0.0f, 0, std::max(2.0f, font * 0.12f));
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && mouse.x >= grid.x && mouse.x < grid.x + grid_w &&
      mouse.y >= grid.y && mouse.y < grid.y + grid_h) {
    hover.query = std::clamp(static_cast<int>((mouse.y - grid.y) / cell), 0, n_query - 1);
    hover.key = std::clamp(static_cast<int>((mouse.x - grid.x) / cell), 0, n_key - 1);
    state.frame.hovered_next = {Side::Query, hover.query};
  }
  hover.size = ImVec2(label_w + grid_w, header_h + grid_h);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(hover.size);
  return hover;
}

bool score_scale_or_error(const AttentionConfig& config, const char* method, float& scale,
                          std::string& error) {
  const Result<float> scaled = variant_score_scale(config, method);
  if (!scaled) {
    error = scaled.error() + " (in the Input panel).";
    return false;
  }
  scale = *scaled;
  return true;
}

int draw_coloured_chips(const AppState& state, const char* id, const std::vector<Token>& tokens,
                        const std::vector<ImU32>& fills, const std::vector<std::string>& badges,
                        int outlined) {
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const ImVec2 pad(font * 0.35f, font * 0.15f);
  const float spacing = font * 0.3f;
  const float left = ImGui::GetCursorScreenPos().x;
  const float right = left + ImGui::GetContentRegionAvail().x;
  ImVec2 at = ImGui::GetCursorScreenPos();
  const float height = font + pad.y * 2.0f;
  int clicked = -1;
  ImGui::PushID(id);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const char* text = state.frame.visual_text(tokens[i].text);
    const std::string badge = i < badges.size() ? badges[i] : std::string();
    const float badge_size = font * 0.75f;
    const float text_w = ImGui::CalcTextSize(text).x;
    const float badge_w =
        badge.empty() ? 0.0f
                      : ImGui::GetFont()->CalcTextSizeA(badge_size, FLT_MAX, 0, badge.c_str()).x +
                            font * 0.2f;
    const float width = std::min(text_w + badge_w + pad.x * 2.0f, right - left);
    if (at.x + width > right && at.x > left) at = ImVec2(left, at.y + height + spacing);
    ImGui::SetCursorScreenPos(at);
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::InvisibleButton("##chip", ImVec2(width, height))) clicked = static_cast<int>(i);
    const bool hovered = ImGui::IsItemHovered();
    ImGui::PopID();
    const ImU32 fill = i < fills.size() && fills[i] != 0 ? fills[i]
                       : hovered                         ? colours.chip_hover
                                                         : colours.chip;
    const ImVec2 p1(at.x + width, at.y + height);
    list->AddRectFilled(at, p1, fill, font * 0.25f);
    if (hovered) {
      list->AddRect(at, p1, colours.highlight, font * 0.25f, 0, 1.5f);
      state.frame.hovered_next = {Side::Query, static_cast<int>(i)};
    }
    if (static_cast<int>(i) == outlined)
      list->AddRect(at, p1, colours.selection, font * 0.25f, 0, std::max(2.0f, font * 0.14f));
    list->PushClipRect(at, p1, true);
    list->AddText(ImVec2(at.x + pad.x, at.y + pad.y), colours.text, text);
    if (!badge.empty())
      list->AddText(ImGui::GetFont(), badge_size,
                    ImVec2(at.x + pad.x + text_w + font * 0.2f, at.y + pad.y + font - badge_size),
                    colours.text_dim, badge.c_str());
    list->PopClipRect();
    at.x += width + spacing;
  }
  ImGui::PopID();
  ImGui::SetCursorScreenPos(ImVec2(left, at.y + height + spacing));
  ImGui::Dummy(ImVec2(0, 0));
  return clicked;
}

}  // namespace attnviz::app
