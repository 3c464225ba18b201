#include "app/panels/token_candidates.hpp"

#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/format.hpp"
#include "core/models/model.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnviz::app {

ImU32 rise_colour(Theme theme) {
  return theme == Theme::Dark ? IM_COL32(120, 215, 140, 255) : IM_COL32(30, 140, 60, 255);
}
ImU32 fall_colour(Theme theme) {
  return theme == Theme::Dark ? IM_COL32(250, 130, 110, 255) : IM_COL32(200, 50, 40, 255);
}

void draw_token_candidates(const AppState& state, const ModelTokenizer& tokenizer,
                           std::span<const Candidate> candidates, std::span<const float> logits,
                           view::ViewId view, std::span<const float> before) {
  const Palette& colours = palette(state.ui.theme);
  const float font = ImGui::GetFontSize();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float token_w = font * 8.0f;
  const int count = static_cast<int>(candidates.size());
  state.frame.layout.labels_of(view).add(count, count, font, false);
  // With a before: room for "▲ from 12.5%" after the percentage.
  const float change_w = before.empty() ? 0.0f : font * 6.5f;
  const float bar_w =
      std::max(font * 4.0f, ImGui::GetContentRegionAvail().x - token_w - font * 5.0f - change_w);
  for (const Candidate& candidate : candidates) {
    const std::string shown = state.frame.visual_text(tokenizer.shown(candidate.token));
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    list->AddRectFilled(p, ImVec2(p.x + token_w - font * 0.4f, p.y + line - 2.0f), colours.chip,
                        font * 0.2f);
    const std::string fitted = fit_text(shown, token_w - font * 0.8f);
    list->AddText(ImVec2(p.x + font * 0.2f, p.y), colours.text, fitted.c_str());
    const float x = p.x + token_w;
    const float filled = bar_w * std::clamp(candidate.probability, 0.0f, 1.0f);
    list->AddRectFilled(ImVec2(x, p.y + 2.0f), ImVec2(x + filled, p.y + line - 3.0f),
                        colours.highlight);
    list->AddRect(ImVec2(x, p.y + 2.0f), ImVec2(x + bar_w, p.y + line - 3.0f), colours.grid);
    char percent[24];
    std::snprintf(percent, sizeof percent, "%s%%",
                  view::format_number(candidate.probability * 100.0f, 1).c_str());
    list->AddText(ImVec2(x + bar_w + font * 0.4f, p.y), colours.text, percent);
    const std::size_t id = static_cast<std::size_t>(candidate.token);
    const bool has_before = id < before.size();
    if (has_before) {
      // Where the bar was: a tick across it; and the move in words, coloured by its sense.
      const float was = std::clamp(before[id], 0.0f, 1.0f);
      const float tick = x + bar_w * was;
      list->AddLine(ImVec2(tick, p.y), ImVec2(tick, p.y + line - 1.0f), colours.text,
                    std::max(2.0f, font * 0.12f));
      char change[48];
      const std::string was_text = view::format_number(was * 100.0f, 1);
      const float moved = candidate.probability - was;
      // Under a tenth of a point either way reads as unchanged.
      if (std::abs(moved) < 0.0005f)
        std::snprintf(change, sizeof change, "= %s%%", was_text.c_str());
      else
        std::snprintf(change, sizeof change, "%s from %s%%",
                      moved > 0 ? "\xe2\x96\xb2" : "\xe2\x96\xbc", was_text.c_str());
      const float percent_w = ImGui::CalcTextSize("100.0%").x;
      list->AddText(ImVec2(x + bar_w + font * 0.8f + percent_w, p.y),
                    std::abs(moved) < 0.0005f ? colours.text_dim
                    : moved > 0               ? rise_colour(state.ui.theme)
                                              : fall_colour(state.ui.theme),
                    change);
    }
    ImGui::Dummy(ImVec2(token_w + bar_w + font * 4.0f + change_w, line));
    if (ImGui::IsItemHovered()) {
      if (has_before)
        ImGui::SetTooltip(
            "token %d \"%s\": logit %s, probability %s\nbefore the change: probability %s",
            candidate.token, shown.c_str(), view::format_number(logits[id], 2).c_str(),
            view::format_number(candidate.probability, 4).c_str(),
            view::format_number(before[id], 4).c_str());
      else
        ImGui::SetTooltip("token %d \"%s\": logit %s, probability %s", candidate.token,
                          shown.c_str(), view::format_number(logits[id], 2).c_str(),
                          view::format_number(candidate.probability, 4).c_str());
    }
  }
}

}  // namespace attnviz::app
