// The menu bar: File, Edit, Models, Lessons, View, Help, and the text size against the right
// edge. Its items are the commands of the one table (command_table.hpp); the View menu's
// settings are set here.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/panels/widgets.hpp"
#include "app/platform/platform.hpp"
#include "app/shell/command_table.hpp"
#include "core/models/model.hpp"
#include "core/models/model_files.hpp"

namespace attnviz::app {
namespace {

void draw_export_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMenu("Export")) return;
  ImGui::TextUnformatted("PNG scale:");
  for (int scale : {1, 2, 3}) {
    ImGui::SameLine();
    char label[8];
    std::snprintf(label, sizeof label, "%d\xc3\x97", scale);
    if (ImGui::RadioButton(label, shell.png.scale == scale)) shell.png.scale = scale;
  }
  CommandRunner runner(shell, commands);
  command_menu_item(runner, "export.window_png");
  if (ImGui::BeginMenu("Panel as PNG")) {
    // Each window once: a panel, or the view a window of tabs shows.
    int index = 0;
    for (const view::DashboardWindow& window : shell.state.frame.layout.dashboard.windows) {
      const std::optional<view::ViewId>& shown =
          shell.window_tab[static_cast<std::size_t>(window.panels.front())];
      const char* label = window.tabs() && shown ? view::view_info(*shown).short_title
                                                 : view::slot_info(window.panels.front()).label;
      ImGui::PushID(index++);
      if (!window.rect.empty() && ImGui::MenuItem(label)) commands.export_png(window.rect);
      ImGui::PopID();
    }
    ImGui::EndMenu();
  }
  for (const char* id : {"export.heatmap_svg", "export.arrows_svg", "export.all_arrows_svg",
                         "export.csv", "export.json"})
    command_menu_item(runner, id);
  ImGui::EndMenu();
}

void draw_file_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMenu("File")) return;
  CommandRunner runner(shell, commands);
  command_menu_item(runner, "file.new");
  command_menu_item(runner, "file.open");
  if (ImGui::BeginMenu("Open recent", !shell.recent.entries().empty())) {
    std::optional<std::string> chosen;
    for (const std::string& path : shell.recent.entries()) {
      // In the browser the files are kept in its storage: their names say which they are.
      const std::string shown =
          platform::kBrowser ? std::filesystem::path(path).filename().string() : path;
      if (ImGui::MenuItem(shown.c_str())) chosen = path;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Clear the list")) commands.clear_recent_files();
    ImGui::EndMenu();
    if (chosen) commands.open_file(*chosen);
  }
  command_menu_item(runner, "file.save");
  command_menu_item(runner, "file.save_as");
  ImGui::Separator();
  draw_export_menu(shell, commands);
  ImGui::Separator();
  if (!platform::kBrowser) command_menu_item(runner, "app.quit");  // a page is closed as a page
  ImGui::EndMenu();
}

void draw_edit_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMenu("Edit")) return;
  CommandRunner runner(shell, commands);
  command_menu_item(runner, "edit.undo");
  command_menu_item(runner, "edit.redo");
  ImGui::EndMenu();
}

// Real trained models: the shipped ones, any other from a folder or file, and back.
void draw_models_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMenu("Models")) return;
  if (shell.model_names.empty()) {
    shell.model_names = shipped_model_names();
    shell.model_kinds.clear();
    for (const std::string& name : shell.model_names)
      shell.model_kinds.push_back(model_kind_words(name));
  }
  // The model open is asked for at each item: one chosen above replaced it (and freed the last).
  const auto open = [&] { return shell.state.pipeline().current().trained_model(); };
  for (std::size_t i = 0; i < shell.model_names.size(); ++i) {
    const std::string& name = shell.model_names[i];
    const char* kind = i < shell.model_kinds.size() ? shell.model_kinds[i].c_str() : nullptr;
    if (ImGui::MenuItem(name.c_str(), kind, open() && open()->name == name))
      commands.open_model_named(name);
  }
  if (shell.model_names.empty()) ImGui::TextDisabled("no shipped models found");
  CommandRunner runner(shell, commands);
  command_menu_item(runner, "model.open");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "A llama2.c .bin, a Hugging Face GPT-2 folder (config.json,\n"
        "model.safetensors, vocab.json, merges.txt) or a BERT folder\n"
        "(config.json, model.safetensors, vocab.txt): docs/formats.md");
  ImGui::Separator();
  command_menu_item(runner, "model.knock_out");
  command_menu_item(runner, "model.clear_before");
  command_menu_item(runner, "model.leave");
  ImGui::EndMenu();
}

void draw_lessons_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMenu("Lessons")) return;
  const AppState& state = shell.state;
  for (const auto& [id, title] : shell.lesson_titles) {
    const bool current = state.lesson.active() && state.lesson.lesson->id == id;
    // "5. Self-attention on real sentences": the number --lesson takes (ids begin "05-").
    const std::string label = std::to_string(std::atoi(id.c_str())) + ". " + title;
    if (ImGui::MenuItem(label.c_str(), nullptr, current)) commands.start_lesson(id, title);
  }
  if (state.lesson.active()) {
    ImGui::Separator();
    CommandRunner runner(shell, commands);
    command_menu_item(runner, "lesson.leave");
  }
  ImGui::EndMenu();
}

