#include "app/session/text_undo.hpp"

#include <algorithm>
#include <utility>

namespace attnviz::app {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

}  // namespace

void TextUndo::reset(const std::string& text) {
  current_ = text;
  undo_.clear();
  redo_.clear();
  last_kind_ = Kind::None;
}

void TextUndo::changed(const std::string& text, double now) {
  if (text == current_) return;
  // Where the texts differ: a common start and end around what was typed or deleted.
  const std::size_t shorter = std::min(text.size(), current_.size());
  std::size_t start = 0;
  while (start < shorter && text[start] == current_[start]) ++start;
  std::size_t end = 0;
  while (end < shorter - start &&
         text[text.size() - 1 - end] == current_[current_.size() - 1 - end])
    ++end;
  const std::size_t removed = current_.size() - start - end, added = text.size() - start - end;
  Kind kind = Kind::Other;  // a replacement or a paste of several characters: a step of its own
  if (removed == 0 && added == 1)
    kind = Kind::Typing;
  else if (added == 0)
    kind = Kind::Deleting;
  // A new word: a character that is not a space typed after a space (or at the start).
  const bool new_word = kind == Kind::Typing && !is_space(text[start]) &&
                        (start == 0 || is_space(current_[start - 1]));
  // After a pause a step starts too, unless it is a space typed (it ends the word before it).
  const bool paused =
      now - last_change_ >= kPause && !(kind == Kind::Typing && is_space(text[start]));
  const bool stop =
      last_kind_ == Kind::None || kind != last_kind_ || kind == Kind::Other || new_word || paused;
  if (stop) {
    undo_.push_back(current_);
    if (undo_.size() > kMaxSteps) undo_.erase(undo_.begin());
  }
  redo_.clear();
  current_ = text;
  last_kind_ = kind == Kind::Other ? Kind::None : kind;  // whatever follows a paste starts anew
  last_change_ = now;
}

std::optional<std::string> TextUndo::undo(const std::string& text) {
  changed(text, last_change_);  // anything not reported yet is part of the last step
  if (undo_.empty()) return std::nullopt;
  redo_.push_back(std::exchange(current_, std::move(undo_.back())));
  undo_.pop_back();
  last_kind_ = Kind::None;  // the next change starts a step
  return current_;
}

std::optional<std::string> TextUndo::redo(const std::string& text) {
  if (redo_.empty() || text != current_) return std::nullopt;
  undo_.push_back(std::exchange(current_, std::move(redo_.back())));
  redo_.pop_back();
  last_kind_ = Kind::None;
  return current_;
}

}  // namespace attnviz::app
