// Edits are never thrown away unasked: File > New, Open, Open recent, a dropped file and starting
// a lesson replace the scenario, and quitting (Ctrl+Q, File > Quit, the window's close button)
// closes it; when it has unsaved edits the replacement or the quit waits for the user's choice
// (save first, discard the edits, or cancel). A lesson's own steps replace each
// other freely: what a student changes in a lesson is an experiment, not a document.
//
// No ImGui here: the app shows the question while asking() is true and reports the answer.
#pragma once

#include "app/session/app_state.hpp"

#include <functional>
#include <string>

namespace attnviz::app {

class UnsavedGuard {
 public:
  // Runs `replace` now when nothing would be lost, else keeps it until the user chooses; a
  // request while another waits takes its place. `action` names what would replace the scenario
  // for the question ("Opening apple.json"). Returns whether it ran.
  bool request(const AppState& state, std::string action, std::function<void()> replace);
  // The same for quitting: `quit` closes the app now, or once the user chose.
  bool request_quit(const AppState& state, std::function<void()> quit);
  bool asking() const { return static_cast<bool>(pending_); }
  bool asking_to_quit() const { return asking() && quitting_; }
  // The question's lines: what has unsaved changes, and what would replace or close it.
  std::string question(const AppState& state) const;
  std::string consequence() const;
  // The answer that loses the edits: "Discard the changes", or "Quit without saving".
  std::string discard_label() const;

  // The user's answers.
  void discard();  // run the replacement: the edits go
  void cancel();   // forget it: the edits stay
  // After the user chose to save first: the replacement runs once nothing is unsaved (a failed
  // or cancelled save keeps it from running, and the question goes).
  void saved(const AppState& state);

  // What the question names: the file's name, or the scenario's title.
  static std::string document_name(const AppState& state);

 private:
  std::function<void()> pending_;
  std::string action_;
  bool quitting_ = false;  // the request waiting is to quit
};

}  // namespace attnviz::app
