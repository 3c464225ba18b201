#include "app/shell/command_table.hpp"

#include "app/platform/platform.hpp"

#include <imgui.h>

namespace attnviz::app {

namespace {

using platform::Key;
using Shift = KeyChord::Shift;

std::vector<CommandInfo> make_table() {
  std::vector<CommandInfo> table;
  const auto add = [&](CommandInfo info) { table.push_back(std::move(info)); };
  // Files. (In a page the browser keeps Ctrl+N: a new window.)
  add({.id = "file.new",
       .label = "New (the built-in scenario)",
       .keys = "Ctrl+N",
       .help = "new: the built-in scenario",
       .chords = {{Key::N, true}},
       .in_browser = false,
       .run = [](Commands& c) { c.new_scenario(); }});
  add({.id = "file.open",
       .label = "Open\xe2\x80\xa6",
       .keys = "Ctrl+O",
       .help = "open a scenario",
       .chords = {{Key::O, true}},
       .run = [](Commands& c) { c.open(); }});
  add({.id = "file.save",
       .label = "Save",
       .keys = "Ctrl+S",
       .help = "save (Save as the first time)",
       .chords = {{Key::S, true, Shift::Up}},
       .run = [](Commands& c) { c.save(); }});
  add({.id = "file.save_as",
       .label = "Save as\xe2\x80\xa6",
       .keys = "Ctrl+Shift+S",
       .help = "save as",
       .chords = {{Key::S, true, Shift::Down}},
       .run = [](Commands& c) { c.save_as(); }});
  // Exports (File > Export), each asking for a file.
  add({.id = "export.window_png",
       .label = "Window as PNG\xe2\x80\xa6",
       .help = "export the window as a PNG picture",
       .run = [](Commands& c) { c.export_png({}); }});
  const auto exported = [&](std::string_view id, const char* label, const char* help,
                            ExportFormat format) {
    add({.id = id, .label = label, .help = help, .run = [format](Commands& c) {
           c.export_file(format);
         }});
  };
  exported("export.heatmap_svg", "Heatmap of the selected head as SVG\xe2\x80\xa6",
           "export the selected head's heatmap as SVG", ExportFormat::HeatmapSvg);
  exported("export.arrows_svg", "Arrows of the selected head as SVG\xe2\x80\xa6",
           "export the selected head's arrows as SVG", ExportFormat::ArrowsSvg);
  exported("export.all_arrows_svg", "Arrows of all heads as SVG\xe2\x80\xa6",
           "export every head's arrows as SVG", ExportFormat::AllHeadsArrowsSvg);
  exported("export.csv", "Every matrix as CSV files\xe2\x80\xa6",
           "export every matrix as CSV files, into a folder", ExportFormat::MatricesCsv);
  exported("export.json", "Every matrix as JSON\xe2\x80\xa6", "export every matrix as JSON",
           ExportFormat::ResultJson);
  // Edits: a text field has its own undo.
  add({.id = "edit.undo",
       .label = "Undo",
       .label_now =
           [](const Shell& s) {
             const std::string what = s.history.undo_label(s.state);
             return what.empty() ? std::string("Undo") : "Undo " + what;
           },
       .keys = "Ctrl+Z",
       .help = "undo (a whole drag or burst of typing is one step)",
       .chords = {{Key::Z, true, Shift::Up, true}},
       .while_typing = false,
       .enabled = [](const Shell& s) { return s.history.can_undo(s.state); },
       .run = [](Commands& c) { c.undo(); }});
  add({.id = "edit.redo",
       .label = "Redo",
       .label_now =
           [](const Shell& s) {
             const std::string what = s.history.redo_label();
             return what.empty() ? std::string("Redo") : "Redo " + what;
           },
       .keys = "Ctrl+Shift+Z",
       .help = "redo (also Ctrl+Y)",
       .chords = {{Key::Z, true, Shift::Down, true}, {Key::Y, true, Shift::Any, true}},
       .while_typing = false,
       .enabled = [](const Shell& s) { return s.history.can_redo(); },
       .run = [](Commands& c) { c.redo(); }});
  // The text size, as in a browser: Ctrl+= or Ctrl++ larger, Ctrl+- smaller, Ctrl+0 the size
  // that suits the window.
  add({.id = "view.larger_text",
       .label = "Larger text",
       .keys = "Ctrl+=",
       .help = "larger text",
       .chords = {{Key::Equal, true, Shift::Any, true}, {Key::KeypadAdd, true, Shift::Any, true}},
       .run = [](Commands& c) { c.larger_text(); }});
  add({.id = "view.smaller_text",
       .label = "Smaller text",
       .keys = "Ctrl+-",
       .help = "smaller text",
       .chords = {{Key::Minus, true, Shift::Any, true},
                  {Key::KeypadSubtract, true, Shift::Any, true}},
       .run = [](Commands& c) { c.smaller_text(); }});
  add({.id = "view.suited_text",
       .label = "Text size that suits the window",
       .keys = "Ctrl+0",
       .help = "the text size that suits the window (and follows it as it is resized)",
       .chords = {{Key::Zero, true}},
       .checked = [](const Shell& s) { return !s.state.ui.font_size_chosen; },
       .run = [](Commands& c) { c.reset_text_size(); }});
  // Presenting. Page Down / Page Up: what most presentation clickers send (keyboard.cpp adds
  // the arrow keys in presenter mode).
  add({.id = "view.presenter",
       .label = "Presenter mode",
       .keys = "F5",
       .help = "presenter mode: one view fills the window, in large text",
       .chords = {{Key::F5}},
       .checked = [](const Shell& s) { return s.state.ui.presenter; },
       .run = [](Commands& c) { c.toggle_presenter(); }});
  add({.id = "view.fullscreen",
       .label = "Full screen",
       .keys = "F11",
       .help = "full screen",
       .chords = {{Key::F11}},
       .checked = [](const Shell& s) { return s.backend.fullscreen(); },
       .run = [](Commands& c) { c.toggle_fullscreen(); }});
  add({.id = "present.next",
       .label = "Next step",
       .keys = "Page Down",
       .help = "the lesson's next step (else the next query)",
       .chords = {{Key::PageDown}},
       .while_typing = false,
       .run = [](Commands& c) { c.step_presentation(+1); }});
  add({.id = "present.previous",
       .label = "Previous step",
       .keys = "Page Up",
       .help = "the lesson's previous step (else the previous query)",
       .chords = {{Key::PageUp}},
       .while_typing = false,
       .run = [](Commands& c) { c.step_presentation(-1); }});
  // Models: what is done to the selected head of the selected layer.
  const auto can_change = [](const Shell& s) {
    return s.state.document.scenario().has_model() &&
           s.state.pipeline().can(Capability::HeadInterventions);
  };
  const auto selected_head = [](const Shell& s) {
    const auto& model = s.state.document.scenario().model();
    return model ? model->intervention(s.state.selection.layer, s.state.selection.head)
                 : HeadIntervention{};
  };
  add({.id = "model.knock_out",
       .label = "Knock out the selected head",
       .keys = "Ctrl+K",
       .help = "a real model: knock out the selected head, or restore it",
       .chords = {{Key::K, true}},
       .enabled = can_change,
       .checked = [=](const Shell& s) { return selected_head(s).ablated(); },
       .run = [](Commands& c) { c.toggle_knock_out(); }});
  add({.id = "model.uniform_attention",
       .label = "Uniform attention",
       .help = "a real model: the selected head attends to every key alike",
       .enabled = can_change,
       .checked =
           [=](const Shell& s) {
             return selected_head(s).pattern == HeadIntervention::Pattern::Uniform;
           },
       .run = [](Commands& c) { c.set_head_pattern(HeadIntervention::Pattern::Uniform); }});
  add({.id = "model.previous_token",
       .label = "All on the previous token",
       .help = "a real model: the selected head attends to the previous token only (not a "
               "cross-attention head: its keys are the source, not the tokens before it)",
       .enabled =
           [=](const Shell& s) {
             const auto& model = s.state.document.scenario().model();
             return can_change(s) && model && model->part != ModelPart::Cross;
           },
       .checked =
           [=](const Shell& s) {
             return selected_head(s).pattern == HeadIntervention::Pattern::PreviousToken;
           },
       .run = [](Commands& c) { c.set_head_pattern(HeadIntervention::Pattern::PreviousToken); }});
  add({.id = "model.as_trained",
       .label = "As trained",
       .help = "a real model: the selected head as trained",
       .enabled = can_change,
       .checked = [=](const Shell& s) { return !selected_head(s).changes_anything(); },
       .run = [](Commands& c) { c.restore_head(); }});
  add({.id = "model.clear_before",
       .label = "Clear the before and after",
       .help = "a real model: forget the prediction and attention kept from before its heads "
               "or weights were changed",
       .enabled = [](const Shell& s) { return s.state.computed.before.held; },
       .run = [](Commands& c) { c.clear_before(); }});
  add({.id = "model.open", .label = "Open a model\xe2\x80\xa6", .run = [](Commands& c) {
         c.open_model();
       }});
  add({.id = "model.leave",
       .label = "Back to the one-layer scenario",
       .enabled = [](const Shell& s) { return s.state.document.scenario().has_model(); },
       .run = [](Commands& c) { c.leave_model(); }});
  add({.id = "lesson.leave",
       .label = "Leave the lesson",
       .enabled = [](const Shell& s) { return s.state.lesson.active(); },
       .run = [](Commands& c) { c.leave_lesson(); }});
  add({.id = "lesson.restart_step",
       .label = "Back to the step as it began",
       .enabled = [](const Shell& s) { return s.state.lesson.active(); },
       .run = [](Commands& c) { c.restart_lesson_step(); }});
  // The app. (A page is closed as a page: nothing to quit.)
  add({.id = "app.quit",
       .label = "Quit",
       .keys = "Ctrl+Q",
       .help = "quit",
       .chords = {{Key::Q, true}},
       .while_asking = true,
       .in_browser = false,
       .run = [](Commands& c) { c.quit(); }});
  add({.id = "help.guide",
       .label = "User guide",
       .keys = "Shift+F1",
       .help = "the user guide, section by section",
       .chords = {{Key::F1, false, KeyChord::Shift::Down}},
       .checked = [](const Shell& s) { return s.show_guide; },
       .run = [](Commands& c) { c.toggle_guide(); }});
  add({.id = "help.welcome",
       .label = "Welcome",
       .help = "the first screen: start lesson 1, open a real model, or explore",
       .run = [](Commands& c) { c.show_welcome(); }});
  add({.id = "help.shortcuts",
       .label = "Keyboard shortcuts",
       .keys = "F1",
       .help = "this list",
       .chords = {{Key::F1, false, KeyChord::Shift::Up}},
       .checked = [](const Shell& s) { return s.show_shortcuts; },
       .run = [](Commands& c) { c.toggle_shortcuts(); }});
  return table;
}

bool chord_pressed(const KeyChord& chord) {
  const ImGuiIO& io = ImGui::GetIO();
  if (chord.ctrl != io.KeyCtrl) return false;
  if (!chord.ctrl && io.KeyAlt) return false;
  if (chord.shift == Shift::Up && io.KeyShift) return false;
  if (chord.shift == Shift::Down && !io.KeyShift) return false;
  return platform::key_pressed(chord.key, chord.repeats);
}

}  // namespace

std::span<const CommandInfo> command_table() {
  static const std::vector<CommandInfo> table = make_table();
  return table;
}

const CommandInfo* find_command(std::string_view id) {
  for (const CommandInfo& command : command_table())
    if (command.id == id) return &command;
  return nullptr;
}

bool CommandRunner::offered(const CommandInfo& command) const {
  return command.in_browser || !platform::kBrowser;
}

std::string CommandRunner::label(std::string_view id) const {
  const CommandInfo* command = find_command(id);
  if (!command) return {};
  return command->label_now ? command->label_now(shell_) : command->label;
}

const char* CommandRunner::keys(std::string_view id) const {
  const CommandInfo* command = find_command(id);
  return command && offered(*command) ? command->keys : "";
}

bool CommandRunner::enabled(std::string_view id) const {
  const CommandInfo* command = find_command(id);
  return command && (!command->enabled || command->enabled(shell_));
}

bool CommandRunner::checked(std::string_view id) const {
  const CommandInfo* command = find_command(id);
  return command && command->checked && command->checked(shell_);
}

void CommandRunner::run(std::string_view id) {
  const CommandInfo* command = find_command(id);
  if (command && enabled(id)) command->run(commands_);
}

void CommandRunner::save_with_dialog(SaveRequest request) {
  commands_.save_with_dialog(std::move(request));
}

void CommandRunner::run_shortcuts() {
  const ImGuiIO& io = ImGui::GetIO();
  const bool asking = shell_.unsaved_guard.asking();
  for (const CommandInfo& command : command_table()) {
    if (command.chords.empty() || !offered(command)) continue;
    if (asking && !command.while_asking) continue;  // the question is answered first
    if (io.WantTextInput && !command.while_typing) continue;
    for (const KeyChord& chord : command.chords)
      if (chord_pressed(chord)) {
        run(command.id);
        break;
      }
  }
}

}  // namespace attnviz::app
