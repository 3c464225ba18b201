#include "app/session/unsaved_guard.hpp"

#include <filesystem>
#include <utility>

namespace attnviz::app {

bool UnsavedGuard::request(const AppState& state, std::string action,
                           std::function<void()> replace) {
  if (!state.unsaved() || state.lesson.active()) {
    pending_ = nullptr;
    replace();
    return true;
  }
  pending_ = std::move(replace);
  action_ = std::move(action);
  return false;
}

std::string UnsavedGuard::question(const AppState& state) const {
  return document_name(state) + " has changes that are not saved.";
}

void UnsavedGuard::discard() {
  std::function<void()> replace = std::exchange(pending_, nullptr);
  if (replace) replace();
}

void UnsavedGuard::cancel() {
  pending_ = nullptr;
}

void UnsavedGuard::saved(const AppState& state) {
  std::function<void()> replace = std::exchange(pending_, nullptr);
  if (replace && !state.unsaved()) replace();
}

std::string UnsavedGuard::document_name(const AppState& state) {
  if (!state.document.path().empty())
    return std::filesystem::path(state.document.path()).filename().string();
  const std::string title = scenario_title(state.document.scenario());
  return title.empty() ? "This scenario" : "\"" + title + "\"";
}

}  // namespace attnviz::app
