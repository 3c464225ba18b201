#include "app/panels/shared_keys_view.hpp"

#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/format.hpp"
#include "core/variants/grouped_query.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace attnviz::app {

void SharedKeysView::draw(const AppState& state, PanelContext& context) {
  font_ = ImGui::GetFontSize();
  const Scenario& s = state.document.scenario();
  const AttentionConfig& c = s.one_layer().config;
  continue_line_if_fits(ImGui::CalcTextSize("key/value groups").x, font_);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("key/value groups");
  const int groups = kv_group_count(c);
  for (const int g : kv_group_choices(c.heads)) {
    char label[48];
    std::snprintf(label, sizeof label, "%d%s", g,
                  g == c.heads && g > 1 ? " (multi-head)"
                  : g == 1              ? " (multi-query)"
                                        : "");
    continue_line_if_fits(ImGui::CalcTextSize(label).x + font_ * 1.8f,
                          ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::RadioButton(label, g == groups) && g != groups) {
      AttentionConfig changed = c;
      changed.kv_groups = g == c.heads ? 0 : g;
      context.edits.push(edits::set_config(changed));
    }
  }
  if (!ImGui::BeginChild("##shared_body", ImVec2(0, 0), false)) {
    ImGui::EndChild();
    return;
  }
  const float width = ImGui::GetContentRegionAvail().x;
  FrameValues& values = state.frame.values;  // the part shown, and its K/V cache per token
  values.set("cheaper.method", "shared_keys");
  values.set("cheaper.pairs", 0);
  values.set("cheaper.pairs_full", 0);
  if (const Result<GroupedQueryCost> cost = grouped_query_cost(c, groups);
      cost && cost->cache_per_token > 0)
    values.set("cheaper.cache_per_token", static_cast<long long>(cost->cache_per_token));
  if (c.heads == 1) {
    text_wrapped_at_spaces(
        "One head: there is nothing to share. Add heads in the Input panel (Settings), then "
        "let them share their keys and values here.",
        width, true);
    ImGui::EndChild();
    return;
  }
  draw_diagram(state, width);
  ImGui::Spacing();
  draw_costs(state);
  ImGui::Spacing();
  update_difference(state);
  if (difference_ >= 0) values.set("cheaper.largest_difference", difference_);
  std::string text;
  if (!shares_keys(c)) {
    text =
        "Every head has its own W_K and W_V. Choose fewer groups: the heads of a group then "
        "take the keys and values of its first head.";
  } else if (difference_ >= 0) {
    text =
        "The heads of a group now see every token through the same key and value (the "
        "group's first head's W_K and W_V), so their weights change. Largest difference of "
        "the output from every head having its own: " +
        view::format_number(difference_, 3) +
        ". A model trained with shared keys learns weights for them; here they were drawn "
        "for separate heads.";
  }
  text_wrapped_at_spaces(text, width, !shares_keys(c));
  ImGui::EndChild();
}

