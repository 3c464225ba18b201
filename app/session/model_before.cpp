#include "app/session/model_before.hpp"

#include "core/document/model_changes.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"

#include <cstdio>
#include <ctime>

namespace attnviz::app {
namespace {

// At most this many attention weights are kept (of every head of every layer together): 6 M,
// some 72 MB with the masked scores and the drawn copy.
constexpr std::size_t kMostBeforeCells = 6'000'000;

// The changes that alter what the model computes on the same text.
bool same_changes(const ModelSpec& a, const ModelSpec& b) {
  return a.interventions == b.interventions && a.weight_edits == b.weight_edits &&
         a.embedding_edits == b.embedding_edits;
}

void capture(ModelBefore& before, const ModelSpec& spec, const std::string& text, const Run& run) {
  before.clear();
  before.spec = spec;
  before.text = text;
  for (const ModelToken& token : run.model_tokens()) before.token_ids.push_back(token.id);
  if (run.can(Capability::PredictsNextToken) && run.trained_forward() && run.trained_model() &&
      !before.token_ids.empty()) {
    before.next_logits.resize(
        static_cast<std::size_t>(run.trained_model()->transformer.config().vocab_size));
    run.trained_forward()->logits(static_cast<int>(before.token_ids.size()) - 1,
                                  before.next_logits.data());
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  before.layers.resize(static_cast<std::size_t>(run.layer_count()));
  // Bounded: a long text in a large model has many heads of many cells (each kept three times,
  // as Compare draws them); the layers past the bound are not kept, and Compare says so.
  std::size_t cells = 0;
  for (int layer = 0; layer < run.layer_count(); ++layer) {
    const AttentionResult& result = run.layer(layer);
    cells += result.heads.size() * static_cast<std::size_t>(result.n_query) *
             static_cast<std::size_t>(result.n_key);
    if (cells > kMostBeforeCells) break;
    view::AttentionSnapshot& snapshot = before.layers[static_cast<std::size_t>(layer)];
    view::take_snapshot(result, run.target(), run.keys(), run.cross(), local, snapshot);
    std::snprintf(snapshot.short_label, sizeof snapshot.short_label, "before the change");
  }
  before.held = true;
  ++before.id;
}

}  // namespace

std::string ModelBefore::changes_to(const ModelSpec& now) const {
  return held ? model_changes_in_words(spec, now) : std::string();
}

void follow_model_change(ModelBefore& before, const Scenario* shown, const Scenario& next,
                         const Run& run) {
  const ModelSpec* now = next.model();
  const ModelSpec* was = shown ? shown->model() : nullptr;
  // Another model, another text, another view of it: a before of it would not compare.
  if (!now || !shown ||
      (before.held && (before.spec.model != now->model || before.text != next.target ||
                       !only_the_model_differs(before.spec, *now)))) {
    before.clear();
    return;
  }
  if (before.held) {
    if (same_changes(before.spec, *now)) before.clear();  // undone: nothing to compare
    return;
  }
  if (was && shown->target == next.target && was->model == now->model &&
      only_the_model_differs(*was, *now) && !same_changes(*was, *now) &&
      run.can(Capability::TrainedWeights))
    capture(before, *was, shown->target, run);
}

}  // namespace attnviz::app
