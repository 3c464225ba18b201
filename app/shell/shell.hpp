// What the shell is made of: the objects the frame loop owns (Shell), and the pieces that draw
// around the panels, each in a file of its own. app.cpp runs the frame; everything that replaces
// the scenario or writes a file goes through commands.hpp.
//
//   app.cpp               start-up, the frame loop, the pause between frames
//   commands.cpp          new, open, save, export, undo, redo, recover, lessons, quit, text size
//   keyboard.cpp          shortcuts (calling the commands), Escape
//   main_menu.cpp         the menu bar (calling the commands)
//   status_bar.cpp        the bar at the foot: recovery offer, notices, status line
//   panel_host.cpp        the panels' windows, the centre's tabs, the lesson band's height
//   unsaved_question.cpp  the unsaved-changes question
//   help_window.cpp       the list of shortcuts (F1), the user guide (Shift+F1)
//   welcome_window.cpp    the welcome on first start: lesson 1, a real model, or explore
//   fonts.cpp             fonts and theme between frames, characters typed past U+FFFF
//   png_export.cpp        pictures: taken after a frame renders, written on a thread
//   headless.cpp          --screenshot, --screenshot-steps, --bench-frames, --layout-out
//   monkey.cpp            --monkey: the random-action test
#pragma once

#include <array>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/panels/registry.hpp"
#include "app/platform/backend.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/session/app_state.hpp"
#include "app/session/autosave.hpp"
#include "app/session/history.hpp"
#include "app/session/notices.hpp"
#include "app/session/options.hpp"
#include "app/session/recent_files.hpp"
#include "app/session/unsaved_guard.hpp"
#include "app/shell/file_dialog.hpp"
#include "core/base/status.hpp"

namespace attnviz::app {

// The fonts and theme loaded, and what asks for a reload (fonts.cpp).
struct FontState {
  float loaded_size = 0;
  float loaded_detail = 0;
  float detail = 1;  // > 1 while a scaled picture is being made: glyphs rasterized that much larger
  std::string checked[3];             // the target, source and title last given to add_characters()
  std::uint64_t checked_version = 0;  // the edit_version they were checked at
  Theme theme_applied = Theme::Light;
  bool theme_ever_applied = false;
  std::string error;  // a font that is missing, for the status bar
};

// A picture to take and write (png_export.cpp).
struct PngRequest {
  std::string path;
  view::Rect crop;  // empty: the whole window
  int scale = 1;    // pixels per layout pixel (fonts are rasterized that much larger first)
  int frame = 0;    // ImGui's frame count when asked (that frame still shows the file dialog)
};
struct PngExport {
  int scale = 2;                      // File > Export's PNG scale
  std::optional<PngRequest> request;  // taken after the next frame renders
  std::future<Status> writing;        // a picture being written, on a thread of its own
  std::string writing_path;
};

// Everything the frame loop owns; the pieces below take what they need from it.
struct Shell {
  explicit Shell(Options given) : options(std::move(given)) {}

  Options options;
  AppState state;
  platform::Backend backend;
  render::HeatmapRenderer heatmaps;
  std::vector<HostedPanel> panels;  // one per view of core/figures/views.hpp, in its order
  History history;
  RecentFiles recent{""};
  Autosave autosave{""};
  std::optional<Autosave::Recovered>
      recovery_offer;   // an earlier run's unsaved work, awaiting an answer
  NoticeBoard notices;  // what the last actions came to
  UnsavedGuard unsaved_guard;
  FileDialog file_dialog;
  FontState fonts;
  PngExport png;
  std::vector<std::pair<std::string, std::string>> lesson_titles;  // built-in lessons: id, title
  std::vector<std::string> model_names;  // the shipped models (the Models menu), found once
  std::vector<std::string> model_kinds;  // each one's kind ("encoder, BERT"), likewise
  bool show_shortcuts = false;
  bool show_guide = false;    // the user guide (Help)
  int guide_section = 0;      // the section it shows
  bool show_welcome = false;  // the first screen (welcome_window.cpp)
  // --monkey: files are written only inside this folder, wherever the file dialog was clicked to
  // (commands.cpp refuses the rest); "" writes anywhere.
  std::string write_folder;
  int unsaved_question_frame = 0;  // the ImGui frame the question came up in
  // Quitting (Commands::quit): the user agreed, or nothing would be lost; and whether the edits
  // were discarded on the way ("Quit without saving": no recovery file is kept for them).
  bool quit_agreed = false;
  bool quit_discards_edits = false;
  CenterView centre_view_shown = CenterView::Heatmaps;  // the centre view last shown
  // The view each window of tabs showed last, by the window's first slot (panel_host.cpp).
  std::array<std::optional<view::ViewId>, view::kSlotCount> window_tab{};
  std::optional<view::ViewId> requested_tab;  // --view arrows|output: shown until a tab is clicked
  std::uint64_t view_generation_shown = 0;    // AppState::view_generation the panels were reset at
};

class Commands;

// keyboard.cpp
void handle_shortcuts(Shell& shell, Commands& commands);

// main_menu.cpp
void draw_main_menu(Shell& shell, Commands& commands);

// status_bar.cpp: the bar is always there, one height, so that the panels above never move.
float draw_status_bar(Shell& shell, Commands& commands);  // returns its height
float status_bar_height();

// panel_host.cpp
void draw_panels(Shell& shell, Commands& commands, float top, float bottom);

// unsaved_question.cpp
void draw_unsaved_question(Shell& shell, Commands& commands);

// help_window.cpp: the shortcuts (F1) and the user guide (Shift+F1)
void draw_help_window(Shell& shell, Commands& commands);
void draw_guide_window(Shell& shell);

// welcome_window.cpp: the first screen, until dismissed
void draw_welcome_window(Shell& shell, Commands& commands);

// fonts.cpp
void apply_theme_and_fonts(Shell& shell);         // between frames
void stand_in_for_wide_characters(Shell& shell);  // after the frame began: emoji typed

// png_export.cpp
// A part of the frame just rendered (at `scale` times the pixels): RGBA rows, top first, `stride`
// pixels apart, of which the rectangle at (x, y) is the picture.
struct Picture {
  int x = 0, y = 0, width = 0, height = 0, stride = 0;
  std::vector<std::uint8_t> pixels;
};
Result<Picture> take_picture(platform::Backend& backend, const view::Rect& crop, int scale);
Status save_picture(const Picture& picture, const std::string& path);  // any thread
Status write_png(platform::Backend& backend, const std::string& path, const view::Rect& crop,
                 int scale);
// After a frame was built: renders it, and takes the picture asked for when its time has come.
void capture_png_if_requested(Shell& shell, Commands& commands);
void finish_png_export(Shell& shell, Commands& commands, bool wait);  // reports it when written

}  // namespace attnviz::app