// The views (core/figures/views.hpp, in its order: each centre tab shows or hides the centre),
// the theme, the colormap and how heatmaps are coloured.
void draw_view_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMenu("View")) return;
  UiSettings& ui = shell.state.ui;
  CommandRunner runner(shell, commands);
  command_menu_item(runner, "view.presenter");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "One view fills the window, under the sentence, in large text: for a projector.\n"
        "Page Down / Page Up (a presentation clicker) or the arrow keys step the lesson, or\n"
        "move the selected query; F11 full screen; Escape leaves.");
  command_menu_item(runner, "view.fullscreen");
  ImGui::Separator();
  for (const HostedPanel& hosted : shell.panels) {
    bool& shown = ui.visible[static_cast<std::size_t>(hosted.view->slot)];
    ImGui::MenuItem(hosted.view->title, nullptr, &shown);
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Light theme", nullptr, ui.theme == Theme::Light)) ui.theme = Theme::Light;
  if (ImGui::MenuItem("Dark theme", nullptr, ui.theme == Theme::Dark)) ui.theme = Theme::Dark;
  ImGui::Separator();
  if (ImGui::MenuItem("Sequential colormap", nullptr, ui.colormap == view::ColormapId::Sequential))
    ui.colormap = view::ColormapId::Sequential;
  if (ImGui::MenuItem("Colour-blind-safe colormap", nullptr,
                      ui.colormap == view::ColormapId::ColorBlindSafe))
    ui.colormap = view::ColormapId::ColorBlindSafe;
  ImGui::MenuItem("Numbers in heatmap cells", nullptr, &ui.show_cell_values);
  ImGui::MenuItem("Heatmap colours up to the largest \xce\xb1", nullptr, &ui.heatmap_contrast);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Off: the colour scale runs from 0 to 1 in every head.\n"
        "On: from 0 to the head's largest \xce\xb1, for contrast when many keys share the weight.");
  ImGui::EndMenu();
}

// Text size, always in reach for a teacher at a projector: "Text size 16 px [−][+]" against
// the right edge, the two buttons last, so that they stay (nearly) under the pointer as the
// text changes size and a few clicks in a row all land.
void draw_text_size(Shell& shell, Commands& commands) {
  const ImGuiStyle& style = ImGui::GetStyle();
  char size_text[16];
  std::snprintf(size_text, sizeof size_text, "%d px", static_cast<int>(shell.state.ui.font_size));
  const char* minus = "\xe2\x88\x92";
  const char* plus = "+";
  // A width that does not follow the text size (up to about 40 px), so that the buttons stay put.
  const float button_w = std::max({std::round(30.0f * shell.backend.content_scale()),
                                   ImGui::CalcTextSize(minus).x + style.FramePadding.x * 2.0f,
                                   ImGui::CalcTextSize(plus).x + style.FramePadding.x * 2.0f});
  const float group_w = ImGui::CalcTextSize("Text size").x + ImGui::CalcTextSize("64 px").x +
                        button_w * 2.0f + style.ItemSpacing.x * 3.0f + style.ItemInnerSpacing.x;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - group_w));
  ImGui::TextUnformatted("Text size");
  ImGui::SameLine();
  // The size: a click lists the sizes this window offers, and the one that suits it.
  if (ImGui::Selectable(size_text, false, 0, ImGui::CalcTextSize(size_text)))
    ImGui::OpenPopup("text sizes");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("choose a text size");
  if (ImGui::BeginPopup("text sizes")) {
    UiSettings& ui = shell.state.ui;
    const float suited = view::suited_font_size(ImGui::GetIO().DisplaySize.y);
    char label[64];
    std::snprintf(label, sizeof label, "Suits this window: %d px", static_cast<int>(suited));
    CommandRunner runner(shell, commands);
    command_menu_item(runner, "view.suited_text", label);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("follows the window's size as it is resized");
    ImGui::Separator();
    const float largest = commands.largest_text_size();
    for (float size = 12; size <= largest; size += 2) {
      std::snprintf(label, sizeof label, "%d px", static_cast<int>(size));
      if (ImGui::MenuItem(label, nullptr, ui.font_size_chosen && ui.font_size == size))
        commands.set_text_size(size);
    }
    ImGui::EndPopup();
  }
  ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - button_w * 2.0f -
                  style.ItemInnerSpacing.x);
  if (ImGui::Button(minus, ImVec2(button_w, 0))) commands.smaller_text();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("smaller text (Ctrl+-)");
  ImGui::SameLine(0.0f, style.ItemInnerSpacing.x);
  if (ImGui::Button(plus, ImVec2(button_w, 0))) commands.larger_text();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("larger text (Ctrl+=; Ctrl+0: as at start)");
}

}  // namespace

void draw_main_menu(Shell& shell, Commands& commands) {
  if (!ImGui::BeginMainMenuBar()) return;
  draw_file_menu(shell, commands);
  draw_edit_menu(shell, commands);
  draw_models_menu(shell, commands);
  draw_lessons_menu(shell, commands);
  draw_view_menu(shell, commands);
  if (ImGui::BeginMenu("Help")) {
    CommandRunner runner(shell, commands);
    command_menu_item(runner, "help.guide");
    command_menu_item(runner, "help.shortcuts");
    command_menu_item(runner, "help.welcome");
    ImGui::EndMenu();
  }
  draw_text_size(shell, commands);
  ImGui::EndMainMenuBar();
}

}  // namespace attnviz::app
