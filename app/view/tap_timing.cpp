#include "app/view/tap_timing.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::view {

TapTiming::Pointer TapTiming::shown(const Pointer& actual) {
  Pointer out = actual;
  const bool moved = actual.valid && (!seen_ || std::abs(actual.x - last_x_) > 0.5f ||
                                      std::abs(actual.y - last_y_) > 0.5f);
  const bool pressing_now = press_waiting();
  for (std::size_t b = 0; b < out.down.size(); ++b) {
    if (waiting_[b]) {
      out.down[b] = true;  // the press held back, even if the button is up again
      waiting_[b] = false;
    } else if (actual.down[b] && !shown_down_[b] && moved && !pressing_now) {
      out.down[b] = false;  // this frame moves the pointer; the next presses
      waiting_[b] = true;
    }
    shown_down_[b] = out.down[b];
  }
  if (pressing_now && actual.valid && seen_) {  // pressed where it was pressed
    out.x = last_x_;
    out.y = last_y_;
  }
  if (out.valid) {
    last_x_ = out.x;
    last_y_ = out.y;
    seen_ = true;
  }
  return out;
}

bool TapTiming::press_waiting() const {
  return std::any_of(waiting_.begin(), waiting_.end(), [](bool waiting) { return waiting; });
}

}  // namespace attnviz::view
