// When ImGui is shown a mouse press: a frame after the pointer's move to where it is pressed.
//
// On a touch screen, an interactive whiteboard or with a tablet pen, a tap moves the pointer and
// presses in the same instant, with no motion before it. ImGui 1.86 takes some items' hovering
// from the frame before: a tab, while another item was under the pointer in that frame, ignored
// the tap (a tap on the Neuron tab after one on the Heatmaps tab was lost, and the tab bar was
// left showing one tab selected and another's view). So a press that comes with a move is held
// back a frame: the pointer moves in one frame and presses in the next, at the place it was
// pressed even if it has gone on (a drag begun at once). A release before then still makes a
// click, as ImGui's GLFW backend does for a press and release within one frame.
//
// No ImGui here (unit-tested); platform::Backend applies it to ImGui's io each frame.
#pragma once

#include <array>

namespace attnviz::view {

class TapTiming {
 public:
  static constexpr int kButtons = 5;  // ImGui's io.MouseDown

  struct Pointer {
    bool valid = false;  // false: not over the window
    float x = 0, y = 0;
    std::array<bool, kButtons> down{};
  };

  // The pointer as ImGui is to see it this frame, from the pointer as it is.
  Pointer shown(const Pointer& actual);
  // A press is held back for the next frame (which must be drawn soon).
  bool press_waiting() const;

 private:
  std::array<bool, kButtons> waiting_{};  // held back from the last frame
  std::array<bool, kButtons> shown_down_{};
  float last_x_ = 0, last_y_ = 0;  // where the pointer was last shown
  bool seen_ = false;
};

}  // namespace attnviz::view
