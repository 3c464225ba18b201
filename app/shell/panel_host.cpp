// The panels' windows: the dashboard's slots tiled over the window (app/view/layout.hpp), each
// slot's window drawn in the order of core/figures/views.hpp (editors first, then views, with a
// recompute before each, so that views show this frame's edits), and the centre's views as tabs.
#include <imgui.h>
#include <imgui_internal.h>  // every window and its root, to scroll them back

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/panels/lesson_predict.hpp"
#include "app/panels/token_chips.hpp"
#include "app/panels/widgets.hpp"
#include "app/session/status_line.hpp"
#include "app/shell/command_table.hpp"
#include "app/shell/shell.hpp"
#include "core/models/model.hpp"

namespace attnviz::app {
namespace {

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
    const std::string text = wrap_text_at_spaces(
        expand_lesson_text(step->text, state.pipeline(), step->layer.value_or(0)),
        std::max(wrap, font * 10.0f));
    height += ImGui::CalcTextSize(text.c_str()).y;
    // What the student's change did (lesson_panel.cpp: wrapped as the text; its button is under
    // Back and Next). A step with claims keeps room for two lines of it before any change, so
    // that the note does not push the views down under the pointer as it appears.
    if (tells_changes(*step)) {
      const StudentChange& change = state.lesson_change_seen;
      const float note =
          change.message.empty()
              ? 0.0f
              : ImGui::CalcTextSize(
                    wrap_text_at_spaces(change.message, std::max(wrap, font * 10.0f)).c_str())
                    .y;
      height += std::max(note, ImGui::GetTextLineHeight() * 2.0f + style.ItemSpacing.y) +
                style.ItemSpacing.y;
    }
    if (step->predict)
      height += predict_block_height(state, *step->predict, std::max(wrap, font * 10.0f)) +
                style.ItemSpacing.y;
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

// Whether a view has a place for this run: a view that takes another's place only where the run
// can show it, and the view it replaces only where it cannot (core/figures/views.hpp).
bool has_place(const view::ViewInfo& info, const Run& run) {
  if (info.takes_place_of != view::ViewId::Count) return view::view_shows(info, run.capabilities());
  for (const view::ViewInfo& other : view::kViews)
    if (other.takes_place_of == info.id && view::view_shows(other, run.capabilities()))
      return false;
  return true;
}

// The views a window shows: a panel's own view, or for the centre every centre view that has a
// place for this run; in the order of core/figures/views.hpp.
std::vector<const HostedPanel*> views_of(const Shell& shell, const std::vector<view::Slot>& slots) {
  std::vector<const HostedPanel*> views;
  const Run& run = shell.state.pipeline().current();
  for (const HostedPanel& hosted : shell.panels)
    if (std::find(slots.begin(), slots.end(), hosted.view->slot) != slots.end() &&
        has_place(*hosted.view, run))
      views.push_back(&hosted);
  return views;
}

// A row of tabs that wraps onto more rows rather than hiding a tab behind scroll arrows (large
// text in a narrow window). `ui.presenter`: presenter mode's tabs are for the teacher, not the
// class: short names at the dashboard's text size, on one row, so that the view keeps the
// height. Returns the view clicked, if any.
std::optional<view::ViewId> draw_tab_row(const std::vector<const HostedPanel*>& views,
                                         view::ViewId active, std::vector<FrameLayout::Tab>& tabs,
                                         const UiSettings& ui) {
  const float scale =
      ui.presenter ? std::clamp(ui.font_size / ui.presenter_font_size, 0.6f, 1.0f) : 1.0f;
  ImGui::SetWindowFontScale(scale);
  std::optional<view::ViewId> clicked;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing,
                      ImVec2(style.ItemInnerSpacing.x, style.ItemSpacing.y * 0.5f));
  for (std::size_t i = 0; i < views.size(); ++i) {
    const view::ViewInfo& info = *views[i]->view;
    const char* label = info.centre_tab && !ui.presenter ? info.title : info.short_title;
    const float width = ImGui::CalcTextSize(label).x + style.FramePadding.x * 2.0f;
    if (i > 0 && ImGui::GetItemRectMax().x + style.ItemInnerSpacing.x + width <= right)
      ImGui::SameLine();
    const bool is_active = info.id == active;
    ImGui::PushStyleColor(ImGuiCol_Button,
                          ImGui::GetStyleColorVec4(is_active ? ImGuiCol_TabActive : ImGuiCol_Tab));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImGui::GetStyleColorVec4(ImGuiCol_TabHovered));
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, ImGui::GetStyleColorVec4(ImGuiCol_TabActive));
    ImGui::PushID(static_cast<int>(info.id));
    if (ImGui::Button(label)) clicked = info.id;
    const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
    tabs.push_back({info.id, min.x, min.y, max.x - min.x, max.y - min.y});
    if (ImGui::IsItemHovered() && std::string_view(label) != info.title)
      ImGui::SetTooltip("%s", info.title);
    ImGui::PopID();
    ImGui::PopStyleColor(3);
  }
  ImGui::PopStyleVar();
  // The line under the tabs, as a tab bar draws it.
  const ImVec2 below(ImGui::GetWindowPos().x, ImGui::GetItemRectMax().y);
  ImGui::GetWindowDrawList()->AddLine(
      ImVec2(below.x + style.WindowPadding.x * 0.5f, below.y + 1.0f), ImVec2(right, below.y + 1.0f),
      ImGui::GetColorU32(ImGuiCol_TabActive), 1.0f);
  ImGui::Dummy(ImVec2(0, style.ItemSpacing.y * 0.25f));
  ImGui::SetWindowFontScale(1.0f);
  return clicked;
}

