// A tap is shown to ImGui as a move, then a press at the same place (app/view/tap_timing.hpp).
#include "app/view/tap_timing.hpp"

#include <doctest/doctest.h>

namespace attnviz::view {
namespace {

TapTiming::Pointer at(float x, float y, bool left_down) {
  TapTiming::Pointer p;
  p.valid = true;
  p.x = x;
  p.y = y;
  p.down[0] = left_down;
  return p;
}

}  // namespace

TEST_CASE("a press that comes with a move is shown a frame later") {
  TapTiming timing;
  timing.shown(at(10, 10, false));
  const TapTiming::Pointer first = timing.shown(at(200, 50, true));  // moved and pressed at once
  CHECK(first.x == 200);
  CHECK_FALSE(first.down[0]);
  CHECK(timing.press_waiting());
  const TapTiming::Pointer second = timing.shown(at(200, 50, true));
  CHECK(second.down[0]);
  CHECK_FALSE(timing.press_waiting());
}

TEST_CASE("a press where the pointer already was is shown at once") {
  TapTiming timing;
  timing.shown(at(200, 50, false));
  CHECK(timing.shown(at(200, 50, true)).down[0]);
  CHECK_FALSE(timing.press_waiting());
}

TEST_CASE("a tap released before the next frame is still a click") {
  TapTiming timing;
  timing.shown(at(10, 10, false));
  CHECK_FALSE(timing.shown(at(200, 50, true)).down[0]);
  CHECK(timing.shown(at(200, 50, false)).down[0]);  // down for one frame
  CHECK_FALSE(timing.shown(at(200, 50, false)).down[0]);
}

TEST_CASE("a drag begun at once is pressed where it began") {
  TapTiming timing;
  timing.shown(at(10, 10, false));
  timing.shown(at(100, 40, true));
  const TapTiming::Pointer pressed = timing.shown(at(160, 40, true));  // gone on 60 pixels
  CHECK(pressed.down[0]);
  CHECK(pressed.x == 100);
  CHECK(pressed.y == 40);
  const TapTiming::Pointer dragged = timing.shown(at(160, 40, true));
  CHECK(dragged.down[0]);
  CHECK(dragged.x == 160);
}

TEST_CASE("a held button is never held back") {
  TapTiming timing;
  timing.shown(at(10, 10, false));
  timing.shown(at(10, 10, true));
  for (float x = 20; x < 100; x += 20) CHECK(timing.shown(at(x, 10, true)).down[0]);  // a drag
}

TEST_CASE("a pointer off the window is passed through") {
  TapTiming timing;
  TapTiming::Pointer away;
  away.down[1] = true;
  const TapTiming::Pointer shown = timing.shown(away);
  CHECK_FALSE(shown.valid);
  CHECK(shown.down[1]);
}

}  // namespace attnviz::view
