// Autosave and recovery: while the scenario changes, it is written to a recovery file every few
// seconds (never on every frame), with the project's file writer. A clean exit with nothing
// unsaved removes it; after a crash or a kill the next start finds it and offers to restore it.
//
// The files, in the state folder (app_state_dir()):
//   recovery.json, recovery-path.txt   this run's unsaved work, and the file it belongs to
//   recovery-offered-N.json,           an earlier run's unsaved work awaiting an answer (N = 1,
//   recovery-offered-N-path.txt        2, ...: the higher, the later the run that left it)
// At start, keep_earlier_work() moves an earlier run's recovery.json aside under the next N, so
// that this run's autosave goes on protecting the new work (in recovery.json) while the offer
// waits, and never overwrites the earlier work. Answering the offer (restored, declined) removes
// that work's files; work not answered is offered again at the next start, oldest first.
#pragma once

#include "app/session/app_state.hpp"

#include <optional>
#include <string>

namespace attnviz::app {

class Autosave {
 public:
  static constexpr double kInterval = 2.0;  // seconds between writes while editing

  // `folder` (usually app_state_dir()) holds the files above; "" disables autosave.
  explicit Autosave(const std::string& folder);
  const std::string& path() const { return path_; }  // this run's recovery.json

  struct Recovered {
    Scenario scenario;
    std::string path;  // the file it was opened from or saved to; "" for none
    std::string file;  // the recovery file it was read from
    int more = 0;      // how many more earlier runs' work await an answer after this one
  };
  // For headless runs (screenshots): the folder is read, and nothing in it is written, moved or
  // removed.
  void set_read_only(bool read_only) { read_only_ = read_only; }
  // At start, before the first write: an earlier run's recovery.json (with its path file) becomes
  // the latest work awaiting an answer, recovery-offered-N.json. Nothing to move is no error; on
  // an error the earlier work stays in recovery.json and nothing is written over it until it is
  // answered.
  Status keep_earlier_work();
  // The oldest earlier run's work awaiting an answer (recovery.json counts too until
  // keep_earlier_work() moved it aside), or none; an error when there is some but none of it can
  // be read (work that cannot be read is skipped, and left where it is).
  Result<std::optional<Recovered>> recoverable() const;
  // Writes the scenario when it changed since the last write and kInterval has passed.
  void observe(const AppState& state, double now);
  // The work of Recovered::file was restored and is now the document in `state`: it is written
  // as this run's recovery file at once, then the earlier file is removed (kept if the write
  // failed: it is offered again at the next start).
  void restored(const std::string& file, const AppState& state);
  // The work of Recovered::file was declined: its files are removed.
  void declined(const std::string& file);
  // Removes this run's recovery file (nothing is unsaved, or the user discarded the edits).
  void discard();
  const std::string& last_error() const { return error_; }
  void clear_error() { error_.clear(); }  // seen; the next failure reports again

 private:
  Status write(const AppState& state);  // this run's recovery file, now
  std::string path_file_of(const std::string& file) const;
  void remove_work(const std::string& file);  // an earlier run's work and its path file

  std::string folder_;
  std::string path_;
  std::string path_file_;                    // recovery-path.txt
  std::optional<std::string> written_path_;  // the scenario path the path file holds ("": none)
  std::uint64_t written_version_ = 0;
  std::uint64_t seen_load_version_ = 0;
  double last_write_ = -1e9;
  bool read_only_ = false;
  bool kept_aside_ = false;  // recovery.json is this run's own (its earlier content moved aside)
  bool holding_ = false;     // recovery.json still holds earlier work: not written over
  std::string error_;
};

}  // namespace attnviz::app
