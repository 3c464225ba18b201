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
  quitting_ = false;
  return false;
}

bool UnsavedGuard::request_quit(const AppState& state, std::function<void()> quit) {
  const bool done = request(state, "Quitting AttnViz", std::move(quit));
  quitting_ = !done;
  return done;
}

std::string UnsavedGuard::consequence() const {
  return action_ + (quitting_ ? " closes it" : " replaces it") +
         ": save the changes first, or they are lost.";
}

std::string UnsavedGuard::discard_label() const {
  return quitting_ ? "Quit without saving" : "Discard the changes";
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
