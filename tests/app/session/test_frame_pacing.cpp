// The interactive loop's pacing: frames while something happens, sleep until input otherwise.
#include "app/session/frame_pacing.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <limits>

namespace attnviz::app {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A loop that draws frames 5 ms long on a clock it advances itself, as the app's loop does: each
// frame starts when the last plan lets it (at `earliest` when no input comes).
struct Loop {
  FramePacer pacer{60.0};
  FrameActivity activity;
  double frame_ms = 5;

  // Draws a frame starting at `start` and returns the plan made after it.
  FramePlan frame_at(double start) {
    activity.frame_start = start;
    activity.now = start + frame_ms / 1000.0;
    return pacer.plan(activity);
  }
  // Draws frames one after the other, as soon as each plan allows, until a plan waits for input;
  // returns how many frames were drawn, that one included.
  int frames_until_idle(FramePlan& last, double& clock) {
    for (int frames = 1; frames <= 100; ++frames) {
      last = frame_at(clock);
      clock = last.earliest;
      if (last.sleeps_until_input()) return frames;
    }
    return -1;
  }
  // Past the frames after start: the next plan sleeps unless something happens.
  void settle() {
    FramePlan last;
    double clock = 0;
    frames_until_idle(last, clock);
  }
};

// A loop past its first frames.
Loop settled_loop() {
  Loop loop;
  loop.settle();
  return loop;
}

TEST_CASE("the first frames after start are drawn without waiting for input") {
  Loop loop;
  FramePlan last;
  double clock = 0;
  CHECK(loop.frames_until_idle(last, clock) == FramePacer::kSettleFrames + 1);
}

TEST_CASE("an idle loop sleeps until input for at most the longest sleep") {
  Loop loop = settled_loop();
  const FramePlan idle = loop.frame_at(10.0);
  CHECK(idle.sleeps_until_input());
  CHECK(idle.latest == doctest::Approx(loop.activity.now + FramePacer::kLongestSleep));
}

TEST_CASE("input is followed by a few frames drawn at once and then sleep") {
  Loop loop = settled_loop();
  FramePlan last;
  loop.activity.input_events += 1;  // a key, say, handled by the next frame
  double clock = 20.0;
  CHECK(loop.frames_until_idle(last, clock) == FramePacer::kSettleFrames + 1);
}

TEST_CASE("frames keep coming while the user interacts") {
  Loop loop = settled_loop();
  loop.activity.interacting = true;  // a weight held down without moving
  for (int frame = 0; frame < 20; ++frame) {
    const FramePlan plan = loop.frame_at(30.0 + frame);
    CHECK_FALSE(plan.sleeps_until_input());
  }
  loop.activity.interacting = false;
  const FramePlan released = loop.frame_at(60.0);
  CHECK(released.sleeps_until_input());
}

TEST_CASE("frames are never closer together than nine tenths of the refresh interval") {
  FramePacer pacer(100.0);
  CHECK(pacer.min_frame_interval() == doctest::Approx(0.009));
  FrameActivity activity;
  activity.interacting = true;
  activity.frame_start = 5.0;
  activity.now = 5.001;  // a 1 ms frame
  const FramePlan quick = pacer.plan(activity);
  CHECK(quick.earliest == doctest::Approx(5.009));
  activity.frame_start = 6.0;
  activity.now = 6.020;  // a frame longer than the interval: the next one at once
  const FramePlan slow = pacer.plan(activity);
  CHECK(slow.earliest == doctest::Approx(6.020));
}

TEST_CASE("an unknown refresh rate counts as 60 Hz") {
  for (double hz : {0.0, -1.0, std::nan(""), kInfinity}) {
    const FramePacer pacer(hz);
    CHECK(pacer.min_frame_interval() == doctest::Approx(FramePacer::kSpacing / 60.0));
  }
}

TEST_CASE("a blinking caret wakes the loop every caret interval") {
  Loop loop = settled_loop();
  loop.activity.text_input = true;
  const FramePlan plan = loop.frame_at(40.0);
  CHECK(plan.sleeps_until_input());
  CHECK(plan.latest == doctest::Approx(loop.activity.now + FramePacer::kCaretInterval));
}

TEST_CASE("a change due sooner than the longest sleep wakes the loop when it is due") {
  Loop loop = settled_loop();
  loop.activity.next_change = 50.3;  // a tooltip's delay runs out
  const FramePlan plan = loop.frame_at(50.0);
  CHECK(plan.latest == doctest::Approx(50.3));
}

TEST_CASE("the frame drawn for a change is followed by one more") {
  // A window that appears (a tooltip) shows from its second frame.
  Loop loop = settled_loop();
  FramePlan last;
  loop.activity.next_change = 50.3;
  const FramePlan wait = loop.frame_at(50.0);
  loop.activity.next_change = kInfinity;  // drawn: nothing more to come
  double clock = wait.latest;
  CHECK(loop.frames_until_idle(last, clock) == FramePacer::kFramesAfterChange + 1);
}

TEST_CASE("a change already due is drawn at once") {
  Loop loop = settled_loop();
  loop.activity.next_change = 69.0;
  const FramePlan plan = loop.frame_at(70.0);
  CHECK_FALSE(plan.sleeps_until_input());
}

TEST_CASE("a change later than the longest sleep leaves the sleep as it is") {
  Loop loop = settled_loop();
  loop.activity.next_change = 90.0;  // a notice that goes in 10 s
  const FramePlan plan = loop.frame_at(80.0);
  CHECK(plan.latest == doctest::Approx(loop.activity.now + FramePacer::kLongestSleep));
}

TEST_CASE("a change that is not a number is ignored") {
  Loop loop = settled_loop();
  loop.activity.next_change = std::nan("");
  const FramePlan plan = loop.frame_at(100.0);
  CHECK(plan.latest == doctest::Approx(loop.activity.now + FramePacer::kLongestSleep));
}

}  // namespace
}  // namespace attnviz::app
