// The Fill the mask view (an encoder with its masked-language-model head, in Next token's place):
// the text's tokens, each a button that hides its word behind [MASK] (exBERT's move), and for
// each [MASK] the tokens the model would put there, most likely first. An encoder sees the words
// on both sides of the mask; that is what it was trained to do. Without a [MASK] it shows what
// the model puts at the selected token while seeing it.
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/token_candidates.hpp"
#include "app/panels/token_chips.hpp"
#include "app/panels/widgets.hpp"
#include "app/view/memo.hpp"
#include "core/models/model.hpp"
#include "core/models/sampling.hpp"
#include "core/models/transformer_forward.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

constexpr int kCandidates = 8;
constexpr int kMostMasksShown = 4;

// The likeliest tokens at one position of the text.
struct Guesses {
  int position = 0;
  bool overflowed = false;  // the logits are not finite (a weight edited far too large)
  std::vector<float> logits;
  std::vector<Candidate> candidates;
};

class FillMaskPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const Run& run = state.pipeline().current();
    if (!run.trained_forward() || !run.trained_model()) return;
    const Model& model = *run.trained_model();
    const std::span<const ModelToken> tokens = run.model_tokens();
    if (tokens.empty()) return;
    const int mask = model.tokenizer.mask_token();
    text_wrapped_at_spaces(
        "The model sees the whole text, the words after a [MASK] as well as those before it. "
        "Click a word to hide it behind [MASK] (Ctrl+Z brings it back), or type [MASK] in the "
        "text.",
        ImGui::GetContentRegionAvail().x, true);
    draw_tokens(state, context, run);
    update(run, mask, state.selection.query);
    ImGui::Spacing();
    if (guesses_.empty()) return;
    if (!has_mask_) {
      const ModelToken& at = tokens[static_cast<std::size_t>(guesses_.front().position)];
      text_wrapped_at_spaces(std::string("No [MASK] in the text. What the model puts at \"") +
                                 state.frame.visual_text(at.shown) +
                                 "\" (the selected token) while seeing it:",
                             ImGui::GetContentRegionAvail().x, false);
    }
    for (const Guesses& guess : guesses_) {
      if (has_mask_) draw_heading(state, tokens, guess.position);
      if (guess.overflowed) {
        text_wrapped_at_spaces(
            "No prediction: the model's numbers overflowed (a weight or an embedding is too large "
            "for a float). Undo the edit, or Reset model in the Weights panel.",
            ImGui::GetContentRegionAvail().x, true);
        continue;
      }
      draw_token_candidates(state, model.tokenizer, guess.candidates, guess.logits,
                            view::ViewId::FillMask);
      if (!guess.candidates.empty())  // for the tests: each guess's likeliest token
        state.frame.values.append("fill.first",
                                  model.tokenizer.shown(guess.candidates.front().token));
      ImGui::Spacing();
    }
    if (masks_ > kMostMasksShown)
      ImGui::TextDisabled("(and %d more [MASK]s)", masks_ - kMostMasksShown);
  }

 private:
  // The run and the selected query the guesses were computed for.
  view::Memo<std::uint64_t, int> computed_of_;
  std::vector<Guesses> guesses_;
  bool has_mask_ = false;
  int masks_ = 0;

  void update(const Run& run, int mask, int selected_query) {
    if (!computed_of_.changed(run.run_count(), selected_query)) return;
    guesses_.clear();
    const std::span<const ModelToken> tokens = run.model_tokens();
    std::vector<int> positions;
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i)
      if (tokens[static_cast<std::size_t>(i)].id == mask) positions.push_back(i);
    has_mask_ = !positions.empty();
    masks_ = static_cast<int>(positions.size());
    if (positions.size() > kMostMasksShown) positions.resize(kMostMasksShown);
    if (!has_mask_) {  // the selected token's position (the shown index, as the views count)
      const std::vector<int>& shown = run.shown_positions();
      const int query = std::clamp(selected_query, 0, static_cast<int>(shown.size()) - 1);
      positions.push_back(shown.empty() ? 0 : shown[static_cast<std::size_t>(query)]);
    }
    const int vocab = run.trained_model()->transformer.config().vocab_size;
    for (const int position : positions) {
      Guesses guess;
      guess.position = position;
      guess.logits.resize(static_cast<std::size_t>(vocab));
      run.trained_forward()->logits(position, guess.logits.data());
      guess.overflowed = !std::all_of(guess.logits.begin(), guess.logits.end(),
                                      [](float logit) { return std::isfinite(logit); });
      if (!guess.overflowed)
        guess.candidates =
            top_candidates(next_token_probabilities(guess.logits, SamplingSettings{}), kCandidates);
      guesses_.push_back(std::move(guess));
    }
  }

  // "[MASK] 1, between "there be" and ".":" — the words around it.
  void draw_heading(const AppState& state, std::span<const ModelToken> tokens, int position) {
    const auto shown = [&](int i) {
      return i < 0 || i >= static_cast<int>(tokens.size())
                 ? std::string()
                 : std::string(state.frame.visual_text(tokens[static_cast<std::size_t>(i)].shown));
    };
    const std::string before = shown(position - 2) + " " + shown(position - 1);
    const std::string after = shown(position + 1) + " " + shown(position + 2);
    ImGui::Text("[MASK] at token %d, between \"%s\" and \"%s\":", position + 1, before.c_str(),
                after.c_str());
  }

  // The tokens as chips (as the Input panel shows them): clicking a word hides it behind [MASK].
  void draw_tokens(const AppState& state, PanelContext& context, const Run& run) {
    const ModelSpec* spec = state.document.scenario().model();
    if (!spec) return;
    const std::span<const ModelToken> tokens = run.model_tokens();
    const std::vector<int>& shown = run.shown_positions();
    draw_token_chips(state, context, run.target(), {}, Side::Query, [&](int index) {
      if (index < 0 || index >= static_cast<int>(shown.size())) return;
      const ModelToken& token =
          tokens[static_cast<std::size_t>(shown[static_cast<std::size_t>(index)])];
      if (token.special || token.byte_end <= token.byte_begin) return;
      // The word's bytes (its pieces share them) become "[MASK]" in the text it came from.
      const std::string& text =
          token.sentence == 1 ? spec->text_b : state.document.scenario().target;
      const auto begin = static_cast<std::size_t>(token.byte_begin);
      const auto length = static_cast<std::size_t>(token.byte_end - token.byte_begin);
      if (begin + length > text.size()) return;
      std::string masked = text;
      masked.replace(begin, length, "[MASK]");
      Edit edit = token.sentence == 1 ? edits::set_text_b(masked) : edits::set_target(masked);
      edit.label = "mask \"" + text.substr(begin, length) + "\"";
      context.edits.push(std::move(edit));
    });
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::FillMask, FillMaskPanel);

}  // namespace attnviz::app
