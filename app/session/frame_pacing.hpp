// When the interactive loop draws its next frame.
//
// A frame is drawn when something may look different: after input (and a few frames more, for
// ImGui to settle: hover highlights follow the pointer a frame late, windows fit their content
// over two), while the user is doing something (an item is active, a button or key is held), and
// when something changes by itself (a tooltip's delay runs out, a message expires, a text field's
// caret blinks). Otherwise the app sleeps until input comes, or until the next such change: an
// idle app costs next to nothing, where it used to draw as fast as it could (with a software GL,
// which ignores vsync, that was both cores of a classroom machine, all the time).
//
// Frames never come closer together than a little under the display's refresh interval: a GL
// that honours vsync already spaces them so, and one that does not (Mesa's llvmpipe) would draw
// frames no display shows.
//
// No GLFW here: the loop asks plan() after each frame and waits as told (platform::Backend::wait).
#pragma once

#include <cstdint>
#include <limits>

namespace attnviz::app {

// What the loop knows after drawing a frame.
struct FrameActivity {
  double now = 0;                  // seconds, on the clock the loop waits with
  double frame_start = 0;          // when this frame began
  std::uint64_t input_events = 0;  // window events so far (keys, pointer, resize, focus, ...)
  bool interacting = false;        // an item is active, or a mouse button or key is held down
  bool text_input = false;         // a text field has the keyboard: its caret blinks
  // The earliest time at which something shown changes without input (a tooltip appears, a
  // message disappears); infinity when nothing does.
  double next_change = std::numeric_limits<double>::infinity();
};

// How to wait before the next frame: not before `earliest` (whatever comes), and then until input
// comes or `latest` (infinity: until input).
struct FramePlan {
  double earliest = 0;
  double latest = 0;
  bool sleeps_until_input() const { return latest > earliest; }
};

class FramePacer {
 public:
  static constexpr int kSettleFrames = 3;       // frames drawn after any input
  static constexpr int kFramesAfterChange = 1;  // ... after the frame drawn for a change
  static constexpr double kCaretInterval =
      0.1;  // between frames while a caret blinks (its timer unknown)
  static constexpr double kLongestSleep = 0.5;  // an idle app still looks in this often
  static constexpr double kSpacing = 0.9;       // of the refresh interval, the least between frames
  static constexpr double kDefaultRefreshHz = 60;  // when the display does not say

  // `refresh_hz`: the display's refresh rate (0 or less: unknown).
  explicit FramePacer(double refresh_hz = kDefaultRefreshHz);

  FramePlan plan(const FrameActivity& activity);

  double min_frame_interval() const { return min_interval_; }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  double min_interval_;
  double change_awaited_ = kNever;  // the next_change the last plan woke for
  std::uint64_t events_seen_ = 0;
  int frames_to_settle_ = kSettleFrames;  // the first frames settle the layout
};

}  // namespace attnviz::app
