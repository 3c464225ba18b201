// The question before unsaved edits are replaced or the app quits (app/session/unsaved_guard.hpp):
// save them first, discard them, or cancel.
#include <imgui.h>

#include "app/platform/keys.hpp"
#include "app/shell/commands.hpp"

namespace attnviz::app {

void draw_unsaved_question(Shell& shell, Commands& commands) {
  using platform::Key;
  using platform::key_pressed;
  constexpr const char* kTitle = "Unsaved changes";
  UnsavedGuard& guard = shell.unsaved_guard;
  if (commands.saving_first() || !guard.asking()) return;
  if (!ImGui::IsPopupOpen(kTitle)) {
    ImGui::OpenPopup(kTitle);
    shell.unsaved_question_frame = ImGui::GetFrameCount();
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(kTitle, nullptr,
                              ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings))
    return;
  // Return and Escape answer only once the question has been on screen: the Return that chose a
  // file in the Open dialog (the frame the question comes up in) is not a "Save first".
  const bool keys_answer = ImGui::GetFrameCount() > shell.unsaved_question_frame;
  ImGui::TextUnformatted(guard.question(shell.state).c_str());
  ImGui::TextUnformatted(guard.consequence().c_str());
  ImGui::Spacing();
  // Save first is the default (Return): nothing is lost that way.
  ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  const bool save_first =
      ImGui::Button("Save first") ||
      (keys_answer && (key_pressed(Key::Enter) || key_pressed(Key::KeypadEnter)));
  ImGui::PopStyleColor();
  if (save_first) {
    ImGui::CloseCurrentPopup();
    commands.save_first();
  }
  ImGui::SameLine();
  if (ImGui::Button(guard.discard_label().c_str())) {
    ImGui::CloseCurrentPopup();
    guard.discard();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || (keys_answer && key_pressed(Key::Escape))) {
    ImGui::CloseCurrentPopup();
    guard.cancel();
  }
  ImGui::EndPopup();
}

}  // namespace attnviz::app
