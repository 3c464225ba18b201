#include "app/session/autosave.hpp"

#include "core/document/file_io.hpp"

#include <cstdio>
#include <filesystem>

namespace attnviz::app {
namespace {

constexpr std::size_t kMaxPathBytes = 1 << 16;

}  // namespace

Autosave::Autosave(const std::string& folder) {
  if (folder.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return;
  path_ = folder + "/recovery.json";
  path_file_ = folder + "/recovery-path.txt";
}

Result<std::optional<Autosave::Recovered>> Autosave::recoverable() const {
  if (path_.empty() || !std::filesystem::exists(path_)) return std::optional<Recovered>();
  Result<Scenario> load = load_scenario_file(path_);
  if (!load.ok()) return Status::error("the recovery file could not be read: " + load.error());
  Recovered recovered{std::move(*load), {}};
  if (std::filesystem::exists(path_file_)) {
    if (Result<std::string> text = read_file(path_file_, kMaxPathBytes)) {
      if (!text->empty() && text->back() == '\n') text->pop_back();
      if (text->find('\n') == std::string::npos)
        recovered.path = *text;  // else not written by us: ignored
    }
  }
  return std::optional<Recovered>(std::move(recovered));
}

void Autosave::observe(const AppState& state, double now) {
  if (path_.empty() || paused_) return;
  // A scenario that was just opened is saved already: only edits need recovering.
  if (state.document.load_version() != seen_load_version_) {
    seen_load_version_ = state.document.load_version();
    written_version_ = state.document.version();
    return;
  }
  // Saved since the last edit (a save within kInterval of it): nothing is left to recover, and
  // the recovery file the save removed is not written again.
  if (!state.unsaved()) {
    written_version_ = state.document.version();
    return;
  }
  if (state.document.version() == written_version_ || now - last_write_ < kInterval) return;
  if (written_path_ != state.document.path()) {  // first where the work came from, then the work
    Status status = Status::ok();
    if (state.document.path().empty())
      std::remove(path_file_.c_str());
    else
      status = write_file_atomic(path_file_, state.document.path() + "\n");
    if (status) written_path_ = state.document.path();
  }
  if (Status status = write_file_atomic(path_, scenario_to_json(state.document.scenario()));
      !status) {
    error_ = "autosave failed: " + status.message();
  } else {
    error_.clear();
  }
  written_version_ = state.document.version();
  last_write_ = now;
}

void Autosave::discard() {
  if (path_.empty()) return;
  std::remove(path_.c_str());
  std::remove(path_file_.c_str());
  written_path_.reset();
}

}  // namespace attnviz::app
