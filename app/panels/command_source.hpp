// The app's commands as the panels see them: by id, from the one table the menus, the shortcuts,
// the context menus and the F1 list read (app/shell/command_table.hpp). A panel's context menu
// offers a command through command_menu_item (app/panels/widgets.hpp): its label, its keys,
// whether it may run now, and what it does, each written once in the table. What a panel makes
// and writes (a trained model) is saved through save_with_dialog: the commands ask where.
#pragma once

#include "core/base/status.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace attnviz::app {

// Something a panel writes, and where to ask for its place.
struct SaveRequest {
  std::string title;         // the dialog's: "Save the trained model as a folder"
  std::string name;          // proposed: "induction-seed1-step800"
  std::string extension;     // appended when missing; "" names a folder
  std::string start_folder;  // "": where the dialog was last
  // Writes to the path chosen; an error is shown, and nothing is left half-written.
  std::function<Status(const std::string& path)> write;
  std::string done;  // the status bar's news before the path: "saved the model into "
};

class CommandSource {
 public:
  virtual ~CommandSource() = default;
  // Each is "" or false for an id the table does not have.
  virtual std::string label(std::string_view id) const = 0;  // as it is now: "Undo knock out …"
  virtual const char* keys(std::string_view id) const = 0;   // "Ctrl+K"; "" for none
  virtual bool enabled(std::string_view id) const = 0;
  virtual bool checked(std::string_view id) const = 0;
  virtual void run(std::string_view id) = 0;  // when enabled
  // Asks where (the app's file dialog; the browser: under the proposed name in its files, then
  // downloaded, a folder as one ZIP), then writes, and reports the outcome in the status bar.
  virtual void save_with_dialog(SaveRequest request) = 0;
};

}  // namespace attnviz::app
