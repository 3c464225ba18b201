// What changed in a real model's scenario between two states of it, in the words a student and a
// teacher read on screen: "layer 2, head 4 knocked out; its weights edited". The lesson notes
// ("You changed the model (…)") and the app's before-and-after views say it alike.
#pragma once

#include "core/document/scenario.hpp"

#include <string>

namespace attnviz {

// "layer 2, head 4" (counted from 1, as the app shows them), in the part an encoder–decoder names.
std::string head_in_words(const ModelHeadChange& entry);

// What a head's change does: "knocked out", "set to uniform", "scaled by 0.50"; "restored" for
// no change.
std::string intervention_in_words(const HeadIntervention& change);

// The changes from `before` to `now`, "; " between them: each head changed or restored, the
// weights or embeddings edited, sentence B, the translation, the attention shown. "" when the two
// are the same. Both are of the same model (the caller says so when the model itself changed).
std::string model_changes_in_words(const ModelSpec& before, const ModelSpec& now);

// Whether `before` and `now` differ only in what changes the model's computation on the same
// text: its head interventions and its edited weights and embeddings (same model, same texts,
// same attention shown).
bool only_the_model_differs(const ModelSpec& before, const ModelSpec& now);

}  // namespace attnviz
