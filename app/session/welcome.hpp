// Whether the welcome (the first screen: start lesson 1, open a real model, or explore) was
// dismissed: a file in the state folder (app_state_dir()) remembers it across runs.
#pragma once

#include "core/base/status.hpp"

#include <string>

namespace attnviz::app {

// `folder`/welcome-dismissed exists. "" (no state folder): false.
bool welcome_dismissed(const std::string& folder);
// Writes it (write_file: a temporary file, then a rename). "" refuses.
Status remember_welcome_dismissed(const std::string& folder);

// Whether the app offers the welcome at start: not dismissed, and started with nothing to show
// (no file, lesson or model named, and no headless run).
struct StartRequest {
  bool names_something = false;  // a scenario, a lesson, a model or presenter mode asked for
  bool headless = false;         // --screenshot, --bench-frames, --monkey, ...
};
bool offers_welcome(const std::string& folder, const StartRequest& start);

}  // namespace attnviz::app
