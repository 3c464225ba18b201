// --monkey SEED: the random-action test (tests/monkey/run_monkey.sh, docs/testing.md). The app
// drives itself: every frame's input is made up from a seeded generator and handed to ImGui as the
// window's own events would be (platform::Backend::set_input_hook): clicks, double clicks, drags
// and wheel turns at places biased toward what the last frame drew (the open menu or dialog, the
// menu bar, the sentence field, the heatmap's cells, the Model view's tiles, any window), keys
// and shortcuts, odd Unicode typed, numbers typed into the matrices (NaN, 1e38, ...); and, through
// the commands every menu calls (commands.hpp), model switches between the shipped models and
// back to the one-layer scenario, lessons and their steps, knock-outs, undo and redo, files opened,
// saved and exported, presenter mode, quitting. The clock is a frame's 1/60 s and every model
// result is waited for, so a seed makes the same run. It works in a folder of its own (a new
// temporary folder, its state folder inside it): it writes nothing anywhere else.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "app/shell/commands.hpp"
#include "app/shell/shell.hpp"

struct ImGuiIO;

namespace attnviz::app {

class Monkey {
 public:
  Monkey(Shell& shell, Commands& commands, std::uint64_t seed, int actions);
  ~Monkey();  // removes its folder
  Monkey(const Monkey&) = delete;
  Monkey& operator=(const Monkey&) = delete;

  // Before the app starts: the folder (and ATTNVIZ_STATE_DIR, the working folder in it), and
  // a few files in it to open (a scenario that is not JSON, an empty one, lessons).
  Status prepare();
  // Before every frame: the next action, when the last one's frames have all been shown.
  void before_frame();
  // The backend's input hook: this frame's pointer, buttons, keys and characters.
  void give_input(std::vector<unsigned>& typed);
  // The app agreed to quit (a click on Quit, Ctrl+Q answered): counted, and the run goes on.
  void quit_agreed() { ++quits_; }
  bool done() const { return actions_done_ >= actions_ && frames_.empty(); }
  double clock() const { return static_cast<double>(frame_count_) / 60.0; }
  std::string summary() const;  // one line: the seed, actions, frames, what was done, a digest

 private:
  struct FrameInput {
    float x = 0, y = 0;
    bool down[3] = {false, false, false};
    float wheel = 0;
    std::vector<int> keys;  // ImGui's key indices, down for this frame
    bool ctrl = false, shift = false, alt = false;
    std::u32string text;
  };

  // The generator (SplitMix64: the same numbers with any standard library).
  std::uint64_t next();
  int below(int n);  // 0 .. n-1
  bool chance(double p);
  float between(float low, float high);

  void act();  // one action: frames queued, or a command called now
  void note(const std::string& action);
  FrameInput idle() const;  // the pointer where it is, nothing pressed
  void queue(FrameInput frame) { frames_.push_back(std::move(frame)); }
  void pick_target(float& x, float& y);  // biased toward what the last frame drew
  void click(int button, int clicks);
  void drag();
  void wheel();
  void key();
  void shortcut();
  void type_text();
  void type_number();
  void command();
  void press_key(int imgui_key, bool ctrl, bool shift, bool alt);
  void type(const std::u32string& text);

  Shell& shell_;
  Commands& commands_;
  std::uint64_t seed_, state_;
  int actions_ = 0, actions_done_ = 0;
  long frame_count_ = 0;
  std::deque<FrameInput> frames_;
  FrameInput last_;
  std::vector<int> held_;                          // keys the last frame held down
  std::string folder_;                             // the temporary folder, removed at the end
  std::uint64_t digest_ = 1469598103934665603ull;  // FNV-1a of the actions' names
  int model_switches_ = 0, lesson_steps_ = 0, knock_outs_ = 0, weight_edits_ = 0, quits_ = 0;
  // Frames shown in model mode, in a lesson, with a menu or dialog open, with a text field typed
  // in.
  long model_frames_ = 0, lesson_frames_ = 0, popup_frames_ = 0, typing_frames_ = 0;
  bool trace_ = false;  // ATTNVIZ_MONKEY_TRACE: every action on standard error
};

}  // namespace attnviz::app
