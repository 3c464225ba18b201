// A real model as it was before the teacher changed it (a head knocked out, scaled or given a
// pattern; a weight or an embedding edited), kept so that the views can show what the change did:
// Next token lists the prediction before beside the one now, and Compare can pin the heads'
// attention as they were. It is taken from the result on screen when the first such change
// arrives, and kept through the changes after it (it is "before all of them") until the teacher
// clears it, the text or the model is changed (it would be of another text), or the changes are
// undone (there is nothing left to compare). Derived, never saved.
#pragma once

#include "app/view/attention_difference.hpp"
#include "core/document/scenario.hpp"
#include "core/pipeline/run.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

struct ModelBefore {
  bool held = false;
  std::uint64_t id = 0;        // new with every capture (views key their caches on it)
  ModelSpec spec;              // the model then: its interventions and edits
  std::string text;            // the text it read (the scenario's target)
  std::vector<int> token_ids;  // every token it read (the special ones too)
  // After the last token (vocab_size); empty when the model predicts no next token.
  std::vector<float> next_logits;
  // Every layer's heads (of the part shown), as Compare's snapshots.
  std::vector<view::AttentionSnapshot> layers;

  void clear() {
    held = false;
    next_logits.clear();
    layers.clear();
    token_ids.clear();
  }
  // What has changed since, in words: "layer 1, head 3 knocked out" ("" when nothing has).
  std::string changes_to(const ModelSpec& now) const;
};

// Called when the document changes in model mode, before its new version is computed: `shown` is
// the scenario the result on screen (`run`) was computed from (null when that is not known, or
// when what the views show was replaced: a file opened, a lesson step; the before then goes),
// `next` the one about to be computed. Takes the before, keeps it, or clears it, as the header
// says.
void follow_model_change(ModelBefore& before, const Scenario* shown, const Scenario& next,
                         const Run& run);

}  // namespace attnviz::app