// The window's title: the view's, or its short one when that does not fit.
std::string window_title(const view::ViewInfo& info, float window_width) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const bool fits =
      ImGui::CalcTextSize(info.title).x + style.FramePadding.x * 2.0f + style.WindowPadding.x <=
      window_width;
  return std::string(fits ? info.title : info.short_title) + "###" + std::string(info.name);
}

// Which view a window of tabs shows: the one last clicked in it; the centre's view as chosen
// elsewhere (a lesson step, --view) when that changed since the last frame.
view::ViewId active_view(Shell& shell, const std::vector<const HostedPanel*>& views,
                         view::Slot first_slot) {
  const AppState& state = shell.state;
  const auto holds = [&](view::ViewId id) {
    return std::any_of(views.begin(), views.end(),
                       [&](const HostedPanel* hosted) { return hosted->view->id == id; });
  };
  // A view asked for (a lesson's, --view) whose place another takes for this run: that one.
  const auto in_place_of = [&](view::ViewId id) {
    for (const view::ViewInfo& other : view::kViews)
      if (other.takes_place_of == id && holds(other.id)) return other.id;
    for (const view::ViewInfo& other : view::kViews)  // and back
      if (other.id == id && other.takes_place_of != view::ViewId::Count && !holds(id) &&
          holds(other.takes_place_of))
        return other.takes_place_of;
    return id;
  };
  if (shell.requested_tab && holds(in_place_of(*shell.requested_tab)))
    return in_place_of(*shell.requested_tab);
  if (!holds(state.ui.center_view) && holds(in_place_of(state.ui.center_view)))
    return in_place_of(state.ui.center_view);
  std::optional<view::ViewId>& remembered = shell.window_tab[static_cast<std::size_t>(first_slot)];
  const bool centre_changed = state.ui.center_view != shell.centre_view_shown;
  if (holds(state.ui.center_view) && (centre_changed || !remembered || !holds(*remembered)))
    return state.ui.center_view;
  if (remembered && holds(*remembered)) return *remembered;
  return views.front()->view->id;
}

