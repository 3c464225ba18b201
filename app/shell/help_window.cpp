// The keys and commands (Help > Keyboard shortcuts, F1): every command of the one table
// (command_table.hpp) with its keys and what it does, a click on a row running it (a command
// palette), then what the mouse and a few keys do besides.
#include <imgui.h>

#include <string_view>

#include "app/platform/platform.hpp"
#include "app/shell/command_table.hpp"
#include "app/shell/shell.hpp"

namespace attnviz::app {

void draw_help_window(Shell& shell, Commands& commands) {
  if (!shell.show_shortcuts) return;
  CommandRunner runner(shell, commands);
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 26, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Keyboard shortcuts", &shell.show_shortcuts,
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize)) {
    // What is no command of its own: gestures, and keys that act where the pointer or the
    // focus is.
    static constexpr const char* kGestures[][2] = {
        {"arrow keys", "in presenter mode: as Page Down / Page Up"},
        {"Escape",
         "close a menu, a list or this window; cancel a question; leave a sentence field; "
         "leave presenter mode"},
        {"drag a weight cell", "change it (Shift: finer); double-click to type"},
        {"click a token or row", "make it the selected query"},
        {"drop a file on the window", "open a scenario or a lesson"},
    };
    ImGui::TextDisabled("click a command to run it");
    if (ImGui::BeginTable("shortcuts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_PadOuterX)) {
      // The keys' column as wide as its longest entry, and a gap before the second.
      ImGui::TableSetupColumn(
          "keys", ImGuiTableColumnFlags_WidthFixed,
          ImGui::CalcTextSize("drop a file on the window").x + ImGui::GetFontSize());
      ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
      std::string_view chosen;
      for (const CommandInfo& command : command_table()) {
        if (command.help[0] == '\0' || !runner.offered(command)) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushID(command.id.data(), command.id.data() + command.id.size());
        const bool enabled = runner.enabled(command.id);
        ImGui::BeginDisabled(!enabled);
        // The row is the button: its keys, or nothing for a command without keys.
        if (ImGui::Selectable(command.keys[0] ? command.keys : "##run", false,
                              ImGuiSelectableFlags_SpanAllColumns))
          chosen = command.id;
        ImGui::PopID();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(command.help);
        ImGui::EndDisabled();
      }
      for (const auto& [keys, what] : kGestures) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what);
      }
      ImGui::EndTable();
      if (!chosen.empty()) {
        if (chosen != "help.shortcuts") shell.show_shortcuts = false;  // out of the way
        runner.run(chosen);
      }
    }
  }
  ImGui::End();
}

}  // namespace attnviz::app
