#include "core/document/model_changes.hpp"

#include <cstdio>
#include <set>
#include <tuple>
#include <vector>

namespace attnviz {

std::string head_in_words(const ModelHeadChange& entry) {
  std::string words =
      "layer " + std::to_string(entry.layer + 1) + ", head " + std::to_string(entry.head + 1);
  if (entry.part != ModelPart::Main)
    words += " of the " + std::string(model_part_label(entry.part));
  return words;
}

std::string intervention_in_words(const HeadIntervention& change) {
  if (!change.changes_anything()) return "restored";
  if (change.ablated()) return "knocked out";
  std::string words;
  if (change.pattern != HeadIntervention::Pattern::Computed)
    words = "set to " + std::string(to_string(change.pattern));
  if (change.output_scale != 1.0f) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%.2f", static_cast<double>(change.output_scale));
    words += (words.empty() ? "" : " and ") + std::string("scaled by ") + scale;
  }
  return words;
}

std::string model_changes_in_words(const ModelSpec& before, const ModelSpec& now) {
  std::vector<std::string> changes;
  // The heads whose change differs, each once: in `now` (changed or changed again), or only in
  // `before` (restored).
  std::set<std::tuple<ModelPart, int, int>> told;
  for (const ModelHeadChange& entry : now.interventions)
    if (told.insert(entry.key()).second &&
        before.intervention_in(entry.part, entry.layer, entry.head) != entry.change)
      changes.push_back(head_in_words(entry) + " " + intervention_in_words(entry.change));
  for (const ModelHeadChange& entry : before.interventions)
    if (told.insert(entry.key()).second) changes.push_back(head_in_words(entry) + " restored");
  if (before.weight_edits != now.weight_edits) changes.emplace_back("its weights edited");
  if (before.embedding_edits != now.embedding_edits) changes.emplace_back("its embeddings edited");
  if (before.text_b != now.text_b) changes.emplace_back("sentence B");
  if (before.decoder_text != now.decoder_text) changes.emplace_back("the translation");
  if (before.part != now.part || before.pair_filter != now.pair_filter ||
      before.hide_special_tokens != now.hide_special_tokens)
    changes.emplace_back("the attention shown");
  std::string words;
  for (std::size_t i = 0; i < changes.size(); ++i) words += (i == 0 ? "" : "; ") + changes[i];
  return words;
}

bool only_the_model_differs(const ModelSpec& before, const ModelSpec& now) {
  return before.model == now.model && before.text_b == now.text_b &&
         before.decoder_text == now.decoder_text && before.part == now.part &&
         before.pair_filter == now.pair_filter &&
         before.hide_special_tokens == now.hide_special_tokens;
}

}  // namespace attnviz
