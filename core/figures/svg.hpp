// Vector pictures of the views, for papers and slides: the heatmap of one head's weights and the
// arrows from queries to keys, as standalone SVG documents. Pure text generation (no GL, no
// ImGui), laid out by the same code as the app's views (layout_heatmap, layout_arrows,
// visible_labels) and coloured by the same colormaps and head colours.
//
// Every element that stands for a number carries a class and data attributes, so a script (or a
// test) can find them:
//   <rect class="cell" data-query="2" data-key="3" data-alpha="0.740" fill="#rrggbb" .../>
//   <path class="arrow" data-head="0" data-query="2" data-key="3" data-alpha="0.740" .../>
// data-alpha is written to three decimals; a number that is not finite is written "overflow"
// (as the app prints it), never "nan" or "inf".
#pragma once

#include "core/engine/attention.hpp"
#include "core/figures/colormap.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::view {

// Arrows: at most this many lines are drawn by default (the strongest); a figure with more is
// unreadable and heavy.
inline constexpr std::size_t kSvgMaxArrows = 1000;
inline constexpr int kSvgAllHeads = -1;

struct SvgOptions {
  std::string title;     // drawn above the picture (and as the document's <title>); "" for none
  float font_size = 14;  // px
  float cell_size = 0;  // heatmap cell side in px; 0: 56, smaller for big matrices (grid <= 900 px)
  bool show_values = true;  // print the weight in each cell when the cells are big enough
  int value_decimals = 2;
  bool dark = false;    // dark background and light text (the app's dark theme)
  float scale_top = 1;  // heatmap: the colour scale runs from 0 to this (the app's contrast scale)
  std::size_t max_arrows = kSvgMaxArrows;
  std::string query_heading = "queries";  // arrows: above each column
  std::string key_heading = "keys";
};

// The weights (n_query, n_key) as a grid of coloured cells: rows = queries, columns = keys.
// Cell colours are colormap entries (sample(colormap, α / options.scale_top)), exactly as the
// app's shader picks them. Key labels are written vertically when they do not fit across a cell;
// when the cells are too small for every label, every k-th is written (as in the app). Labels may
// be any UTF-8: they are XML-escaped.
std::string heatmap_svg(const Matrix& weights, const std::vector<std::string>& query_labels,
                        const std::vector<std::string>& key_labels, ColormapId colormap,
                        const SvgOptions& options = {});

// One line of the arrows view.
struct SvgArrow {
  int head = 0, query = 0, key = 0;
  float alpha = 0;
};

// Which lines the arrows view draws: every (head, query, key) of the drawn heads (all, or only
// `head`) with α >= threshold and α > 0 (so at most 1/threshold per query and head); when there
// are more than max_arrows, the strongest max_arrows (ties: the earlier head, query, key).
// Ordered by head, then query, then key. `total`, when given, receives the count before the cap.
std::vector<SvgArrow> select_arrows(const AttentionResult& result, int head, float threshold,
                                    std::size_t max_arrows, std::size_t* total = nullptr);

// Queries down the left, keys down the right, one curve per selected pair (select_arrows with
// options.max_arrows) whose width and opacity grow with α as in the app, one colour per head,
// and a legend of the heads drawn. `head` is a head index or kSvgAllHeads.
std::string arrows_svg(const AttentionResult& result, const std::vector<std::string>& query_labels,
                       const std::vector<std::string>& key_labels, int head, float threshold,
                       const SvgOptions& options = {});

// Text for XML content and attribute values: & < > " ' escaped; UTF-8 kept; invalid UTF-8 and
// control characters XML cannot hold become U+FFFD.
std::string xml_escape(std::string_view text);

}  // namespace attnviz::view
