#include "app/session/history.hpp"

#include <cstring>

namespace attnviz::app {

namespace {

template <typename M>
bool same_matrix(const M& a, const M& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 ||
          std::memcmp(a.data(), b.data(), sizeof(*a.data()) * static_cast<std::size_t>(a.size())) ==
              0);
}

// The same document, bit for bit (a weight of -0 is not 0: it prints differently).
bool same_scenario(const Scenario& a, const Scenario& b) {
  if (a.title != b.title || a.description != b.description || a.target != b.target ||
      a.max_tokens != b.max_tokens || a.view_json != b.view_json || a.has_model() != b.has_model())
    return false;
  if (a.has_model()) return *a.model() == *b.model();
  const OneLayerSpec &p = a.one_layer(), &q = b.one_layer();
  if (p.mode != q.mode || p.source != q.source || !(p.config == q.config) ||
      p.positional != q.positional || p.seed != q.seed || p.embeddings != q.embeddings ||
      p.dimension_names != q.dimension_names || !same_matrix(p.mask, q.mask) ||
      p.mask_pattern != q.mask_pattern || !same_matrix(p.parameters.W_O, q.parameters.W_O) ||
      p.parameters.heads.size() != q.parameters.heads.size())
    return false;
  for (std::size_t h = 0; h < p.parameters.heads.size(); ++h) {
    const HeadParameters &x = p.parameters.heads[h], &y = q.parameters.heads[h];
    if (!same_matrix(x.W_Q, y.W_Q) || !same_matrix(x.W_K, y.W_K) || !same_matrix(x.W_V, y.W_V) ||
        !same_matrix(x.W_a, y.W_a) || !same_matrix(x.W_1, y.W_1) || !same_matrix(x.W_2, y.W_2) ||
        !same_matrix(x.v_a, y.v_a))
      return false;
  }
  return true;
}

}  // namespace

History::History(std::size_t byte_budget) : byte_budget_(byte_budget) {}

std::size_t History::bytes_of(const Scenario& s) {
  std::size_t bytes = sizeof(Scenario) + s.target.size() + s.view_json.size();
  if (const ModelSpec* model = s.model())  // a real model's changes: a block edited whole is
    return bytes + model->model.size() +   // thousands of cells
           sizeof(ModelHeadChange) * model->interventions.size() +
           sizeof(ModelWeightEdit) * model->weight_edits.size() +
           sizeof(ModelEmbeddingEdit) * model->embedding_edits.size();
  const OneLayerSpec& one = s.one_layer();
  bytes += one.source.size();
  for (const HeadParameters& h : one.parameters.heads)
    bytes += sizeof(float) *
             static_cast<std::size_t>(h.W_Q.size() + h.W_K.size() + h.W_V.size() + h.W_a.size() +
                                      h.W_1.size() + h.W_2.size() + h.v_a.size());
  bytes += sizeof(float) * static_cast<std::size_t>(one.parameters.W_O.size());
  for (const auto& [word, vector] : one.embeddings)
    bytes += word.size() + sizeof(float) * vector.size();
  for (const std::string& name : one.dimension_names) bytes += name.size();
  return bytes + static_cast<std::size_t>(one.mask.size());
}

void History::reset(const AppState& state) {
  states_.assign(1, state.document.scenario());
  versions_.assign(1, state.document.version());
  labels_.assign(1, std::string());
  cursor_ = 0;
  load_version_ = state.document.load_version();
  recorded_version_ = seen_version_ = state.document.version();
  started_ = true;
}

void History::record(const AppState& state) {
  // A step that goes back exactly to the state before the last one (a word typed, then taken
  // back with the sentence field's own Ctrl+Z) is that step undone, not a new one: the next
  // undo goes further back, and redo brings the word again.
  if (cursor_ > 0 && same_scenario(state.document.scenario(), states_[cursor_ - 1])) {
    --cursor_;
    versions_[cursor_] = recorded_version_ = state.document.version();
    return;
  }
  states_.resize(cursor_ + 1);  // a new edit drops the steps that were undone
  versions_.resize(cursor_ + 1);
  labels_.resize(cursor_ + 1);
  states_.push_back(state.document.scenario());
  versions_.push_back(state.document.version());
  labels_.push_back(state.document.last_edit());
  cursor_ = states_.size() - 1;
  recorded_version_ = state.document.version();
  // Keep within the memory budget, oldest first (always keeping the current state and one more).
  std::size_t total = 0;
  for (const Scenario& s : states_) total += bytes_of(s);
  while (total > byte_budget_ && states_.size() > 2) {
    total -= bytes_of(states_.front());
    states_.erase(states_.begin());
    versions_.erase(versions_.begin());
    labels_.erase(labels_.begin());
    --cursor_;
  }
}

void History::observe(const AppState& state, bool busy, double now) {
  if (!started_ || state.document.load_version() != load_version_) {
    reset(state);
    return;
  }
  if (state.document.version() != seen_version_) {
    seen_version_ = state.document.version();
    last_change_ = now;
  }
  const bool pending = state.document.version() != recorded_version_;
  if (pending && (!busy || now - last_change_ >= kTypingPause)) record(state);
}

bool History::can_undo(const AppState& state) const {
  return cursor_ > 0 || (started_ && state.document.version() != recorded_version_);
}

std::string History::undo_label(const AppState& state) const {
  if (started_ && state.document.version() != recorded_version_)
    return state.document.last_edit();  // the edits in progress, which undo takes back first
  return cursor_ > 0 ? labels_[cursor_] : std::string();
}

std::string History::redo_label() const {
  return can_redo() ? labels_[cursor_ + 1] : std::string();
}

bool History::undo(AppState& state, double now) {
  if (started_ && state.document.version() != recorded_version_) {
    // Edits still in progress (a drag, typing) become a step first, so undo takes them back.
    seen_version_ = state.document.version();
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
  const bool as_saved = versions_[cursor_] == state.document.saved_version();
  state.document.replace(states_[cursor_]);
  recorded_version_ = seen_version_ = versions_[cursor_] = state.document.version();
  if (as_saved) state.document.mark_saved();
}

}  // namespace attnviz::app
