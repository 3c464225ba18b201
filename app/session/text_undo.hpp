// Undo and redo inside a text field, a word or a burst at a time.
//
// ImGui 1.86's own undo in a text field takes back one character per Ctrl+Z. A sentence field
// instead keeps the texts it went through at these stops: where typing starts a new word, where
// typing turns to deleting or back, after a pause of a second, and around a paste. Ctrl+Z goes
// back to the last stop, Ctrl+Shift+Z or Ctrl+Y forward again. (Outside the field, Ctrl+Z undoes
// whole edits of the scenario: app/history.hpp.)
//
// No ImGui here: the field reports each change and asks for the text to show.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attnviz::app {

class TextUndo {
 public:
  static constexpr double kPause = 1.0;  // seconds without a change that end a step
  static constexpr std::size_t kMaxSteps = 200;

  // The field's text as it starts (the field was entered, or the text changed outside it).
  void reset(const std::string& text);
  // The text after a change typed at time `now` (seconds).
  void changed(const std::string& text, double now);
  // The text to show instead of `text`; nothing when there is no step to go to.
  std::optional<std::string> undo(const std::string& text);
  std::optional<std::string> redo(const std::string& text);
  bool can_undo() const { return !undo_.empty(); }

 private:
  enum class Kind { None, Typing, Deleting, Other };
  std::string current_;            // the text as last reported
  std::vector<std::string> undo_;  // stops before current_, oldest first
  std::vector<std::string> redo_;  // stops undone, the next one last
  Kind last_kind_ = Kind::None;
  double last_change_ = 0;
};

}  // namespace attnviz::app
