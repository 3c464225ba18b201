// The bar at the foot of the window is always there, one height, so that the panels above it
// never move: the offer to restore an earlier run's work, else the notice that matters most
// (app/session/notices.hpp), else the status line (app/session/status_line.hpp).
#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "app/panels/widgets.hpp"
#include "app/session/status_line.hpp"
#include "app/shell/commands.hpp"

namespace attnviz::app {
namespace {

// Begins the bar's window in `background` and `text` colours; end_bar() ends it. Returns the
// theme's text colour, for tooltips over the bar.
ImVec4 begin_bar(const char* id, ImU32 background, ImU32 text) {
  const ImVec4 theme_text = ImGui::GetStyleColorVec4(ImGuiCol_Text);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float height = status_bar_height();
  ImGui::SetNextWindowPos(ImVec2(0, display.y - height));
  ImGui::SetNextWindowSize(ImVec2(display.x, height));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, background);
  ImGui::PushStyleColor(ImGuiCol_Text, text);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
  ImGui::PushStyleVar(
      ImGuiStyleVar_WindowPadding,
      ImVec2(ImGui::GetStyle().WindowPadding.x, ImGui::GetStyle().WindowPadding.y * 0.5f));
  ImGui::Begin(id, nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  const ImVec2 origin =
      ImGui::GetWindowPos();  // a hairline along the top edge, as a status bar has
  ImGui::GetWindowDrawList()->AddRectFilled(origin, ImVec2(origin.x + display.x, origin.y + 1.0f),
                                            ImGui::GetColorU32(ImGuiCol_Separator));
  ImGui::AlignTextToFramePadding();
  return theme_text;
}

// A tooltip over the bar, in the theme's text colour (the bar's own may be white on the
// tooltip's white, or dark grey on the dark theme's).
void bar_tooltip(const ImVec4& theme_text, const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, theme_text);
  ImGui::SetTooltip("%s", text);
  ImGui::PopStyleColor();
}

void end_bar() {
  ImGui::End();
  ImGui::PopStyleVar(3);
  ImGui::PopStyleColor(2);
}

void draw_recovery_offer(Shell& shell, Commands& commands) {
  const ImVec4 theme_text =
      begin_bar("##recovery", IM_COL32(40, 110, 200, 255), IM_COL32(255, 255, 255, 255));
  // Earlier runs' work is offered oldest first, one at a time (not always the last run's).
  const Autosave::Recovered& offer = *shell.recovery_offer;
  if (offer.path.empty()) {
    ImGui::TextUnformatted("An earlier run of AttnViz left unsaved work. Restore it?");
  } else {
    const std::string name = std::filesystem::path(offer.path).filename().string();
    ImGui::Text("An earlier run of AttnViz left unsaved changes to %s. Restore them?",
                name.c_str());
    if (ImGui::IsItemHovered()) bar_tooltip(theme_text, offer.path.c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button("Restore")) commands.restore_offered();
  ImGui::SameLine();
  if (shell.recovery_offer && ImGui::Button("Discard")) commands.discard_offered();
  if (shell.recovery_offer && shell.recovery_offer->more > 0) {
    ImGui::SameLine();
    ImGui::Text("(%d more after this)", shell.recovery_offer->more);
  }
  end_bar();
}

// The notice, as NoticeBoard::choose() gives it: red for an error, green for what went well,
// amber for a warning.
void draw_notice(Shell& shell, const Notice& notice) {
  const bool is_error = notice.kind == Notice::Kind::Error,
             is_done = notice.kind == Notice::Kind::Done;
  const bool is_working = notice.kind == Notice::Kind::Working;
  const ImU32 background = is_error     ? IM_COL32(190, 40, 40, 255)
                           : is_done    ? IM_COL32(40, 140, 70, 255)
                           : is_working ? IM_COL32(40, 110, 200, 255)
                                        : IM_COL32(235, 170, 40, 255);
  const ImVec4 theme_text = begin_bar(
      "##notices", background,
      is_error || is_done || is_working ? IM_COL32(255, 255, 255, 255) : IM_COL32(20, 20, 20, 255));
  ImGui::TextUnformatted(is_error     ? "\xe2\x9c\x96"
                         : is_done    ? "\xe2\x9c\x94"
                         : is_working ? "\xe2\x80\xa6"
                                      : "\xe2\x9a\xa0");  // ✖ ✔ … ⚠
  ImGui::SameLine();
  ImGui::TextUnformatted(notice.text.c_str());
  const float text_end =
      ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + ImGui::GetStyle().ItemSpacing.x;
  if (notice.lists_warnings && ImGui::IsItemHovered()) {
    std::string all;
    for (const std::string& warning : shell.state.file_warnings)
      all += (all.empty() ? "" : "\n") + warning;
    bar_tooltip(theme_text, all.c_str());
  }
  if (notice.dismiss != Notice::Dismiss::None) {
    const char* label = "Dismiss";
    const float width = ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2;
    ImGui::SameLine(std::max(text_end, ImGui::GetWindowContentRegionMax().x - width));
    if (ImGui::Button(label)) {
      switch (notice.dismiss) {
        case Notice::Dismiss::ActionError:
          shell.notices.dismiss_action_error();
          break;
        case Notice::Dismiss::FileWarnings:
          shell.state.file_warnings.clear();
          break;
        case Notice::Dismiss::FontError:
          shell.fonts.error.clear();
          break;
        case Notice::Dismiss::AutosaveError:
          shell.autosave.clear_error();
          break;
        case Notice::Dismiss::None:
          break;
      }
    }
  }
  end_bar();
}

// With nothing to report: the shape of what is shown, and where the keys are explained.
void draw_status_line(const AppState& state) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec4 theme_text = begin_bar("##status", ImGui::GetColorU32(ImGuiCol_MenuBarBg),
                                      ImGui::GetColorU32(ImGuiCol_Text));
  const std::string summary = shape_summary(state);
  const char* hint = "F1  keys and shortcuts";
  const float hint_width = ImGui::CalcTextSize(hint).x;
  const float right = ImGui::GetWindowContentRegionMax().x;
  // The summary gives way to the hint when the window is narrow (it ends in an ellipsis).
  const float summary_room = right - hint_width - 2 * style.ItemSpacing.x - ImGui::GetCursorPosX();
  ImGui::TextUnformatted(fit_text(summary, summary_room).c_str());
  if (ImGui::IsItemHovered() && ImGui::CalcTextSize(summary.c_str()).x > summary_room)
    bar_tooltip(theme_text, summary.c_str());
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), right - hint_width));
  ImGui::TextDisabled("%s", hint);
  end_bar();
}

}  // namespace

float status_bar_height() {
  return ImGui::GetFrameHeight() +
         ImGui::GetStyle().WindowPadding.y;  // half the padding above and below
}

float draw_status_bar(Shell& shell, Commands& commands) {
  if (shell.recovery_offer) {
    draw_recovery_offer(shell, commands);
    return status_bar_height();
  }
  const AppState& state = shell.state;
  NoticeSources sources;
  sources.edit_version = state.document.version();
  sources.compute_error = state.computed.error;
  sources.has_result = state.computed.has_result;
  sources.exporting = shell.png.writing.valid();
  sources.export_path = shell.png.writing_path;
  sources.file_warnings = &state.file_warnings;
  sources.pipeline_warnings = &state.pipeline().warnings();
  sources.font_error = shell.fonts.error;
  sources.autosave_error = shell.autosave.last_error();
  const Notice notice = shell.notices.choose(sources, shell.backend.time());
  if (notice.text.empty())
    draw_status_line(state);
  else
    draw_notice(shell, notice);
  return status_bar_height();
}

}  // namespace attnviz::app
