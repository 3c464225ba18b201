// The keys and commands (Help > Keyboard shortcuts, F1): every command of the one table
// (command_table.hpp) with its keys and what it does, a click on a row running it (a command
// palette), then what the mouse and a few keys do besides. And the user guide (Help > User guide,
// Shift+F1).
#include <imgui.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "app/panels/widgets.hpp"
#include "app/platform/platform.hpp"
#include "app/shell/command_table.hpp"
#include "app/shell/shell.hpp"
#include "app/view/user_guide.hpp"

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

// The user guide, compiled in (docs/user-guide.md): its sections listed on the left, the one
// chosen on the right, as plain wrapped text (tables one row a paragraph, code in the monospace
// style of a frame).
void draw_guide_window(Shell& shell) {
  if (!shell.show_guide) return;
  static const std::vector<view::GuideSection> sections =
      view::parse_guide(view::user_guide_markdown());
  if (sections.empty()) return;
  const float font = ImGui::GetFontSize();
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowSize(ImVec2(std::min(display.x - 2 * font, font * 52.0f),
                                  std::min(display.y - 4 * font, font * 32.0f)),
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, display.y * 0.5f), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("User guide", &shell.show_guide, ImGuiWindowFlags_NoSavedSettings)) {
    shell.guide_section = std::clamp(shell.guide_section, 0, static_cast<int>(sections.size()) - 1);
    ImGui::BeginChild("sections", ImVec2(font * 15.0f, 0), true);
    for (std::size_t i = 0; i < sections.size(); ++i) {
      const view::GuideSection& section = sections[i];
      ImGui::PushID(static_cast<int>(i));
      if (section.level >= 3) ImGui::Indent(font);
      const std::string label = section.title.empty() ? "About" : section.title;
      if (ImGui::Selectable(label.c_str(), shell.guide_section == static_cast<int>(i)))
        shell.guide_section = static_cast<int>(i);
      if (section.level >= 3) ImGui::Unindent(font);
      ImGui::PopID();
    }
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("text", ImVec2(0, 0), false);
    const view::GuideSection& section = sections[static_cast<std::size_t>(shell.guide_section)];
    const float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
    if (!section.title.empty()) {
      text_wrapped_at_spaces(section.title, wrap);
      ImGui::Separator();
    }
    for (const view::GuideBlock& block : section.blocks) {
      switch (block.kind) {
        case view::GuideBlock::Kind::Paragraph:
          text_wrapped_at_spaces(block.text, wrap);
          break;
        case view::GuideBlock::Kind::Bullet: {
          const float indent = font * (0.5f + static_cast<float>(block.indent));
          ImGui::Indent(indent);
          ImGui::Bullet();
          ImGui::SameLine();
          text_wrapped_at_spaces(
              block.text, ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize);
          ImGui::Unindent(indent);
          break;
        }
        case view::GuideBlock::Kind::Row:
          text_wrapped_at_spaces(block.text, wrap);
          break;
        case view::GuideBlock::Kind::Code:
          ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
          ImGui::TextUnformatted(block.text.c_str(), block.text.c_str() + block.text.size());
          ImGui::PopStyleColor();
          break;
      }
      ImGui::Spacing();
    }
    ImGui::EndChild();
  }
  ImGui::End();
}

}  // namespace attnviz::app
