#include "app/panels/token_chips.hpp"

#include "app/panels/theme.hpp"
#include "core/figures/format.hpp"
#include "core/text/lexicon.hpp"

#include <imgui.h>

#include <string>

namespace attnviz::app {
namespace {

// `label`: the token's text as it is seen (AppState::visual_text).
void chip_tooltip(const char* label, const Token& token, EmbeddingSource source, int index,
                  Side side) {
  ImGui::BeginTooltip();
  ImGui::Text("%s %d: \"%s\"", side == Side::Query ? "query token" : "key token",
              view::shown_number(index), label);
  switch (source) {
    case EmbeddingSource::Override:
      ImGui::TextUnformatted("embedding: given in the scenario");
      break;
    case EmbeddingSource::Hashed:
      ImGui::TextUnformatted("embedding: not in the lexicon; a fixed vector made from the word");
      break;
    case EmbeddingSource::Lexicon: {
      ImGui::TextUnformatted("embedding: teaching lexicon");
      if (const LexiconEntry* entry = Lexicon::builtin().find(token.key))
        for (std::size_t f = 0; f < kFeatureCount; ++f)
          if (entry->features[f] != 0.0f)
            ImGui::BulletText("%s %.2g", std::string(kFeatureNames[f]).c_str(),
                              static_cast<double>(entry->features[f]));
      break;
    }
  }
  ImGui::EndTooltip();
}

}  // namespace

void draw_token_chips(const AppState& state, PanelContext& context, const Tokenization& tokens,
                      const std::vector<EmbeddingSource>& sources, Side side,
                      const std::function<void(int index)>& on_click) {
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* draw_list = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const ImVec2 padding(font * 0.4f, font * 0.18f);
  const float spacing = font * 0.3f, rounding = font * 0.3f;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  ImGui::PushID(side == Side::Query ? "query chips" : "key chips");
  for (std::size_t i = 0; i < tokens.tokens.size(); ++i) {
    const Token& token = tokens.tokens[i];
    const char* label = state.frame.visual_text(token.text);
    const ImVec2 text_size = ImGui::CalcTextSize(label);
    const ImVec2 size(text_size.x + 2 * padding.x, text_size.y + 2 * padding.y);
    if (i > 0 && ImGui::GetItemRectMax().x + spacing + size.x < right) ImGui::SameLine(0, spacing);
    ImGui::PushID(static_cast<int>(i));
    ImGui::InvisibleButton("chip", size);
    const int index = static_cast<int>(i);
    const bool hovered = ImGui::IsItemHovered();
    if (hovered) {
      state.frame.hovered_next = {side, index};
      if (i < sources.size()) chip_tooltip(label, token, sources[i], index, side);
    }
    if (ImGui::IsItemClicked() && on_click)
      on_click(index);
    else if (ImGui::IsItemClicked() && side == Side::Query)
      context.selection.query = index;
    const bool highlighted =
        side == Side::Query ? state.highlights_query(index) : state.highlights_key(index);
    const bool selected = side == Side::Query && state.selection.query == index;
    const ImVec2 p0 = ImGui::GetItemRectMin(), p1 = ImGui::GetItemRectMax();
    if (on_click)  // where a click lands, for the tests: "text x y w h"
      state.frame.values.append(
          "clickable_chips",
          std::string(label) + " " + std::to_string(int(p0.x)) + " " + std::to_string(int(p0.y)) +
              " " + std::to_string(int(p1.x - p0.x)) + " " + std::to_string(int(p1.y - p0.y)));
    // Chips scrolled out of view cost the renderer nothing: they are not drawn at all.
    if (!ImGui::IsItemVisible()) {
      ImGui::PopID();
      continue;
    }
    // The fill without an anti-aliased fringe: on a chip this pale the corners look the same,
    // and a software renderer draws a third of the triangles.
    const ImDrawListFlags flags = draw_list->Flags;
    draw_list->Flags &= ~ImDrawListFlags_AntiAliasedFill;
    draw_list->AddRectFilled(p0, p1, highlighted || hovered ? colours.chip_hover : colours.chip,
                             rounding);
    draw_list->Flags = flags;
    if (i < sources.size() && sources[i] == EmbeddingSource::Override)
      draw_list->AddRect(p0, p1, colours.text_dim, rounding, 0, 1.0f);
    const float outline = highlight_width(state.ui, font);
    if (selected)
      draw_list->AddRect(p0, p1, colours.selection, rounding, 0, outline);
    else if (highlighted && state.ui.presenter)  // seen from the back of the room
      draw_list->AddRect(p0, p1, colours.highlight, rounding, 0, outline);
    // A [MASK] stands out: the hidden word the model is asked to guess.
    const bool mask = token.kind == TokenKind::Symbol && token.text == "[MASK]";
    if (mask && !selected) draw_list->AddRect(p0, p1, colours.highlight, rounding, 0, outline);
    draw_list->AddText(ImVec2(p0.x + padding.x, p0.y + padding.y),
                       mask ? colours.highlight : colours.text, label);
    ImGui::PopID();
  }
  ImGui::PopID();
}

}  // namespace attnviz::app
