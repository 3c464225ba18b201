// What the Arrows view says in words, computed from the numbers it draws so that every statement
// is true of them (a unit test checks each): the note shown when no line is drawn, and the lists
// of its tooltips. No ImGui here.
//
// Lines are drawn for the weights α at or above a threshold, in the heads shown (all, or the
// selected one): every line of the hovered token (its row of α, or for a key its column), or with
// nothing hovered every line of every query. When none is drawn, the note says why, for exactly
// what was looked at: "every α < 0.020: attention spread thin" is said of the rows drawn, never of
// a key's column (a key that no query attends to is not "spread thin"), and a note about one head
// names it (another head may give the same key α = 1).
#pragma once

#include "core/engine/attention.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace attnviz::view {

// What the view isolates: nothing (every query's lines), a query's row or a key's column.
enum class ArrowsFocus { None, Query, Key };

struct ArrowsScope {
  ArrowsFocus focus = ArrowsFocus::None;
  int index = -1;           // the query or key isolated
  std::string_view name;    // its token, as it is shown
  std::vector<int> heads;   // the heads drawn (all, or the selected one)
  bool all_heads = true;    // whether `heads` is every head of the result
  float threshold = 0.02f;  // the least α drawn as a line
};

// Whether the scope draws a line: some α >= threshold (and > 0) in the heads drawn, in the
// focused row or column, or anywhere with no focus.
bool arrows_draw_a_line(const AttentionResult& result, const ArrowsScope& scope);

// The note when no line is drawn ("" when one is): its full form and a short form for a narrow
// view, each true of the numbers:
//   no focus:   "every α < 0.020: attention spread thin"  (rows that attend to no key at all,
//               every key masked: "every key is masked for every query")
//   a query:    "every α of "eat" < 0.020: attention spread thin", or ""eat" attends to no key:
//               every key is masked"
//   a key:      "no query attends to "eat"" when each of its weights is 0, else "every α to "eat"
//               < 0.020"
// with " in head 2" when one head of several is drawn.
struct ArrowsNote {
  std::string full, brief;
  bool empty() const { return full.empty(); }
};
ArrowsNote arrows_empty_note(const AttentionResult& result, const ArrowsScope& scope);

// A hovered token's strongest connections in one head: up to `count` (other index, α) pairs with
// α > 0, the largest first (the lower index first among equal weights). For a query, the keys it
// attends to (its row of α); for a key, the queries that attend to it (its column).
struct Connection {
  int index = 0;
  float alpha = 0;
};
std::vector<Connection> strongest_connections(const Matrix& weights, ArrowsFocus side, int index,
                                              int count);

}  // namespace attnviz::view
