// The keyboard: every command's keys, from the one table of commands (command_table.hpp), which
// the menus and the help window (help_window.cpp) read too; and what is no command of its own
// (Escape closing menus, the arrow keys of presenter mode).
#include <imgui.h>
#include <imgui_internal.h>  // the popup stack, for Escape

#include "app/platform/keys.hpp"
#include "app/platform/platform.hpp"
#include "app/session/state_dir.hpp"
#include "app/session/welcome.hpp"
#include "app/shell/command_table.hpp"

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
  if (context.OpenPopupStack.Size == 0 && shell.show_welcome) {
    shell.show_welcome = false;  // nothing else open: the welcome, dismissed for good
    static_cast<void>(remember_welcome_dismissed(app_state_dir()));  // best effort
    return true;
  }
  if (context.OpenPopupStack.Size == 0 && shell.show_shortcuts) {
    shell.show_shortcuts = false;  // nothing else open: the shortcuts list
    return true;
  }
  if (context.OpenPopupStack.Size == 0 && shell.show_guide) {
    shell.show_guide = false;  // then the user guide
    return true;
  }
  return context.OpenPopupStack.Size > 0;
}

// In presenter mode the arrow keys step too (some presentation clickers send them); on the
// dashboard they belong to the widgets.
void presenter_arrows(Shell& shell, CommandRunner& runner) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!shell.state.ui.presenter || io.WantTextInput || io.KeyCtrl || io.KeyAlt ||
      ImGui::IsAnyItemActive())
    return;
  if (key_pressed(Key::Right) || key_pressed(Key::Down)) runner.run("present.next");
  if (key_pressed(Key::Left) || key_pressed(Key::Up)) runner.run("present.previous");
}

}  // namespace

void handle_shortcuts(Shell& shell, Commands& commands) {
  CommandRunner runner(shell, commands);
  runner.run_shortcuts();                    // every command's keys (app/shell/command_table.cpp)
  if (shell.unsaved_guard.asking()) return;  // the question is answered first
  // Escape leaves presenter mode when it has nothing else to do: no menu to close, no text
  // field to leave.
  const bool typing = ImGui::GetIO().WantTextInput;
  if (key_pressed(Key::Escape) && !close_menus(shell) && !typing && shell.state.ui.presenter)
    commands.leave_presenter();
  presenter_arrows(shell, runner);
}

}  // namespace attnviz::app
