// Autosave and recovery: while the scenario changes, it is written to a recovery file every few
// seconds (never on every frame), atomically. A clean exit with nothing unsaved removes it; after
// a crash or a kill the next start finds it and offers to restore it.
#pragma once

#include "app/app_state.hpp"

#include <optional>
#include <string>

namespace attnviz::app {

class Autosave {
 public:
  static constexpr double kInterval = 2.0;  // seconds between writes while editing

  // `folder` (usually app_state_dir()) holds recovery.json; "" disables autosave.
  explicit Autosave(std::string folder);
  const std::string& path() const { return path_; }

  // The scenario an earlier run left behind, if any (and any problem reading it).
  std::optional<Scenario> recoverable(std::string& problem) const;
  // Writes the scenario when it changed since the last write and kInterval has passed.
  void observe(const AppState& state, double now);
  // Removes the recovery file (the user declined it, or nothing is unsaved at exit).
  void discard();
  // While an earlier run's recovery file awaits the user's answer, nothing is written.
  void pause(bool paused) { paused_ = paused; }
  const std::string& last_error() const { return error_; }

 private:
  std::string path_;
  std::uint64_t written_version_ = 0;
  std::uint64_t seen_load_version_ = 0;
  double last_write_ = -1e9;
  bool paused_ = false;
  std::string error_;
};

}  // namespace attnviz::app
