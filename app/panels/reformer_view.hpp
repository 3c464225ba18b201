// The Cheaper attention view's Reformer part (core/variants/reformer.hpp), on the selected head:
// every token coloured by its hash bucket, one line per round; the pairs LSH attention computed
// (the rest hatched) with their weights; and the pairs computed against n², with the output's
// largest difference from full attention over the same shared keys.
#pragma once

#include "app/session/app_state.hpp"
#include "core/variants/reformer.hpp"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

class ReformerView {
 public:
  // Draws the settings line's rest (after the method and head selectors) and the view.
  void draw(const AppState& state);

 private:
  bool update(const AppState& state);  // false: error_ says why there is nothing to show
  void draw_summary(float width);

  ReformerSettings settings_;
  // What was computed.
  std::uint64_t version_ = 0;
  int head_ = -1;
  ReformerSettings computed_{0, 0, 0, 0, true};
  std::string error_;
  ReformerResult lsh_;
  float difference_ = 0;
  std::vector<std::vector<ImU32>> bucket_colours_;  // per round, per token
  float font_ = 16;
};

}  // namespace attnviz::app
