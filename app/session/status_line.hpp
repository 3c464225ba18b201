// What the window says about the document when nothing else needs saying: the title bar's text
// and the status bar's line (the notice bar's place at the foot of the window while it has no
// notice: app.cpp, draw_status_bar). No ImGui here: unit-tested.
#pragma once

#include "app/session/app_state.hpp"

#include <string>
#include <string_view>

namespace attnviz::app {

// "lecture.json — AttnViz" ("… — stories260K — AttnViz" in model mode), with a leading "• " while
// there are unsaved changes; a lesson's title while one runs; for a scenario in no file its title
// (scenario_title: an untitled one's sentence, as it is typed), or "Untitled" when the sentence is
// empty too.
std::string window_title(const AppState& state);

// The shape of what is shown, e.g. "self-attention · 5 tokens · d_model 8 · 2 heads of d_k 4,
// d_v 4 · scaled dot-product · causal": the numbers the views are made of, at a glance.
// Token counts come from the last good result (none before the first). In model mode: "stories260K
// · llama · 12 tokens · 5 layers × 8 heads (4 key/value heads) · d_model 64, d_head 8 · showing
// layer 2 · 1 head changed".
std::string shape_summary(const AppState& state);

// The lesson band's heading: "Self-attention on real sentences  ·  step 5 of 6: Jane visits
// Africa" ("" outside a lesson).
std::string lesson_step_heading(const LessonState& lesson);

// A file name proposed for saving a scenario titled `title`: "Week 3: attention" gives
// "week-3-attention.json" (ASCII letters lowered, every other run of ASCII that is not a letter
// or digit one '-', letters of other scripts kept, at most 60 bytes before ".json", never
// cutting a character); "scenario.json" when nothing is left.
std::string file_name_for(std::string_view title);

// The file name Save As proposes: the file's own, else one from the scenario's title
// (file_name_for(scenario_title): an untitled scenario's from its sentence as it is now).
std::string save_as_file_name(const AppState& state);

}  // namespace attnviz::app
