#include "app/session/welcome.hpp"

#include "core/document/file_io.hpp"

#include <filesystem>
#include <system_error>

namespace attnviz::app {
namespace {

std::filesystem::path marker(const std::string& folder) {
  return std::filesystem::path(folder) / "welcome-dismissed";
}

}  // namespace

bool welcome_dismissed(const std::string& folder) {
  if (folder.empty()) return false;
  std::error_code error;
  return std::filesystem::exists(marker(folder), error);
}

Status remember_welcome_dismissed(const std::string& folder) {
  if (folder.empty()) return Status::error("no state folder to remember the welcome in");
  return write_file(marker(folder).string(), "the welcome was dismissed\n");
}

bool offers_welcome(const std::string& folder, const StartRequest& start) {
  return !start.names_something && !start.headless && !welcome_dismissed(folder);
}

}  // namespace attnviz::app
