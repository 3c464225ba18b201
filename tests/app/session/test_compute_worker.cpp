// A real model's recompute off the UI thread (app/session/compute_worker.hpp): the front pipeline
// keeps the last result until the next arrives, the latest request wins, and a result that comes
// after the document left model mode is not shown.
#include "app/session/app_state.hpp"
#include "app/session/compute_worker.hpp"
#include "app/session/file_actions.hpp"
#include "tests/support/builtin_state.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <limits>
#include <string>
#include <thread>

namespace attnviz::app {
namespace {

Scenario kjv(std::string text) {
  Scenario scenario;
  scenario.target = std::move(text);
  scenario.spec = ModelSpec::named("gpt2-kjv-tiny");
  return scenario;
}

std::string shown_text(const Pipeline& pipeline) {
  std::string text;
  for (const Token& token : pipeline.target().tokens) text += token.text;
  return text;
}

}  // namespace

TEST_CASE("the worker computes on its own pipeline and swaps it in, the latest request wins") {
  ComputeWorker worker(1);
  Pipeline front;
  worker.request(kjv("And God said"), 1, 0);
  std::optional<ComputeWorker::Finished> done = worker.collect(front, std::chrono::seconds(20), 1);
  REQUIRE(done);
  CHECK(done->version == 1);
  CHECK(done->status);
  CHECK(front.can(Capability::TrainedWeights));
  CHECK(shown_text(front) == "And\xe2\x90\xa3God\xe2\x90\xa3said");  // ␣ for the spaces

  // Three requests at once: the second never starts (the third replaced it).
  worker.request(kjv("And God said, Let"), 2, 0);
  worker.request(kjv("And God said, Let there"), 3, 0);
  worker.request(kjv("And God said, Let there be light"), 4, 0);
  std::uint64_t last = 0;
  int collected = 0;
  while (last != 4) {
    done = worker.collect(front, std::chrono::seconds(20), last + 1);
    REQUIRE(done);
    CHECK(done->version != 3);
    last = done->version;
    ++collected;
  }
  CHECK(collected <= 2);
  CHECK(shown_text(front).find("light") != std::string::npos);
  CHECK_FALSE(worker.pending());

  // A failure leaves the front as it was.
  worker.request(kjv("x"), 5, 0);
  Scenario missing = kjv("x");
  missing.edit_model()->model = "no-such-model";
  done = worker.collect(front, std::chrono::seconds(20), 5);
  worker.request(missing, 6, 0);
  done = worker.collect(front, std::chrono::seconds(20), 6);
  REQUIRE(done);
  CHECK_FALSE(done->status);
  CHECK(shown_text(front) == "x");
}

TEST_CASE("after a swap the worker catches up: the next request computes only its new positions") {
  ComputeWorker worker(1);
  Pipeline front;
  Scenario scenario = kjv("And God said, Let there be light: and there was light.");
  HeadIntervention ablate;
  ablate.output_scale = 0;
  scenario.edit_model()->set_intervention(0, 1, ablate);
  worker.request(scenario, 1, 0);
  REQUIRE(worker.collect(front, std::chrono::seconds(20), 1));
  worker.wait_until_idle();  // the back pipeline computed version 1 too
  scenario.target += " And God saw";
  worker.request(scenario, 2, 0);
  REQUIRE(worker.collect(front, std::chrono::seconds(20), 2));
  const Run& run = front.current();
  REQUIRE(run.trained_forward());
  const TransformerForward& forward = *run.trained_forward();
  // Only the positions after the old text were computed, in every layer.
  CHECK(forward.last_work().first_layer_redone == run.layer_count());
  CHECK(forward.last_work().first_position > 10);
  CHECK(forward.intervention(0, 1).ablated());
}

TEST_CASE("a slow model's edit returns at once, the views keep the last result until it comes") {
  AppState state;
  testing::load_builtin_scenario(state);
  REQUIRE(open_model(state, "gpt2-kjv-tiny"));
  state.recompute_if_needed();
  const std::string before = shown_text(state.pipeline());
  state.computed.on_this_thread_ms = 0;  // as if every run were slow: off this thread
  state.computed.wait_for_model = std::chrono::nanoseconds(0);
  state.apply(edits::set_target("And the earth was without form, and void"));
  // The edit did not wait: unless the worker was quicker than this line, the old text is shown.
  if (state.computed.computing()) CHECK(shown_text(state.pipeline()) == before);
  testing::frames_until_computed(state);
  CHECK(shown_text(state.pipeline()).find("void") != std::string::npos);
  CHECK(state.computed.version == state.document.version());
  CHECK(state.computed.error.empty());
}

TEST_CASE(
    "an encoder–decoder's cross heads are measured after it opens: the frames keep coming until "
    "their roles show") {
  AppState state;
  testing::load_builtin_scenario(state);
  // As the app waits for a result, with the model computed on this thread (one pipeline).
  state.computed.on_this_thread_ms = 1e9;
  state.computed.wait_for_model = std::chrono::milliseconds(8);
  REQUIRE(open_model(state, "marian-web-es"));  // it opens on its cross-attention
  state.frame.redraw_in = std::numeric_limits<double>::infinity();
  state.recompute_if_needed();
  const Run& run = state.pipeline().current();
  REQUIRE(run.can(Capability::HeadRoles));
  if (run.roles_pending()) {
    CHECK(run.roles().empty());
    CHECK(state.frame.redraw_in <= 0.1);  // a frame comes soon, without input, to show them
  } else {
    MESSAGE("the measurement had ended before the first frame asked");
  }
  run.wait_for_roles();
  state.frame.redraw_in = std::numeric_limits<double>::infinity();
  state.recompute_if_needed();
  CHECK(state.pipeline().current().roles().size() == 12);  // 3 layers of 4 cross heads
  CHECK(state.frame.redraw_in == std::numeric_limits<double>::infinity());  // nothing to wait for
}

TEST_CASE("leaving model mode while a model computes: its result is not shown") {
  AppState state;
  testing::load_builtin_scenario(state);
  REQUIRE(open_model(state, "gpt2-kjv-tiny"));
  state.recompute_if_needed();
  state.computed.on_this_thread_ms = 0;
  state.computed.wait_for_model = std::chrono::nanoseconds(0);
  state.apply(edits::set_target("And the earth was without form"));
  leave_model(state);
  state.recompute_if_needed();
  CHECK_FALSE(state.pipeline().can(Capability::TrainedWeights));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the model's result is in by now
  for (int frame = 0; frame < 5; ++frame) state.recompute_if_needed();
  CHECK_FALSE(state.pipeline().can(Capability::TrainedWeights));
  CHECK(state.pipeline().layer_count() == 1);
}

// The browser build's worker (no thread may start there): collect() computes the latest request
// itself, at once, whatever the wait, and the results are the threaded worker's.
TEST_CASE("without a thread of its own the worker computes the latest request when collected") {
  ComputeWorker worker(1, false);
  Pipeline front;
  CHECK_FALSE(worker.collect(front, std::chrono::seconds(0), 1));  // nothing asked
  worker.request(kjv("And God said"), 1, 0);
  worker.request(kjv("And God said, Let there be light"), 2, 0);  // replaces the first
  CHECK(worker.pending());
  std::optional<ComputeWorker::Finished> done = worker.collect(front, std::chrono::seconds(0), 1);
  REQUIRE(done);
  CHECK(done->version == 2);
  CHECK(done->status);
  CHECK_FALSE(worker.pending());
  const std::string space = "\xe2\x90\xa3";  // ␣
  CHECK(shown_text(front) == "And" + space + "God" + space + "said," + space + "Let" + space +
                                 "there" + space + "be" + space + "light");
  worker.wait_until_idle();  // returns at once: nothing runs elsewhere
  CHECK_FALSE(worker.collect(front, std::chrono::seconds(0), 3));

  // The same text through the threaded worker gives the same numbers.
  ComputeWorker threaded(1, true);
  Pipeline threaded_front;
  threaded.request(kjv("And God said, Let there be light"), 1, 0);
  REQUIRE(threaded.collect(threaded_front, std::chrono::seconds(20), 1));
  CHECK(threaded_front.layer(0).heads[0].weights.isApprox(front.layer(0).heads[0].weights, 0.0f));
}

}  // namespace attnviz::app
