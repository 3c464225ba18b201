// The Lesson band: the step's text (with live numbers), Back / Next / Leave, and "predict, then
// reveal": on a predict step the student clicks the key they expect the query to attend to most;
// the views that would give the answer away stay covered until then.
#include "app/panels/lesson_predict.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/session/status_line.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz::app {

std::vector<int> predict_keys(const AppState& state, const LessonPredict& predict) {
  std::vector<int> offered;
  const int query = resolve_token(state.pipeline().target(), predict.query);
  const auto& keys = state.pipeline().keys().tokens;
  if (query < 0 || keys.empty()) return offered;
  // The head the question is about (a real model's: in the step's layer).
  const int layer = std::clamp(predict.layer, 0, state.pipeline().layer_count() - 1);
  const AttentionResult& result = state.pipeline().layer(layer);
  if (predict.head >= static_cast<int>(result.heads.size()) || query >= result.n_query)
    return offered;
  const HeadResult& head = result.heads[static_cast<std::size_t>(predict.head)];
  for (std::size_t j = 0; j < keys.size(); ++j)
    if (std::isfinite(head.masked_scores(query, static_cast<Eigen::Index>(j))))
      offered.push_back(static_cast<int>(j));
  return offered;
}

namespace {

// Each button's width as ImGui lays it out.
float key_button_width(const AppState& state, int key) {
  const auto& keys = state.pipeline().keys().tokens;
  return ImGui::CalcTextSize(state.frame.visual_text(keys[static_cast<std::size_t>(key)].text)).x +
         ImGui::GetStyle().FramePadding.x * 2.0f;
}

// Whether button `width` goes on the line of the one before it, which ends at `line_end`, within
// `right` (a wrap: the next row).
bool stays_on_line(float line_end, float width, float right) {
  return line_end + ImGui::GetStyle().ItemSpacing.x + width <= right;
}

}  // namespace

float predict_block_height(const AppState& state, const LessonPredict& predict, float width) {
  const ImGuiStyle& style = ImGui::GetStyle();
  float height = ImGui::CalcTextSize(wrap_text_at_spaces(predict.prompt, width).c_str()).y +
                 style.ItemSpacing.y;
  int rows = 0;
  float line_end = 0;
  for (const int key : predict_keys(state, predict)) {
    const float w = key_button_width(state, key);
    if (rows == 0 || !stays_on_line(line_end, w, width)) {
      ++rows;
      line_end = w;
    } else {
      line_end += style.ItemSpacing.x + w;
    }
  }
  return height + static_cast<float>(std::max(rows, 1)) * ImGui::GetFrameHeightWithSpacing();
}

namespace {

class LessonPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const LessonState& lesson = state.lesson;
    const LessonStep* step = lesson.current();
    if (!step) return;
    const Palette& colours = palette(state.ui.theme);
    const int count = static_cast<int>(lesson.lesson->steps.size());
    const float font = ImGui::GetFontSize();

