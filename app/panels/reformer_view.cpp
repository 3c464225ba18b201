#include "app/panels/reformer_view.hpp"

#include "app/panels/pair_grid.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "core/figures/format.hpp"
#include "core/pipeline/variants_run.hpp"
#include "core/variants/flash_attention.hpp"

#include <algorithm>
#include <cstdio>

namespace attnviz::app {

namespace {

// The bucket counts offered: 1 (one bucket: full attention) and even numbers.
constexpr int kBucketChoices[] = {1, 2, 4, 8, 16};

}  // namespace

void ReformerView::draw(const AppState& state, PanelContext& context) {
  font_ = ImGui::GetFontSize();
  continue_line_if_fits(font_ * 8.0f, font_);
  char preview[16];
  std::snprintf(preview, sizeof preview, "%d", settings_.buckets);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("buckets");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font_ * 3.5f);
  if (ImGui::BeginCombo("##reformer_buckets", preview)) {
    for (const int b : kBucketChoices) {
      std::snprintf(preview, sizeof preview, "%d", b);
      if (ImGui::Selectable(preview, b == settings_.buckets)) settings_.buckets = b;
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "b buckets: each vector goes to the bucket of its largest coordinate among\n"
        "[x\xc2\xb7R, \xe2\x88\x92x\xc2\xb7R] for random rotations R (b/2 columns). Vectors at a "
        "small angle\nland in the same bucket most often. 1 bucket: every pair meets.");
  continue_line_if_fits(font_ * 9.0f, font_);
  ImGui::TextUnformatted("chunk");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font_ * 5.5f);
  int chunk = settings_.chunk;
  if (ImGui::InputInt("##reformer_chunk", &chunk, 1, 1))
    settings_.chunk = std::clamp(chunk, 1, Limits::kMaxTokens);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "positions per chunk of the sorted order: a query sees its chunk and the "
        "one before");
  continue_line_if_fits(font_ * 9.0f, font_);
  ImGui::TextUnformatted("rounds");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font_ * 5.0f);
  ImGui::SliderInt("##reformer_rounds", &settings_.rounds, 1, 4);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "hash rounds, each with its own rotations: a pair one round misses, "
        "another may catch");
  continue_line_if_fits(ImGui::CalcTextSize("New rotations").x + font_, font_);
  if (ImGui::Button("New rotations")) ++settings_.seed;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("draw other random rotations (seed %llu)",
                      static_cast<unsigned long long>(settings_.seed));
  if (!update(state)) {
    draw_error();
    return;
  }
  // The part shown, the pairs of scores it computed of full attention's, its largest difference.
  FrameValues& values = state.frame.values;
  values.set("cheaper.method", "reformer");
  values.set("cheaper.pairs", static_cast<long long>(lsh_.pairs_computed));
  values.set("cheaper.pairs_full",
             static_cast<long long>(lsh_.weights.rows()) * lsh_.weights.cols());
  if (difference_ >= 0) values.set("cheaper.largest_difference", difference_);
  if (!ImGui::BeginChild("##reformer_body", ImVec2(0, 0), false)) {
    ImGui::EndChild();
    return;
  }
  const float width = ImGui::GetContentRegionAvail().x;
  const auto& tokens = state.pipeline().target().tokens;
  for (std::size_t round = 0; round < lsh_.rounds.size(); ++round) {
    ImGui::TextDisabled("round %d: each token's bucket", static_cast<int>(round) + 1);
    std::vector<std::string> badges;
    for (const int b : lsh_.rounds[round].bucket) badges.push_back("b" + std::to_string(b + 1));
    char id[16];
    std::snprintf(id, sizeof id, "##round%d", static_cast<int>(round));
    draw_coloured_chips(state, id, tokens, bucket_colours_[round], badges, state.selection.query);
  }
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float grid_h = std::max(font_ * 8.0f, ImGui::GetContentRegionAvail().y - line * 3.4f);
  PairGridSpec spec;
  spec.weights = &lsh_.weights;
  spec.computed = &lsh_.pairs;
  spec.query_colours = &bucket_colours_.front();
  spec.key_colours = &bucket_colours_.front();
  spec.highlight_query = state.selection.query;
  // The count the summary under the grid begins with, in the title too: at 1280x720 the summary
  // is under the view's edge (lesson 17's last step talks about it).
  char title[160];
  std::snprintf(
      title, sizeof title,
      "\xce\xb1 where a round computed the pair (hatched: never): %lld of n\xc2\xb2 = %lld",
      static_cast<long long>(lsh_.pairs_computed),
      static_cast<long long>(lsh_.weights.rows()) * lsh_.weights.rows());
  spec.title = title;
  const PairGridHover hover = draw_pair_grid(state, context, spec, origin, ImVec2(width, grid_h));
  if (hover.query >= 0) {
    const auto i = static_cast<std::size_t>(hover.query), j = static_cast<std::size_t>(hover.key);
    std::string buckets;
    for (const ReformerRound& round : lsh_.rounds)
      buckets += (buckets.empty() ? "" : ", ") + std::string("b") +
                 std::to_string(round.bucket[i] + 1) + "/b" + std::to_string(round.bucket[j] + 1);
    ImGui::SetTooltip("\"%s\" \xe2\x86\x92 \"%s\": buckets %s\n%s",
                      state.frame.visual_text(tokens[i].text),
                      state.frame.visual_text(tokens[j].text), buckets.c_str(),
                      lsh_.pairs(hover.query, hover.key) != 0
                          ? ("computed: \xce\xb1 = " +
                             view::format_number(lsh_.weights(hover.query, hover.key), 3))
                                .c_str()
                          : "never computed (different buckets, or chunks too far apart)");
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + hover.size.y + line * 0.4f));
  draw_summary(width);
  ImGui::EndChild();
}

