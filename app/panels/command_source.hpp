// The app's commands as the panels see them: by id, from the one table the menus, the shortcuts,
// the context menus and the F1 list read (app/shell/command_table.hpp). A panel's context menu
// offers a command through command_menu_item (app/panels/widgets.hpp): its label, its keys,
// whether it may run now, and what it does, each written once in the table.
#pragma once

#include <string>
#include <string_view>

namespace attnviz::app {

class CommandSource {
 public:
  virtual ~CommandSource() = default;
  // Each is "" or false for an id the table does not have.
  virtual std::string label(std::string_view id) const = 0;  // as it is now: "Undo knock out …"
  virtual const char* keys(std::string_view id) const = 0;   // "Ctrl+K"; "" for none
  virtual bool enabled(std::string_view id) const = 0;
  virtual bool checked(std::string_view id) const = 0;
  virtual void run(std::string_view id) = 0;  // when enabled
};

}  // namespace attnviz::app
