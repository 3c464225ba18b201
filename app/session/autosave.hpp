// Autosave and recovery: while the scenario changes, it is written to a recovery file every few
// seconds (never on every frame), atomically. A clean exit with nothing unsaved removes it; after
// a crash or a kill the next start finds it and offers to restore it.
#pragma once

#include "app/session/app_state.hpp"

#include <optional>
#include <string>

namespace attnviz::app {

class Autosave {
 public:
  static constexpr double kInterval = 2.0;  // seconds between writes while editing

  // `folder` (usually app_state_dir()) holds recovery.json, and beside it recovery-path.txt with
  // the path of the file the scenario was opened from or saved to, if any; "" disables autosave.
  explicit Autosave(const std::string& folder);
  const std::string& path() const { return path_; }

  struct Recovered {
    Scenario scenario;
    std::string path;  // the file it was opened from or saved to; "" for none
  };
  // The scenario an earlier run left behind, or none; an error when its file cannot be read.
  Result<std::optional<Recovered>> recoverable() const;
  // Writes the scenario when it changed since the last write and kInterval has passed.
  void observe(const AppState& state, double now);
  // Removes the recovery file (the user declined it, or nothing is unsaved at exit).
  void discard();
  // While an earlier run's recovery file awaits the user's answer, nothing is written.
  void pause(bool paused) { paused_ = paused; }
  const std::string& last_error() const { return error_; }
  void clear_error() { error_.clear(); }  // seen; the next failure reports again

 private:
  std::string path_;
  std::string path_file_;                    // recovery-path.txt
  std::optional<std::string> written_path_;  // the scenario path the path file holds ("": none)
  std::uint64_t written_version_ = 0;
  std::uint64_t seen_load_version_ = 0;
  double last_write_ = -1e9;
  bool paused_ = false;
  std::string error_;
};

}  // namespace attnviz::app
