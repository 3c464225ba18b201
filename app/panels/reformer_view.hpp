// The Cheaper attention view's Reformer part (core/variants/reformer.hpp), on the selected head:
// every token coloured by its hash bucket, one line per round; the pairs LSH attention computed
// (the rest hatched) with their weights; and the pairs computed against n², with the output's
// largest difference from full attention over the same shared keys.
#pragma once

#include "app/panels/cheaper_part.hpp"
#include "app/session/app_state.hpp"
#include "app/view/memo.hpp"
#include "core/variants/reformer.hpp"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

class ReformerView final : public CheaperPart {
 public:
  // Draws the settings line's rest (after the method and head selectors) and the view.
  void draw(const AppState& state, PanelContext& context) override;

 private:
  bool update(const AppState& state);  // false: error_ says why there is nothing to show
  void draw_summary(float width);

  ReformerSettings settings_;
  // What was computed.
  view::Memo<std::uint64_t, int, ReformerSettings> computed_of_;  // the result's version, the head
  ReformerSettings computed_{0, 0, 0, 0, true};
  ReformerResult lsh_;
  float difference_ = 0;
  std::vector<std::vector<ImU32>> bucket_colours_;  // per round, per token
};

}  // namespace attnviz::app
