// Views that scroll keep the selected token in sight: when the selection changes (a click in
// another view, a lesson step, the clicker), the view scrolls just enough to show it, with a
// margin; a scroll the user makes afterwards is left alone until the selection changes again.
#pragma once

#include <algorithm>

namespace attnviz::view {

// The scroll (0 .. content - window) that shows [item_begin, item_end) of a content `content`
// long in a window `window` long, scrolled at `scroll` now: unchanged when the item is already
// whole in sight, else moved by as little as shows it with `margin` around it (an item longer
// than the window shows its beginning).
inline float scroll_to_show(float scroll, float item_begin, float item_end, float window,
                            float content, float margin) {
  const float largest = std::max(0.0f, content - window);
  float wanted = scroll;
  if (item_end + margin > scroll + window) wanted = item_end + margin - window;
  if (item_begin - margin < wanted) wanted = item_begin - margin;
  return std::clamp(wanted, 0.0f, largest);
}

// Remembers what a view last scrolled to follow, so that it scrolls only when that changes.
struct FollowedToken {
  int index = -2;  // -2: nothing followed yet (the first frame follows the selection)
  // True, once, when `now` differs from what was followed last.
  bool changed_to(int now) {
    if (now == index) return false;
    index = now;
    return true;
  }
};

}  // namespace attnviz::view
