// A part of the Cheaper attention view besides FlashAttention (cheaper_panel.cpp): Linformer,
// Reformer, sparse patterns, shared keys, decoding with a KV cache. Each draws the rest of the
// settings line (after the method and head selectors) and itself, computed from the selected head
// of the layer shown and kept until that or its own settings change (a view::Memo), or, when
// there is nothing to show, says why in its place.
#pragma once

#include "app/panels/panel.hpp"
#include "app/session/app_state.hpp"

#include <string>

namespace attnviz::app {

class CheaperPart {
 public:
  virtual ~CheaperPart() = default;
  virtual void draw(const AppState& state, PanelContext& context) = 0;

 protected:
  // In place of the part: error_, why there is nothing to show.
  void draw_error() const;

  std::string error_;
  float font_ = 16;  // the text size of the frame being drawn
};

}  // namespace attnviz::app
