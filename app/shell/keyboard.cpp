// The keyboard shortcuts: each calls the command its menu item calls (commands.hpp); the help
// window (help_window.cpp) lists them.
#include <imgui.h>
#include <imgui_internal.h>  // the popup stack, for Escape

#include "app/platform/keys.hpp"
#include "app/platform/platform.hpp"
#include "app/shell/commands.hpp"

namespace attnviz::app {
namespace {

using platform::Key;
using platform::key_pressed;

// Escape closes the open menus, combo lists and pop-ups (ImGui 1.86 does so only with keyboard
// navigation on), but not a dialog that asks something (it handles Escape itself) or what lies
// beneath it.
// Returns whether there was something to close.
bool close_menus(Shell& shell) {
  const ImGuiContext& context = *ImGui::GetCurrentContext();
  int keep = 0;  // the popups up to the topmost dialog stay
  for (int level = 0; level < context.OpenPopupStack.Size; ++level) {
    const ImGuiWindow* window = context.OpenPopupStack[level].Window;
    if (window && (window->Flags & ImGuiWindowFlags_Modal)) keep = level + 1;
  }
  if (keep < context.OpenPopupStack.Size) {
    ImGui::ClosePopupToLevel(keep, true);
    return true;
  }
  if (context.OpenPopupStack.Size == 0 && shell.show_shortcuts) {
    shell.show_shortcuts = false;  // nothing else open: the shortcuts list
    return true;
  }
  return context.OpenPopupStack.Size > 0;
}

// Presenter mode, and the keys a presentation clicker sends: Page Down / Page Up (most
// clickers), or the arrow keys (some); they step the lesson, else move the selected query.
void presentation_keys(Shell& shell, Commands& commands) {
  const ImGuiIO& io = ImGui::GetIO();
  if (key_pressed(Key::F5)) commands.toggle_presenter();
  if (key_pressed(Key::F11)) commands.toggle_fullscreen();
  if (io.WantTextInput || io.KeyCtrl || io.KeyAlt) return;  // a text field has the keys
  int direction = 0;
  if (key_pressed(Key::PageDown)) direction = +1;
  if (key_pressed(Key::PageUp)) direction = -1;
  // The arrows only in presenter mode: on the dashboard they belong to the widgets.
  if (shell.state.ui.presenter && !ImGui::IsAnyItemActive()) {
    if (key_pressed(Key::Right) || key_pressed(Key::Down)) direction = +1;
    if (key_pressed(Key::Left) || key_pressed(Key::Up)) direction = -1;
  }
  if (direction != 0) commands.step_presentation(direction);
}

}  // namespace

void handle_shortcuts(Shell& shell, Commands& commands) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && key_pressed(Key::Q) && !platform::kBrowser)
    commands.quit();                         // a page is closed as a page
  if (shell.unsaved_guard.asking()) return;  // the question is answered first
  if (key_pressed(Key::F1)) commands.toggle_shortcuts();
  // Escape leaves presenter mode when it has nothing else to do: no menu to close, no text
  // field to leave.
  const bool typing = io.WantTextInput;
  if (key_pressed(Key::Escape) && !close_menus(shell) && !typing && shell.state.ui.presenter)
    commands.leave_presenter();
  presentation_keys(shell, commands);
  if (!io.KeyCtrl) return;
  if (key_pressed(Key::N)) commands.new_scenario();
  if (key_pressed(Key::O)) commands.open();
  if (key_pressed(Key::S)) {
    if (io.KeyShift)
      commands.save_as();
    else
      commands.save();
  }
  // Text size, as in a browser: Ctrl+= or Ctrl++ larger, Ctrl+- smaller, Ctrl+0 the size that
  // suits the window.
  if (key_pressed(Key::Equal, true) || key_pressed(Key::KeypadAdd, true)) commands.larger_text();
  if (key_pressed(Key::Minus, true) || key_pressed(Key::KeypadSubtract, true))
    commands.smaller_text();
  if (key_pressed(Key::Zero)) commands.reset_text_size();
  if (key_pressed(Key::K)) commands.toggle_knock_out();
  if (io.WantTextInput) return;  // a text field has its own undo
  if (key_pressed(Key::Z, true) && !io.KeyShift) commands.undo();
  if ((key_pressed(Key::Z, true) && io.KeyShift) || key_pressed(Key::Y, true)) commands.redo();
}

}  // namespace attnviz::app
