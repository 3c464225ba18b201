// The headless modes: pictures and timings made without a user, each rendering frames with the
// frame loop's own frame() and returning the process's exit status.
//   --screenshot FILE [--layout-out FILE]  a PNG of the window (and where things were drawn)
//   --screenshot-steps DIR                 a PNG of every step of the lesson
//   --bench-frames N                       N frames timed, editing one weight every frame
#pragma once

#include <functional>

#include "app/shell/shell.hpp"

namespace attnviz::app {

using FrameFunction = std::function<void()>;  // builds one frame (App::frame)

int run_screenshot(Shell& shell, const FrameFunction& frame);
int run_lesson_screenshots(Shell& shell, const FrameFunction& frame);
int run_bench(Shell& shell, const FrameFunction& frame, int frames);

// --layout-out without --screenshot: where the last frame drew things, written as the app exits.
Status write_layout(Shell& shell);
// The same JSON as text, for a frame of `width` x `height` pixels.
std::string layout_json_text(Shell& shell, int width, int height);

}  // namespace attnviz::app
