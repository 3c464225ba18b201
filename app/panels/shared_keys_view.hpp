// The Cheaper attention view's shared-keys part: multi-query and grouped-query attention
// (core/variants/grouped_query.hpp) on the one-layer scenario. The number of key/value groups as
// buttons (every divisor of the heads); the heads drawn over the K/V heads they share; for every
// choice the weights and the K/V cache a decoder keeps per token (and for this sentence), the
// current one marked; and how far the output moved from every head having its own K and V.
#pragma once

#include "app/panels/cheaper_part.hpp"
#include "app/session/app_state.hpp"
#include "app/view/memo.hpp"
#include "core/engine/attention.hpp"

#include <cstdint>

namespace attnviz::app {

class SharedKeysView final : public CheaperPart {
 public:
  void draw(const AppState& state, PanelContext& context) override;

 private:
  void draw_diagram(const AppState& state, float width);
  void draw_costs(const AppState& state);
  void update_difference(const AppState& state);

  AttentionEngine multi_head_;               // the same scenario with every head its own K and V
  view::Memo<std::uint64_t> difference_of_;  // the result's version
  float difference_ = -1;  // the output's largest difference from multi-head; -1: not computed
};

}  // namespace attnviz::app
