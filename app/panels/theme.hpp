// Light and dark themes, and colours the views share.
#pragma once

#include "app/session/app_state.hpp"

#include <imgui.h>

#include <algorithm>

namespace attnviz::app {

void apply_theme(Theme theme, float scale);

// Colours that depend on the theme.
struct Palette {
  ImU32 text, text_dim, grid, highlight, selection, chip, chip_hover, panel_background;
};
const Palette& palette(Theme theme);
// The width of the outline that marks the hovered and the selected token: in presenter mode wider,
// so that a class sees from the back of the room what the pointer points at.
inline float highlight_width(const UiSettings& ui, float font) {
  return ui.presenter ? std::max(3.0f, font * 0.2f) : std::max(2.0f, font * 0.12f);
}

// One colour per head (view/head_colours.hpp, shared with the SVG export).
ImU32 head_colour(Theme theme, int head, float alpha = 1.0f);

}  // namespace attnviz::app
