// The one seam for what a user asks of the app as a whole: the menus, the keyboard shortcuts,
// the status bar's buttons and files dropped on the window all call these, and nothing else
// opens the file dialog, replaces the scenario or writes a file. A command that would replace
// unsaved edits asks first (app/session/unsaved_guard.hpp); its outcome is reported in the
// status bar (app/session/notices.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "app/panels/command_source.hpp"
#include "app/shell/shell.hpp"

namespace attnviz::app {

// What File > Export writes (besides PNG pictures).
enum class ExportFormat { HeatmapSvg, ArrowsSvg, AllHeadsArrowsSvg, MatricesCsv, ResultJson };

// A built-in lesson by name or number, else a lesson file.
Result<Lesson> load_lesson(const std::string& name);

class Commands {
 public:
  explicit Commands(Shell& shell) : shell_(shell) {}

  // Files.
  void new_scenario();                              // the built-in scenario
  void open();                                      // asks for a file
  void open_file(const std::string& path);          // Open recent, the file dialog's answer
  void open_dropped_file(const std::string& path);  // a scenario or a lesson
  void save();                            // into its file; Save as the first time, and in a lesson
  void save_as();                         // asks for a file
  void export_file(ExportFormat format);  // asks for a file
  void export_png(const view::Rect& crop);     // asks for a file; crop empty: the whole window
  void save_with_dialog(SaveRequest request);  // a panel's (a trained model): asks for a place
  void clear_recent_files();

  // Models (model mode).
  void open_model();                                       // asks for a model's folder or file
  void open_model_named(const std::string& path_or_name);  // a shipped model, a dropped folder
  void leave_model();                                      // back to the one-layer scenario
  void toggle_knock_out();  // the selected head of the selected layer (Ctrl+K)
  // The selected head's attention set by hand (uniform, all on the previous token), or as the
  // model computes it; as trained: every change to the head taken back.
  void set_head_pattern(HeadIntervention::Pattern pattern);
  void restore_head();
  // Forgets the model as it was before the changes (the before-and-after views show it until then).
  void clear_before();

  // Edits.
  void undo();
  void redo();

  // An earlier run's unsaved work (the status bar's offer, --recover).
  void restore_recovered(Autosave::Recovered recovered);
  void restore_offered();  // the offer's Restore: asks about edits made meanwhile first
  void discard_offered();
  void offer_next_recovery();  // the oldest earlier run's work still unanswered, if any

  // Lessons.
  void start_lesson(const std::string& id, const std::string& title);  // a built-in one
  void leave_lesson();
  void restart_lesson_step();  // the step as it began, the student's changes gone

  // The window.
  void quit();  // asks first when unsaved edits would be lost (as new and open do)
  void larger_text();
  void smaller_text();
  void reset_text_size();          // the size that suits the window, and follow its size again
  void set_text_size(float size);  // chosen: it no longer follows the window
  void follow_window_size();       // every frame: the text size, unless one was chosen
  void toggle_shortcuts();
  void toggle_guide();  // the user guide (help_window.cpp)
  void show_welcome();  // the first screen again (welcome_window.cpp)
  // The welcome closed: never shown again at start (a file in the state folder remembers it).
  void dismiss_welcome();
  float largest_text_size() const;  // for this window (app/view/layout.hpp)

  // Presenter mode (F5): one view fills the window; F11 full screen; Escape leaves.
  void toggle_presenter();
  void leave_presenter();
  void toggle_fullscreen();
  // A presentation clicker's next (+1) or previous (-1): the lesson's step, else the query.
  void step_presentation(int direction);

  // The unsaved-changes question's "Save first"; while the Save As it opened is open, true (and
  // when that dialog closed without saving, the question's replacement is cancelled).
  void save_first();
  bool saving_first();
  // Files dropped on the window (or picked in the browser), in order; a model's files together
  // open the model.
  void open_dropped_files(const std::vector<std::string>& paths);
  // Every frame: the file dialog, and the command waiting for its answer.
  void handle_file_dialog();

  // Shows what an action came to in the status bar.
  void report(const Status& status, const std::string& success);

 private:
  // What the file dialog was opened for.
  enum class FileAction { None, Open, OpenModel, SaveAs, Export, Png, PanelSave };
  void ask_for_export(FileAction action, const char* title, const char* name,
                      const char* extension);
  void change_text_size(float step);  // within app/session/view_state.hpp's limits
  // Replacing the scenario: now, or after the user's answer. `action` says what replaces it, for
  // the unsaved-changes question ("Opening apple.json").
  void replace_scenario(std::string action, std::function<void()> replace);
  void start_loaded_lesson(const std::string& id);
  // What a chosen file is for: opened, saved, exported (the dialog's answer; in the browser, the
  // page's own path for it).
  void act_on_file(FileAction action, const std::string& path);
  // A dropped or picked scenario or lesson file (`text` its contents), where it is kept.
  void open_kept_file(const std::string& path, const std::string& text);
  // Whether a file may be written at `path`: always, except under --monkey outside its folder
  // (Shell::write_folder).
  Status writable(const std::string& path) const;

  Shell& shell_;
  FileAction file_action_ = FileAction::None;
  ExportFormat export_format_ = ExportFormat::HeatmapSvg;  // with FileAction::Export
  std::optional<SaveRequest> panel_save_;                  // with FileAction::PanelSave
  view::Rect png_crop_;                                    // with FileAction::Png
  bool saving_first_ = false;  // the Save As dialog was opened by the unsaved-changes question
};

}  // namespace attnviz::app
