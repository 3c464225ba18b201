// A model's likeliest tokens as a list of bars (the Next token and Fill the mask views): each
// token as a chip, its probability as a bar and a percentage; hovering a line says the token's
// id, logit and probability.
#pragma once

#include "app/session/app_state.hpp"
#include "core/figures/views.hpp"
#include "core/models/sampling.hpp"

#include <imgui.h>

#include <span>

namespace attnviz {
class ModelTokenizer;
}

namespace attnviz::app {

// `logits`: the whole vocabulary's (the hover reads a candidate's); `view` counts the lines as
// the labels it wrote (the layout JSON). `before`, when not empty, is every token's probability
// before the model was changed (the whole vocabulary's): each line then says how its token's
// probability moved ("▲ from 12.5%"), and its bar marks where it was.
void draw_token_candidates(const AppState& state, const ModelTokenizer& tokenizer,
                           std::span<const Candidate> candidates, std::span<const float> logits,
                           view::ViewId view, std::span<const float> before = {});

// The colours of a probability that rose and of one that fell, in the theme.
ImU32 rise_colour(Theme theme);
ImU32 fall_colour(Theme theme);

}  // namespace attnviz::app
