// The application: the frame loop around the panels. Owns the platform backend, the state and
// the renderers; decides what is drawn where; runs interactively or renders a screenshot.
#pragma once

#include "app/session/app_state.hpp"
#include "app/session/autosave.hpp"
#include "app/shell/file_dialog.hpp"
#include "app/session/frame_pacing.hpp"
#include "app/session/recent_files.hpp"
#include "app/session/history.hpp"
#include "app/session/notices.hpp"
#include "app/session/options.hpp"
#include "app/panels/panel.hpp"
#include "app/platform/backend.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/session/unsaved_guard.hpp"
#include "app/view/text_escapes.hpp"

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace attnviz::app {

class App {
 public:
  explicit App(Options options);
  // Returns the process exit status.
  int run();

 private:
  bool start(std::string& error);
  void frame();
  void apply_theme_and_fonts();
  void stand_in_for_wide_characters();  // typed emoji, for the text fields
  void close_menus();  // Escape
  void draw_menu_bar();
  void draw_panels(float top, float bottom);
  void draw_centre_views(PanelContext& context);
  float lesson_band_height() const;
  float draw_status_bar();  // returns its height, which never changes with what it shows
  float status_bar_height() const;
  float panel_gap() const;  // between the panels and around them
  void begin_status_bar(const char* id, ImU32 background, ImU32 text);
  void end_status_bar();
  void change_text_size(float step);  // ±2 px, within 10 to 64
  void status_bar_tooltip(const char* text);
  void draw_notice(const Notice& notice);
  void draw_status_line();
  void render_frames();
  void wait_for_next_frame();  // the interactive loop's pause between frames (app/session/frame_pacing.hpp)
  int run_bench(int frames);  // --bench-frames
  int write_screenshot(const std::string& path);
  Status write_png(const std::string& path, const view::Rect& crop, int scale);
  // A part of the frame just rendered (at `scale` times the pixels): RGBA rows, top first, `stride`
  // pixels apart, of which the rectangle at (x, y) is the picture.
  struct Picture {
    int x = 0, y = 0, width = 0, height = 0, stride = 0;
    std::vector<std::uint8_t> pixels;
  };
  std::optional<Picture> take_picture(const view::Rect& crop, int scale, std::string& error);
  static Status save_picture(const Picture& picture, const std::string& path);  // any thread
  void finish_png_export(bool wait);  // reports the export on its thread when done (or waits)
  void open_dropped_file(const std::string& path);
  void draw_cover();
  void handle_shortcuts();
  void new_scenario();  // the built-in scenario, asking about unsaved changes first
  void draw_file_menu();
  void draw_help_window();
  void handle_file_dialog();
  void save(bool ask_for_path);
  void report(const Status& status, const std::string& success);
  void capture_png_if_requested();
  void restore_recovered(Autosave::Recovered recovered);
  void draw_recovery_offer();
  // Replacing the scenario (app/session/unsaved_guard.hpp): now, or after the user's answer.
  // `action` says what replaces it, for the unsaved-changes question ("Opening apple.json").
  void replace_scenario(std::string action, std::function<void()> replace) {
    unsaved_guard_.request(state_, std::move(action), std::move(replace));
  }
  void open_file_replacing(const std::string& path);  // asks about unsaved changes first
  void start_lesson(const std::string& id);
  void draw_unsaved_question();

  Options options_;
  AppState state_;
  platform::Backend backend_;
  render::HeatmapRenderer heatmaps_;
  std::vector<std::unique_ptr<Panel>> panels_;  // in drawing order: editors, then views
  float fonts_loaded_size_ = 0;
  std::string characters_checked_[3];  // the target, source and title last given to add_characters()
  std::uint64_t characters_checked_version_ = 0;  // the edit_version they were checked at
  float fonts_loaded_detail_ = 0;
  float font_detail_ = 1;  // > 1 while a scaled picture is being made
  Theme theme_applied_ = Theme::Light;
  bool theme_ever_applied_ = false;
  std::string font_error_;
  // What the file dialog was opened for.
  enum class FileAction { None, Open, SaveAs, HeatmapSvg, ArrowsSvg, AllHeadsArrowsSvg, MatricesCsv, ResultJson, Png };
  struct PngRequest {
    std::string path;
    view::Rect crop;  // empty: the whole window
    int scale = 1;    // pixels per layout pixel (fonts are rasterized that much larger first)
    int frame = 0;    // ImGui's frame count when asked (that frame still shows the file dialog)
  };

  History history_;
  RecentFiles recent_{""};
  FileDialog file_dialog_;
  FileAction file_action_ = FileAction::None;
  view::Rect png_crop_;                   // the panel a PNG export is for (empty: the window)
  std::optional<PngRequest> png_request_;  // taken after the next frame renders
  std::future<Status> png_export_;         // a picture being written, on a thread of its own
  std::string png_export_path_;
  int unsaved_question_frame_ = 0;
  float start_font_size_ = 16;  // Ctrl+0 goes back to it  // the ImGui frame the unsaved-changes question came up in
  ImVec4 theme_text_colour_;  // the theme's text colour, under the status bar's own  // where the status bar began in the last frame (--layout-out)
  NoticeBoard notices_;                   // what the last actions came to (app/session/notices.hpp)
  bool show_shortcuts_ = false;
  int export_scale_ = 2;  // the PNG export's scale (File > Export)
  Autosave autosave_{""};
  std::optional<Autosave::Recovered> recovery_offer_;  // an earlier run's unsaved work, awaiting an answer
  std::vector<std::pair<std::string, std::string>> lesson_titles_;  // built-in lessons: id, title
  CenterView centre_view_shown_ = CenterView::Heatmaps;  // the tab the tab bar last showed
  UnsavedGuard unsaved_guard_;
  bool saving_first_ = false;  // the Save As dialog was opened by the unsaved-changes question
  FramePacer pacer_;
  double frame_start_ = 0;  // when the frame being drawn began (the backend's clock)
};

}  // namespace attnviz::app
