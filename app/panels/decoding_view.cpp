#include "app/panels/decoding_view.hpp"

#include "app/panels/pair_grid.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/colormap.hpp"
#include "core/figures/format.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/variants/flash_attention.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace attnviz::app {

void DecodingView::draw(const AppState& state, PanelContext& context) {
  font_ = ImGui::GetFontSize();
  if (!update(state)) {
    draw_error();
    return;
  }
  // The step is the selected query: the token that has just arrived (every view follows it).
  step_ = std::clamp(state.selection.query, 0, static_cast<int>(steps_.size()) - 1);
  continue_line_if_fits(font_ * 17.0f, font_);
  draw_stepper("##decoding_steps", step_, static_cast<int>(steps_.size()),
               "next token \xe2\x96\xb6", "token");
  context.selection.query = step_;
  const int n = static_cast<int>(steps_.size());
  const DecodeStep& now = steps_[static_cast<std::size_t>(step_)];
  const float difference = (now.output - full_.row(step_)).cwiseAbs().maxCoeff();
  // The part shown, the step (from 0), its difference, the pairs the cache needed so far.
  FrameValues& values = state.frame.values;
  values.set("cheaper.method", "decoding");
  values.set("cheaper.step", step_);
  if (difference >= 0) values.set("cheaper.largest_difference", difference);
  long long pairs = 0;
  for (int t = 0; t <= step_; ++t) pairs += steps_[static_cast<std::size_t>(t)].cache_length;
  values.set("cheaper.pairs", pairs);
  values.set("cheaper.pairs_full", static_cast<long long>(step_ + 1) * (step_ + 2) / 2);
  if (!ImGui::BeginChild("##decoding_body", ImVec2(0, 0), false)) {
    ImGui::EndChild();
    return;
  }
  const float width = ImGui::GetContentRegionAvail().x;
  const auto& tokens = state.pipeline().target().tokens;
  std::vector<ImU32> fills(tokens.size(), 0);
  for (int t = 0; t <= step_ && t < static_cast<int>(fills.size()); ++t)
    fills[static_cast<std::size_t>(t)] = head_colour(state.ui.theme, state.selection.head, 0.35f);
  text_wrapped_at_spaces(
      "Received so far (the new token outlined; click a token to go to its step).", width, true);
  const int clicked = draw_coloured_chips(state, "##decoded", tokens, fills, {}, step_);
  if (clicked >= 0) {
    step_ = std::min(clicked, n - 1);
    context.selection.query = step_;
  }
  const float line = ImGui::GetTextLineHeightWithSpacing();
  ImVec2 origin = ImGui::GetCursorScreenPos();
  const float column = (width - font_ * 2.0f) / 3.0f;
  const float cache_h = font_ * 1.3f + line * static_cast<float>(step_ + 1) + line;
  draw_cache(state, "K cache (keys kept)", keys_, origin, column);
  draw_cache(state, "V cache (values kept)", values_, ImVec2(origin.x + column + font_, origin.y),
             column);
  draw_weights(state, ImVec2(origin.x + (column + font_) * 2.0f, origin.y), column);
  const float body_h = std::max(cache_h, font_ * 1.3f + line * static_cast<float>(step_ + 1));
  origin.y += body_h + line * 0.5f;
  const float work_h = std::clamp(ImGui::GetContentRegionAvail().y - body_h - line * 5.0f,
                                  font_ * 4.0f, font_ * 9.0f);
  draw_work(state, origin, ImVec2(width, work_h));
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + work_h + line * 0.4f));
  char text[480];
  std::snprintf(
      text, sizeof text,
      "Step %d of %d: \"%s\" arrives. Its query meets the %d key%s in the cache, which now holds "
      "%d \xc3\x97 (d_k + d_v) = %d numbers. Work this step: %s multiply-adds with the cache, %s "
      "if every key and value were computed again. Its output row against the full causal "
      "computation: largest difference %s.",
      step_ + 1, n, state.frame.visual_text(tokens[static_cast<std::size_t>(step_)].text),
      now.cache_length, now.cache_length == 1 ? "" : "s", now.cache_length,
      now.cache_length * static_cast<int>(keys_.cols() + values_.cols()),
      view::format_thousands(static_cast<std::size_t>(now.work)).c_str(),
      view::format_thousands(static_cast<std::size_t>(now.work_without_cache)).c_str(),
      view::format_number(difference, 3).c_str());
  text_wrapped_at_spaces(text, width);
  ImGui::EndChild();
}

