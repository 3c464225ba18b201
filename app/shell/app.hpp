// The application: owns the shell's objects (shell.hpp), starts them, and runs the frame loop
// interactively or in one of the headless modes (headless.hpp).
#pragma once

#include "app/session/frame_pacing.hpp"
#include "app/session/options.hpp"
#include "app/shell/commands.hpp"
#include "app/shell/monkey.hpp"
#include "app/shell/shell.hpp"

#include <memory>

namespace attnviz::app {

class App {
 public:
  explicit App(Options options);
  // Returns the process exit status. In the browser it returns once the page calls the frames.
  int run();

 private:
  Status start();
  void frame();
  // The interactive loop, one pass: the close button, a frame drawn and shown; false once the
  // app is to quit. The desktop calls it in a loop, sleeping between passes; the browser calls
  // browser_pass() for every frame the page shows.
  bool interactive_pass();
  int finish_interactive();     // after the last pass: the exit status
  FramePlan plan_next_frame();  // when the next pass is due (app/session/frame_pacing.hpp)
  void wait_for_next_frame();   // the desktop's pause between passes, as planned
  void browser_pass();          // a pass if one is due, else nothing
  // Up to `frames` passes drawn at once, whatever the frame pacer says (a tap's frames, from the
  // page's touch handler).
  void run_frames_now(int frames);
  // Where the last frame drew things (--layout-out's JSON), for the browser build's tests.
  std::string layout_text();
  // --monkey: the interactive loop driven by the random-action test (monkey.hpp).
  int run_monkey();

  Shell shell_;
  Commands commands_{shell_};
  std::unique_ptr<Monkey> monkey_;  // --monkey
  FramePacer pacer_;
  double frame_start_ = 0;  // when the frame being drawn began (the backend's clock)
  // The interactive loop's bookkeeping.
  double exit_after_ = 0;  // ATTNVIZ_EXIT_AFTER seconds, 0 for none
  double loop_start_ = 0;
  long frames_drawn_ = 0;
  FramePlan next_plan_;               // the browser's: when the next pass is due
  std::uint64_t events_at_plan_ = 0;  // the backend's input_events() when it was planned
};

}  // namespace attnviz::app
