// Opening, saving and exporting, as the File menu does them. None of them needs a window, so
// they are unit-tested. A failure never changes the user's state; the message says why.
#pragma once

#include "app/session/app_state.hpp"
#include "app/session/recent_files.hpp"
#include "core/base/status.hpp"

#include <string>

namespace attnviz::app {

// Opens a scenario file with the view state saved in it (its warnings in state.file_warnings);
// on failure the current state stays and the error says why.
Status open_scenario(AppState& state, RecentFiles& recent, const std::string& path);

// Saves the scenario and the view state (write to a temporary file, then rename). On success the
// state is marked saved and remembers the path.
Status save_scenario(AppState& state, RecentFiles& recent, const std::string& path);

// Exports of what the views show, from the last computed result.
Status export_heatmap_svg(const AppState& state, const std::string& path);
Status export_arrows_svg(const AppState& state, const std::string& path, bool all_heads);
Status export_matrices_csv(const AppState& state, const std::string& folder);  // creates the folder
Status export_result_json(const AppState& state, const std::string& path);

}  // namespace attnviz::app
