// The keyboard shortcuts: each calls the command its menu item calls (commands.hpp); the help
// window (help_window.cpp) lists them.
#include <imgui.h>
#include <imgui_internal.h>  // the popup stack, for Escape

#include "app/platform/keys.hpp"
#include "app/shell/commands.hpp"

namespace attnviz::app {
namespace {

using platform::Key;
using platform::key_pressed;

// Escape closes the open menus, combo lists and pop-ups (ImGui 1.86 does so only with keyboard
// navigation on), but not a dialog that asks something (it handles Escape itself) or what lies
// beneath it.
void close_menus(Shell& shell) {
  const ImGuiContext& context = *ImGui::GetCurrentContext();
  int keep = 0;  // the popups up to the topmost dialog stay
  for (int level = 0; level < context.OpenPopupStack.Size; ++level) {
    const ImGuiWindow* window = context.OpenPopupStack[level].Window;
    if (window && (window->Flags & ImGuiWindowFlags_Modal)) keep = level + 1;
  }
  if (keep < context.OpenPopupStack.Size)
    ImGui::ClosePopupToLevel(keep, true);
  else if (context.OpenPopupStack.Size == 0)
    shell.show_shortcuts = false;  // nothing else open: the shortcuts list
}

}  // namespace

void handle_shortcuts(Shell& shell, Commands& commands) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && key_pressed(Key::Q)) commands.quit();
  if (shell.unsaved_guard.asking()) return;  // the question is answered first
  if (key_pressed(Key::F1)) commands.toggle_shortcuts();
  if (key_pressed(Key::Escape)) close_menus(shell);
  if (!io.KeyCtrl) return;
  if (key_pressed(Key::N)) commands.new_scenario();
  if (key_pressed(Key::O)) commands.open();
  if (key_pressed(Key::S)) {
    if (io.KeyShift)
      commands.save_as();
    else
      commands.save();
  }
  // Text size, as in a browser: Ctrl+= or Ctrl++ larger, Ctrl+- smaller, Ctrl+0 as at start.
  if (key_pressed(Key::Equal, true) || key_pressed(Key::KeypadAdd, true)) commands.larger_text();
  if (key_pressed(Key::Minus, true) || key_pressed(Key::KeypadSubtract, true))
    commands.smaller_text();
  if (key_pressed(Key::Zero)) commands.reset_text_size();
  if (io.WantTextInput) return;  // a text field has its own undo
  if (key_pressed(Key::Z, true) && !io.KeyShift) commands.undo();
  if ((key_pressed(Key::Z, true) && io.KeyShift) || key_pressed(Key::Y, true)) commands.redo();
}

}  // namespace attnviz::app