bool DecodingView::update(const AppState& state) {
  const AttentionResult& r = state.result();
  const int head = state.selection.head;
  if (!computed_of_.changed(r.version, head)) return error_.empty();
  error_.clear();
  steps_.clear();
  const AttentionConfig& c = r.config;
  float scale = 1;
  if (!score_scale_or_error(c, "Decoding", scale, error_)) return false;
  const Pipeline& p = state.pipeline();
  if (p.cross() || p.mask()) {
    error_ =
        "A decoder feeds a sentence to itself, each token seeing every earlier one: it needs "
        "self-attention without a mask pattern (the Input panel).";
    return false;
  }
  Result<DecodedSentence> decoded = decode_sentence(
      state.document.scenario().one_layer().parameters, c, head, p.X_target(), scale);
  if (!decoded) {
    error_ = decoded.error();
    return false;
  }
  steps_ = std::move(decoded->steps);
  keys_ = std::move(decoded->keys);
  values_ = std::move(decoded->values);
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  Result<FlashResult> full = full_attention(h.Q, h.K, h.V, scale, true, nullptr);
  if (!full) {
    error_ = full.error();
    steps_.clear();
    return false;
  }
  full_ = std::move(full->output);
  return !steps_.empty();
}

// Rows 0..step of the cache, one per token received, the newest outlined: numbers when they fit,
// else colour.
void DecodingView::draw_cache(const AppState& state, const char* title, const Matrix& cache,
                              ImVec2 origin, float width) {
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const auto& tokens = state.pipeline().target().tokens;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  list->AddText(origin, colours.text_dim, title);
  const int cols = static_cast<int>(cache.cols());
  const float label_w = std::min(widest_token(state, tokens) + font_ * 0.4f, width * 0.35f);
  const float cell = std::max(2.0f, (width - label_w) / static_cast<float>(std::max(1, cols)));
  const bool numbers = cell >= ImGui::CalcTextSize("-0.00").x + 4.0f;
  float limit = 1e-6f;
  for (Eigen::Index k = 0; k < cache.size(); ++k)
    limit = std::max(limit, std::fabs(cache.data()[k]));
  const float top = origin.y + font_ * 1.3f;
  char text[16];
  for (int t = 0; t <= step_; ++t) {
    const float y = top + line * static_cast<float>(t);
    const char* name = state.frame.visual_text(tokens[static_cast<std::size_t>(t)].text);
    list->PushClipRect(ImVec2(origin.x, y), ImVec2(origin.x + label_w - 2.0f, y + line), true);
    list->AddText(ImVec2(origin.x, y), t == step_ ? colours.selection : colours.text, name);
    list->PopClipRect();
    for (int j = 0; j < cols; ++j) {
      const float value = cache(t, j);
      const ImVec2 p0(origin.x + label_w + cell * static_cast<float>(j), y);
      const ImVec2 p1(p0.x + cell - 1.0f, y + line - 1.0f);
      list->AddRectFilled(
          p0, p1,
          with_alpha(to_imgui(view::sample_diverging(value, limit, state.ui.diverging())),
                     numbers ? 0.45f : 1.0f));
      if (numbers) {
        std::snprintf(text, sizeof text, "%.2f", static_cast<double>(value));
        const ImVec2 ts = ImGui::CalcTextSize(text);
        list->AddText(ImVec2(p1.x - ts.x - 2.0f, y + (line - ts.y) * 0.5f), colours.text, text);
      }
    }
  }
  const float y = top + line * static_cast<float>(step_);
  list->AddRect(ImVec2(origin.x + label_w - 1.0f, y - 1.0f),
                ImVec2(origin.x + label_w + cell * static_cast<float>(cols), y + line),
                colours.selection, 0.0f, 0, 2.0f);
}