// The query heads in a row over the K/V heads they read, a line from each to its group's.
void SharedKeysView::draw_diagram(const AppState& state, float width) {
  const AttentionConfig& c = state.document.scenario().one_layer().config;
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const int heads = c.heads, groups = kv_group_count(c), per_group = heads / groups;
  const float box_w = std::min(font_ * 4.2f, (width - font_) / static_cast<float>(heads) - 6.0f);
  const float box_h = font_ * 1.6f, gap = font_ * 2.6f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float step = (width - box_w) / static_cast<float>(std::max(1, heads - 1));
  const float row_w = std::min(width, box_w + step * static_cast<float>(heads - 1));
  const float left = origin.x + (width - row_w) * 0.5f;
  const auto head_x = [&](int h) {
    return heads == 1 ? left : left + static_cast<float>(h) * std::min(step, box_w * 1.35f);
  };
  const float used_w = head_x(heads - 1) + box_w - left;
  const float shift = (width - used_w) * 0.5f - (left - origin.x);
  char text[24];
  for (int g = 0; g < groups; ++g) {
    // The group's K/V box under the middle of its heads.
    const float first = head_x(g * per_group) + shift,
                last = head_x(g * per_group + per_group - 1) + shift;
    const float x = (first + last) * 0.5f;
    const ImVec2 k0(x, origin.y + box_h + gap), k1(x + box_w, origin.y + box_h * 2.0f + gap);
    list->AddRectFilled(k0, k1, with_alpha(colours.text_dim, 0.18f), font_ * 0.2f);
    list->AddRect(k0, k1, colours.text_dim, font_ * 0.2f);
    std::snprintf(text, sizeof text, "K,V %d", view::shown_number(g));
    const ImVec2 ts = ImGui::CalcTextSize(text);
    list->AddText(ImVec2(x + (box_w - ts.x) * 0.5f, k0.y + (box_h - ts.y) * 0.5f), colours.text,
                  text);
    for (int h = g * per_group; h < (g + 1) * per_group; ++h) {
      const float hx = head_x(h) + shift;
      list->AddLine(ImVec2(hx + box_w * 0.5f, origin.y + box_h), ImVec2(x + box_w * 0.5f, k0.y),
                    head_colour(state.ui.theme, h), 2.0f);
    }
  }
  for (int h = 0; h < heads; ++h) {
    const float x = head_x(h) + shift;
    const ImVec2 p0(x, origin.y), p1(x + box_w, origin.y + box_h);
    list->AddRectFilled(p0, p1, head_colour(state.ui.theme, h, 0.35f), font_ * 0.2f);
    list->AddRect(p0, p1, head_colour(state.ui.theme, h), font_ * 0.2f, 0,
                  h == state.selection.head ? 3.0f : 1.0f);
    std::snprintf(text, sizeof text, "Q %d", view::shown_number(h));
    const ImVec2 ts = ImGui::CalcTextSize(text);
    list->AddText(ImVec2(x + (box_w - ts.x) * 0.5f, p0.y + (box_h - ts.y) * 0.5f), colours.text,
                  text);
  }
  ImGui::Dummy(ImVec2(width, box_h * 2.0f + gap));
}

// Per choice of groups: the layer's weights and the K/V cache per token and for this sentence.
void SharedKeysView::draw_costs(const AppState& state) {
  const AttentionConfig& c = state.document.scenario().one_layer().config;
  const long long n = state.result().n_key;
  const int groups = kv_group_count(c);
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##gqa_costs", 5, flags)) return;
  ImGui::TableSetupColumn("groups");
  ImGui::TableSetupColumn("W_K, W_V");
  ImGui::TableSetupColumn("all weights");
  ImGui::TableSetupColumn("cache per token");
  char header[48];
  std::snprintf(header, sizeof header, "for %lld tokens", n);
  ImGui::TableSetupColumn(header);
  ImGui::TableHeadersRow();
  const Palette& colours = palette(state.ui.theme);
  for (const int g : kv_group_choices(c.heads)) {
    const Result<GroupedQueryCost> cost = grouped_query_cost(c, g);
    if (!cost) continue;
    ImGui::TableNextRow();
    if (g == groups)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, with_alpha(colours.selection, 0.25f));
    ImGui::TableSetColumnIndex(0);
    ImGui::Text("%d%s", g, g == c.heads ? " (multi-head)" : g == 1 ? " (multi-query)" : "");
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(
        view::format_thousands(static_cast<std::size_t>(cost->key_value_weights)).c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(
        view::format_thousands(static_cast<std::size_t>(cost->total_weights())).c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::Text("%s",
                view::format_thousands(static_cast<std::size_t>(cost->cache_per_token)).c_str());
    ImGui::TableSetColumnIndex(4);
    ImGui::TextUnformatted(
        view::format_thousands(static_cast<std::size_t>(cost->cache_per_token * n)).c_str());
  }
  ImGui::EndTable();
}

void SharedKeysView::update_difference(const AppState& state) {
  const AttentionResult& r = state.result();
  if (!difference_of_.changed(r.version)) return;
  difference_ = -1;
  if (!shares_keys(r.config)) return;
  AttentionConfig own = r.config;
  own.kv_groups = 0;
  const Pipeline& p = state.pipeline();
  const Matrix& keys = p.cross() ? p.X_keys() : p.X_target();
  if (multi_head_.compute(p.X_target(), keys, state.document.scenario().one_layer().parameters, own,
                          p.mask()))
    difference_ = (multi_head_.result().output - r.output).cwiseAbs().maxCoeff();
}

}  // namespace attnviz::app
