// Small widgets the panels share: the query and head selectors on the top line of the views, the
// formula tooltip, the grid lines between a heatmap's cells, and the colour conversions they draw
// with. Each combo takes its ImGui id from the caller ("##pipeline_query", …), so the ids stay
// distinct per panel.
#pragma once

#include "app/panels/command_source.hpp"
#include "app/panels/panel.hpp"
#include "app/session/app_state.hpp"
#include "core/figures/colormap.hpp"

#include <imgui.h>

#include <string>
#include <string_view>

namespace attnviz::view {
struct HeatmapGeometry;
}

namespace attnviz::app {

inline ImU32 to_imgui(view::Rgba8 c) {
  return IM_COL32(c.r, c.g, c.b, c.a);
}
inline view::Rgba8 to_rgba8(ImU32 c) {
  return {static_cast<std::uint8_t>(c >> IM_COL32_R_SHIFT),
          static_cast<std::uint8_t>(c >> IM_COL32_G_SHIFT),
          static_cast<std::uint8_t>(c >> IM_COL32_B_SHIFT),
          static_cast<std::uint8_t>(c >> IM_COL32_A_SHIFT)};
}

// The colour with its opacity multiplied by `alpha` (clamped to [0, 1]).
ImU32 with_alpha(ImU32 colour, float alpha);

// "query" and a combo of the queries ("3: apple", counted from 1 as everywhere), at most
// `max_width_em` font sizes and `max_width_fraction` of the rest of the line wide. Hovering an
// entry highlights its token in every view; choosing one selects it. Returns whether a query was
// chosen.
bool draw_query_selector(const AppState& state, PanelContext& context, const char* id,
                         float max_width_em, float max_width_fraction);

// A combo of the heads ("1"; entries "head 1", …), 3.2 font sizes wide. Sets `head` to the
// head chosen and returns whether one was.
bool draw_head_combo(const char* id, int heads, int& head);

// A combo of a model's layers ("1"; entries "layer 1", …), 3.2 font sizes wide.
bool draw_layer_combo(const char* id, int layers, int& layer);
// "layer" and draw_layer_combo, selecting the layer chosen, then SameLine; nothing when the result
// has one layer (the one-layer scenario).
void draw_layer_selector(const AppState& state, PanelContext& context, const char* id);

// The layer selector (a model's), "head", the selected head's colour swatch (as in the Arrows
// panel) and draw_head_combo, which selects the head chosen.
void draw_head_selector(const AppState& state, PanelContext& context, const char* id);

// Whether an item `width` wide still fits on the line after the last item, `spacing` after it
// (ImGui's item spacing when not given).
bool fits_after_last_item(float width, float spacing);
bool fits_after_last_item(float width);
// ImGui::SameLine(0, spacing) when an item `width` wide still fits after the last one; else the
// next item starts a new line. For the settings lines that must wrap in a narrow panel.
void continue_line_if_fits(float width, float spacing);

// A stepper on one line: |◀ (to the first), ◀ back, `next_label` ▶, ▶| (to the last), each
// disabled where it cannot go; `unit` names a step in the end buttons' tooltips ("first tile").
// Moves `step` within 0 .. count − 1.
void draw_stepper(const char* id, int& step, int count, const char* next_label, const char* unit);

// In a panel left too little room to draw its view (large text in a small window): says so and
// how to make room, instead of an empty area. Draws at the cursor, within what is available.
void draw_no_room_note();

// The size to write tokens' names at in rows `row_height` apart (the Arrows and Output views):
// view::token_label_size at the font's size (never under font - 2: thinner rows scroll).
float row_label_size(float row_height);

// Text wrapped at `width` pixels (the current font), breaking only at spaces
// (view::wrap_at_spaces): ImGui's own wrap breaks after '.', ',' or '!', splitting "0.30" or
// leaving a closing quote alone. The lines joined by '\n', to measure or draw as one block.
std::string wrap_text_at_spaces(std::string_view text, float width);
void text_wrapped_at_spaces(std::string_view text, float width, bool dimmed = false);

// While the Cheaper attention view is shown, a view that draws full attention says so, so that
// a class does not read its numbers as the cheaper method's (lesson 17: Reformer's "it" never
// sees "animal", while full attention gives it 0.58). Tells the tests as `value` (1 when said).
void draw_full_attention_note(const AppState& state, const char* value);

// A tooltip with a dimmed heading and, under it, the formula that produced a number, wrapped at
// 36 font sizes.
void draw_formula_tooltip(const char* heading, const char* formula);

// `text` turned a quarter turn anticlockwise (read bottom to top), its first character at
// `bottom_left`, cut to `max_length` pixels, clipped to the caller's clip rectangle.
void add_text_upwards(ImDrawList* list, ImVec2 bottom_left, ImU32 colour, const char* text,
                      float max_length);

// Records the centre of the last item drawn as frame values `key`_x and `key`_y (screen
// pixels), where the GUI tests click it.
void record_item_centre(const AppState& state, const std::string& key);

// A menu item for a command of the app's table (app/panels/command_source.hpp): its label (or
// `label`), keys, check mark and whether it may run now; runs it when chosen. True when chosen.
bool command_menu_item(CommandSource& commands, std::string_view id, const char* label = nullptr);

// The text, or as much of its start as fits in `width` (pixels, the current font) followed by
// "…"; never splits a character.
std::string fit_text(std::string_view text, float width);
// A token's name as it is seen (AppState::visual_text: Hebrew and Arabic right to left) when
// that fits in `width`; else cut by fit_text() in reading order, then turned.
std::string fit_label(const view::VisualText& shown, const std::string& text, float width);

// The width of the widest of `tokens`' names as the views write them (their visual text), at the
// current font size.
float widest_token(const AppState& state, const std::vector<Token>& tokens);

// Text rotated a quarter turn (reading upwards), ending at `anchor` (the bottom end). It is laid
// out level at `layout` first, a point inside the clip rectangle with room for it to the right:
// ImGui leaves out the glyphs of a line that fall outside the clip rectangle before it is turned
// (the last column's label lost its last letters).
void add_vertical_text(ImDrawList* list, ImVec2 layout, ImVec2 anchor, ImU32 colour,
                       const char* text);

// A heatmap's colour scale on one text line: "0", the colormap from 0 to the top as a bar
// `bar_w` wide starting at `at` (the "0" before it, to the left), then `top_text`.
void draw_colour_scale(ImDrawList* list, ImVec2 at, float bar_w, view::ColormapId colormap,
                       const char* top_text, ImU32 top_colour, ImU32 zero_colour);

// A masked cell (no weight: the mask hides the key from the query) in [p0, p1], hatched in the
// theme's greys as the heatmap shader draws it (core/figures/colormap.hpp: masked_look).
void draw_masked_cell(ImDrawList* list, ImVec2 p0, ImVec2 p1, Theme theme);

// Lines between a heatmap's cells, between columns when they are 8 px wide or more and between
// rows when they are 8 px tall or more (each way on its own).
void draw_cell_grid_lines(ImDrawList* list, const view::HeatmapGeometry& g, int rows, int cols,
                          ImU32 colour);

// The scenario's sparse or local mask pattern (core/variants/sparse_masks.hpp) on one line: none,
// a window, a dilated window or blocks, with its numbers; a custom mask from a file shows as
// such. The Input panel and the Cheaper attention view's sparse part both draw it.
void draw_mask_pattern_controls(const AppState& state, PanelContext& context);

}  // namespace attnviz::app
