// Light and dark themes, and colours the views share.
#pragma once

#include "app/session/app_state.hpp"

#include <imgui.h>

namespace attnviz::app {

void apply_theme(Theme theme, float scale);

// Colours that depend on the theme.
struct Palette {
  ImU32 text, text_dim, grid, highlight, selection, chip, chip_hover, panel_background;
};
const Palette& palette(Theme theme);
// One colour per head (view/head_colours.hpp, shared with the SVG export).
ImU32 head_colour(Theme theme, int head, float alpha = 1.0f);

}  // namespace attnviz::app
