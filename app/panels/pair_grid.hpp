// The query × key grid that the Cheaper attention view's parts share: each computed pair's
// weight α in the colour scale, the pairs a method never computes hatched, the queries' names
// down the left, key numbers across the top, and optional colour strips (a Reformer bucket) along
// both edges. Reports the hovered cell; records the names it wrote for the GUI tests.
#pragma once

#include "app/panels/panel.hpp"
#include "app/session/app_state.hpp"

#include <imgui.h>

#include <string>
#include <vector>

namespace attnviz::app {

struct PairGridSpec {
  const Matrix* weights = nullptr;       // (n_query, n_key): α, 0 to 1
  const MaskMatrix* computed = nullptr;  // (n_query, n_key): 1 = computed; null: every pair
  const std::vector<ImU32>* query_colours = nullptr;  // (n_query): a strip left of the rows
  const std::vector<ImU32>* key_colours = nullptr;    // (n_key): a strip over the columns
  int highlight_query = -1;                           // this row's name in the selection colour
  int highlight_key = -1;                             // this column outlined
  const char* title = nullptr;                        // over the grid
};

struct PairGridHover {
  int query = -1, key = -1;  // the hovered cell, or -1
  ImVec2 size;               // what the grid took
};

// Draws at `origin` within `size` (cells no smaller than readable rows: it may reach past).
PairGridHover draw_pair_grid(const AppState& state, PanelContext& context, const PairGridSpec& spec,
                             ImVec2 origin, ImVec2 size);

// The scale of the head's dot-product scores as the cheaper methods compute them
// (variant_score_scale), or false with `error` saying why not and where to change it.
bool score_scale_or_error(const AttentionConfig& config, const char* method, float& scale,
                          std::string& error);

// Tokens as chips on wrapping lines, each filled with its colour (0: the theme's chip) and an
// optional small badge after its text ("b2"); `outlined` marks one. Returns the clicked chip's
// index, or -1. Hovering a chip marks the query in every view.
int draw_coloured_chips(const AppState& state, const char* id, const std::vector<Token>& tokens,
                        const std::vector<ImU32>& fills, const std::vector<std::string>& badges,
                        int outlined);

}  // namespace attnviz::app
