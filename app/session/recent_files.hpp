// The files opened lately, most recent first, kept in a small JSON list in the app's state
// folder. No ImGui: unit-tested.
#pragma once

#include "app/session/state_dir.hpp"
#include "core/base/status.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace attnviz::app {

// app_state_dir() + "/recent-files.json", or "" when there is no state folder.
std::string default_recent_files_path();

class RecentFiles {
 public:
  static constexpr std::size_t kMaxEntries = 10;

  // `storage_path` "" keeps the list in memory only (save() then says so).
  explicit RecentFiles(std::string storage_path);

  // Replaces the list by the stored one; a missing, unreadable or corrupt file gives an empty
  // list (entries that are not absolute paths are dropped).
  void load();
  // Puts `path` (made absolute) first; an earlier entry for it moves up; at most kMaxEntries.
  void add(const std::string& path);
  void remove(const std::string& path);
  void clear() { entries_.clear(); }
  const std::vector<std::string>& entries() const { return entries_; }
  // Writes the list (atomically); the message says why when it cannot. Best effort for the
  // app: a list not written loses no work, so its callers go on without it.
  Status save() const;

  const std::string& storage_path() const { return storage_path_; }

 private:
  std::string storage_path_;
  std::vector<std::string> entries_;
};

}  // namespace attnviz::app
