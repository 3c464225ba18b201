// The Input panel: the sentences (edited live), their tokens, and every attention setting.
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/token_chips.hpp"
#include "app/panels/widgets.hpp"
#include "app/platform/keys.hpp"
#include "app/session/text_undo.hpp"
#include "core/figures/format.hpp"
#include "core/models/model.hpp"
#include "core/text/embedding.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // GetActiveID, ClearActiveID: Escape in the sentence field
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>

namespace attnviz::app {
namespace {

// The special tokens of a text, each once, as the views name them: "[CLS], [SEP]".
std::string special_names(std::span<const ModelToken> tokens) {
  std::vector<std::string> names;
  for (const ModelToken& token : tokens)
    if (token.special && std::find(names.begin(), names.end(), token.shown) == names.end())
      names.push_back(token.shown);
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none in this text" : joined;
}

// A sentence field: its own undo (Ctrl+Z and Ctrl+Shift+Z or Ctrl+Y go back and forth a word or
// a burst at a time, app/session/text_undo.hpp, not ImGui's character at a time), and the text as
// the field holds it (stand-ins for what ImGui cannot hold, such as emoji:
// app/view/text_escapes.hpp), made again only when the sentence changed elsewhere (not every
// frame).
struct SentenceField {
  TextUndo undo;
  std::string sentence;  // the scenario's text `shown` stands for
  std::string shown;
};

// Draws the field; true when the user changed `text`.
bool sentence_field(const char* id, const char* hint, const std::string& text, SentenceField& field,
                    view::TextEscapes& escapes) {
  if (text != field.sentence) {
    field.sentence = text;
    field.shown = escapes.escape(text);
  }
  struct Context {
    TextUndo* undo;
    view::TextEscapes* escapes;
  } field_context{&field.undo, &escapes};
  const auto on_keys = [](ImGuiInputTextCallbackData* data) {
    auto* context = static_cast<Context*>(data->UserData);
    // Emoji typed this frame: their stand-ins, at the cursor, over any selection.
    if (const std::string typed = context->escapes->take_typed(); !typed.empty()) {
      if (data->HasSelection()) {
        const int from = std::min(data->SelectionStart, data->SelectionEnd);
        data->DeleteChars(from, std::abs(data->SelectionEnd - data->SelectionStart));
        data->CursorPos = from;
      }
      data->InsertChars(data->CursorPos, typed.c_str(), typed.c_str() + typed.size());
    }
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.KeyCtrl) return 0;
    TextUndo* field_undo = context->undo;
    const std::string in_field(data->Buf, static_cast<std::size_t>(data->BufTextLen));
    std::optional<std::string> next;
    using platform::Key;
    const bool z = platform::key_pressed(Key::Z, /*repeat=*/true);
    if (z && !io.KeyShift)
      next = field_undo->undo(in_field);
    else if (z || platform::key_pressed(Key::Y, /*repeat=*/true))
      next = field_undo->redo(in_field);
    if (!next) return 0;
    data->DeleteChars(0, data->BufTextLen);
    data->InsertChars(0, next->c_str(), next->c_str() + next->size());
    data->SelectionStart = data->SelectionEnd = data->CursorPos = data->BufTextLen;
    return 0;
  };
  // Escape leaves the field with its text: every letter typed has already changed every view, and
  // ImGui's Escape would take the whole edit back at once (a long sentence lost to one key).
  // Ctrl+Z takes it back a word at a time.
  if (ImGui::GetActiveID() == ImGui::GetID(id) &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
    ImGui::ClearActiveID();
  const bool changed = ImGui::InputTextWithHint(
      id, hint, &field.shown, ImGuiInputTextFlags_NoUndoRedo | ImGuiInputTextFlags_CallbackAlways,
      on_keys, &field_context);
  if (ImGui::IsItemActivated()) field.undo.reset(field.shown);
  if (!changed) return false;
  field.undo.changed(field.shown, ImGui::GetTime());  // an undo or redo is what it already holds
  field.sentence = escapes.unescape(field.shown);
  return true;
}

// Where the sentence field was drawn (the item just drawn), for the tests that click into it.
void note_sentence_field(const AppState& state) {
  const ImVec2 min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
  state.frame.layout.sentence_field = {min.x, min.y, max.x - min.x, max.y - min.y};
}

bool integer_setting(const char* label, const char* help, int& value, int low, int high) {
  int edited = value;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.0f);
  const bool changed = ImGui::InputInt(label, &edited, 1, 8);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", help);
  edited = std::clamp(edited, low, high);
  if (!changed || edited == value) return false;
  value = edited;
  return true;
}

// A field's width: `wanted`, or what the line has left beside its label when the panel is narrow.
float field_width(const char* label, float wanted) {
  const float room = ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(label).x -
                     ImGui::GetStyle().ItemInnerSpacing.x;
  return std::max(ImGui::GetFontSize() * 3.0f, std::min(wanted, room));
}

// Continues the line when an item `width` wide still fits on it, else starts a new one.
void same_line_if_fits(float width) {
  if (fits_after_last_item(width)) ImGui::SameLine();
}

float checkbox_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label).x;
}

class InputPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    if (!state.lesson.active())
      draw_title(state, context);  // in a lesson, the lesson band names it
    // A model's text, read as its tokenizer reads it; the layer and head settings.
    if (const Run& run = state.pipeline().current(); !run.can(Capability::EditableParameters)) {
      draw_model_text(state, context, run);
      ImGui::Spacing();
      draw_model_settings(state, context, run);
      return;
    }
    draw_sentences(state, context);
    ImGui::Spacing();
    draw_settings(state, context);
  }

 private:
  // The scenario's title, bold (the window's title when it is in no file; an untitled scenario's
  // is its sentence, scenario_title); double-click to rename it: Return or a click elsewhere keeps
  // the new one (none: untitled again), Escape the old.
  void draw_title(const AppState& state, PanelContext& context) {
    const Scenario& s = state.document.scenario();
    if (renaming_) {
      if (rename_frames_++ == 0) ImGui::SetKeyboardFocusHere();
      ImGui::SetNextItemWidth(-1);
      ImGui::InputTextWithHint("##title", "a title for this scenario", &title_text_,
                               ImGuiInputTextFlags_AutoSelectAll);
      const bool active = ImGui::IsItemActive();
      if (ImGui::IsItemDeactivated()) {
        renaming_ = false;
        const std::size_t first = title_text_.find_first_not_of(' '),
                          last = title_text_.find_last_not_of(' ');
        const std::string title =
            first == std::string::npos ? "" : title_text_.substr(first, last - first + 1);
        if (!ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)) && title != s.title)
          context.edits.push(edits::set_title(title));
      } else if (!active && rename_frames_ > 4) {
        renaming_ = false;  // never got the keyboard
      }
      return;
    }
    if (context.bold_font) ImGui::PushFont(context.bold_font);
    const std::string title = scenario_title(s);  // an untitled scenario's: its sentence
    if (title.empty())
      ImGui::TextDisabled("Untitled");
    else
      ImGui::TextWrapped("%s", state.frame.visual_text(title));
    if (context.bold_font) ImGui::PopFont();
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
      if (!s.description.empty()) ImGui::TextUnformatted(s.description.c_str());
      ImGui::TextDisabled("Double-click to rename.");
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
      if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        renaming_ = true;
        rename_frames_ = 0;
        title_text_ = s.title;
      }
    }
  }

  // Model mode: which model, the text it reads and its tokens as it reads them.
  void draw_model_text(const AppState& state, PanelContext& context, const Run& run) {
    const Model* trained = run.trained_model();
    const std::string& name = trained ? trained->name
                              : state.document.scenario().model()
                                  ? state.document.scenario().model()->model
                                  : state.document.scenario().title;
    ImGui::TextUnformatted("Model:");
    ImGui::SameLine();
    if (context.bold_font) ImGui::PushFont(context.bold_font);
    ImGui::TextUnformatted(name.c_str());
    if (context.bold_font) ImGui::PopFont();
    if (trained && ImGui::IsItemHovered()) {
      const Model& model = *trained;
      const TransformerConfig& c = model.transformer.config();
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
      ImGui::Text("%s: %d layers, %d heads each", c.architecture.c_str(), c.n_layers, c.n_heads);
      if (c.n_kv_heads != c.n_heads)
        ImGui::Text("grouped-query attention: %d query heads share each key and value head",
                    c.queries_per_kv_head());
      ImGui::Text("d_model %d, d_head %d, vocabulary %d tokens, context %d", c.d_model, c.d_head,
                  c.vocab_size, c.context);
      ImGui::Text("%s parameters",
                  view::format_thousands(model.transformer.parameter_count()).c_str());
      ImGui::TextDisabled("%s (%s)", model.transformer.source().c_str(),
                          model.transformer.format().c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    const bool translates = run.can(Capability::SourceAndTarget);
    text_wrapped_at_spaces(translates ? "Source (the encoder reads it)"
                                      : "Text (the model reads it as the tokens below)",
                           ImGui::GetContentRegionAvail().x);
    ImGui::SetNextItemWidth(-1);
    if (sentence_field("##target", translates ? "type a sentence to translate" : "type a text",
                       state.document.scenario().target, target_field_, context.text_escapes))
      context.edits.push(edits::set_target(target_field_.sentence));
    note_sentence_field(state);
    if (translates && state.document.scenario().model()) draw_translation(state, context, run);
    if (run.can(Capability::SentencePairs) && state.document.scenario().model()) {
      // BERT reads a pair as [CLS] A [SEP] B [SEP]: the second sentence, optional.
      text_wrapped_at_spaces("Second sentence (B), optional", ImGui::GetContentRegionAvail().x);
      ImGui::SetNextItemWidth(-1);
      if (sentence_field("##text_b", "a second sentence", state.document.scenario().model()->text_b,
                         text_b_field_, context.text_escapes))
        context.edits.push(edits::set_text_b(text_b_field_.sentence));
      draw_pair_filter(state, context);
    }
    if (translates) {
      const ModelPart part = state.document.scenario().model()->part;
      ImGui::TextDisabled(part == ModelPart::Encoder ? "source tokens:"
                          : part == ModelPart::Main  ? "translation tokens:"
                                                     : "queries: translation tokens");
    }
    draw_token_chips(state, context, state.pipeline().target(), state.pipeline().target_sources(),
                     Side::Query);
    if (state.pipeline().cross()) {  // a pair filter's other sentence, or the source
      ImGui::TextDisabled(translates ? "keys: source tokens" : "keys:");
      draw_token_chips(state, context, state.pipeline().keys(), state.pipeline().key_sources(),
                       Side::Key);
    }
    // Special tokens (<s>) soak up attention and darken the rest: the views may leave them out.
    const auto& tokens = run.model_tokens();
    const bool has_special =
        std::any_of(tokens.begin(), tokens.end(), [](const ModelToken& t) { return t.special; });
    bool hide =
        state.document.scenario().model() && state.document.scenario().model()->hide_special_tokens;
    if (run.can(Capability::HidesSpecialTokens) && (has_special || hide)) {
      if (ImGui::Checkbox("hide special tokens", &hide))
        context.edits.push(edits::set_hide_special_tokens(hide));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Leave the model's special tokens (%s) out of the attention views: "
            "they take much of the attention and darken the rest. The model still "
            "reads them; a head's output is then shown as the sum over the tokens "
            "shown, and each row's weights no longer add up to 1.",
            special_names(tokens).c_str());
      if (hide) {
        ImGui::SameLine();
        ImGui::TextDisabled("(%zu hidden)", static_cast<std::size_t>(std::count_if(
                                                tokens.begin(), tokens.end(),
                                                [](const ModelToken& t) { return t.special; })));
      }
    }
  }

  // An encoder–decoder: the translation the decoder reads (the model's own, greedy, until one is
  // typed: teacher forcing) and which of its three kinds of attention the views show.
  void draw_translation(const AppState& state, PanelContext& context, const Run& run) {
    const ModelSpec& spec = *state.document.scenario().model();
    text_wrapped_at_spaces(
        spec.decoder_text.empty()
            ? "Translation (the model's own; type one to make the decoder read it)"
            : "Translation (typed: the decoder reads it)",
        ImGui::GetContentRegionAvail().x);
    ImGui::SetNextItemWidth(-1);
    // Empty, the field shows the model's greedy translation in grey.
    const std::string hint =
        run.translation().empty() ? "the model's translation" : run.translation();
    if (sentence_field("##decoder_text", hint.c_str(), spec.decoder_text, decoder_field_,
                       context.text_escapes))
      context.edits.push(edits::set_decoder_text(decoder_field_.sentence));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Empty: the decoder writes its own translation, the likeliest token each step "
          "(greedy), shown in grey. Type one to ask where each of its words looks (teacher "
          "forcing): the decoder then reads your words after its start token.");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Attention");
    struct Choice {
      ModelPart part;
      const char* label;
      const char* tip;
    };
    static constexpr Choice kChoices[] = {
        {ModelPart::Encoder, "Encoder",
         "encoder self-attention: each source token looks at every source token, both ways"},
        {ModelPart::Main, "Decoder",
         "decoder self-attention: each translation token looks at itself and the tokens before "
         "it (causal)"},
        {ModelPart::Cross, "Cross",
         "cross-attention: each translation token (the query) looks at the source's tokens (the "
         "keys and values, from the encoder's output): where the word being written looks"},
    };
    for (const Choice& choice : kChoices) {
      same_line_if_fits(checkbox_width(choice.label));  // a radio button is as wide as a checkbox
      if (ImGui::RadioButton(choice.label, spec.part == choice.part) && spec.part != choice.part)
        context.edits.push(edits::set_model_part(choice.part));
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", choice.tip);
    }
  }

  // With a sentence pair, BertViz's filter: which sentence's tokens ask (the queries) and which
  // sentence's answer (the keys).
  void draw_pair_filter(const AppState& state, PanelContext& context) {
    const ModelSpec& spec = *state.document.scenario().model();
    if (spec.text_b.empty() && spec.pair_filter == PairFilter::All) return;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Attention shown");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    const std::string current(pair_filter_label(spec.pair_filter));
    if (ImGui::BeginCombo("##pair_filter", current.c_str())) {
      for (const PairFilter filter : kPairFilters) {
        const std::string label(pair_filter_label(filter));
        if (ImGui::Selectable(label.c_str(), filter == spec.pair_filter) &&
            filter != spec.pair_filter)
          context.edits.push(edits::set_pair_filter(filter));
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Which attention the views show. A \u2192 B: the rows are sentence A's tokens "
          "([CLS] and the first [SEP] with them), the columns sentence B's: how much each word "
          "of A looks at the words of B. The model still reads the whole pair; a row's weights "
          "then add up to the share that goes to the sentence shown.");
  }

  // Model mode: the layer and head the views show, and what is done to that head.
  void draw_model_settings(const AppState& state, PanelContext& context, const Run& run) {
    if (!ImGui::CollapsingHeader("Layer and head", ImGuiTreeNodeFlags_DefaultOpen)) return;
    draw_head_selector(state, context, "##input_head");
    if (!run.can(Capability::HeadInterventions) || !state.document.scenario().model()) return;
    const int layer = state.selection.layer, head = state.selection.head;
    const ModelSpec& spec = *state.document.scenario().model();
    HeadIntervention change = spec.intervention(layer, head);
    bool knocked_out = change.ablated();
    if (ImGui::Checkbox("knock out", &knocked_out)) {
      change.output_scale = knocked_out ? 0.0f : 1.0f;
      context.edits.push(edits::set_head_intervention(layer, head, change));
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Ablate the head: its output is multiplied by 0, so every later layer and "
          "the prediction go on without it (Ctrl+K)");
    same_line_if_fits(ImGui::GetFontSize() * 11.0f);
    float scale = change.output_scale;
    ImGui::SetNextItemWidth(field_width("scale", ImGui::GetFontSize() * 7.0f));
    if (ImGui::SliderFloat("scale", &scale, 0.0f, 3.0f, "%.2f")) {
      change.output_scale = std::isfinite(scale) ? std::clamp(scale, -1000.0f, 1000.0f) : 1.0f;
      context.edits.push(edits::set_head_intervention(layer, head, change));
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Multiplies the head's output before W_O (1: as trained; 0: knocked out)");
    static constexpr const char* kPatterns[] = {"as computed", "uniform", "previous token"};
    int pattern = static_cast<int>(change.pattern);
    ImGui::SetNextItemWidth(field_width("pattern", ImGui::GetFontSize() * 9.0f));
    if (ImGui::Combo("pattern", &pattern, kPatterns, IM_ARRAYSIZE(kPatterns))) {
      change.pattern = static_cast<HeadIntervention::Pattern>(pattern);
      context.edits.push(edits::set_head_intervention(layer, head, change));
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "The head's attention: the softmax of its scores as trained, every visible "
          "token alike, or all of it on the token before");
    const std::size_t changed = spec.interventions.size();
    if (changed > 0) {
      ImGui::TextDisabled("%zu head%s changed", changed, changed == 1 ? "" : "s");
      ImGui::SameLine();
      if (ImGui::SmallButton("Restore every head"))
        context.edits.push(edits::clear_interventions());
    }
  }

  void draw_sentences(const AppState& state, PanelContext& context) {
    const Scenario& s = state.document.scenario();
    int mode = s.one_layer().mode == Mode::Cross ? 1 : 0;
    ImGui::TextUnformatted("Attention:");
    ImGui::SameLine();
    bool mode_changed = ImGui::RadioButton("Self", &mode, 0);
    same_line_if_fits(checkbox_width("Cross"));  // a radio button is as wide as a checkbox
    mode_changed |= ImGui::RadioButton("Cross", &mode, 1);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Cross: queries from the target sentence, keys and values from the source");
    if (mode_changed) context.edits.push(edits::set_mode(mode == 1 ? Mode::Cross : Mode::Self));

    text_wrapped_at_spaces(
        s.one_layer().mode == Mode::Cross ? "Target sentence (queries)" : "Sentence",
        ImGui::GetContentRegionAvail().x);
    ImGui::SetNextItemWidth(-1);
    // An edit is computed at once, so the chips below show the tokens of what was just typed.
    if (sentence_field("##target", "type a sentence", s.target, target_field_,
                       context.text_escapes))
      context.edits.push(edits::set_target(target_field_.sentence));
    note_sentence_field(state);
    draw_token_chips(state, context, state.pipeline().target(), state.pipeline().target_sources(),
                     Side::Query);
    draw_random_features_note(state, state.pipeline().target().tokens,
                              state.pipeline().target_sources(), "input.target_random_features");
    if (s.one_layer().mode == Mode::Cross) {
      text_wrapped_at_spaces("Source sentence (keys and values)", ImGui::GetContentRegionAvail().x);
      ImGui::SetNextItemWidth(-1);
      if (sentence_field("##source", "type the source sentence", s.one_layer().source,
                         source_field_, context.text_escapes))
        context.edits.push(edits::set_source(source_field_.sentence));
      if (state.pipeline().cross()) {
        draw_token_chips(state, context, state.pipeline().keys(), state.pipeline().key_sources(),
                         Side::Key);
        draw_random_features_note(state, state.pipeline().keys().tokens,
                                  state.pipeline().key_sources(), "input.source_random_features");
      }
    }
  }

  // Under a sentence of the one-layer model: which of its words have random features (the
  // teaching lexicon does not know them), so that a class does not read meaning into their
  // weights. Said to the tests as `value` (the note, "" when there is none).
  static void draw_random_features_note(const AppState& state, const std::vector<Token>& tokens,
                                        const std::vector<EmbeddingSource>& sources,
                                        const char* value) {
    const std::string note = random_features_note(tokens, sources);
    state.frame.values.set(value, note);
    if (note.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, palette(state.ui.theme).highlight);
    text_wrapped_at_spaces(note, ImGui::GetContentRegionAvail().x);
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "A word the teaching lexicon does not know gets a fixed vector made from its letters:\n"
          "no feature (person, food, ...) to match. Use words the lexicon knows, or give these\n"
          "words an embedding in the Weights panel (X).");
  }

  // Grouped-query attention: how many key/value heads the heads share, from the divisors of
  // heads (all of them: multi-head; one: multi-query). True when it changed.
  static bool kv_groups_setting(AttentionConfig& config) {
    const int groups = kv_group_count(config);
    char current[40];
    const auto label = [&](int g, char* buffer, std::size_t size) {
      std::snprintf(buffer, size, "%d%s", g,
                    g == config.heads ? " (multi-head)"
                    : g == 1          ? " (multi-query)"
                                      : "");
    };
    label(groups, current, sizeof current);
    bool changed = false;
    ImGui::SetNextItemWidth(field_width("kv groups", ImGui::GetFontSize() * 9.0f));
    if (ImGui::BeginCombo("kv groups", current)) {
      for (int g = config.heads; g >= 1; --g) {
        if (config.heads % g != 0) continue;
        char option[40];
        label(g, option, sizeof option);
        if (ImGui::Selectable(option, g == groups) && g != groups) {
          config.kv_groups = g == config.heads ? 0 : g;
          changed = true;
        }
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24.0f);
      ImGui::TextUnformatted(
          "Key/value heads (grouped-query attention): the heads of a group share one W_K and "
          "W_V, so one key and one value per token. Fewer groups: fewer weights, and a smaller "
          "K/V cache when a model decodes. 1 group is multi-query attention.");
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    return changed;
  }

  void draw_settings(const AppState& state, PanelContext& context) {
    const Scenario& s = state.document.scenario();
    if (!ImGui::CollapsingHeader("Settings", ImGuiTreeNodeFlags_DefaultOpen)) return;
    AttentionConfig config = s.one_layer().config;
    bool shape_changed = false;
    shape_changed |= integer_setting("d_model", "width of each token's embedding", config.d_model,
                                     1, Limits::kMaxDModel);
    // The heads side by side may be at most Limits::kMaxHeadsWidth wide: each bound follows the
    // others.
    const int widest = std::max(config.d_k, config.d_v);
    shape_changed |=
        integer_setting("heads", "number of attention heads", config.heads, 1,
                        std::clamp(Limits::kMaxHeadsWidth / widest, 1, Limits::kMaxHeads));
    if (config.heads > 1) shape_changed |= kv_groups_setting(config);
    const int head_width = std::min(Limits::kMaxHeadDim, Limits::kMaxHeadsWidth / config.heads);
    shape_changed |=
        integer_setting("d_k", "width of queries and keys, per head", config.d_k, 1, head_width);
    shape_changed |= integer_setting("d_v", "width of values, per head", config.d_v, 1, head_width);

    static constexpr const char* kCompatibilityLabels[] = {
        "dot  q\xc2\xb7k",
        ("scaled dot  q\xc2\xb7k/\xe2\x88\x9a"
         "d_k"),  // (the \x escape must end before the d)
        "general  q\xc2\xb7W\xe2\x82\x90\xc2\xb7k",
        "additive  v\xc2\xb7tanh(qW\xe2\x82\x81+kW\xe2\x82\x82)", "cosine"};
    int compatibility = static_cast<int>(config.compatibility);
    ImGui::SetNextItemWidth(field_width("score", ImGui::GetFontSize() * 12.0f));
    if (ImGui::Combo("score", &compatibility, kCompatibilityLabels,
                     IM_ARRAYSIZE(kCompatibilityLabels))) {
      config.compatibility = static_cast<Compatibility>(compatibility);
      shape_changed = true;
    }
    if (config.compatibility == Compatibility::Additive)
      shape_changed |= integer_setting("d_att", "hidden width of the additive scorer", config.d_att,
                                       1, Limits::kMaxHeadDim);

    // The number beside the slider, not in it: at T = 1, the middle of its logarithmic range, the
    // slider's handle sat on the number.
    {
      const std::string number = view::format_significant(config.temperature, 2);
      const float spacing = ImGui::GetStyle().ItemInnerSpacing.x;
      const float number_w =
          std::max(ImGui::CalcTextSize("20.00").x, ImGui::CalcTextSize(number.c_str()).x);
      ImGui::SetNextItemWidth(
          std::max(ImGui::GetFontSize() * 3.0f,
                   field_width("temperature", ImGui::GetFontSize() * 12.0f) - number_w - spacing));
      if (ImGui::SliderFloat("##temperature", &config.temperature, 0.05f, 20.0f, "",
                             ImGuiSliderFlags_Logarithmic)) {
        config.temperature = std::clamp(std::round(config.temperature * 100.0f) / 100.0f,
                                        Limits::kMinTemperature, Limits::kMaxTemperature);
        shape_changed = true;
      }
      const bool hovered = ImGui::IsItemHovered();
      ImGui::SameLine(0, spacing);
      ImGui::TextUnformatted(number.c_str());
      ImGui::SameLine(0, spacing);
      ImGui::TextUnformatted("temperature");
      if (hovered || ImGui::IsItemHovered())
        ImGui::SetTooltip("the scores are divided by T before the softmax");
    }
    shape_changed |= ImGui::Checkbox("hard (argmax)", &config.hard);
    same_line_if_fits(checkbox_width("causal mask"));
    // Cross mode has no causal mask (core/document/scenario.hpp, kCausalOffInCross): the box is
    // unavailable there, and says why.
    const bool cross = s.one_layer().mode == Mode::Cross;
    if (cross) ImGui::BeginDisabled();
    shape_changed |= ImGui::Checkbox("causal mask", &config.causal);
    if (cross) ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24.0f);
      ImGui::TextUnformatted(cross ? "No causal mask in cross-attention: a decoder hides the later "
                                     "words of its own sentence, but the source is written whole "
                                     "before the first query."
                                   : "Each word attends only to itself and the words before it.");
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    draw_mask_pattern_controls(state, context);
    bool positional = s.one_layer().positional == Positional::Sinusoidal;
    if (ImGui::Checkbox("sinusoidal positions", &positional))
      context.edits.push(
          edits::set_positional(positional ? Positional::Sinusoidal : Positional::None));
    if (shape_changed && !(config == s.one_layer().config))
      context.edits.push(edits::set_config(config));

    const float button_w =
        ImGui::CalcTextSize("Draw weights").x + ImGui::GetStyle().FramePadding.x * 2.0f;
    const float beside_button = ImGui::GetContentRegionAvail().x - button_w -
                                ImGui::GetStyle().ItemSpacing.x - ImGui::CalcTextSize("seed").x -
                                ImGui::GetStyle().ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 5.0f,
                                     std::min(ImGui::GetFontSize() * 7.0f, beside_button)));
    std::uint64_t seed = s.one_layer().seed;
    if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed))
      context.edits.push(edits::set_seed(seed));
    same_line_if_fits(button_w);
    if (ImGui::Button("Draw weights")) context.edits.push(edits::draw_weights());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("replace every weight by values drawn from the seed");
  }

  SentenceField target_field_, source_field_, text_b_field_, decoder_field_;
  bool renaming_ = false;  // the title is being typed
  int rename_frames_ = 0;
  std::string title_text_;
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Input, InputPanel);

}  // namespace attnviz::app
