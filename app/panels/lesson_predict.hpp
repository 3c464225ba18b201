// A predict step's block in the lesson band: the question, wrapped, and a button for each key the
// query may attend to, in rows as wide as the text (large text on a projector wraps them). The
// lesson panel draws it; the panel host measures it, so that the band is tall enough for it.
#pragma once

#include "app/session/app_state.hpp"

#include <vector>

namespace attnviz::app {

// The keys the question offers (those the query may attend to: a causal mask hides the later
// ones); empty when the step's head or query is not in the result.
std::vector<int> predict_keys(const AppState& state, const LessonPredict& predict);

// The height of the question and its rows of buttons, wrapped at `width`, in the current font.
float predict_block_height(const AppState& state, const LessonPredict& predict, float width);

}  // namespace attnviz::app
