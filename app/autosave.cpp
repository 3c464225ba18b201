#include "app/autosave.hpp"

#include "core/file_io.hpp"

#include <cstdio>
#include <filesystem>

namespace attnviz::app {

Autosave::Autosave(std::string folder) {
  if (folder.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (!error) path_ = folder + "/recovery.json";
}

std::optional<Scenario> Autosave::recoverable(std::string& problem) const {
  if (path_.empty() || !std::filesystem::exists(path_)) return std::nullopt;
  ScenarioLoad load = load_scenario_file(path_);
  if (!load.ok()) {
    problem = "the recovery file could not be read: " + load.error;
    return std::nullopt;
  }
  return std::move(*load.scenario);
}

void Autosave::observe(const AppState& state, double now) {
  if (path_.empty() || paused_) return;
  // A scenario that was just opened is saved already: only edits need recovering.
  if (state.load_version != seen_load_version_) {
    seen_load_version_ = state.load_version;
    written_version_ = state.edit_version;
    return;
  }
  if (state.edit_version == written_version_ || now - last_write_ < kInterval) return;
  if (Status status = write_file_atomic(path_, scenario_to_json(state.scenario)); !status) {
    error_ = "autosave failed: " + status.message();
  } else {
    error_.clear();
  }
  written_version_ = state.edit_version;
  last_write_ = now;
}

void Autosave::discard() {
  if (!path_.empty()) std::remove(path_.c_str());
}

}  // namespace attnviz::app