// In place of a view whose needs the run lacks (core/figures/views.hpp): what it shows, and
// where to look instead.
void draw_needs_note(const view::ViewInfo& info, const Run& run) {
  std::string note;
  const Model* model = run.trained_model();
  if (model && info.needs.has(Capability::PredictsNextToken) &&
      !run.can(Capability::PredictsNextToken)) {
    note = std::string(info.short_title) + " reads a model's guesses for the next token, and " +
           model->name +
           " is an encoder (it sees the words on both sides and guesses a hidden one: Fill "
           "the mask). Open a decoder such as gpt2-web from the Models menu to see it.";
  } else if (model && info.needs.has(Capability::ReadsOutTokens) &&
             !run.can(Capability::ReadsOutTokens)) {
    note = std::string(info.short_title) +
           " reads each layer out as tokens through the model's "
           "head, and " +
           model->name +
           " has none (a BertModel without its masked-language-model "
           "head). Open one with its head, such as bert-web.";
  } else if (model && info.needs.has(Capability::FillsMask) && !run.can(Capability::FillsMask)) {
    note = std::string(info.short_title) +
           " needs an encoder with its masked-language-model "
           "head (such as bert-web): " +
           model->name + " has none.";
  } else if (info.needs.has(Capability::EditableParameters)) {
    note = std::string(info.short_title) +
           " shows the one-layer teaching model: a real model's is not in this version. Its "
           "attention is in Heatmaps, Model, Next token, Neuron, Compare, Arrows and Output. "
           "Models \xe2\x96\xb8 Back to the one-layer scenario returns to the teaching model.";
  } else {
    note = std::string(info.short_title) +
           " shows a real trained model. Open one from the Models menu (or drop a model's "
           "folder on the window); your text stays.";
  }
  ImGui::Spacing();
  text_wrapped_at_spaces(note, ImGui::GetContentRegionAvail().x, true);
}

// One window of the dashboard: a panel with its title bar, or panels (and the centre's views) as
// tabs.
// `awaiting`: a lesson's prediction is awaited, and the views that would show the answer stay
// covered until then ("predict, then reveal"); the editors and the lesson band do not.
void draw_window(Shell& shell, PanelContext& context, const view::DashboardWindow& window,
                 ImGuiWindowFlags flags, bool awaiting) {
  AppState& state = shell.state;
  const view::Rect r = window.rect;
  const std::vector<const HostedPanel*> views = views_of(shell, window.panels);
  if (views.empty()) return;
  ImGui::SetNextWindowPos(ImVec2(r.x, r.y));
  ImGui::SetNextWindowSize(ImVec2(r.w, r.h));
  const auto draw_view = [&](const HostedPanel& hosted) {
    const view::Slot slot = hosted.view->slot;
    if (awaiting && slot != view::Slot::Input && slot != view::Slot::Weights &&
        slot != view::Slot::Lesson)
      draw_cover();
    else if (!view::view_shows(*hosted.view, state.pipeline().current().capabilities())) {
      draw_needs_note(*hosted.view, state.pipeline().current());
      state.frame.values.append("views_lacking", std::string(hosted.view->name));
    } else {
      hosted.panel->draw_content(state, context);
      state.frame.values.append("views_drawn", std::string(hosted.view->name));
    }
  };
  const bool with_tabs = views.size() > 1;
  if (!with_tabs) {
    const view::ViewInfo& info = *views.front()->view;
    if (ImGui::Begin(window_title(info, r.w).c_str(), nullptr, flags) && state.computed.has_result)
      draw_view(*views.front());
    ImGui::End();
    return;
  }
  std::string name = "Views";
  for (const view::Slot slot : window.panels) name += "." + std::string(view::slot_name(slot));
  const view::Slot first_slot = window.panels.front();
  view::ViewId active = active_view(shell, views, first_slot);
  if (ImGui::Begin(name.c_str(), nullptr, flags | ImGuiWindowFlags_NoTitleBar) &&
      state.computed.has_result) {
    if (const std::optional<view::ViewId> clicked =
            draw_tab_row(views, active, state.frame.layout.tabs, state.ui)) {
      active = *clicked;
      shell.requested_tab.reset();
    }
    for (const HostedPanel* hosted : views) {
      if (hosted->view->id != active) continue;
      if (hosted->view->centre_tab) {
        state.ui.center_view = active;
        shell.centre_view_shown = active;
      }
      draw_view(*hosted);
    }
  }
  ImGui::End();
  shell.window_tab[static_cast<std::size_t>(first_slot)] = active;
}

