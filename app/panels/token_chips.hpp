// Tokens drawn as chips that wrap across lines; shared by the panels that list tokens.
#pragma once

#include "app/panels/panel.hpp"
#include "app/session/app_state.hpp"

#include <functional>

namespace attnviz::app {

// Hovering a chip highlights its token in every view; clicking a query chip selects it, or, with
// `on_click`, calls it with the chip's index instead (the Fill the mask view masks the word).
void draw_token_chips(const AppState& state, PanelContext& context, const Tokenization& tokens,
                      const std::vector<EmbeddingSource>& sources, Side side,
                      const std::function<void(int index)>& on_click = {});

}  // namespace attnviz::app
