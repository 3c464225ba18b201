// The Next token view (model mode): what the model predicts after a position of the text (the
// last by default), as its most likely tokens with their probabilities; the temperature, top-k
// and top-p that shape the distribution; and Step, which appends the top token or one drawn from
// the distribution to the text (the model then computes only the new position).
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/token_candidates.hpp"
#include "app/panels/widgets.hpp"
#include "app/view/memo.hpp"
#include "core/base/float_text.hpp"
#include "core/figures/format.hpp"
#include "core/models/model.hpp"
#include "core/models/sampling.hpp"
#include "core/models/transformer_forward.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

constexpr int kCandidates = 10;

// How the distribution is shaped, saved in the view state as "sampling": {"temperature": 0.7,
// "top_k": 40, "top_p": 0.9}, each key optional and checked alone; written only when not the
// defaults.
SamplingSettings read_sampling(const Json& value, const std::string& path, JsonReader& reader,
                               const SamplingSettings& current) {
  using namespace view_json;
  if (!value.is_object())
    expected(path, "an object such as {\"temperature\": 0.7, \"top_k\": 40}", value);
  SamplingSettings sampling = current;
  for (const auto& [key, entry] : value.items()) {
    const std::string entry_path = path + "." + key;
    try {
      if (key == "temperature")
        sampling.temperature = number_in(entry, entry_path, 0, 100, true, "a number from 0 to 100");
      else if (key == "top_k")
        sampling.top_k = whole_number(entry, entry_path, 0, 100000,
                                      "a whole number from 0 (every token) to 100000");
      else if (key == "top_p")
        sampling.top_p = number_in(entry, entry_path, 0, 1, false, "a number above 0, at most 1");
      else
        reader.warning(entry_path + ": unknown key (ignored)");
    } catch (const JsonFailure& failure) {  // that key stays as it was
      reader.warning(failure.message + " (ignored)");
    }
  }
  return sampling;
}

OrderedJson write_sampling(const SamplingSettings& sampling) {
  const SamplingSettings defaults;
  if (sampling.temperature == defaults.temperature && sampling.top_k == defaults.top_k &&
      sampling.top_p == defaults.top_p)
    return {};
  OrderedJson written = OrderedJson::object();
  written["temperature"] = shortest_as_double(sampling.temperature);
  written["top_k"] = sampling.top_k;
  written["top_p"] = shortest_as_double(sampling.top_p);
  return written;
}

const ViewSetting<SamplingSettings> kSampling{"sampling", 110, SamplingSettings{}, read_sampling,
                                              write_sampling};

class NextTokenPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    // The panel host shows this view for a run that predicts the next token (its needs in
    // core/figures/views.hpp): a trained model's forward pass gives the logits.
    const Run* model = &state.pipeline().current();
    if (!model->trained_forward() || !model->trained_model()) return;
    static_cast<void>(context);
    const auto& tokens = model->model_tokens();
    const int n = static_cast<int>(tokens.size());
    const int position = position_ < 0 || position_ >= n ? n - 1 : position_;
    draw_position(state, *model, position);
    draw_settings(kSampling.in(context.ui.views));
    update(*model, position, kSampling.in(state.ui.views));
    // Step above the list: at 1280×720 a list of ten tokens under the settings filled the view,
    // and the buttons below it were cut off (issue 40).
    draw_step(state, context, *model, position);
    update_before(state, *model, position, kSampling.in(state.ui.views));
    draw_before_header(state, context, position);
    draw_candidates(state, *model);
    draw_fallen(state, *model);
  }

 private:
  int position_ = -1;  // the position predicted after; -1: the last
  std::uint64_t seed_ = 1, draws_ = 0;
  // What the candidates were computed for.
  // The model's run, the position, the sampling settings.
  view::Memo<std::uint64_t, int, float, int, float> computed_of_;
  bool not_finite_ = false;  // the logits overflowed (a weight edited far too large)
  std::vector<float> logits_;
  std::vector<Candidate> candidates_;
  std::vector<float> probabilities_;
  // The prediction before the model was changed (state.computed.before), under the same settings:
  // every token's probability, empty when there is none to show; and the before's top tokens
  // that are no longer in the list.
  view::Memo<std::uint64_t, std::uint64_t, bool, float, int, float> before_of_;
  std::vector<float> before_probabilities_;
  struct Fallen {
    int token = 0;
    float before = 0, now = 0;
    int rank = 0;  // among the logits now, from 1
  };
  std::vector<Fallen> fallen_;
  std::string before_changes_, before_line_;  // "layer 2, head 4 knocked out"; the header's line

  // The before applies to the text the model reads now, after its last token.
  static bool before_applies(const ModelBefore& before, const Run& model, int position) {
    const auto tokens = model.model_tokens();
    if (!before.held || before.next_logits.empty() || before.token_ids.size() != tokens.size() ||
        position != static_cast<int>(tokens.size()) - 1)
      return false;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i].id != before.token_ids[i]) return false;
    return before.next_logits.size() == logits_size(model);
  }
  static std::size_t logits_size(const Run& model) {
    return static_cast<std::size_t>(model.trained_model()->transformer.config().vocab_size);
  }

  void update_before(const AppState& state, const Run& model, int position,
                     const SamplingSettings& settings) {
    const ModelBefore& before = state.computed.before;
    const bool applies = before_applies(before, model, position) && !candidates_.empty();
    if (!before_of_.changed(model.run_count(), before.id, applies, settings.temperature,
                            settings.top_k, settings.top_p))
      return;
    before_probabilities_.clear();
    fallen_.clear();
    // What changed since (a run follows every change of the model: run_count keys it).
    const ModelSpec* now = state.document.scenario().model();
    before_changes_ = before.held && now ? before.changes_to(*now) : std::string();
    before_line_ = "Before and after: " + before_changes_ +
                   ". \xe2\x96\xb2\xe2\x96\xbc and the tick on each bar: the probability before.";
    if (!applies) return;
    if (!std::all_of(before.next_logits.begin(), before.next_logits.end(),
                     [](float logit) { return std::isfinite(logit); }))
      return;
    before_probabilities_ = next_token_probabilities(before.next_logits, settings);
    // The before's five likeliest that the list no longer shows, with where they are now.
    for (const Candidate& was : top_candidates(before_probabilities_, 5)) {
      const bool listed = std::any_of(candidates_.begin(), candidates_.end(),
                                      [&](const Candidate& now) { return now.token == was.token; });
      if (listed) continue;
      const std::size_t id = static_cast<std::size_t>(was.token);
      const int rank =
          1 + static_cast<int>(std::count_if(logits_.begin(), logits_.end(),
                                             [&](float logit) { return logit > logits_[id]; }));
      fallen_.push_back({was.token, was.probability, probabilities_[id], rank});
    }
  }

  void draw_before_header(const AppState& state, PanelContext& context, int position) {
    const ModelBefore& before = state.computed.before;
    if (!before.held) return;
    ImGui::Spacing();
    if (before_probabilities_.empty()) {
      ImGui::TextDisabled(
          position != static_cast<int>(state.pipeline().current().model_tokens().size()) - 1
              ? "The prediction before the change is of the last token."
              : "No prediction before the change to compare with.");
      return;
    }
    text_wrapped_at_spaces(before_line_,
                           ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4.0f, false);
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear")) context.commands.run("model.clear_before");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Forget the prediction before the change (%s)",
                        context.commands.label("model.clear_before").c_str());
    state.frame.values.set("next.before_changes", before_changes_);
  }

  void draw_fallen(const AppState& state, const Run& model) {
    if (before_probabilities_.empty() || candidates_.empty()) return;
    // For the tests: the before of the top token now, and of the top token before.
    const Candidate top = candidates_.front();
    state.frame.values.set("next.before_of_top",
                           before_probabilities_[static_cast<std::size_t>(top.token)]);
    if (fallen_.empty()) return;
    ImGui::Spacing();
    ImGui::TextDisabled("No longer in the list:");
    for (const Fallen& fallen : fallen_) {
      const std::string shown =
          state.frame.visual_text(model.trained_model()->tokenizer.shown(fallen.token));
      char line[160];
      std::snprintf(line, sizeof line, "\xe2\x96\xbc \"%s\" %s%% \xe2\x86\x92 %s%%, now guess %d",
                    shown.c_str(), view::format_number(fallen.before * 100.0f, 1).c_str(),
                    view::format_number(fallen.now * 100.0f, 1).c_str(), fallen.rank);
      ImGui::PushStyleColor(ImGuiCol_Text, fall_colour(state.ui.theme));
      ImGui::TextUnformatted(line);
      ImGui::PopStyleColor();
      state.frame.values.append("next.fallen", std::string(line));
    }
  }

  void draw_position(const AppState& state, const Run& model, int position) {
    const auto& tokens = model.model_tokens();
    const float font = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("after");
    ImGui::SameLine();
    const std::string preview =
        std::to_string(position + 1) + ": " +
        state.frame.visual_text(tokens[static_cast<std::size_t>(position)].shown);
    ImGui::SetNextItemWidth(std::min(font * 12.0f, ImGui::GetContentRegionAvail().x * 0.5f));
    if (ImGui::BeginCombo("##next_position", preview.c_str())) {
      for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
        const std::string item = std::to_string(i + 1) + ": " +
                                 state.frame.visual_text(tokens[static_cast<std::size_t>(i)].shown);
        if (ImGui::Selectable(item.c_str(), i == position))
          position_ = i == static_cast<int>(tokens.size()) - 1 ? -1 : i;
        if (ImGui::IsItemHovered() && model.shown_index(i) >= 0)
          state.frame.hovered_next = {Side::Query, model.shown_index(i)};
      }
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::TextDisabled(position_ < 0 ? "(the last token: the text's next)"
                                      : "(what the model guessed would follow it)");
  }

  void draw_settings(SamplingSettings& settings) {
    const float font = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(font * 7.0f);
    ImGui::SliderFloat("temperature", &settings.temperature, 0.0f, 2.0f, "%.2f");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Divides the logits before the softmax: below 1 the likely tokens gain, "
          "above 1 the distribution flattens; 0 puts everything on the top token");
    ImGui::SameLine(0, font);
    ImGui::SetNextItemWidth(font * 5.0f);
    ImGui::InputInt("top-k", &settings.top_k, 1, 10);
    settings.top_k = std::clamp(settings.top_k, 0, 100000);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Only the k most likely tokens can be drawn (0: every token)");
    ImGui::SameLine(0, font);
    ImGui::SetNextItemWidth(font * 6.0f);
    ImGui::SliderFloat("top-p", &settings.top_p, 0.01f, 1.0f, "%.2f");
    settings.top_p = std::clamp(settings.top_p, 0.01f, 1.0f);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Only the fewest most likely tokens whose probabilities add up to p can "
          "be drawn (1: every token)");
    settings.temperature = std::clamp(settings.temperature, 0.0f, 100.0f);
  }

  void update(const Run& model, int position, const SamplingSettings& settings) {
    if (!computed_of_.changed(model.run_count(), position, settings.temperature, settings.top_k,
                              settings.top_p))
      return;
    logits_.resize(
        static_cast<std::size_t>(model.trained_model()->transformer.config().vocab_size));
    model.trained_forward()->logits(position, logits_.data());
    // A weight typed huge (1e38) can make the numbers overflow: no distribution, and the view
    // says why rather than list tokens at "overflow%".
    not_finite_ = !std::all_of(logits_.begin(), logits_.end(),
                               [](float logit) { return std::isfinite(logit); });
    if (!check(settings) || not_finite_) {
      candidates_.clear();
      return;
    }
    probabilities_ = next_token_probabilities(logits_, settings);
    candidates_ = top_candidates(probabilities_, kCandidates);
  }

  void draw_candidates(const AppState& state, const Run& model) {
    ImGui::Spacing();
    if (candidates_.empty()) {
      if (not_finite_)
        text_wrapped_at_spaces(
            "No prediction: the model's numbers overflowed (a weight or an embedding is too large "
            "for a float). Undo the edit, or Reset model in the Weights panel.",
            ImGui::GetContentRegionAvail().x, true);
      else
        ImGui::TextDisabled("no distribution: check the settings");
      return;
    }
    draw_token_candidates(state, model.trained_model()->tokenizer, candidates_, logits_,
                          view::ViewId::NextToken, before_probabilities_);
  }

  void draw_step(const AppState& state, PanelContext& context, const Run& model, int position) {
    ImGui::Spacing();
    const int n = static_cast<int>(model.model_tokens().size());
    const bool at_end = position == n - 1;
    const bool full = n >= std::min(state.document.scenario().max_tokens,
                                    model.trained_model()->transformer.config().context);
    ImGui::BeginDisabled(!at_end || full || candidates_.empty());
    int chosen = -1;
    if (ImGui::Button("Step: append the top token")) chosen = candidates_.front().token;
    const float top = ImGui::GetItemRectMin().y;
    ImGui::SameLine();
    if (ImGui::Button("Step: draw one")) chosen = sample(probabilities_, seed_, draws_++);
    ImGui::EndDisabled();
    // For the tests: whether the buttons are wholly inside the view's window, as drawn.
    const float window_top = ImGui::GetWindowPos().y;
    const float window_bottom = window_top + ImGui::GetWindowSize().y;
    state.frame.values.set("next.step_buttons_whole",
                           top >= window_top && ImGui::GetItemRectMax().y <= window_bottom ? 1 : 0);
    if (!at_end)
      ImGui::TextDisabled("Step adds to the end of the text: choose the last token above.");
    else if (full)
      ImGui::TextDisabled("The text is as long as the model reads (its context or max_tokens).");
    if (chosen < 0) return;
    const int previous = model.model_tokens().back().id;
    const std::string text = state.document.scenario().target +
                             model.trained_model()->tokenizer.text_of(previous, chosen);
    context.edits.push(edits::set_target(text));
    // The new token, selected in every view: one past the last shown now (the host keeps the
    // selection within the result, once the text with the token is computed).
    context.selection.query = static_cast<int>(state.pipeline().current().shown_positions().size());
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::NextToken, NextTokenPanel);

}  // namespace attnviz::app