bool ReformerView::update(const AppState& state) {
  const AttentionResult& r = state.result();
  const int head = state.selection.head;
  if (!computed_of_.changed(r.version, head, settings_)) return error_.empty();
  computed_ = settings_;
  error_.clear();
  const AttentionConfig& c = r.config;
  float scale = 1;
  if (!score_scale_or_error(c, "Reformer", scale, error_)) return false;
  if (state.pipeline().cross()) {
    error_ =
        "Reformer shares one vector for a token's query and key: it needs self-attention "
        "(the Input panel's mode).";
    return false;
  }
  if (state.pipeline().mask()) {
    error_ =
        "Reformer's buckets decide who meets whom: turn the mask pattern off in the Input "
        "panel.";
    return false;
  }
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  Result<ReformerResult> lsh = reformer_attention(h.Q, h.V, scale, c.causal, settings_);
  if (!lsh) {
    error_ = lsh.error();
    return false;
  }
  lsh_ = std::move(*lsh);
  // Full attention over the same shared keys, for the difference.
  Result<FlashResult> full = full_attention(h.Q, lsh_.keys, h.V, scale, c.causal, nullptr);
  difference_ = full ? (lsh_.output - full->output).cwiseAbs().maxCoeff() : 0.0f;
  bucket_colours_.clear();
  for (const ReformerRound& round : lsh_.rounds) {
    std::vector<ImU32> fills;
    for (const int b : round.bucket) fills.push_back(head_colour(state.ui.theme, b, 0.45f));
    bucket_colours_.push_back(std::move(fills));
  }
  return true;
}

void ReformerView::draw_summary(float width) {
  const long long n = lsh_.weights.rows();
  char text[400];
  std::snprintf(text, sizeof text,
                "Scores computed: %lld over %d round%s, against n\xc2\xb2 = %lld for full "
                "attention. Largest difference of the output from full attention over the same "
                "shared keys: %s.",
                static_cast<long long>(lsh_.pairs_computed), computed_.rounds,
                computed_.rounds == 1 ? "" : "s", n * n,
                view::format_number(difference_, 3).c_str());
  text_wrapped_at_spaces(text, width);
  text_wrapped_at_spaces(
      "Keys are the queries made unit length (shared QK). A query skips itself when it has "
      "another key. With 8 or 16 tokens a chunk is most of the sentence; the saving grows with n.",
      width, true);
}

}  // namespace attnviz::app
