// The Cheaper attention view's sparse part: the scenario's mask pattern (window, dilated, blocks,
// with global tokens; core/variants/sparse_masks.hpp) on the selected head. The pattern and its
// numbers on one line, the tokens as chips (click one to make it global: it sees every key and
// every query sees it), the weights with the pairs the pattern skips hatched, the pairs computed
// against full attention's, and what the selected query can no longer see, with the weight full
// attention gave those keys.
#pragma once

#include "app/panels/cheaper_part.hpp"
#include "app/session/app_state.hpp"
#include "app/view/memo.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

class SparseView final : public CheaperPart {
 public:
  void draw(const AppState& state, PanelContext& context) override;

 private:
  bool update(const AppState& state);  // false: error_ says why there is nothing to show
  void draw_lost(const AppState& state, float width);

  view::Memo<std::uint64_t, int> computed_of_;  // the result's version, the head
  MaskMatrix allowed_;   // (n_query, n_key): the pattern and the causal mask together
  Matrix full_weights_;  // (n_query, n_key): α of the same head without the pattern; empty: none
  long long pairs_ = 0, pairs_full_ = 0;
};

}  // namespace attnviz::app
