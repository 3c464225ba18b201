#include "app/session/recent_files.hpp"

#include "core/document/file_io.hpp"
#include "core/document/json.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace attnviz::app {
namespace {

constexpr std::size_t kMaxStorageBytes = 1u << 20;

// The absolute, lexically normal form of a path ("" when there is none).
std::string normalized(const std::string& path) {
  if (path.empty()) return {};
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return {};
  return absolute.lexically_normal().string();
}

}  // namespace

std::string default_recent_files_path() {
  const std::string dir = app_state_dir();
  return dir.empty() ? std::string() : dir + "/recent-files.json";
}

RecentFiles::RecentFiles(std::string storage_path) : storage_path_(std::move(storage_path)) {}

void RecentFiles::load() {
  entries_.clear();
  if (storage_path_.empty()) return;
  const Result<std::string> text = read_file(storage_path_, kMaxStorageBytes);
  if (!text) return;
  const Result<Json> list = parse_json(*text);
  if (!list || !list->is_array()) return;
  for (const Json& item : *list) {
    if (entries_.size() == kMaxEntries) break;
    if (!item.is_string()) continue;
    const std::string& path = item.get_ref<const std::string&>();
    if (path.empty() || path.front() != '/') continue;
    if (std::find(entries_.begin(), entries_.end(), path) == entries_.end())
      entries_.push_back(path);
  }
}

void RecentFiles::add(const std::string& path) {
  const std::string entry = normalized(path);
  if (entry.empty()) return;
  entries_.erase(std::remove(entries_.begin(), entries_.end(), entry), entries_.end());
  entries_.insert(entries_.begin(), entry);
  if (entries_.size() > kMaxEntries) entries_.resize(kMaxEntries);
}

void RecentFiles::remove(const std::string& path) {
  const std::string entry = normalized(path);
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const std::string& e) { return e == path || e == entry; }),
                 entries_.end());
}

Status RecentFiles::save() const {
  if (storage_path_.empty()) return Status::error("there is no folder to keep the recent files in");
  std::error_code ignored;
  const std::filesystem::path folder = std::filesystem::path(storage_path_).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder, ignored);
  // JSON text must be UTF-8: a path that is not (Linux allows any bytes) is left out.
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& entry : entries_) {
    try {
      (void)nlohmann::json(entry).dump();
      list.push_back(entry);
    } catch (const nlohmann::json::type_error&) {
    }
  }
  return write_file(storage_path_, list.dump(2) + "\n");
}

}  // namespace attnviz::app