    // Navigation on the right, the step on the left.
    const float buttons = font * 16.0f;
    ImGui::BeginChild("step", ImVec2(-buttons, 0), false);
    // Wrapped as the text below (large text on a projector: the buttons no longer cut it).
    if (context.bold_font) ImGui::PushFont(context.bold_font);
    text_wrapped_at_spaces(lesson_step_heading(lesson),
                           ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize);
    if (context.bold_font) ImGui::PopFont();
    text_ = expand_lesson_text(step->text, state.pipeline(), step->layer.value_or(0));
    // The width App::lesson_band_height measures the text at (room for a scrollbar kept).
    text_wrapped_at_spaces(text_,
                           ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize);
    // The text tells the step as it began: after the student's change, what changed and which of
    // its claims no longer hold (a change the step asks for is said to be one). As of the start of
    // the frame (panel_host.cpp: held while a drag goes on).
    if (const StudentChange& change = state.lesson_change_seen; !change.message.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, change.invited ? colours.selection : colours.highlight);
      text_wrapped_at_spaces(change.message,
                             ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize);
      ImGui::PopStyleColor();
    } else if (tells_changes(*step)) {
      // The room the note will take (App::lesson_band_height keeps it), said to be there.
      ImGui::PushStyleColor(ImGuiCol_Text, colours.text_dim);
      text_wrapped_at_spaces("Change something: this line will say what it did to the text above.",
                             ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize);
      ImGui::PopStyleColor();
    }
    if (step->predict) draw_prediction(state, context, *step, colours);
    ImGui::EndChild();

    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::BeginDisabled(lesson.step == 0);
    if (ImGui::Button("\xe2\x86\x90 Back")) context.commands.run("present.previous");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(lesson.step + 1 >= count);
    if (ImGui::Button("Next \xe2\x86\x92")) context.commands.run("present.next");
    ImGui::EndDisabled();
    if (ImGui::Button("Leave the lesson")) context.commands.run("lesson.leave");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("keep everything as it is now and play freely");
    // After a change, under the buttons (the note on the left says what it did).
    if (!state.lesson_change_seen.message.empty()) {
      if (ImGui::Button("Step as it began")) context.commands.run("lesson.restart_step");
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("back to the step as it began: your changes go");
    }
    ImGui::EndGroup();
  }

 private:
  std::string text_;  // the step text with its placeholders filled (reused buffer)

  void draw_prediction(const AppState& state, PanelContext& context, const LessonStep& step,
                       const Palette& colours) {
    const LessonPredict& predict = *step.predict;
    const int query = resolve_token(state.pipeline().target(), predict.query);
    const auto& keys = state.pipeline().keys().tokens;
    if (query < 0 || keys.empty()) return;
    // The head the question is about (a real model's: in the step's layer).
    const int layer = std::clamp(predict.layer, 0, state.pipeline().layer_count() - 1);
    const AttentionResult& result = state.pipeline().layer(layer);
    if (predict.head >= static_cast<int>(result.heads.size()) || query >= result.n_query) return;
    const HeadResult& head = result.heads[static_cast<std::size_t>(predict.head)];
    // Wrapped as the text above, and the buttons in rows as wide (predict_block_height measures
    // the same for the band's height).
    const float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
    ImGui::PushStyleColor(ImGuiCol_Text, colours.selection);
    text_wrapped_at_spaces(predict.prompt, width);
    ImGui::PopStyleColor();
    if (!state.lesson.prediction) {
      const float left = ImGui::GetCursorScreenPos().x;
      float line_end = 0;
      bool first = true;
      for (const int j : predict_keys(state, predict)) {
        const float w = key_button_width(state, j);
        if (!first && stays_on_line(line_end, w, width)) {
          ImGui::SameLine();
          line_end += ImGui::GetStyle().ItemSpacing.x + w;
        } else {
          line_end = w;
        }
        first = false;
        ImGui::PushID(j);
        if (ImGui::Button(state.frame.visual_text(keys[static_cast<std::size_t>(j)].text)))
          context.lesson.prediction = j;
        if (ImGui::IsItemHovered()) state.frame.hovered_next = {Side::Key, j};
        // For the tests: whether every button is inside the band's text column.
        if (ImGui::GetItemRectMax().x > left + width + 0.5f)
          state.frame.values.set("lesson.predict_buttons_cut", 1);
        ImGui::PopID();
      }
      state.frame.values.set("lesson.predict_rows_end",
                             ImGui::GetItemRectMax().y - ImGui::GetWindowPos().y);
      state.frame.values.set("lesson.predict_band_h", ImGui::GetWindowSize().y);
      return;
    }
    // Reveal: the engine's answer next to the guess.
    const Matrix& weights = head.weights;
    Eigen::Index answer = 0;
    weights.row(query).maxCoeff(&answer);
    const int guess = *state.lesson.prediction;
    const bool right = guess == static_cast<int>(answer);
    char line[256];
    std::snprintf(
        line, sizeof line,
        "%s You chose \"%s\". The largest weight of \"%s\" is on \"%s\" (\xce\xb1 = %.2f).",
        right ? "\xe2\x9c\x94 Right!" : "\xe2\x9c\x98 Not quite.",
        state.frame.visual_text(keys[static_cast<std::size_t>(guess)].text),
        state.frame.visual_text(
            state.pipeline().target().tokens[static_cast<std::size_t>(query)].text),
        state.frame.visual_text(keys[static_cast<std::size_t>(answer)].text),
        static_cast<double>(weights(query, answer)));
    ImGui::PushStyleColor(ImGuiCol_Text,
                          right ? IM_COL32(30, 150, 60, 255) : IM_COL32(200, 60, 40, 255));
    text_wrapped_at_spaces(line, width);
    ImGui::PopStyleColor();
    context.pinned = {Side::Key, static_cast<int>(answer)};
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Lesson, LessonPanel);

}  // namespace attnviz::app
