#include "app/session/autosave.hpp"

#include "core/document/file_io.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

namespace attnviz::app {
namespace {

constexpr std::size_t kMaxPathBytes = 1 << 16;
constexpr std::string_view kOffered = "recovery-offered-";

std::string offered_file(const std::string& folder, long number) {
  return folder + "/" + std::string(kOffered) + std::to_string(number) + ".json";
}

// The N of recovery-offered-N.json (`suffix` ".json") or recovery-offered-N-path.txt
// ("-path.txt"), or 0 for any other name.
long offered_number(const std::string& name, std::string_view suffix) {
  if (name.size() <= kOffered.size() + suffix.size() || name.rfind(kOffered, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  const std::string digits =
      name.substr(kOffered.size(), name.size() - kOffered.size() - suffix.size());
  if (digits.empty() || digits.size() > 9 || digits.front() == '0' ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return 0;
  return std::stol(digits);
}

// The earlier runs' work set aside in `folder`, oldest (lowest N) first; with `path_files`, the
// numbers of the path files instead.
std::vector<long> offered_numbers(const std::string& folder, bool path_files = false) {
  std::vector<long> numbers;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    const long number =
        offered_number(it->path().filename().string(), path_files ? "-path.txt" : ".json");
    if (number > 0) numbers.push_back(number);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace

Autosave::Autosave(const std::string& folder) {
  if (folder.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return;
  folder_ = folder;
  path_ = folder + "/recovery.json";
  path_file_ = folder + "/recovery-path.txt";
}

// recovery-path.txt beside recovery.json, recovery-offered-N-path.txt beside
// recovery-offered-N.json.
std::string Autosave::path_file_of(const std::string& file) const {
  if (file == path_) return path_file_;
  return file.substr(0, file.size() - std::string_view(".json").size()) + "-path.txt";
}

Status Autosave::keep_earlier_work() {
  if (path_.empty() || read_only_ || kept_aside_) return Status::success();
  // A path file whose work is gone (answered, the app stopped between the two removals).
  for (const long number : offered_numbers(folder_, true))
    if (!std::filesystem::exists(offered_file(folder_, number)))
      std::remove(path_file_of(offered_file(folder_, number)).c_str());
  std::error_code error;
  if (!std::filesystem::exists(path_, error)) {
    // A path file without its work is stale: the first write replaces or removes it.
    kept_aside_ = true;
    return Status::success();
  }
  const std::vector<long> numbers = offered_numbers(folder_);
  const std::string aside = offered_file(folder_, numbers.empty() ? 1 : numbers.back() + 1);
  // The work first: should the app stop between the two, the work is kept (without its path).
  std::filesystem::rename(path_, aside, error);
  if (error) {
    holding_ = true;  // written over by nothing until it is answered
    return Status::error("the unsaved work of an earlier run could not be set aside (" + path_ +
                         ": " + error.message() + "): autosave waits until it is answered");
  }
  kept_aside_ = true;
  if (std::filesystem::exists(path_file_, error))
    std::filesystem::rename(path_file_, path_file_of(aside), error);
  return Status::success();
}

Result<std::optional<Autosave::Recovered>> Autosave::recoverable() const {
  if (path_.empty()) return std::optional<Recovered>();
  std::vector<std::string> files;
  for (const long number : offered_numbers(folder_)) files.push_back(offered_file(folder_, number));
  if (!kept_aside_ && std::filesystem::exists(path_)) files.push_back(path_);  // the latest
  std::string first_error;
  for (std::size_t i = 0; i < files.size(); ++i) {
    Result<Scenario> load = load_scenario_file(files[i]);
    if (!load.ok()) {  // skipped, and left where it is
      if (first_error.empty())
        first_error = "the recovery file " + files[i] + " could not be read: " + load.error();
      continue;
    }
    Recovered recovered{std::move(*load), {}, files[i], static_cast<int>(files.size() - i - 1)};
    const std::string path_file = path_file_of(files[i]);
    if (std::filesystem::exists(path_file)) {
      if (Result<std::string> text = read_file(path_file, kMaxPathBytes)) {
        if (!text->empty() && text->back() == '\n') text->pop_back();
        if (text->find('\n') == std::string::npos)
          recovered.path = *text;  // else not written by us: ignored
      }
    }
    return std::optional<Recovered>(std::move(recovered));
  }
  if (!first_error.empty()) return Status::error(first_error);
  return std::optional<Recovered>();
}

Status Autosave::write(const AppState& state) {
  seen_load_version_ = state.document.load_version();
  written_version_ = state.document.version();
  if (written_path_ != state.document.path()) {  // first where the work came from, then the work
    Status status = Status::success();
    if (state.document.path().empty())
      std::remove(path_file_.c_str());
    else
      status = write_file(path_file_, state.document.path() + "\n");
    if (status) written_path_ = state.document.path();
  }
  Status status = write_file(path_, scenario_to_json(state.document.scenario()));
  if (!status)
    error_ = "autosave failed: " + status.message();
  else
    error_.clear();
  return status;
}

void Autosave::observe(const AppState& state, double now) {
  if (path_.empty() || read_only_ || holding_) return;
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
  static_cast<void>(write(state));  // a failure is kept for the status bar (last_error)
  last_write_ = now;
}

void Autosave::restored(const std::string& file, const AppState& state) {
  if (path_.empty() || read_only_) return;
  if (file == path_) {  // never set aside: it is this run's work from now on
    holding_ = false;
    kept_aside_ = true;
  }
  // Written before the earlier file goes, so that the work is on disk all along.
  if (write(state) && file != path_) remove_work(file);
}

void Autosave::declined(const std::string& file) {
  if (path_.empty() || read_only_) return;
  if (file == path_) {  // never set aside: recovery.json is this run's from now on
    holding_ = false;
    kept_aside_ = true;
    written_path_.reset();
  }
  remove_work(file);
}

void Autosave::remove_work(const std::string& file) {
  std::remove(file.c_str());  // the work first: a path file left alone is removed at next start
  std::remove(path_file_of(file).c_str());
}

void Autosave::discard() {
  if (path_.empty() || read_only_ || holding_) return;
  std::remove(path_.c_str());
  std::remove(path_file_.c_str());
  written_path_.reset();
}

}  // namespace attnviz::app
