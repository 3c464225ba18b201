#include "app/panels/sparse_view.hpp"

#include "app/panels/pair_grid.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/format.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/variants/flash_attention.hpp"
#include "core/variants/sparse_masks.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz::app {

void SparseView::draw(const AppState& state, PanelContext& context) {
  font_ = ImGui::GetFontSize();
  continue_line_if_fits(font_ * 16.0f, font_);
  draw_mask_pattern_controls(state, context);
  if (!update(state)) {
    draw_error();
    return;
  }
  // The part shown, and the pairs of scores its pattern computes of full attention's.
  FrameValues& values = state.frame.values;
  values.set("cheaper.method", "sparse");
  values.set("cheaper.pairs", static_cast<long long>(pairs_));
  values.set("cheaper.pairs_full", static_cast<long long>(pairs_full_));
  if (!ImGui::BeginChild("##sparse_body", ImVec2(0, 0), false)) {
    ImGui::EndChild();
    return;
  }
  const Scenario& s = state.document.scenario();
  const float width = ImGui::GetContentRegionAvail().x;
  const auto& tokens = state.pipeline().target().tokens;
  // Global tokens: filled chips; a click adds or removes one.
  std::vector<ImU32> fills(tokens.size(), 0);
  const std::vector<int> none;
  const std::vector<int>& global =
      s.one_layer().mask_pattern ? s.one_layer().mask_pattern->global_tokens : none;
  for (const int g : global)
    if (g >= 0 && static_cast<std::size_t>(g) < fills.size())
      fills[static_cast<std::size_t>(g)] = head_colour(state.ui.theme, 1, 0.5f);
  text_wrapped_at_spaces(s.one_layer().mask_pattern
                             ? "Global tokens (Longformer): click a token to make it see every "
                               "key, and be seen by every query."
                             : "Choose a pattern above; then click tokens to make them global.",
                         width, true);
  const int clicked = draw_coloured_chips(state, "##global", tokens, fills, {}, -1);
  if (clicked >= 0 && s.one_layer().mask_pattern) {
    MaskPattern pattern = *s.one_layer().mask_pattern;
    auto& list = pattern.global_tokens;
    const auto found = std::find(list.begin(), list.end(), clicked);
    if (found != list.end())
      list.erase(found);
    else
      list.insert(std::upper_bound(list.begin(), list.end(), clicked), clicked);
    context.edits.push(edits::set_mask_pattern(pattern));
  } else if (clicked >= 0) {
    context.selection.query = clicked;
  }
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float grid_h = std::max(font_ * 8.0f, ImGui::GetContentRegionAvail().y - line * 4.5f);
  const HeadResult& h = state.result().heads[static_cast<std::size_t>(state.selection.head)];
  PairGridSpec spec;
  spec.weights = &h.weights;
  spec.computed = &allowed_;
  spec.highlight_query = state.selection.query;
  spec.title = "\xce\xb1 with the pattern (hatched: pairs it never computes)";
  const PairGridHover hover = draw_pair_grid(state, context, spec, origin, ImVec2(width, grid_h));
  if (hover.query >= 0) {
    const bool seen = allowed_(hover.query, hover.key) != 0;
    const std::string full = full_weights_.size() > 0
                                 ? view::format_number(full_weights_(hover.query, hover.key), 3)
                                 : std::string("\xe2\x80\x94");
    ImGui::SetTooltip(
        "\"%s\" \xe2\x86\x92 \"%s\": %s\nfull attention: \xce\xb1 = %s",
        state.frame.visual_text(tokens[static_cast<std::size_t>(hover.query)].text),
        state.frame.visual_text(tokens[static_cast<std::size_t>(hover.key)].text),
        seen ? ("\xce\xb1 = " + view::format_number(h.weights(hover.query, hover.key), 3)).c_str()
             : "not computed: the pattern hides this key",
        full.c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = hover.query;
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + hover.size.y + line * 0.4f));
  char text[200];
  std::snprintf(
      text, sizeof text, "Pairs computed: %lld of %lld (%s%%) for full attention%s.", pairs_,
      pairs_full_,
      view::format_number(
          100.0 * static_cast<double>(pairs_) / static_cast<double>(std::max(1LL, pairs_full_)), 1)
          .c_str(),
      state.result().config.causal ? " with the causal mask" : "");
  text_wrapped_at_spaces(text, width);
  draw_lost(state, width);
  ImGui::EndChild();
}

