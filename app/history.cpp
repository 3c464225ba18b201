#include "app/history.hpp"

namespace attnviz::app {

History::History(std::size_t byte_budget) : byte_budget_(byte_budget) {}

std::size_t History::bytes_of(const Scenario& s) {
  std::size_t bytes = sizeof(Scenario) + s.target.size() + s.source.size() + s.view_json.size();
  for (const HeadParameters& h : s.parameters.heads)
    bytes += sizeof(float) * static_cast<std::size_t>(h.W_Q.size() + h.W_K.size() + h.W_V.size() + h.W_a.size() +
                                                      h.W_1.size() + h.W_2.size() + h.v_a.size());
  bytes += sizeof(float) * static_cast<std::size_t>(s.parameters.W_O.size());
  for (const auto& [word, vector] : s.embeddings) bytes += word.size() + sizeof(float) * vector.size();
  return bytes + static_cast<std::size_t>(s.mask.size());
}

void History::reset(const AppState& state) {
  states_.assign(1, state.scenario);
  versions_.assign(1, state.edit_version);
  cursor_ = 0;
  load_version_ = state.load_version;
  recorded_version_ = seen_version_ = state.edit_version;
  started_ = true;
}

void History::record(const AppState& state) {
  states_.resize(cursor_ + 1);  // a new edit drops the steps that were undone
  versions_.resize(cursor_ + 1);
  states_.push_back(state.scenario);
  versions_.push_back(state.edit_version);
  cursor_ = states_.size() - 1;
  recorded_version_ = state.edit_version;
  // Keep within the memory budget, oldest first (always keeping the current state and one more).
  std::size_t total = 0;
  for (const Scenario& s : states_) total += bytes_of(s);
  while (total > byte_budget_ && states_.size() > 2) {
    total -= bytes_of(states_.front());
    states_.erase(states_.begin());
    versions_.erase(versions_.begin());
    --cursor_;
  }
}

void History::observe(const AppState& state, bool busy, double now) {
  if (!started_ || state.load_version != load_version_) {
    reset(state);
    return;
  }
  if (state.edit_version != seen_version_) {
    seen_version_ = state.edit_version;
    last_change_ = now;
  }
  const bool pending = state.edit_version != recorded_version_;
  if (pending && (!busy || now - last_change_ >= kTypingPause)) record(state);
}

bool History::can_undo(const AppState& state) const {
  return cursor_ > 0 || (started_ && state.edit_version != recorded_version_);
}

bool History::undo(AppState& state, double now) {
  if (started_ && state.edit_version != recorded_version_) {
    // Edits still in progress (a drag, typing) become a step first, so undo takes them back.
    seen_version_ = state.edit_version;
    last_change_ = now;
    record(state);
  }
  if (cursor_ == 0) return false;
  --cursor_;
  restore(state);
  return true;
}

bool History::redo(AppState& state) {
  if (!can_redo()) return false;
  ++cursor_;
  restore(state);
  return true;
}

void History::restore(AppState& state) {
  const bool as_saved = versions_[cursor_] == state.saved_version;
  state.scenario = states_[cursor_];
  state.mark_edited();
  recorded_version_ = seen_version_ = versions_[cursor_] = state.edit_version;
  if (as_saved) state.saved_version = state.edit_version;
}

}  // namespace attnviz::app
