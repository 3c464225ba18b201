// Fonts and the theme, loaded between frames when what they depend on changed: the text size,
// the picture's scale, characters the fonts lack (a Chinese sentence), emoji typed or loaded.
#include <imgui.h>

#include <span>

#include "app/panels/theme.hpp"
#include "app/shell/shell.hpp"
#include "app/view/text_escapes.hpp"

namespace attnviz::app {

void apply_theme_and_fonts(Shell& shell) {
  AppState& state = shell.state;
  FontState& fonts = shell.fonts;
  platform::Backend& backend = shell.backend;
  // Characters the fonts lack (a Chinese sentence, say) are added from a fallback font.
  const Scenario& s = state.document.scenario();
  if (state.document.version() != fonts.checked_version &&
      (s.target != fonts.checked[0] || s.one_layer().source != fonts.checked[1] ||
       s.title != fonts.checked[2])) {
    fonts.checked[0] = s.target;
    fonts.checked[1] = s.one_layer().source;
    fonts.checked[2] = s.title;
    bool added = false;
    for (const std::string& text : fonts.checked) {
      added = backend.add_characters(text) || added;
      if (view::TextEscapes::may_need_stand_ins(text))
        state.frame.visual_text.escapes().escape(
            text);  // gives its emoji stand-ins, drawn from the first frame
    }
    if (added) fonts.loaded_size = 0;  // reload below
  }
  // Characters past U+FFFF (emoji) are drawn as their stand-ins' glyphs: one for each new one.
  if (state.frame.visual_text.escapes().wide_count() != backend.wide_character_count()) {
    backend.set_wide_characters(state.frame.visual_text.escapes().wide_characters());
    fonts.loaded_size = 0;
  }
  fonts.checked_version = state.document.version();
  if (backend.take_fonts_changed()) fonts.loaded_size = 0;
  // Fonts can only be rebuilt between frames.
  if (state.ui.text_size() != fonts.loaded_size || fonts.detail != fonts.loaded_detail) {
    const Status loaded = backend.load_fonts(state.ui.text_size(), fonts.detail);
    fonts.error = loaded.message();
    fonts.loaded_size = state.ui.text_size();
    fonts.loaded_detail = fonts.detail;
    fonts.theme_ever_applied = false;  // sizes in the style scale with the font
  }
  if (!fonts.theme_ever_applied || fonts.theme_applied != state.ui.theme) {
    apply_theme(state.ui.theme, backend.content_scale() * state.ui.text_size() / 16.0f);
    fonts.theme_applied = state.ui.theme;
    fonts.theme_ever_applied = true;
  }
}

// ImGui queued each typed character past U+FFFF (an emoji) as U+FFFD: it leaves the queue, and
// the text field being typed into inserts its stand-in instead (app/view/text_escapes.hpp; ImGui
// would drop a private-use character typed), which the field turns back into it.
void stand_in_for_wide_characters(Shell& shell) {
  static_assert(sizeof(ImWchar) == sizeof(std::uint16_t), "Debian's ImGui 1.86: 16-bit characters");
  ImVector<ImWchar>& queue = ImGui::GetIO().InputQueueCharacters;
  const std::size_t kept = shell.state.frame.visual_text.escapes().take_from_queue(
      std::span(reinterpret_cast<std::uint16_t*>(queue.Data), static_cast<std::size_t>(queue.Size)),
      shell.backend.typed_characters());
  queue.resize(static_cast<int>(kept));
}

}  // namespace attnviz::app
