// The Training view's session: a Trainer stepped off the UI thread (and, without a thread, by
// pump()), its progress published whole, its timeline of frames, and a frame saved as a model.
#include "app/session/training_session.hpp"
#include "core/models/model.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

namespace attnviz::app {
namespace {

TrainingSettings small_settings() {
  TrainingSettings s;
  s.task = TrainingTaskKind::Copy;
  s.steps = 30;
  s.texts = 4;
  s.length = 24;
  s.d_model = 16;
  s.score_every = 10;
  s.optimizer.total_steps = 30;
  return s;
}

// Waits (up to 60 s) until the published progress satisfies `ready`.
template <class Ready>
std::shared_ptr<const TrainingProgress> wait_for(TrainingSession& session, Ready ready) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end) {
    session.pump(std::chrono::milliseconds(50));
    std::shared_ptr<const TrainingProgress> p = session.progress();
    if (p && ready(*p)) return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  FAIL("the training session did not get there in 60 s");
  return nullptr;
}

}  // namespace

TEST_CASE("a training session steps on its own thread and keeps the trainer's numbers") {
  for (const bool own_thread : {true, false}) {
    CAPTURE(own_thread);
    TrainingSession session(own_thread);
    CHECK(session.progress() == nullptr);
    REQUIRE(session.begin(small_settings()).is_ok());
    std::shared_ptr<const TrainingProgress> p = session.progress();
    REQUIRE(p != nullptr);
    CHECK(p->steps_taken == 0);
    CHECK_FALSE(p->running);
    REQUIRE(p->frames.size() == 1);
    CHECK(p->frames[0]->attention.size() == 8);  // 2 layers of 4 heads
    CHECK(p->frames[0]->attention[0].rows() == static_cast<int>(p->probe.size()));

    session.step_once();
    p = wait_for(session, [](const TrainingProgress& q) { return q.steps_taken == 1; });
    CHECK_FALSE(p->running);

    session.resume();
    p = wait_for(session, [](const TrainingProgress& q) { return q.done; });
    CHECK(p->steps_taken == 30);
    CHECK_FALSE(p->running);
    std::vector<int> steps;
    for (const auto& frame : p->frames) steps.push_back(frame->step);
    CHECK(steps == std::vector<int>{0, 10, 20, 30});

    // The same numbers as the trainer run directly.
    Result<Trainer> direct = Trainer::make(small_settings());
    REQUIRE(direct.ok());
    while (!direct->done()) REQUIRE(direct->step().ok());
    CHECK(p->losses == direct->losses());
    CHECK(*p->frames.back()->weights == direct->values());

    // A frame saved opens as a model with that frame's weights.
    testing::TempDir dir;
    const std::string folder = (dir.path / "copy-step-10").string();
    REQUIRE(session.save(folder, *p->frames[1]).is_ok());
    Result<Model> model = open_model(folder);
    REQUIRE_MESSAGE(model.ok(), model.error());
    const ParameterBuffer& at_10 = *p->frames[1]->weights;
    CHECK(model->transformer.weights().token_embedding.at(97, 3) == at_10[97 * 16 + 3]);
  }
}

TEST_CASE("a training session refuses bad settings and keeps the run it has") {
  TrainingSession session;
  REQUIRE(session.begin(small_settings()).is_ok());
  TrainingSettings bad = small_settings();
  bad.d_model = 15;
  const Status refused = session.begin(bad);
  CHECK_FALSE(refused.is_ok());
  CHECK(refused.message().find("multiple of the heads") != std::string::npos);
  CHECK(session.progress()->config.d_model == 16);
}

TEST_CASE("a training session keeps at most its frames' limit, the first and the last") {
  TrainingSettings s = small_settings();
  s.steps = 300;
  s.score_every = 1;
  s.optimizer.total_steps = 300;
  TrainingSession session(false);
  REQUIRE(session.begin(s).is_ok());
  session.resume();
  std::shared_ptr<const TrainingProgress> p =
      wait_for(session, [](const TrainingProgress& q) { return q.done; });
  CHECK(p->frames.size() <= TrainingSession::kMostFrames);
  CHECK(p->frames.front()->step == 0);
  CHECK(p->frames.back()->step == 300);
}

}  // namespace attnviz::app
