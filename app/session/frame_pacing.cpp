#include "app/session/frame_pacing.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::app {

FramePacer::FramePacer(double refresh_hz) {
  const double hz = std::isfinite(refresh_hz) && refresh_hz > 0 ? refresh_hz : kDefaultRefreshHz;
  min_interval_ = kSpacing / hz;
}

FramePlan FramePacer::plan(const FrameActivity& activity) {
  // Input: a few frames follow. The change this frame was drawn for: one more (a window that
  // appears, such as a tooltip, shows from its second frame).
  if (activity.input_events != events_seen_) {
    events_seen_ = activity.input_events;
    frames_to_settle_ = kSettleFrames;
  } else if (activity.frame_start >= change_awaited_) {
    frames_to_settle_ = std::max(frames_to_settle_, kFramesAfterChange);
  }
  change_awaited_ = kNever;
  FramePlan plan;
  plan.earliest = std::max(activity.now, activity.frame_start + min_interval_);
  if (frames_to_settle_ > 0 || activity.interacting) {
    frames_to_settle_ = std::max(0, frames_to_settle_ - 1);
    plan.latest = plan.earliest;
    return plan;
  }
  const double wake = activity.now + (activity.text_input ? kCaretInterval : kLongestSleep);
  if (activity.next_change <= wake) change_awaited_ = activity.next_change;
  plan.latest = std::max(plan.earliest, std::min(wake, activity.next_change));
  return plan;
}

}  // namespace attnviz::app
