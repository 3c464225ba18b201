#include "app/shell/commands.hpp"

#include "core/models/model.hpp"

#include <imgui.h>

#include <algorithm>
#include <filesystem>

#include "app/platform/platform.hpp"
#include "app/session/file_actions.hpp"
#include "app/session/state_dir.hpp"
#include "app/session/status_line.hpp"
#include "app/session/view_state.hpp"
#include "app/session/welcome.hpp"
#include "core/document/file_io.hpp"
#include "core/lessons/lesson.hpp"
#include "core/models/model_files.hpp"

namespace attnviz::app {

Result<Lesson> load_lesson(const std::string& name) {
  if (const auto builtin = find_builtin_lesson(name))
    return parse_lesson(builtin->json, std::string(builtin->id));
  if (name.find('/') == std::string::npos && name.find(".json") == std::string::npos) {
    return Result<Lesson>::failure("no built-in lesson \"" + name + "\" (try a number from 1 to " +
                                   std::to_string(builtin_lessons().size()) +
                                   ", or a lesson file)");
  }
  return load_lesson_file(name);
}

// -----------------------------------------------------------------------------
// [SECTION] Files in the browser
// -----------------------------------------------------------------------------
// A page has no file system the user sees. Open and Open model use the browser's file picker
// (the file arrives as one dropped on the page); every file the app writes is written into the
// page's memory, then offered as a download. Scenarios and lessons the user opens or saves are
// kept in the state folder's files/ (this browser's IndexedDB), so that Open recent finds them
// after a reload; exports go to /downloads/.

namespace {

std::string browser_files_folder() {
  const std::string state = app_state_dir();
  const std::filesystem::path folder =
      std::filesystem::path(state.empty() ? "/tmp" : state) / "files";
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  return folder.string();
}

std::string browser_download_path(const std::string& name, const std::string& extension) {
  std::error_code error;
  std::filesystem::create_directories("/downloads", error);
  std::string file = name;
  if (!extension.empty() && !file.ends_with(extension)) file += extension;
  return (std::filesystem::path("/downloads") / file).string();
}

// A file dropped on the page (or picked), kept in files/ so that it outlives the page; its
// text was read already. Written as every file is (a kept file of the same name is replaced
// whole, never half-way).
std::string kept_in_browser(const std::string& path, const std::string& text) {
  const std::filesystem::path kept =
      std::filesystem::path(browser_files_folder()) / std::filesystem::path(path).filename();
  std::error_code error;
  if (std::filesystem::equivalent(path, kept, error)) return path;
  return write_file(kept.string(), text) ? kept.string() : path;
}

}  // namespace

void Commands::report(const Status& status, const std::string& success) {
  if (status)
    shell_.notices.succeeded(success, shell_.backend.time());
  else
    shell_.notices.failed(status.message(), shell_.state.document.version());
}

void Commands::replace_scenario(std::string action, std::function<void()> replace) {
  shell_.unsaved_guard.request(shell_.state, std::move(action), std::move(replace));
}

// -----------------------------------------------------------------------------
// [SECTION] Files
// -----------------------------------------------------------------------------

void Commands::new_scenario() {
  replace_scenario("The built-in scenario", [this] {
    Result<Scenario> load = parse_scenario(builtin_scenario_json());
    if (load.ok()) {
      shell_.state.leave_lesson();
      shell_.state.load(std::move(*load), "", {});
    }
  });
}

void Commands::open() {
  if (platform::kBrowser) {
    platform::pick_file_to_open(false);
    return;
  }
  file_action_ = FileAction::Open;
  shell_.file_dialog.open_for_open("Open a scenario", "");
}

void Commands::open_file(const std::string& path) {
  replace_scenario("Opening " + std::filesystem::path(path).filename().string(), [this, path] {
    report(open_scenario(shell_.state, shell_.recent, path), "opened " + path);
  });
}

void Commands::open_model() {
  if (platform::kBrowser) {
    platform::pick_file_to_open(true);
    return;
  }
  file_action_ = FileAction::OpenModel;
  const std::vector<std::string> shipped = shipped_model_folders();
  shell_.file_dialog.open_for_model("Open a model", shipped.empty() ? "" : shipped.front());
}

void Commands::open_model_named(const std::string& path_or_name) {
  AppState& state = shell_.state;
  const Status status = attnviz::app::open_model(state, path_or_name);
  // What opening set aside (a cross scenario's source, its title) is said with it.
  const std::string aside = state.document.take_notice();
  if (const Model* model = state.pipeline().current().trained_model(); status && model)
    report(status,
           "opened the model " + model->name +
               (aside.empty() ? " (Ctrl+Z goes back to the one-layer scenario)" : ": " + aside));
  else
    report(status, "");
}

void Commands::leave_model() {
  if (!shell_.state.document.scenario().model()) return;
  attnviz::app::leave_model(shell_.state);
  report(Status::success(), "back to the one-layer scenario (Ctrl+Z returns to the model)");
}

void Commands::clear_before() {
  shell_.state.computed.before.clear();
  report(Status::success(),
         "the model before the changes is forgotten: Next token and Compare show it as it is");
}

void Commands::toggle_knock_out() {
  AppState& state = shell_.state;
  if (!state.document.scenario().model() || !state.pipeline().can(Capability::HeadInterventions))
    return;
  const int layer = state.selection.layer, head = state.selection.head;
  HeadIntervention change = state.document.scenario().model()->intervention(layer, head);
  change.output_scale = change.ablated() ? 1.0f : 0.0f;
  state.apply(edits::set_head_intervention(layer, head, change));
  report(Status::success(), std::string(change.ablated() ? "knocked out" : "restored") + " layer " +
                                std::to_string(layer + 1) + ", head " + std::to_string(head + 1));
}

void Commands::set_head_pattern(HeadIntervention::Pattern pattern) {
  AppState& state = shell_.state;
  if (!state.document.scenario().model() || !state.pipeline().can(Capability::HeadInterventions))
    return;
  const int layer = state.selection.layer, head = state.selection.head;
  HeadIntervention change = state.document.scenario().model()->intervention(layer, head);
  change.pattern = pattern;
  state.apply(edits::set_head_intervention(layer, head, change));
}

void Commands::restore_head() {
  AppState& state = shell_.state;
  if (!state.document.scenario().model() || !state.pipeline().can(Capability::HeadInterventions))
    return;
  state.apply(edits::set_head_intervention(state.selection.layer, state.selection.head, {}));
}

void Commands::open_dropped_files(const std::vector<std::string>& paths) {
  // A model's files dropped (or picked) together, as a folder's are in the browser: the model is
  // the largest .bin or .safetensors; its tokenizer and config are found beside it.
  std::optional<std::string> model;
  std::uintmax_t model_bytes = 0;
  for (const std::string& path : paths) {
    const std::string extension = std::filesystem::path(path).extension().string();
    std::error_code error;
    const std::uintmax_t bytes = std::filesystem::file_size(path, error);
    if ((extension == ".bin" || extension == ".safetensors") && !error && bytes >= model_bytes) {
      model = path;
      model_bytes = bytes;
    }
  }
  if (model && paths.size() > 1) {
    open_model_named(*model);
    return;
  }
  for (const std::string& path : paths) open_dropped_file(path);
}

void Commands::open_dropped_file(const std::string& path) {
  // A model: a folder, a llama2.c .bin or a .safetensors file.
  std::error_code error;
  const std::filesystem::path dropped(path);
  const std::string extension = dropped.extension().string();
  if (std::filesystem::is_directory(dropped, error) || extension == ".bin" ||
      extension == ".safetensors") {
    open_model_named(path);
    return;
  }
  const Result<std::string> text = read_file(path, kMaxScenarioBytes);
  if (!text) {
    report(text.status(), "");
    return;
  }
  if (platform::kBrowser) {  // kept beyond the page, for Open recent
    open_kept_file(kept_in_browser(path, *text), *text);
    return;
  }
  open_kept_file(path, *text);
}

void Commands::open_kept_file(const std::string& path, const std::string& text) {
  if (text.find(kLessonFormat) != std::string::npos) {  // a lesson file
    Result<Lesson> lesson = load_lesson_file(path);
    if (lesson.ok())
      replace_scenario(
          "Starting the lesson \"" + lesson->title + "\"",
          [this, lesson = std::move(*lesson)] { shell_.state.start_lesson(lesson, 0); });
    else
      report(lesson.status(), "");
    return;
  }
  open_file(path);
}

void Commands::save() {
  AppState& state = shell_.state;
  if (state.document.path().empty() || state.lesson.active()) {
    save_as();
    return;
  }
  if (Status allowed = writable(state.document.path()); !allowed) return report(allowed, "");
  const Status status = save_scenario(state, shell_.recent, state.document.path());
  report(status, platform::kBrowser
                     ? "saved " + std::filesystem::path(state.document.path()).filename().string() +
                           " (downloaded)"
                     : "saved " + state.document.path());
  if (status && platform::kBrowser) platform::offer_download(state.document.path());
  if (!state.unsaved()) shell_.autosave.discard();
}

void Commands::save_as() {
  if (platform::kBrowser) {  // kept in this browser and downloaded, under the name proposed
    act_on_file(
        FileAction::SaveAs,
        (std::filesystem::path(browser_files_folder()) / save_as_file_name(shell_.state)).string());
    return;
  }
  file_action_ = FileAction::SaveAs;
  // In the file's folder, its name proposed (a folder browsed to then is where it goes).
  const std::filesystem::path current(shell_.state.document.path());
  shell_.file_dialog.open_for_save("Save the scenario",
                                   current.empty() ? "" : current.parent_path().string(),
                                   save_as_file_name(shell_.state), ".json");
}

void Commands::ask_for_export(FileAction action, const char* title, const char* name,
                              const char* extension) {
  if (platform::kBrowser) {  // written into the page's memory, then downloaded
    act_on_file(action, browser_download_path(name, extension));
    return;
  }
  file_action_ = action;
  shell_.file_dialog.open_for_save(title, "", name, extension);
}

void Commands::export_file(ExportFormat format) {
  export_format_ = format;
  switch (format) {
    case ExportFormat::HeatmapSvg:
      ask_for_export(FileAction::Export, "Export the heatmap as SVG", "heatmap.svg", ".svg");
      break;
    case ExportFormat::ArrowsSvg:
      ask_for_export(FileAction::Export, "Export the arrows as SVG", "arrows.svg", ".svg");
      break;
    case ExportFormat::AllHeadsArrowsSvg:
      ask_for_export(FileAction::Export, "Export the arrows as SVG", "arrows-all-heads.svg",
                     ".svg");
      break;
    case ExportFormat::MatricesCsv:
      ask_for_export(FileAction::Export, "Export every matrix as CSV into a new folder",
                     "attnviz-matrices", "");
      break;
    case ExportFormat::ResultJson:
      ask_for_export(FileAction::Export, "Export every matrix as JSON", "attnviz-result.json",
                     ".json");
      break;
  }
}

void Commands::export_png(const view::Rect& crop) {
  png_crop_ = crop;
  if (crop.empty())
    ask_for_export(FileAction::Png, "Export the window as PNG", "attnviz.png", ".png");
  else
    ask_for_export(FileAction::Png, "Export a panel as PNG", "attnviz-panel.png", ".png");
}

void Commands::save_with_dialog(SaveRequest request) {
  const std::string title = request.title, name = request.name, extension = request.extension,
                    start = request.start_folder;
  panel_save_ = std::move(request);
  if (platform::kBrowser) {  // written into the page's memory, then downloaded
    act_on_file(FileAction::PanelSave, browser_download_path(name, extension));
    return;
  }
  file_action_ = FileAction::PanelSave;
  shell_.file_dialog.open_for_save(title, start, name, extension);
}

void Commands::clear_recent_files() {
  shell_.recent.clear();
  static_cast<void>(shell_.recent.save());  // best effort (recent_files.hpp)
}

void Commands::handle_file_dialog() {
  const std::optional<std::string> chosen = shell_.file_dialog.draw();
  if (!chosen) return;
  const FileAction action = file_action_;
  file_action_ = FileAction::None;
  act_on_file(action, *chosen);
}

Status Commands::writable(const std::string& path) const {
  if (shell_.write_folder.empty()) return Status::success();
  std::error_code error;
  const std::filesystem::path folder =
      std::filesystem::weakly_canonical(shell_.write_folder, error);
  const std::filesystem::path target = std::filesystem::weakly_canonical(path, error);
  if (!error && std::mismatch(folder.begin(), folder.end(), target.begin(), target.end()).first ==
                    folder.end())
    return Status::success();
  return Status::error("not written: the random-action test writes only into " +
                       shell_.write_folder + " (" + path + ")");
}

void Commands::act_on_file(FileAction action, const std::string& path) {
  AppState& state = shell_.state;
  const bool writes = action == FileAction::SaveAs || action == FileAction::Export ||
                      action == FileAction::Png || action == FileAction::PanelSave;
  if (Status allowed = writes ? writable(path) : Status::success(); !allowed) {
    report(allowed, "");
    if (saving_first_) {  // what the save was for waits for a save that was not made
      saving_first_ = false;
      shell_.unsaved_guard.cancel();
    }
    return;
  }
  // The browser downloads what was written (a PNG once it is written: png_export.cpp).
  const auto written = [&](const Status& status, const std::string& success) {
    if (!platform::kBrowser) return report(status, success);
    report(status, "downloaded " + std::filesystem::path(path).filename().string());
    if (status) platform::offer_download(path);  // a folder (the CSV export): one ZIP
  };
  switch (action) {
    case FileAction::Open:
      open_file(path);
      break;
    case FileAction::OpenModel:
      open_model_named(path);
      break;
    case FileAction::SaveAs:
      if (Status status = save_scenario(state, shell_.recent, path); status) {
        state.leave_lesson();
        shell_.autosave.discard();
        written(status, "saved " + path);
      } else {
        report(status, "");
      }
      if (saving_first_) {  // then what the save was for, if it saved
        saving_first_ = false;
        shell_.unsaved_guard.saved(state);
      }
      break;
    case FileAction::Export:
      switch (export_format_) {
        case ExportFormat::HeatmapSvg:
          written(export_heatmap_svg(state, path), "exported " + path);
          break;
        case ExportFormat::ArrowsSvg:
          written(export_arrows_svg(state, path, false), "exported " + path);
          break;
        case ExportFormat::AllHeadsArrowsSvg:
          written(export_arrows_svg(state, path, true), "exported " + path);
          break;
        case ExportFormat::MatricesCsv:
          written(export_matrices_csv(state, path), "exported the matrices into " + path);
          break;
        case ExportFormat::ResultJson:
          written(export_result_json(state, path), "exported " + path);
          break;
      }
      break;
    case FileAction::Png:
      shell_.png.request = PngRequest{path, png_crop_, shell_.png.scale, ImGui::GetFrameCount()};
      break;
    case FileAction::PanelSave:
      if (panel_save_ && panel_save_->write)
        written(panel_save_->write(path), panel_save_->done + path);
      panel_save_.reset();
      break;
    case FileAction::None:
      break;
  }
}

// -----------------------------------------------------------------------------
// [SECTION] The unsaved-changes question's answer
// -----------------------------------------------------------------------------

void Commands::save_first() {
  if (shell_.state.document.path().empty()) {  // a file to save into first
    saving_first_ = true;
    save_as();
  } else {
    save();
    shell_.unsaved_guard.saved(shell_.state);  // a failed save shows why, and nothing is replaced
  }
}

bool Commands::saving_first() {
  if (saving_first_ &&
      !shell_.file_dialog.is_open()) {  // the Save As dialog was closed without saving
    saving_first_ = false;
    shell_.unsaved_guard.cancel();
  }
  return saving_first_;
}

// -----------------------------------------------------------------------------
// [SECTION] Edits, recovery, lessons, the window
// -----------------------------------------------------------------------------

void Commands::undo() {
  shell_.history.undo(shell_.state, shell_.backend.time());
}
void Commands::redo() {
  shell_.history.redo(shell_.state);
}

// The work an earlier run left unsaved, with the file it belongs to (Save writes there); unsaved.
// It becomes this run's recovery file at once; then its earlier file goes.
void Commands::restore_recovered(Autosave::Recovered recovered) {
  const std::string name = std::filesystem::path(recovered.path).filename().string();
  shell_.state.load(std::move(recovered.scenario), std::move(recovered.path), {});
  shell_.state.document.mark_never_saved();  // not in its file yet
  shell_.autosave.restored(recovered.file, shell_.state);
  report(Status::success(),
         name.empty() ? "restored the work an earlier run left unsaved"
                      : "restored the unsaved changes to " + name + ": save to keep them");
}

void Commands::restore_offered() {  // edits made meanwhile are asked about first (the offer stays
                                    // till then)
  replace_scenario("Restoring the earlier work", [this] {
    if (!shell_.recovery_offer) return;
    Autosave::Recovered offer = std::move(*shell_.recovery_offer);
    shell_.recovery_offer.reset();
    restore_recovered(std::move(offer));
    offer_next_recovery();
  });
}

// Only the offered work's files go: this run's recovery file keeps protecting the work done
// meanwhile.
void Commands::discard_offered() {
  if (!shell_.recovery_offer) return;
  shell_.autosave.declined(shell_.recovery_offer->file);
  shell_.recovery_offer.reset();
  offer_next_recovery();
}

void Commands::offer_next_recovery() {
  Result<std::optional<Autosave::Recovered>> next = shell_.autosave.recoverable();
  if (next.ok() && *next) shell_.recovery_offer = std::move(*next);
}

void Commands::start_lesson(const std::string& id, const std::string& title) {
  replace_scenario("Starting the lesson \"" + title + "\"",
                   [this, id] { start_loaded_lesson(id); });
}

void Commands::start_loaded_lesson(const std::string& id) {
  Result<Lesson> lesson = load_lesson(id);
  if (lesson.ok())
    shell_.state.start_lesson(std::move(*lesson), 0);
  else
    report(lesson.status(), "");
}

void Commands::leave_lesson() {
  shell_.state.leave_lesson();
}

void Commands::quit() {
  shell_.unsaved_guard.request_quit(shell_.state, [this] {
    shell_.quit_agreed = true;
    // Unsaved here only after "Quit without saving" (a lesson's edits quit without asking, and
    // its recovery file stays).
    shell_.quit_discards_edits = shell_.state.unsaved() && !shell_.state.lesson.active();
    shell_.backend.request_close();
  });
}

// The largest text size offered: every panel still usable in this window (app/view/layout.hpp),
float Commands::largest_text_size() const {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float largest = view::largest_usable_font_size(display.x, display.y);
  return std::clamp(largest, kMinViewFontSize, kMaxViewFontSize);
}

void Commands::change_text_size(float step) {
  UiSettings& ui = shell_.state.ui;
  float& size = ui.presenter ? ui.presenter_font_size : ui.font_size;
  const float largest = largest_text_size();
  const float wanted = size + step;
  if (step > 0 && wanted > largest) {
    shell_.notices.succeeded(
        "The text is as large as this window allows with every panel usable (" +
            std::to_string(static_cast<int>(largest)) +
            " px): a larger window, or fewer panels, take larger text.",
        shell_.backend.time());
  }
  size = std::clamp(wanted, kMinViewFontSize, std::max(largest, size));
  if (ui.presenter)
    ui.presenter_font_size_chosen = true;
  else
    ui.font_size_chosen = true;
}
void Commands::set_text_size(float size) {
  UiSettings& ui = shell_.state.ui;
  (ui.presenter ? ui.presenter_font_size : ui.font_size) =
      std::clamp(size, kMinViewFontSize, kMaxViewFontSize);
  (ui.presenter ? ui.presenter_font_size_chosen : ui.font_size_chosen) = true;
}
void Commands::larger_text() {
  change_text_size(+2.0f);
}
void Commands::smaller_text() {
  change_text_size(-2.0f);
}
void Commands::reset_text_size() {
  UiSettings& ui = shell_.state.ui;
  if (ui.presenter)
    ui.presenter_font_size_chosen = false;
  else
    ui.font_size_chosen = false;
  follow_window_size();
}
void Commands::follow_window_size() {
  UiSettings& ui = shell_.state.ui;
  // In the content scale's units (the text sizes are, before it multiplies them): a HiDPI screen
  // or page at twice the pixels gets the same layout, twice as sharp.
  const float height =
      ImGui::GetIO().DisplaySize.y / std::max(1.0f, shell_.backend.content_scale());
  if (height <= 0) return;
  if (!ui.font_size_chosen) ui.font_size = view::suited_font_size(height);
  if (!ui.presenter_font_size_chosen)
    ui.presenter_font_size = view::suited_presenter_font_size(height);
}

// -----------------------------------------------------------------------------
// [SECTION] Presenter mode
// -----------------------------------------------------------------------------

void Commands::toggle_presenter() {
  if (shell_.state.ui.presenter)
    leave_presenter();
  else
    shell_.state.ui.presenter = true;
}
void Commands::leave_presenter() {
  shell_.state.ui.presenter = false;
  shell_.backend.set_fullscreen(false);
}
void Commands::toggle_fullscreen() {
  shell_.backend.set_fullscreen(!shell_.backend.fullscreen());
}
void Commands::step_presentation(int direction) {
  AppState& state = shell_.state;
  if (state.lesson.active()) {
    state.go_to_lesson_step(state.lesson.step + direction);
    return;
  }
  // No lesson: the next or previous query, so a class walks through the sentence.
  const int queries = state.computed.has_result ? static_cast<int>(state.result().n_query) : 0;
  if (queries > 0)
    state.selection.query = std::clamp(state.selection.query + direction, 0, queries - 1);
}

void Commands::restart_lesson_step() {
  AppState& state = shell_.state;
  if (state.lesson.active()) state.go_to_lesson_step(state.lesson.step);
}

void Commands::toggle_shortcuts() {
  shell_.show_shortcuts = !shell_.show_shortcuts;
}

void Commands::toggle_guide() {
  shell_.show_guide = !shell_.show_guide;
}

void Commands::show_welcome() {
  shell_.show_welcome = true;
}

void Commands::dismiss_welcome() {
  shell_.show_welcome = false;
  // Best effort: without a state folder the welcome comes back next time, nothing worse.
  static_cast<void>(remember_welcome_dismissed(app_state_dir()));
}

}  // namespace attnviz::app
