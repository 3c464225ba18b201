// The welcome: on a first start with nothing named to show, a short window over the dashboard
// offers the three ways in (lesson 1, a real model that reads words, or exploring the one-layer
// model). Any choice, its close button or Escape dismisses it for good; Help > Welcome brings it
// back.
#include "app/panels/widgets.hpp"
#include "app/shell/commands.hpp"
#include "app/shell/shell.hpp"
#include "core/models/model_files.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // FindWindowByName

#include <algorithm>
#include <string>

namespace attnviz::app {
namespace {

// The model offered first for "type your own sentence": the modern-English decoder, which reads
// words whole; else the first shipped model; "" when none is shipped.
std::string first_model() {
  const std::vector<std::string> names = shipped_model_names();
  if (std::find(names.begin(), names.end(), "gpt2-web") != names.end()) return "gpt2-web";
  return names.empty() ? "" : names.front();
}

// A wide button and, beside it, what it leads to; true when clicked.
bool choice(const char* label, const char* what, float button_width) {
  const bool clicked = ImGui::Button(label, ImVec2(button_width, ImGui::GetFrameHeight() * 1.6f));
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::AlignTextToFramePadding();
  text_wrapped_at_spaces(what, ImGui::GetContentRegionAvail().x);
  ImGui::EndGroup();
  return clicked;
}

}  // namespace

void draw_welcome_window(Shell& shell, Commands& commands) {
  if (!shell.show_welcome) return;
  const float font = ImGui::GetFontSize();
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float width = std::min(display.x - 2 * font, font * 36.0f);
  ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, display.y * 0.45f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(width, 0), ImGuiCond_Always);
  // In front when it appears; a click on the dashboard may then put it behind.
  if (!ImGui::FindWindowByName("Welcome to AttnViz")) ImGui::SetNextWindowFocus();
  bool open = true;
  if (ImGui::Begin("Welcome to AttnViz", &open,
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse |
                       ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove)) {
    const float wrap = ImGui::GetContentRegionAvail().x;
    text_wrapped_at_spaces(
        "AttnViz shows the attention mechanism at work: type a sentence and watch each word's "
        "query meet every key, the softmax weights of every head, and the output each word gets "
        "as a weighted sum of the values. Change the weights and every view follows.",
        wrap);
    ImGui::Spacing();
    const float button = font * 11.0f;
    const std::string lesson_what =
        shell.lesson_titles.empty()
            ? "a guided first class"
            : "\"" + shell.lesson_titles.front().second + "\": a guided first class, step by step";
    if (choice("Start lesson 1", lesson_what.c_str(), button) && !shell.lesson_titles.empty()) {
      commands.dismiss_welcome();
      commands.start_lesson(shell.lesson_titles.front().first, shell.lesson_titles.front().second);
    }
    // Looked up once: the shipped models do not change while the app runs (no folder scan a frame).
    static const std::string model = first_model();
    ImGui::BeginDisabled(model.empty());
    const std::string model_label = "Open a real model";
    const std::string model_what =
        model.empty()         ? "no model is shipped with this copy"
        : model == "gpt2-web" ? "gpt2-web, trained here on modern English, reads the sentence "
                                "as words: see what a trained model attends to"
                              : model + ": see what a trained model attends to";
    if (choice(model_label.c_str(), model_what.c_str(), button)) {
      commands.dismiss_welcome();
      commands.open_model_named(model);
    }
    ImGui::EndDisabled();
    if (choice("Explore", "the one-layer teaching model: every weight is yours to change", button))
      commands.dismiss_welcome();
    ImGui::Spacing();
    ImGui::Separator();
    text_wrapped_at_spaces(
        "Help > User guide (Shift+F1) explains every view; F1 lists the keys. Help > Welcome "
        "brings this back.",
        wrap, true);
  }
  ImGui::End();
  if (!open) commands.dismiss_welcome();
}

}  // namespace attnviz::app
