// Tokens drawn as chips that wrap across lines; shared by the panels that list tokens.
#pragma once

#include "app/panels/panel.hpp"
#include "app/session/app_state.hpp"

namespace attnviz::app {

// Hovering a chip highlights its token in every view; clicking a query chip selects it.
void draw_token_chips(const AppState& state, PanelContext& context, const Tokenization& tokens,
                      const std::vector<EmbeddingSource>& sources, Side side);

}  // namespace attnviz::app
