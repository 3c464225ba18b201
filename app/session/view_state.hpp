// The app's view state as kept in a scenario file's "view" object (Scenario::view_json): the
// selection (head, query) and the UI settings. No ImGui: unit-tested.
//   {"head": 0, "query": 4, "panels": ["input", "heatmaps"], "center_view": "pipeline",
//    "theme": "dark", "font_size": 18, "colormap": "sequential", "show_cell_values": true,
//    "arrow_threshold": 0.02}
#pragma once

#include "app/session/app_state.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace attnviz::app {

inline constexpr float kMinViewFontSize = 10;
inline constexpr float kMaxViewFontSize = 64;

// The "view" object's JSON text (compact, keys in the order above). The lesson band is not a
// panel one chooses, so "panels" never lists it; "font_size" is written only when a size was
// chosen (UiSettings::font_size_chosen), not one that follows the window.
std::string view_state_to_json(const AppState& state);

// Applies every valid entry of a "view" object to the selection and the UI settings. Anything
// unknown or invalid adds one warning naming its key ("view.theme: ...") and leaves that setting
// as it was; malformed JSON adds one warning and changes nothing; "" changes nothing. A font
// size outside [10, 64] is clamped (with a warning). head and query are only checked against
// the engine's limits: AppState::recompute_if_needed brings them into the current scenario's
// range. Never throws.
void apply_view_state(std::string_view json, AppState& state, std::vector<std::string>& warnings);

}  // namespace attnviz::app
