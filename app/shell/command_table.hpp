// Every command a user may ask for by name, one row each: its id, its label, its keys, whether it
// may run now, and what it does (a method of Commands, app/shell/commands.hpp). The menus
// (main_menu.cpp), the keyboard (keyboard.cpp), the panels' context menus (through
// CommandSource, app/panels/command_source.hpp) and the F1 list (help_window.cpp, where a click
// on a row runs it) all read this table: "knock out a head" is written once.
#pragma once

#include "app/panels/command_source.hpp"
#include "app/platform/keys.hpp"
#include "app/shell/commands.hpp"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::app {

// A key that runs a command: with Ctrl or not, Shift as it says, and whether a held key repeats.
struct KeyChord {
  platform::Key key;
  bool ctrl = false;
  enum class Shift { Any, Up, Down } shift = Shift::Any;
  bool repeats = false;
};

struct CommandInfo {
  std::string_view id = {};  // "file.save"
  const char* label = "";    // the menu item's: "Save"
  // The label as it is now, where it names what the command will do ("Undo knock out layer 2,
  // head 3"); null: `label`.
  std::function<std::string(const Shell&)> label_now = nullptr;
  const char* keys = "";  // as shown in menus and the F1 list: "Ctrl+S"; "" for none
  const char* help = "";  // the F1 list's words; "" to leave it out of the list
  std::vector<KeyChord> chords = {};
  // The shortcut still works while a text field has the keys (it has no meaning there); while
  // the unsaved-changes question is asked (only quitting).
  bool while_typing = true;
  bool while_asking = false;
  bool in_browser = true;  // the page keeps Ctrl+N (a new window); there is nothing to quit
  std::function<bool(const Shell&)> enabled = nullptr;  // null: always
  std::function<bool(const Shell&)> checked = nullptr;  // null: not a setting on or off
  std::function<void(Commands&)> run = nullptr;
};

// In the order the F1 list shows them.
std::span<const CommandInfo> command_table();
const CommandInfo* find_command(std::string_view id);

// The table bound to a shell and its commands: what the panels and the menus ask.
class CommandRunner final : public CommandSource {
 public:
  CommandRunner(Shell& shell, Commands& commands) : shell_(shell), commands_(commands) {}
  std::string label(std::string_view id) const override;
  const char* keys(std::string_view id) const override;
  bool enabled(std::string_view id) const override;
  bool checked(std::string_view id) const override;
  void run(std::string_view id) override;
  void save_with_dialog(SaveRequest request) override;
  // Every command whose chord was pressed this frame (and that may run now).
  void run_shortcuts();
  bool offered(const CommandInfo& command) const;  // in this build (the browser keeps some)

 private:
  Shell& shell_;
  Commands& commands_;
};

}  // namespace attnviz::app