// The order windows are drawn in: by the slot of the view each shows, as core/figures/views.hpp
// orders them (editors first, so that every view shows this frame's edits).
std::vector<const view::DashboardWindow*> windows_in_drawing_order(
    const Shell& shell, const std::vector<view::DashboardWindow>& windows) {
  const std::array<view::Slot, view::kSlotCount> order = view::slots_in_drawing_order();
  const auto rank = [&](const view::DashboardWindow& window) {
    view::Slot slot = window.panels.front();
    if (window.tabs()) {
      const std::optional<view::ViewId>& shown =
          shell.window_tab[static_cast<std::size_t>(window.panels.front())];
      if (shown) slot = view::view_info(*shown).slot;
    }
    return std::find(order.begin(), order.end(), slot) - order.begin();
  };
  std::vector<const view::DashboardWindow*> sorted;
  sorted.reserve(windows.size());
  for (const view::DashboardWindow& window : windows) sorted.push_back(&window);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const auto* a, const auto* b) { return rank(*a) < rank(*b); });
  return sorted;
}

// The panels tile the window and their background is the colour the frame is cleared to, so
// they draw none: a software renderer pays for every pixel of every layer.
constexpr ImGuiWindowFlags kPanelFlags =
    ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
    ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
    ImGuiWindowFlags_NoBackground;

PanelContext panel_context(Shell& shell, CommandSource& commands) {
  ImGuiIO& io = ImGui::GetIO();
  AppState& state = shell.state;
  return PanelContext{state.edits,
                      state.selection,
                      state.pinned,
                      state.ui,
                      state.lesson,
                      shell.heatmaps,
                      state.frame.visual_text.escapes(),
                      commands,
                      io.Fonts->Fonts.Size > 1 ? io.Fonts->Fonts[1] : nullptr,
                      io.Fonts->Fonts.Size > 2 ? io.Fonts->Fonts[2] : nullptr};
}

// -----------------------------------------------------------------------------
// [SECTION] Presenter mode
// -----------------------------------------------------------------------------

// The sentence as token chips: rows of chips as wide as the window allows.
float sentence_strip_height(const AppState& state, float width) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize();
  const float chip_h = font * 1.36f, spacing = font * 0.3f;
  const float usable = width - style.WindowPadding.x * 2.0f - style.ScrollbarSize;
  int rows = 0;
  const auto count_rows = [&](const Tokenization& tokens, const char* caption) {
    float x = ImGui::CalcTextSize(caption).x + style.ItemSpacing.x;
    rows += 1;
    for (const Token& token : tokens.tokens) {
      const float w = ImGui::CalcTextSize(token.text.c_str()).x + font * 0.8f;
      if (x > 0 && x + w > usable) {
        ++rows;
        x = 0;
      }
      x += w + spacing;
    }
  };
  count_rows(state.pipeline().target(), "queries");
  if (state.pipeline().cross()) count_rows(state.pipeline().keys(), "keys");
  return std::round(static_cast<float>(rows) * (chip_h + style.ItemSpacing.y) +
                    style.WindowPadding.y * 2.0f);
}

void draw_sentence_strip(const AppState& state, PanelContext& context) {
  const auto strip = [&](const Tokenization& tokens, const std::vector<EmbeddingSource>& sources,
                         Side side, const char* caption) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", caption);
    ImGui::SameLine();
    draw_token_chips(state, context, tokens, sources, side);
  };
  const Pipeline& pipeline = state.pipeline();
  strip(pipeline.target(), pipeline.target_sources(), Side::Query, "queries");
  if (pipeline.cross()) strip(pipeline.keys(), pipeline.key_sources(), Side::Key, "keys");
}

