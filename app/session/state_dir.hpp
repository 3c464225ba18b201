// Where the app keeps what it remembers between runs (recent files, autosaves): a per-user
// folder, created on demand.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace attnviz::app {

// $ATTNVIZ_STATE_DIR if set, else $XDG_STATE_HOME/attnviz (an absolute XDG_STATE_HOME only, as
// the XDG spec asks), else $HOME/.local/state/attnviz. The folder is created if missing; "" when
// none of these is set or the folder cannot be created.
inline std::string app_state_dir() {
  const auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
  };
  std::filesystem::path dir;
  if (std::string own = env("ATTNVIZ_STATE_DIR"); !own.empty()) {
    dir = own;
  } else if (std::string xdg = env("XDG_STATE_HOME"); !xdg.empty() && xdg.front() == '/') {
    dir = std::filesystem::path(xdg) / "attnviz";
  } else if (std::string home = env("HOME"); !home.empty()) {
    dir = std::filesystem::path(home) / ".local" / "state" / "attnviz";
  } else {
    return {};
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (!std::filesystem::is_directory(dir, error)) return {};
  return dir.string();
}

}  // namespace attnviz::app
