// A modal ImGui dialog to pick a scenario file to open, or a path to save to (the app has no
// native dialogs). It shows one folder at a time: its sub-folders and *.json files, folders
// first; the folder is read again only when it changes (or the dialog is opened).
//
//   FileDialog dialog;                                     // lives as long as the app
//   dialog.open_for_open("Open scenario", folder);         // from a menu item
//   if (auto path = dialog.draw()) open(*path);            // every frame
//
// Keys: Enter accepts (or enters the selected folder), Escape cancels, Up/Down move through the
// list, a double click opens a folder or accepts a file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnviz::app {

class FileDialog {
 public:
  // `start_folder` "" (or not a folder) starts where this dialog was last, else in the working
  // folder; a file's path starts in its folder with it selected.
  void open_for_open(std::string title, const std::string& start_folder);
  // A model to open: lists folders, *.bin and *.safetensors; "Open this folder" chooses the
  // folder shown (a Hugging Face GPT-2 folder), Open the file chosen (a llama2.c .bin).
  void open_for_model(std::string title, const std::string& start_folder);
  // The file name is proposed in the name field; ".json" is appended when missing; an
  // existing file is replaced only once the user confirms.
  // `extension` (".json", ".svg", ".png"; "" to pick a folder name) filters the list and is
  // appended to the name when missing.
  void open_for_save(std::string title, const std::string& start_folder, std::string file_name,
                     std::string extension = ".json");

  // Call every frame, inside or outside a window. Returns the chosen absolute path on the
  // frame it is chosen (once); nullopt otherwise, and when the user cancels.
  std::optional<std::string> draw();

  bool is_open() const { return open_ || pending_open_; }
  // The folder shown (or last shown): where the next dialog can start.
  std::string folder() const { return folder_.string(); }

 private:
  enum class Mode { Open, Save, Model };
  struct Entry {
    std::string name;
    bool folder = false;
  };

  void start(Mode mode, std::string title, const std::string& start_folder, std::string file_name);
  bool navigate(const std::filesystem::path& folder);  // false (and a message) if not a folder
  void rescan();
  void select(int index);
  void activate(int index);  // double click or Enter on an entry
  void accept();             // OK: check the name field and finish or ask
  void finish(const std::filesystem::path& path);
  void close();

  void draw_folder_bar();
  void draw_list(float height);
  void draw_footer();
  void handle_keys();

  Mode mode_ = Mode::Open;
  std::string title_;
  bool pending_open_ = false;  // OpenPopup on the next draw()
  bool open_ = false;
  bool focus_name_ = false;  // put the keyboard in the name field on the next frame
  bool scroll_to_selection_ = false;
  bool show_hidden_ = false;
  std::string extension_ = ".json";

  std::filesystem::path folder_;
  std::string folder_field_;    // the editable path field
  std::vector<Entry> entries_;  // ".." first when there is a parent, then folders, then files
  std::string scan_error_;      // why the folder could not be read
  int selected_ = -1;
  std::string name_field_;
  std::string message_;                                   // why the last action was refused
  std::optional<std::filesystem::path> confirm_replace_;  // asking before overwriting this file
  std::optional<std::string> result_;
};

}  // namespace attnviz::app
