// The application: owns the shell's objects (shell.hpp), starts them, and runs the frame loop
// interactively or in one of the headless modes (headless.hpp).
#pragma once

#include "app/session/frame_pacing.hpp"
#include "app/session/options.hpp"
#include "app/shell/commands.hpp"
#include "app/shell/shell.hpp"

namespace attnviz::app {

class App {
 public:
  explicit App(Options options);
  // Returns the process exit status.
  int run();

 private:
  Status start();
  void frame();
  void wait_for_next_frame();  // the interactive loop's pause between frames
                               // (app/session/frame_pacing.hpp)

  Shell shell_;
  Commands commands_{shell_};
  FramePacer pacer_;
  double frame_start_ = 0;  // when the frame being drawn began (the backend's clock)
};

}  // namespace attnviz::app
