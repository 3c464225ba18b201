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

// Model mode. Opens a real model for the text typed so far: a shipped model's name
// ("stories260K"), or a model's folder or file (a shipped model's path is kept as its name, so a
// saved file opens on another machine). One edit, undone as any other; the one-layer scenario's
// settings are kept meanwhile. On failure nothing changes and the error says why.
Status open_model(AppState& state, const std::string& path_or_name);
// For a scenario that names a model, before it is loaded: a relative path is made the scenario
// file's folder's (when the model is there), and the model is opened and run, becoming the
// state's computed pipeline. An error, and the state untouched, when it cannot be.
Status prepare_model_scenario(AppState& state, Scenario& scenario, const std::string& file_path);
// Back to the one-layer scenario (one edit); nothing when not in model mode.
void leave_model(AppState& state);
// The name a model is recorded under: a shipped model's name for its folder or its file (the
// folders core/models/model_files.hpp looks in), else the path as given.
std::string recorded_model_name(const std::string& path_or_name);

// Saves the scenario and the view state (write to a temporary file, then rename). On success the
// state is marked saved and remembers the path.
Status save_scenario(AppState& state, RecentFiles& recent, const std::string& path);

// Exports of what the views show, from the last computed result.
Status export_heatmap_svg(const AppState& state, const std::string& path);
Status export_arrows_svg(const AppState& state, const std::string& path, bool all_heads);
Status export_matrices_csv(const AppState& state, const std::string& folder);  // creates the folder
Status export_result_json(const AppState& state, const std::string& path);

}  // namespace attnviz::app
