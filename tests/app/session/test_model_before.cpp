// The model before the teacher changed it (app/session/model_before.hpp): taken from the result
// on screen at the first knock-out or edit, kept through the changes after it, cleared when they
// are undone or the text changes; on this thread and off it (the worker) alike.
#include "app/session/app_state.hpp"
#include "app/session/file_actions.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"
#include "tests/support/builtin_state.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

namespace attnviz::app {
namespace {

constexpr const char* kText = "xqz plov wrim. xqz plo";

HeadIntervention knocked_out() {
  HeadIntervention change;
  change.output_scale = 0.0f;
  return change;
}

// The logits after the last token of `scenario`, computed by a pipeline of its own.
std::vector<float> logits_of(const Scenario& scenario) {
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const Run& run = pipeline.current();
  std::vector<float> logits(
      static_cast<std::size_t>(run.trained_model()->transformer.config().vocab_size));
  run.trained_forward()->logits(static_cast<int>(run.model_tokens().size()) - 1, logits.data());
  return logits;
}

float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  return largest;
}

void check_before_and_after(bool off_this_thread) {
  AppState state;
  testing::load_builtin_scenario(state);
  REQUIRE(open_model(state, "gpt2-kjv-tiny"));
  state.apply(edits::set_target(kText));
  if (off_this_thread) {
    state.computed.on_this_thread_ms = 0;  // every run off this thread
    state.computed.wait_for_model = std::chrono::nanoseconds(0);
  }
  testing::frames_until_computed(state);
  const Scenario as_trained = state.document.scenario();
  CHECK_FALSE(state.computed.before.held);  // a text typed is no change of the model

  // Layer 2, head 4 knocked out: the before is the model as trained.
  state.apply(edits::set_head_intervention(1, 3, knocked_out()));
  testing::frames_until_computed(state);
  const ModelBefore& before = state.computed.before;
  REQUIRE(before.held);
  const std::uint64_t id = before.id;
  CHECK(before.text == kText);
  CHECK(before.changes_to(*state.document.scenario().model()) == "layer 2, head 4 knocked out");
  const float difference = largest_difference(before.next_logits, logits_of(as_trained));
  MESSAGE("largest difference of the logits kept from the model as trained: " << difference);
  CHECK(difference == 0.0f);
  // Every layer's heads as they were: layer 2, head 4's last row looked at "v" (key 5).
  REQUIRE(before.layers.size() == 2);
  const Matrix& induction = before.layers[1].weights[3];  // (n_query, n_key)
  Eigen::Index looked_at = 0;
  induction.row(15).maxCoeff(&looked_at);
  CHECK(looked_at == 5);
  // Now it is knocked out, the result on screen differs from the before.
  CHECK(largest_difference(before.next_logits, logits_of(state.document.scenario())) > 0.1f);

  // A second change: the before stays the model before both.
  state.apply(edits::set_head_intervention(0, 2, knocked_out()));
  testing::frames_until_computed(state);
  CHECK(before.held);
  CHECK(before.id == id);
  CHECK(before.changes_to(*state.document.scenario().model()) ==
        "layer 1, head 3 knocked out; layer 2, head 4 knocked out");

  // Both restored: nothing left to compare.
  state.apply(edits::set_head_intervention(0, 2, HeadIntervention{}));
  testing::frames_until_computed(state);
  CHECK(before.held);
  state.apply(edits::set_head_intervention(1, 3, HeadIntervention{}));
  testing::frames_until_computed(state);
  CHECK_FALSE(before.held);

  // A change, then another text: the before was of another text, and goes.
  state.apply(edits::set_head_intervention(1, 3, knocked_out()));
  testing::frames_until_computed(state);
  REQUIRE(before.held);
  CHECK(before.id > id);
  state.apply(edits::set_target(std::string(kText) + "v"));
  testing::frames_until_computed(state);
  CHECK_FALSE(before.held);
}

}  // namespace

TEST_CASE(
    "a knock-out keeps the model before it: its logits and heads, until undone or the text "
    "changes") {
  check_before_and_after(false);
}

TEST_CASE("the model before a knock-out is kept alike when the model computes off this thread") {
  check_before_and_after(true);
}

TEST_CASE("a lesson step that knocks a head out is no change by hand: no before is kept") {
  // Lesson 12: step 5 has layer 2, head 4 knocked out, step 6 layer 1, head 3 instead.
  AppState state;
  testing::load_builtin_scenario(state);
  state.start_lesson(testing::builtin_lesson("induction-heads"), 4);
  state.recompute_if_needed();
  state.go_to_lesson_step(5);
  state.recompute_if_needed();
  CHECK_FALSE(state.computed.before.held);
  // Restored by hand there: the before is the step as it began.
  state.apply(edits::set_head_intervention(0, 2, HeadIntervention{}));
  REQUIRE(state.computed.before.held);
  CHECK(state.computed.before.changes_to(*state.document.scenario().model()) ==
        "layer 1, head 3 restored");
}

}  // namespace attnviz::app