bool SparseView::update(const AppState& state) {
  const AttentionResult& r = state.result();
  const int head = state.selection.head;
  if (!computed_of_.changed(r.version, head)) return error_.empty();
  error_.clear();
  const MaskMatrix* mask = state.pipeline().mask();
  const int n_query = static_cast<int>(r.n_query), n_key = static_cast<int>(r.n_key);
  allowed_ = mask ? *mask : MaskMatrix::Ones(n_query, n_key);  // (n_query, n_key)
  if (r.config.causal)
    for (int i = 0; i < n_query; ++i)
      for (int j = i + 1; j < n_key; ++j) allowed_(i, j) = 0;
  const PairCount count =
      count_pairs(mask ? *mask : MaskMatrix::Ones(n_query, n_key), r.config.causal);
  pairs_ = count.computed;
  pairs_full_ = count.full;
  // The same head without the pattern, for what the pattern hides (dot-product scores only).
  full_weights_.resize(0, 0);
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  if (Result<float> scale = variant_score_scale(r.config, "the sparse view"); scale && mask) {
    Result<FlashResult> full = full_attention(h.Q, h.K, h.V, *scale, r.config.causal, nullptr);
    if (full) {
      // α = exp(score − m) / ℓ, from the trace's final row maxima and sums.
      full_weights_.resize(n_query, n_key);
      for (int i = 0; i < n_query; ++i)
        for (int j = 0; j < n_key; ++j) {
          const auto row = static_cast<std::size_t>(i);
          const bool visible = (!r.config.causal || j <= i) && full->row_sum[row] > 0;
          full_weights_(i, j) =
              visible ? std::exp(*scale * h.Q.row(i).dot(h.K.row(j)) - full->row_max[row]) /
                            full->row_sum[row]
                      : 0.0f;
        }
    }
  }
  return true;
}

void SparseView::draw_lost(const AppState& state, float width) {
  const int q = state.selection.query;
  if (q < 0 || q >= allowed_.rows()) return;
  const auto& keys = state.pipeline().keys().tokens;
  std::string hidden;
  double lost = 0;
  int count = 0;
  for (int j = 0; j < allowed_.cols(); ++j) {
    const bool causal_hidden = state.result().config.causal && j > q;
    if (allowed_(q, j) != 0 || causal_hidden) continue;
    ++count;
    if (count <= 12)
      hidden += (hidden.empty() ? "" : ", ") +
                std::string(state.frame.visual_text(keys[static_cast<std::size_t>(j)].text));
    if (full_weights_.size() > 0) lost += full_weights_(q, j);
  }
  const char* name =
      state.frame.visual_text(state.pipeline().target().tokens[static_cast<std::size_t>(q)].text);
  std::string text;
  if (count == 0) {
    text = "\"" + std::string(name) + "\" still sees every key it saw before.";
  } else {
    text = "\"" + std::string(name) + "\" can no longer see " + std::to_string(count) + " key" +
           (count == 1 ? "" : "s") + ": " + hidden + (count > 12 ? ", \xe2\x80\xa6" : "") + ".";
    if (full_weights_.size() > 0)
      text += " Full attention gave them " + view::format_number(100.0 * lost, 1) +
              "% of its weight; the pattern shares it out among the keys it keeps.";
  }
  text_wrapped_at_spaces(text, width);
}

}  // namespace attnviz::app