void draw_presenter(Shell& shell, CommandSource& commands, const view::Rect& area, float gap) {
  AppState& state = shell.state;
  PanelContext context = panel_context(shell, commands);
  const bool lesson = state.lesson.active();
  const view::PresenterLayout layout =
      view::layout_presenter(area, gap, lesson ? lesson_band_height(shell) : 0.0f,
                             state.computed.has_result ? sentence_strip_height(state, area.w) : 0,
                             // The views are covered until the student predicts: the question's
                             // rows of answers may take their room.
                             state.lesson.awaiting_prediction() ? 0.65f : 0.4f);
  state.frame.layout.dashboard = {};
  state.frame.layout.dashboard.panels[static_cast<std::size_t>(view::Slot::Lesson)] = layout.lesson;
  state.frame.layout.dashboard.panels[static_cast<std::size_t>(view::Slot::Centre)] = layout.view;
  state.frame.layout.presenter = layout;
  if (lesson)
    draw_window(shell, context, {layout.lesson, {view::Slot::Lesson}}, kPanelFlags, false);
  if (!layout.sentence.empty() && state.computed.has_result) {
    ImGui::SetNextWindowPos(ImVec2(layout.sentence.x, layout.sentence.y));
    ImGui::SetNextWindowSize(ImVec2(layout.sentence.w, layout.sentence.h));
    if (ImGui::Begin("Sentence##presenter", nullptr, kPanelFlags | ImGuiWindowFlags_NoTitleBar)) {
      // How to leave, small and quiet in the corner, for the teacher.
      const char* hint = "Esc leaves \xc2\xb7 F11 full screen";
      ImFont* font = ImGui::GetFont();
      const float size = std::round(ImGui::GetFontSize() * 0.75f);
      const ImVec2 extent = font->CalcTextSizeA(size, FLT_MAX, 0.0f, hint);
      ImGui::GetWindowDrawList()->AddText(
          font, size,
          ImVec2(layout.sentence.right() - extent.x - ImGui::GetStyle().WindowPadding.x,
                 layout.sentence.bottom() - extent.y - 2.0f),
          ImGui::GetColorU32(ImGuiCol_TextDisabled), hint);
      draw_sentence_strip(state, context);
    }
    ImGui::End();
  }
  state.apply_queued_edits();
  // Every panel as a tab of one window, the view chosen shown first: the editors too, for a
  // lesson's step that asks for a change ("untick hard (argmax) in the Input panel").
  draw_window(shell, context,
              {layout.view,
               {view::Slot::Input, view::Slot::Weights, view::Slot::Centre, view::Slot::Arrows,
                view::Slot::Output}},
              kPanelFlags, state.lesson.awaiting_prediction());
}

// A new document or lesson step: every panel's window, and every window inside one (the Weights
// strip, the Pipeline's chain, tables), starts scrolled to its top left, and each panel resets
// what it scrolls itself. Set before the windows begin, the scroll applies in this frame.
// Every panel's window, and every window inside one (the Weights strip, a view's scrolled cells
// or rows), back to its top left. Set before the windows begin, the scroll applies in this frame.
void reset_panel_scrolling() {
  for (ImGuiWindow* window : ImGui::GetCurrentContext()->Windows)
    if (window->RootWindow && (window->RootWindow->Flags & kPanelFlags) == kPanelFlags) {
      ImGui::SetScrollX(window, 0.0f);
      ImGui::SetScrollY(window, 0.0f);
    }
}

}  // namespace

void draw_panels(Shell& shell, Commands& commands, float top, float bottom) {
  CommandRunner runner(shell, commands);  // the panels' context menus offer commands
  AppState& state = shell.state;
  // The note on the student's change, for the lesson band (which grows to hold it): not while
  // the mouse is held, so that the panel a weight is being dragged in stays under the mouse; the
  // note follows when the drag ends.
  if (state.lesson.active() && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) state.lesson_change();
  if (state.view_generation != shell.view_generation_shown) {
    shell.view_generation_shown = state.view_generation;
    reset_panel_scrolling();
  }
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float gap = panel_gap(shell.backend);
  const view::Rect area{gap, top + gap, display.x - 2 * gap, bottom - top - 2 * gap};
  if (state.ui.presenter) {
    draw_presenter(shell, runner, area, gap);
    return;
  }
  state.frame.layout.presenter = {};
  view::PanelVisibility visible = state.ui.visible;  // less the slots the mode has no view for
  for (int slot = 0; slot < view::kSlotCount; ++slot)
    if (!view::slot_shows(static_cast<view::Slot>(slot), state.pipeline().current().capabilities()))
      visible[static_cast<std::size_t>(slot)] = false;
  state.frame.layout.dashboard =
      view::layout_dashboard(area, visible, gap, lesson_band_height(shell), ImGui::GetFontSize());
  PanelContext context = panel_context(shell, runner);
  const bool awaiting = state.lesson.awaiting_prediction();
  for (const view::DashboardWindow* window :
       windows_in_drawing_order(shell, state.frame.layout.dashboard.windows)) {
    state.apply_queued_edits();  // edits asked for by earlier panels show in this one
    draw_window(shell, context, *window, kPanelFlags, awaiting);
  }
}

}  // namespace attnviz::app
