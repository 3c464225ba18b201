// Undo and redo of every edit to the scenario. An edit becomes one step when the UI comes to
// rest: a whole drag is one step (not one per frame), a burst of typing ends after a pause, a
// click is a step of its own. Loading a scenario (a file, a lesson step) starts a new history.
// Undoing or redoing back to the scenario as last saved (or opened) makes it saved again.
#pragma once

#include "app/session/app_state.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

class History {
 public:
  static constexpr double kTypingPause = 1.0;  // seconds without a change that end a step
  explicit History(std::size_t byte_budget = std::size_t{256} << 20);

  // Once per frame, after the panels drew. `busy`: a widget is being dragged or typed into.
  void observe(const AppState& state, bool busy, double now);
  bool can_undo(const AppState& state) const;
  bool can_redo() const { return cursor_ + 1 < states_.size(); }
  // Restore the previous / next scenario into `state` (the selection and UI stay as they are);
  // when that is the one last saved, `state` is not unsaved.
  bool undo(AppState& state, double now);
  bool redo(AppState& state);
  std::size_t steps() const { return states_.size(); }
  // What undo and redo would take back or bring again ("knock out layer 2, head 3"); "" when
  // nothing, or when the step was no named edit.
  std::string undo_label(const AppState& state) const;
  std::string redo_label() const;

 private:
  void reset(const AppState& state);
  void record(const AppState& state);
  static std::size_t bytes_of(const Scenario& scenario);

  // Puts states_[cursor_] into `state` as a new edit.
  void restore(AppState& state);

  std::vector<Scenario> states_;  // states_[cursor_] is the state after the last recorded step
  // The Document::version() each of states_ had (when restored, the version it got then): the one
  // equal to Document::saved_version() is the scenario as saved.
  std::vector<std::uint64_t> versions_;
  std::vector<std::string> labels_;  // the edit that led to each of states_ (labels_[0]: "")
  std::size_t cursor_ = 0;
  std::size_t byte_budget_;
  std::uint64_t load_version_ = 0;      // Document::load_version() seen last
  std::uint64_t recorded_version_ = 0;  // the version states_[cursor_] has
  std::uint64_t seen_version_ = 0;      // the version seen by the last observe()
  double last_change_ = 0;              // when the version last changed
  bool started_ = false;
};

}  // namespace attnviz::app
