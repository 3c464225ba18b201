// A panel draws only its content; the shell (app/shell/panel_host.cpp) owns the window around
// it, places it with the dashboard layout and calls the panels in order: editors first, then
// views, applying the edits each asked for and computing again between them, so every view
// shows the edits made earlier in the same frame. Which view a panel draws, its title and its slot
// are its row of core/figures/views.hpp, to which its file registers it (app/panels/registry.hpp).
#pragma once

#include "app/panels/command_source.hpp"
#include "app/session/app_state.hpp"
#include "app/view/text_escapes.hpp"

#include <memory>

struct ImFont;

namespace attnviz::render {
class HeatmapRenderer;
}

namespace attnviz::app {

// What a panel is given besides the state, which it reads (const): where its drawing goes, the
// commands, and what it may change. The document it changes only by asking: it pushes named
// edits (app/session/edits.hpp) to `edits`, which the host applies after the panel, before the
// next one draws. How the document is looked at (the selection, the pinned token, the UI
// settings, the lesson's prediction) it changes directly: that is never an undo step.
struct PanelContext {
  EditQueue& edits;
  Selection& selection;
  TokenRef& pinned;
  UiSettings& ui;
  LessonState& lesson;
  render::HeatmapRenderer& heatmaps;
  view::TextEscapes& text_escapes;  // for text fields: what ImGui cannot hold (emoji)
  CommandSource& commands;          // the app's commands, for context menus (command_menu_item)
  ImFont* bold_font = nullptr;
  ImFont* mono_font = nullptr;
};

class Panel {
 public:
  virtual ~Panel() = default;
  // Called only when the pipeline has a result (state.computed.has_result): at least one head, one
  // query and one key, so a panel need not check for an empty one.
  virtual void draw_content(const AppState& state, PanelContext& context) = 0;
};

}  // namespace attnviz::app
