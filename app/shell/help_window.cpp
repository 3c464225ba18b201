// The list of keys and shortcuts (Help > Keyboard shortcuts, F1).
#include <imgui.h>

#include <string_view>

#include "app/platform/platform.hpp"
#include "app/shell/shell.hpp"

namespace attnviz::app {

void draw_help_window(bool& show) {
  if (!show) return;
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 26, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Keyboard shortcuts", &show,
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize)) {
    static constexpr const char* kShortcuts[][2] = {
        {"Ctrl+N", "new: the built-in scenario"},
        {"Ctrl+O", "open a scenario"},
        {"Ctrl+S", "save (Save as the first time)"},
        {"Ctrl+Shift+S", "save as"},
        {"Ctrl+Z", "undo (a whole drag or burst of typing is one step)"},
        {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
        {"Ctrl+= / Ctrl+-", "larger / smaller text (Ctrl+0: the size that suits the window)"},
        {"F5", "presenter mode: one view fills the window, in large text"},
        {"F11", "full screen"},
        {"Page Down / Page Up", "the lesson's next / previous step (else the next query)"},
        {"arrow keys", "in presenter mode: as Page Down / Page Up"},
        {"Ctrl+K", "a real model: knock out the selected head, or restore it"},
        {"Ctrl+Q", "quit"},
        {"F1", "this list"},
        {"Escape",
         "close a menu, a list or this window; cancel a question; leave a sentence field; "
         "leave presenter mode"},
        {"drag a weight cell", "change it (Shift: finer); double-click to type"},
        {"click a token or row", "make it the selected query"},
        {"drop a file on the window", "open a scenario or a lesson"},
    };
    if (ImGui::BeginTable("shortcuts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_PadOuterX)) {
      // The keys' column as wide as its longest entry, and a gap before the second.
      ImGui::TableSetupColumn(
          "keys", ImGuiTableColumnFlags_WidthFixed,
          ImGui::CalcTextSize("drop a file on the window").x + ImGui::GetFontSize());
      ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
      for (const auto& [keys, what] : kShortcuts) {
        // In a page the browser keeps Ctrl+N (a new window) and there is nothing to quit.
        const std::string_view key = keys;
        if (platform::kBrowser && (key == "Ctrl+N" || key == "Ctrl+Q")) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what);
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

}  // namespace attnviz::app
