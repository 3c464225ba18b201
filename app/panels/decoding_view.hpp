// The Cheaper attention view's decoding part (core/variants/kv_cache.hpp): the selected head as a
// decoder runs it, one token at a time, the step being the selected query. A stepper; the tokens
// received so far; the K and V cache growing by one row a step (the new row outlined); the new
// query's weights over the cache; the work of every step with the cache against recomputing every
// key and value; and the step's row against the full causal computation's.
#pragma once

#include "app/panels/cheaper_part.hpp"
#include "app/session/app_state.hpp"
#include "app/view/memo.hpp"
#include "core/variants/kv_cache.hpp"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnviz::app {

class DecodingView final : public CheaperPart {
 public:
  void draw(const AppState& state, PanelContext& context) override;

 private:
  bool update(const AppState& state);  // false: error_ says why there is nothing to show
  void draw_cache(const AppState& state, const char* title, const Matrix& cache, ImVec2 origin,
                  float width);
  void draw_weights(const AppState& state, ImVec2 origin, float width);
  void draw_work(const AppState& state, ImVec2 origin, ImVec2 size);

  int step_ = 0;  // the token that has just arrived: the selected query
  view::Memo<std::uint64_t, int> computed_of_;  // the result's version, the head
  std::vector<DecodeStep> steps_;
  Matrix keys_, values_;  // (n, d_k), (n, d_v): the cache after the last step
  Matrix full_;           // (n, d_v): the full causal computation's output
};

}  // namespace attnviz::app
