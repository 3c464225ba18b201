// The app's command line.
#pragma once

#include "app/session/app_state.hpp"
#include "core/base/status.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnviz::app {

struct Options {
  std::string scenario_path;              // "" = the built-in scenario
  std::optional<std::string> screenshot;  // write a PNG of the window and exit
  std::optional<std::string> layout_out;  // with --screenshot: where things were drawn (JSON)
  int width = 1280, height = 720;
  int frames = 3;  // frames rendered before the screenshot
  int scale = 1;   // screenshots: the same layout, N times the pixels
  std::optional<Theme> theme;
  std::optional<float> font_size;
  std::optional<view::PanelVisibility> panels;
  std::optional<int> layer, head, query;
  std::optional<view::ColormapId> colormap;
  std::optional<CenterView> view;    // the centre view's tab
  std::optional<view::ViewId> tab;   // --view arrows | output: their tab, where they are tabs
  std::optional<std::string> model;  // a real model for the scenario's text: a name or a path
  std::string lesson;                // a lesson to start: a name or a file
  std::optional<int> step;           // its step (0-based)
  std::optional<std::string>
      screenshot_steps;             // with --lesson: a PNG of every step into this folder
  std::optional<int> bench_frames;  // time this many frames with every panel open, print, exit
  bool bench_training = false;      // with --bench-frames: a new model trains meanwhile
  std::optional<int> threads;  // the attention engine's threads (default: default_engine_threads())
  // --monkey SEED: the random-action test (app/shell/monkey.hpp): that many seeded random actions
  // (--monkey-actions), in a folder of its own, then exit.
  std::optional<std::uint64_t> monkey;
  int monkey_actions = 1000;
  bool presenter = false;  // start in presenter mode
  bool welcome = false;    // show the welcome whatever was dismissed (app/session/welcome.hpp)
  bool guide = false;      // open the user guide
  bool recover = false;    // restore the recovery file of an earlier run without asking
  bool help = false, version = false;
};

// Threads for the attention engine when --threads is not given: 2 on a machine with 4 or more
// hardware threads, else 1 (on 2 cores the renderer's and the system's threads need the other).
int default_engine_threads();
// Threads for the weight products of a recompute the UI thread makes while the frame waits for
// it (AppState's ComputedState::product_threads): 2 where there are threads and 2 hardware
// threads or more (the renderer's wait for the result leaves the other core free), else 1.
int default_product_threads();

// Parses argv into `options`; an error says which argument is wrong, in one line.
Status parse_options(const std::vector<std::string>& args, Options& options);
std::string usage();  // --help

}  // namespace attnviz::app