// The new query's α over the cached keys, one bar per key.
void DecodingView::draw_weights(const AppState& state, ImVec2 origin, float width) {
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const auto& tokens = state.pipeline().target().tokens;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const DecodeStep& now = steps_[static_cast<std::size_t>(step_)];
  list->AddText(origin, colours.text_dim, "\xce\xb1 of the new query");
  const float label_w = std::min(widest_token(state, tokens) + font_ * 0.4f, width * 0.35f);
  const float number_w = ImGui::CalcTextSize("0.000").x + font_ * 0.3f;
  const float bar_w = std::max(font_, width - label_w - number_w);
  const float top = origin.y + font_ * 1.3f;
  const ImU32 colour = head_colour(state.ui.theme, state.selection.head);
  for (int j = 0; j < static_cast<int>(now.weights.size()); ++j) {
    const float y = top + line * static_cast<float>(j);
    const char* name = state.frame.visual_text(tokens[static_cast<std::size_t>(j)].text);
    list->PushClipRect(ImVec2(origin.x, y), ImVec2(origin.x + label_w - 2.0f, y + line), true);
    list->AddText(ImVec2(origin.x, y), colours.text, name);
    list->PopClipRect();
    const float w = now.weights(j);
    list->AddRectFilled(ImVec2(origin.x + label_w, y + 2.0f),
                        ImVec2(origin.x + label_w + bar_w * w, y + line - 2.0f), colour);
    const std::string value = view::format_number(w, 3);
    list->AddText(ImVec2(origin.x + label_w + bar_w * w + 3.0f, y), colours.text, value.c_str());
  }
}

// Multiply-adds per step: with the cache (filled) and without (outlined), up to this step bright.
void DecodingView::draw_work(const AppState& state, ImVec2 origin, ImVec2 size) {
  const Palette& colours = palette(state.ui.theme);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float title_h = font_ * 1.3f;
  list->AddText(origin, colours.text_dim,
                "multiply-adds per step: with the cache (filled), without (outline)");
  const int n = static_cast<int>(steps_.size());
  double top = 1;
  for (const DecodeStep& s : steps_) top = std::max(top, static_cast<double>(s.work_without_cache));
  const float plot_h = size.y - title_h - 2.0f;
  const float bar = size.x / static_cast<float>(std::max(1, n));
  const ImU32 colour = head_colour(state.ui.theme, state.selection.head);
  for (int t = 0; t < n; ++t) {
    const DecodeStep& s = steps_[static_cast<std::size_t>(t)];
    const float x0 = origin.x + bar * static_cast<float>(t) + 1.0f,
                x1 = x0 + std::max(1.0f, bar - 3.0f);
    const float base = origin.y + title_h + plot_h;
    const float alpha = t <= step_ ? 1.0f : 0.25f;
    const float without =
        plot_h * static_cast<float>(static_cast<double>(s.work_without_cache) / top);
    const float with = plot_h * static_cast<float>(static_cast<double>(s.work) / top);
    list->AddRect(ImVec2(x0, base - without), ImVec2(x1, base),
                  with_alpha(colours.text_dim, alpha));
    list->AddRectFilled(ImVec2(x0, base - with), ImVec2(x1, base), with_alpha(colour, alpha));
  }
  list->AddLine(ImVec2(origin.x, origin.y + size.y), ImVec2(origin.x + size.x, origin.y + size.y),
                colours.text_dim);
}

}  // namespace attnviz::app
