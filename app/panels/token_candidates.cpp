#include "app/panels/token_candidates.hpp"

#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/format.hpp"
#include "core/models/model.hpp"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace attnviz::app {

void draw_token_candidates(const AppState& state, const ModelTokenizer& tokenizer,
                           std::span<const Candidate> candidates, std::span<const float> logits,
                           view::ViewId view) {
  const Palette& colours = palette(state.ui.theme);
  const float font = ImGui::GetFontSize();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float token_w = font * 8.0f;
  const int count = static_cast<int>(candidates.size());
  state.frame.layout.labels_of(view).add(count, count, font, false);
  const float bar_w =
      std::max(font * 4.0f, ImGui::GetContentRegionAvail().x - token_w - font * 5.0f);
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
    ImGui::Dummy(ImVec2(token_w + bar_w + font * 4.0f, line));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "token %d \"%s\": logit %s, probability %s", candidate.token, shown.c_str(),
          view::format_number(logits[static_cast<std::size_t>(candidate.token)], 2).c_str(),
          view::format_number(candidate.probability, 4).c_str());
  }
}

}  // namespace attnviz::app
