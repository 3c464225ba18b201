// The panels' windows: the dashboard's slots tiled over the window (app/view/layout.hpp), each
// slot's window drawn in the order of core/figures/views.hpp (editors first, then views, with a
// recompute before each, so that views show this frame's edits), and the centre's views as tabs.
#include <imgui.h>
#include <imgui_internal.h>  // every window and its root, to scroll them back

#include <algorithm>
#include <cmath>

#include "app/panels/widgets.hpp"
#include "app/session/status_line.hpp"
#include "app/shell/shell.hpp"

namespace attnviz::app {
namespace {

constexpr const char* kCentreWindow = "Views##centre";

// Between the panels and around them.
float panel_gap(const platform::Backend& backend) {
  return std::round(4.0f * backend.content_scale());
}

float lesson_band_height(const Shell& shell) {
  // Tall enough for the title, the wrapped text and, on a predict step, the question and the
  // row of key buttons (measured, so a long text never hides them).
  const AppState& state = shell.state;
  const LessonStep* step = state.lesson.current();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize();
  float height = ImGui::GetFrameHeight() + 2 * style.WindowPadding.y + font * 0.4f;  // title bar
  if (step) {
    // The lesson panel's text column: the window less the gaps, the padding, the buttons (16
    // fonts) and a scrollbar's room (lesson_panel.cpp wraps at the same), a little less for safety.
    const float gap = panel_gap(shell.backend);
    const float wrap = ImGui::GetIO().DisplaySize.x - 2 * gap - 2 * style.WindowPadding.x -
                       font * 16.0f - style.ScrollbarSize - font * 0.5f;
    ImFont* bold = ImGui::GetIO().Fonts->Fonts.Size > 1 ? ImGui::GetIO().Fonts->Fonts[1] : nullptr;
    if (bold) ImGui::PushFont(bold);
    const std::string heading =
        wrap_text_at_spaces(lesson_step_heading(state.lesson), std::max(wrap, font * 10.0f));
    height += ImGui::CalcTextSize(heading.c_str()).y + style.ItemSpacing.y;
    if (bold) ImGui::PopFont();
    const std::string text = wrap_text_at_spaces(expand_lesson_text(step->text, state.pipeline()),
                                                 std::max(wrap, font * 10.0f));
    height += ImGui::CalcTextSize(text.c_str()).y;
    if (!state.broken_claims.empty() && state.claims_version == state.document.version())
      height +=
          ImGui::GetFrameHeightWithSpacing();  // "Since your change, the text no longer holds"
    if (step->predict) height += font * 1.4f + ImGui::GetFrameHeightWithSpacing() * 1.1f;
  }
  return std::round(std::max(height, ImGui::GetFrameHeightWithSpacing() * 3.2f + font));
}

void draw_cover() {
  const ImVec2 available = ImGui::GetContentRegionAvail();
  const char* text = "Hidden until you predict: pick a word in the lesson bar above.";
  const float width = std::min(available.x, ImGui::CalcTextSize(text).x);
  ImGui::SetCursorPos(ImVec2(ImGui::GetCursorPosX() + (available.x - width) * 0.5f,
                             ImGui::GetCursorPosY() + available.y * 0.45f));
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  ImGui::TextDisabled("%s", text);
  ImGui::PopTextWrapPos();
}

void draw_centre_views(Shell& shell, PanelContext& context) {
  // The views share the centre as tabs. A change made elsewhere (a lesson step, --view) selects
  // its tab once; after that the tab bar follows the user's clicks.
  AppState& state = shell.state;
  const bool select_programmatically = state.ui.center_view != shell.centre_view_shown;
  Panel* active = nullptr;
  if (ImGui::BeginTabBar(
          "views", ImGuiTabBarFlags_FittingPolicyScroll)) {  // whole names at large text sizes
    for (const HostedPanel& hosted : shell.panels) {
      if (!hosted.view->centre_tab) continue;
      const CenterView view = hosted.view->id;
      const ImGuiTabItemFlags tab_flags = select_programmatically && view == state.ui.center_view
                                              ? ImGuiTabItemFlags_SetSelected
                                              : 0;
      if (ImGui::BeginTabItem(hosted.view->title, nullptr, tab_flags)) {
        active = hosted.panel.get();
        if (!select_programmatically) state.ui.center_view = view;
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
  shell.centre_view_shown = state.ui.center_view;
  if (active) active->draw_content(state, context);
}

// A new document or lesson step: every panel's window, and every window inside one (the Weights
// strip, the Pipeline's chain, tables), starts scrolled to its top left, and each panel resets
// what it scrolls itself. Set before the windows begin, the scroll applies in this frame.
void reset_panel_scrolling(Shell& shell) {
  std::vector<const ImGuiWindow*> roots;
  roots.push_back(ImGui::FindWindowByName(kCentreWindow));
  for (const HostedPanel& hosted : shell.panels) {
    roots.push_back(ImGui::FindWindowByName(hosted.view->title));
    hosted.panel->reset_view();
  }
  for (ImGuiWindow* window : ImGui::GetCurrentContext()->Windows)
    if (std::find(roots.begin(), roots.end(), window->RootWindow) != roots.end()) {
      ImGui::SetScrollX(window, 0.0f);
      ImGui::SetScrollY(window, 0.0f);
    }
}

}  // namespace

void draw_panels(Shell& shell, float top, float bottom) {
  AppState& state = shell.state;
  if (state.lesson.active()) state.broken_lesson_claims();  // the lesson band grows for the note
  if (state.view_generation != shell.view_generation_shown) {
    shell.view_generation_shown = state.view_generation;
    reset_panel_scrolling(shell);
  }
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float gap = panel_gap(shell.backend);
  const view::Rect area{gap, top + gap, display.x - 2 * gap, bottom - top - 2 * gap};
  state.frame.layout.panels =
      view::layout_dashboard(area, state.ui.visible, gap, lesson_band_height(shell));
  ImGuiIO& io = ImGui::GetIO();
  PanelContext context{shell.heatmaps, state.frame.visual_text.escapes(),
                       io.Fonts->Fonts.Size > 1 ? io.Fonts->Fonts[1] : nullptr,
                       io.Fonts->Fonts.Size > 2 ? io.Fonts->Fonts[2] : nullptr};
  // The panels tile the window and their background is the colour the frame is cleared to, so
  // they draw none: a software renderer pays for every pixel of every layer.
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoBackground;
  for (const view::Slot slot : view::slots_in_drawing_order()) {
    const view::Rect r = state.frame.layout.panels[static_cast<std::size_t>(slot)];
    if (r.empty() || !state.ui.visible[static_cast<std::size_t>(slot)]) continue;
    state.recompute_if_needed();  // edits made by earlier panels show in this one
    ImGui::SetNextWindowPos(ImVec2(r.x, r.y));
    ImGui::SetNextWindowSize(ImVec2(r.w, r.h));
    // "Predict, then reveal": the views that would show the answer stay covered until then.
    const bool covered =
        state.lesson.awaiting_prediction() &&
        (slot == view::Slot::Centre || slot == view::Slot::Arrows || slot == view::Slot::Output);
    if (slot == view::Slot::Centre) {
      if (ImGui::Begin(kCentreWindow, nullptr, flags | ImGuiWindowFlags_NoTitleBar) &&
          state.computed.has_result) {
        if (covered)
          draw_cover();
        else
          draw_centre_views(shell, context);
      }
      ImGui::End();
      continue;
    }
    for (const HostedPanel& hosted : shell.panels) {
      if (hosted.view->slot != slot) continue;
      if (ImGui::Begin(hosted.view->title, nullptr, flags) && state.computed.has_result) {
        if (covered)
          draw_cover();
        else
          hosted.panel->draw_content(state, context);
      }
      ImGui::End();
    }
  }
}

}  // namespace attnviz::app
