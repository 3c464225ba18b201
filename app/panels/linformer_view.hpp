// The Cheaper attention view's Linformer part (core/variants/linformer.hpp), on the selected head:
// the n × k weights of every query over the k summary keys, the largest difference from full
// attention for every k from 1 to n (the current one marked), and the scores computed, n·k
// against n². The projections E and F are drawn from a seed, or E is shared as F.
#pragma once

#include "app/panels/cheaper_part.hpp"
#include "app/panels/theme.hpp"
#include "app/session/app_state.hpp"
#include "app/view/memo.hpp"
#include "core/variants/linformer.hpp"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

class LinformerView final : public CheaperPart {
 public:
  // Draws the settings line's rest (after the method and head selectors) and the view.
  void draw(const AppState& state, PanelContext& context) override;

 private:
  bool update(const AppState& state);  // false: error_ says why there is nothing to show
  void draw_weights(const AppState& state, ImVec2 origin, ImVec2 size);
  void draw_sweep(ImVec2 origin, ImVec2 size, const Palette& colours);

  int k_ = 4;
  bool shared_ = false;
  std::uint64_t seed_ = kLinformerSeed;
  // What was computed.
  // The result's version, the head, k, F = E, the projections' seed.
  view::Memo<std::uint64_t, int, int, bool, std::uint64_t> computed_of_;
  int computed_k_ = -1;
  Matrix weights_;                  // (n_query, k)
  std::vector<float> differences_;  // the largest |output − full| for k = 1 .. n (sampled past 64)
  std::vector<int> sweep_k_;        // the k of each entry of differences_
  float difference_ = 0;            // at k_
  std::vector<float> moved_;        // (n_query): each output's largest difference from full, at k_
  std::int64_t pairs_ = 0, pairs_full_ = 0;
};

}  // namespace attnviz::app
