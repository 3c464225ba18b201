// The frame loop. Index:
//   [SECTION] Start
//   [SECTION] Frame (and the pause between frames)
//   [SECTION] Menu bar and the status bar (notices)
//   [SECTION] Panels
//   [SECTION] Files: open, save, export
//   [SECTION] Benchmark
//   [SECTION] Screenshot
#include "app/shell/app.hpp"

#include "app/session/file_actions.hpp"
#include "app/session/notices.hpp"
#include "app/panels/widgets.hpp"
#include "app/session/state_dir.hpp"
#include "app/session/status_line.hpp"
#include "app/shell/theme.hpp"
#include "app/session/view_state.hpp"
#include "core/document/file_io.hpp"
#include "core/lessons/lesson.hpp"
#include "core/base/version.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // the caret blink timer of the text field being typed into
#include <stb_image_write.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <limits>
#include <span>
#include <sstream>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

namespace attnviz::app {

// -----------------------------------------------------------------------------
// [SECTION] Start
// -----------------------------------------------------------------------------

// A built-in lesson by name or number, else a lesson file.
Result<Lesson> load_lesson(const std::string& name) {
  if (const auto builtin = find_builtin_lesson(name)) return parse_lesson(builtin->json, std::string(builtin->id));
  if (name.find('/') == std::string::npos && name.find(".json") == std::string::npos) {
    return Result<Lesson>::failure("no built-in lesson \"" + name + "\" (try a number from 1 to " +
                                   std::to_string(builtin_lessons().size()) +
                                   ", or a lesson file)");
  }
  return load_lesson_file(name);
}

App::App(Options options) : options_(std::move(options)) {
  panels_.push_back(make_lesson_panel());
  panels_.push_back(make_input_panel());
  panels_.push_back(make_weights_panel());
  panels_.push_back(make_heatmap_panel());
  panels_.push_back(make_pipeline_panel());
  panels_.push_back(make_neuron_panel());
  panels_.push_back(make_geometry_panel());
  panels_.push_back(make_compare_panel());
  panels_.push_back(make_arrows_panel());
  panels_.push_back(make_output_panel());
}

bool App::start(std::string& error) {
  // The scenario first. A bad file makes a picture or a benchmark an error before any window
  // opens; a user who opened it (a double-click in a file manager) gets the window, on the
  // built-in scenario, with the reason in the status bar (and on standard error).
  const bool headless = options_.screenshot || options_.screenshot_steps || options_.bench_frames;
  Result<Scenario> load = options_.scenario_path.empty()
                              ? parse_scenario(builtin_scenario_json())
                              : load_scenario_file(options_.scenario_path);
  std::string not_opened;
  if (!load.ok()) {
    if (headless) {
      error = load.error();
      return false;
    }
    std::cerr << "attnviz: error: " << load.error() << '\n';
    not_opened = "not opened: " + load.error();
    load = parse_scenario(builtin_scenario_json());
  }
  const std::string view_json = load->view_json;
  state_.pipeline.set_threads(options_.threads.value_or(default_engine_threads()));
  state_.load(std::move(*load), not_opened.empty() ? options_.scenario_path : "",
              std::move(load.warnings));
  apply_view_state(view_json, state_, state_.file_warnings);
  if (options_.theme) state_.ui.theme = *options_.theme;
  if (options_.panels) state_.ui.visible = *options_.panels;
  if (options_.colormap) state_.ui.colormap = *options_.colormap;
  if (!options_.lesson.empty()) {
    Result<Lesson> lesson = load_lesson(options_.lesson);
    if (!lesson.ok()) {
      error = lesson.error();
      return false;
    }
    state_.start_lesson(std::move(*lesson), options_.step.value_or(0));
  }
  if (options_.view) state_.ui.center_view = *options_.view;
  if (options_.head) state_.selection.head = *options_.head;
  if (options_.query) state_.selection.query = *options_.query;
  // A readable default for the window: 16 px at 720 lines, growing with the window.
  state_.ui.font_size = options_.font_size.value_or(
      std::clamp(std::round(static_cast<float>(options_.height) / 45.0f), 13.0f, 44.0f));
  start_font_size_ = state_.ui.font_size;
  // --scale: the same layout rendered offscreen at N times the pixels, glyphs rasterized to match.
  font_detail_ = static_cast<float>(options_.scale);

  // Recovery: an earlier run's unsaved work. Screenshots never write it; --recover restores it.
  autosave_ = Autosave(app_state_dir());
  recent_ = RecentFiles(default_recent_files_path());
  recent_.load();
  Result<std::optional<Autosave::Recovered>> recovery = autosave_.recoverable();
  std::optional<Autosave::Recovered> recovered =
      recovery.ok() ? std::move(*recovery) : std::nullopt;
  if (recovered) {
    if (!options_.recover && !headless) recovery_offer_ = std::move(recovered);
  } else if (options_.recover) {
    error = recovery.ok()
                ? "--recover: there is no unsaved work to restore (" + autosave_.path() + ")"
                : recovery.error();
    return false;
  }
  autosave_.pause(headless || recovery_offer_.has_value());

  for (const BuiltinLesson& builtin : builtin_lessons()) {
    const Result<Lesson> lesson = parse_lesson(builtin.json, std::string(builtin.id));
    if (lesson.ok()) lesson_titles_.emplace_back(std::string(builtin.id), lesson->title);
  }

  platform::WindowOptions window;
  window.width = options_.width;
  window.height = options_.height;
  window.vsync = !headless;
  window.title = "AttnViz";
  if (!backend_.init(window, error)) return false;
  backend_.set_ignore_mouse(headless);
  if (!heatmaps_.init(error)) return false;
  if (recovered && options_.recover) restore_recovered(std::move(*recovered));  // its notice needs the clock
  state_.recompute_if_needed();
  if (!not_opened.empty()) notices_.failed(not_opened, state_.edit_version);
  return true;
}

int App::run() {
  std::string error;
  if (!start(error)) {
    std::cerr << "attnviz: error: " << error << '\n';
    return 1;
  }
  if (options_.screenshot_steps) {  // every step of the lesson, one PNG each
    if (!state_.lesson.active()) {
      std::cerr << "attnviz: error: --screenshot-steps needs --lesson\n";
      return 2;
    }
    const int count = static_cast<int>(state_.lesson.lesson->steps.size());
    for (int step = 0; step < count; ++step) {
      state_.go_to_lesson_step(step);
      render_frames();
      char name[32];
      std::snprintf(name, sizeof name, "/step-%02d.png", step);
      if (const int status = write_screenshot(*options_.screenshot_steps + name); status != 0) return status;
      backend_.end_frame();
    }
    return 0;
  }
  if (options_.bench_frames) return run_bench(*options_.bench_frames);
  if (options_.screenshot) {
    render_frames();
    return write_screenshot(*options_.screenshot);
  }
  pacer_ = FramePacer(backend_.refresh_rate());
  // ATTNVIZ_EXIT_AFTER=SECONDS closes the window after that long and reports how many frames were
  // drawn (the tests check that an idle app sleeps).
  const char* exit_after_text = std::getenv("ATTNVIZ_EXIT_AFTER");
  const double exit_after = exit_after_text ? std::strtod(exit_after_text, nullptr) : 0.0;
  const double loop_start = backend_.time();
  long frames_drawn = 0;
  while (!backend_.should_close()) {
    frame();
    if (png_request_) {
      capture_png_if_requested();  // renders this frame into the back buffer and reads it
      backend_.present();
    } else {
      backend_.end_frame();
    }
    ++frames_drawn;
    if (exit_after > 0 && backend_.time() - loop_start >= exit_after) backend_.request_close();
    else wait_for_next_frame();
  }
  if (exit_after > 0)
    std::fprintf(stderr, "attnviz: %ld frames in %.1f s\n", frames_drawn, backend_.time() - loop_start);
  // A clean exit keeps the recovery file only while there are unsaved edits, and then with the
  // last of them (typed just before Ctrl+Q, within the autosave's interval).
  if (!state_.unsaved() && !recovery_offer_) autosave_.discard();
  else autosave_.observe(state_, std::numeric_limits<double>::infinity());
  return 0;
}

// -----------------------------------------------------------------------------
// [SECTION] Frame
// -----------------------------------------------------------------------------

void App::apply_theme_and_fonts() {
  // Characters the fonts lack (a Chinese sentence, say) are added from a fallback font.
  const Scenario& s = state_.scenario;
  if (state_.edit_version != characters_checked_version_ &&
      (s.target != characters_checked_[0] || s.source != characters_checked_[1] || s.title != characters_checked_[2])) {
    characters_checked_[0] = s.target;
    characters_checked_[1] = s.source;
    characters_checked_[2] = s.title;
    bool added = false;
    for (const std::string& text : characters_checked_) {
      added = backend_.add_characters(text) || added;
      if (view::TextEscapes::may_need_stand_ins(text))
        state_.visual_text.escapes().escape(text);  // gives its emoji stand-ins, drawn from the first frame
    }
    if (added) fonts_loaded_size_ = 0;  // reload below
  }
  // Characters past U+FFFF (emoji) are drawn as their stand-ins' glyphs: one for each new one.
  if (state_.visual_text.escapes().wide_count() != backend_.wide_character_count()) {
    backend_.set_wide_characters(state_.visual_text.escapes().wide_characters());
    fonts_loaded_size_ = 0;
  }
  characters_checked_version_ = state_.edit_version;
  // Fonts can only be rebuilt between frames.
  if (state_.ui.font_size != fonts_loaded_size_ || font_detail_ != fonts_loaded_detail_) {
    font_error_.clear();
    backend_.load_fonts(state_.ui.font_size, font_detail_, font_error_);
    fonts_loaded_size_ = state_.ui.font_size;
    fonts_loaded_detail_ = font_detail_;
    theme_ever_applied_ = false;  // sizes in the style scale with the font
  }
  if (!theme_ever_applied_ || theme_applied_ != state_.ui.theme) {
    apply_theme(state_.ui.theme, backend_.content_scale() * state_.ui.font_size / 16.0f);
    theme_applied_ = state_.ui.theme;
    theme_ever_applied_ = true;
  }
}

void App::open_dropped_file(const std::string& path) {
  const Result<std::string> text = read_file(path, kMaxScenarioBytes);
  if (!text) {
    report(text.status(), "");
    return;
  }
  if (text->find(kLessonFormat) != std::string::npos) {  // a lesson file
    Result<Lesson> lesson = load_lesson_file(path);
    if (lesson.ok())
      replace_scenario("Starting the lesson \"" + lesson->title + "\"",
                       [this, lesson = std::move(*lesson)] { state_.start_lesson(lesson, 0); });
    else
      report(Status::error(lesson.error()), "");
    return;
  }
  open_file_replacing(path);
}

void App::open_file_replacing(const std::string& path) {
  replace_scenario("Opening " + std::filesystem::path(path).filename().string(),
                   [this, path] { report(open_scenario(state_, recent_, path), "opened " + path); });
}

void App::start_lesson(const std::string& id) {
  Result<Lesson> lesson = load_lesson(id);
  if (lesson.ok())
    state_.start_lesson(std::move(*lesson), 0);
  else
    report(Status::error(lesson.error()), "");
}

void App::frame() {
  frame_start_ = backend_.time();
  state_.redraw_in = std::numeric_limits<double>::infinity();
  apply_theme_and_fonts();
  for (const std::string& path : backend_.take_dropped_files()) open_dropped_file(path);
  backend_.new_frame();
  stand_in_for_wide_characters();
  heatmaps_.begin_frame();
  state_.visual_text.new_frame();
  state_.hovered = state_.hovered_next;
  state_.hovered_next = {};
  state_.recompute_if_needed();

  handle_shortcuts();
  backend_.set_title(window_title(state_));
  draw_menu_bar();
  const float menu_height = ImGui::GetFrameHeight();
  const float status_height = draw_status_bar();
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  draw_panels(menu_height, display.y - status_height);
  state_.visual_text.escapes().take_typed();  // emoji typed with no sentence field to take them
  handle_file_dialog();
  finish_png_export(false);
  draw_unsaved_question();
  draw_help_window();
  // One undo step per gesture: a drag or a burst of typing counts once it comes to rest.
  // (--bench-frames edits a weight every frame as one long drag would: one gesture.)
  history_.observe(state_, ImGui::IsAnyItemActive() || options_.bench_frames.has_value(), backend_.time());
  autosave_.observe(state_, backend_.time());
}

// ImGui queued each typed character past U+FFFF (an emoji) as U+FFFD: it leaves the queue, and
// the text field being typed into inserts its stand-in instead (app/view/text_escapes.hpp; ImGui
// would drop a private-use character typed), which the field turns back into it.
void App::stand_in_for_wide_characters() {
  static_assert(sizeof(ImWchar) == sizeof(std::uint16_t), "Debian's ImGui 1.86: 16-bit characters");
  ImVector<ImWchar>& queue = ImGui::GetIO().InputQueueCharacters;
  const std::size_t kept = state_.visual_text.escapes().take_from_queue(
      std::span(reinterpret_cast<std::uint16_t*>(queue.Data), static_cast<std::size_t>(queue.Size)), backend_.typed_characters());
  queue.resize(static_cast<int>(kept));
}

// Sleeps until the next frame is due: at once while the user is doing something, after input for
// a few frames, when something drawn changes by itself, else when input comes.
void App::wait_for_next_frame() {
  const ImGuiIO& io = ImGui::GetIO();
  FrameActivity activity;
  activity.now = backend_.time();
  activity.frame_start = frame_start_;
  activity.input_events = backend_.input_events();
  // A text field stays the active item while it has the keyboard: what it shows changes with
  // keys (input) and its caret (text_input), not every frame.
  const auto held = [](const auto& buttons) { return std::any_of(std::begin(buttons), std::end(buttons), [](bool down) { return down; }); };
  activity.interacting = (ImGui::IsAnyItemActive() && !io.WantTextInput) || held(io.MouseDown) || held(io.KeysDown) ||
                         png_request_.has_value() ||  // a picture to take over the next frames
                         backend_.press_waiting();    // a tap shown as a press in the next frame
  activity.text_input = io.WantTextInput;
  activity.next_change = frame_start_ + state_.redraw_in;
  // The caret of the text field being typed into next blinks on or off: ImGui shows it while its
  // timer (reset by every key) is at most 0, and for 0.8 s of every 1.2 s after.
  if (const ImGuiInputTextState* text = io.WantTextInput ? ImGui::GetInputTextState(ImGui::GetActiveID()) : nullptr;
      text && io.ConfigInputTextCursorBlink) {
    constexpr double kBlinkPeriod = 1.2, kBlinkOn = 0.8;
    const double timer = text->CursorAnim, phase = std::fmod(std::max(timer, 0.0), kBlinkPeriod);
    const double toggle_in = timer <= 0 ? -timer : (phase < kBlinkOn ? kBlinkOn - phase : kBlinkPeriod - phase);
    activity.text_input = false;  // no need to look in often: the next toggle is known
    activity.next_change = std::min(activity.next_change, frame_start_ + toggle_in + 0.01);
  }
  activity.next_change = std::min(activity.next_change, notices_.changes_at(activity.now));
  const FramePlan plan = pacer_.plan(activity);
  backend_.wait(plan.earliest, plan.latest);
}

void App::handle_shortcuts() {
  // ImGui 1.86's GLFW backend indexes keys by GLFW key code, which is ASCII for letters.
  const ImGuiIO& io = ImGui::GetIO();
  constexpr int kKeyF1 = 290;  // GLFW_KEY_F1
  if (io.KeyCtrl && ImGui::IsKeyPressed('Q', false)) backend_.request_close();
  if (unsaved_guard_.asking()) return;  // the question is answered first
  if (ImGui::IsKeyPressed(kKeyF1, false)) show_shortcuts_ = !show_shortcuts_;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) close_menus();
  if (!io.KeyCtrl) return;
  if (ImGui::IsKeyPressed('N', false)) new_scenario();
  if (ImGui::IsKeyPressed('O', false)) {
    file_action_ = FileAction::Open;
    file_dialog_.open_for_open("Open a scenario", "");
  }
  if (ImGui::IsKeyPressed('S', false)) save(/*ask_for_path=*/io.KeyShift);
  // Text size, as in a browser: Ctrl+= or Ctrl++ larger, Ctrl+- smaller, Ctrl+0 as at start.
  constexpr int kKeyMinus = 45, kKeyZero = 48, kKeyEqual = 61, kKeyPadSubtract = 333, kKeyPadAdd = 334;  // GLFW key codes
  if (ImGui::IsKeyPressed(kKeyEqual, true) || ImGui::IsKeyPressed(kKeyPadAdd, true)) change_text_size(+2.0f);
  if (ImGui::IsKeyPressed(kKeyMinus, true) || ImGui::IsKeyPressed(kKeyPadSubtract, true)) change_text_size(-2.0f);
  if (ImGui::IsKeyPressed(kKeyZero, false)) state_.ui.font_size = start_font_size_;
  if (io.WantTextInput) return;  // a text field has its own undo
  if (ImGui::IsKeyPressed('Z', true) && !io.KeyShift) history_.undo(state_, backend_.time());
  if ((ImGui::IsKeyPressed('Z', true) && io.KeyShift) || ImGui::IsKeyPressed('Y', true)) history_.redo(state_);
}

// Escape closes the open menus, combo lists and pop-ups (ImGui 1.86 does so only with keyboard
// navigation on), but not a dialog that asks something (it handles Escape itself) or what lies
// beneath it.
void App::close_menus() {
  const ImGuiContext& context = *ImGui::GetCurrentContext();
  int keep = 0;  // the popups up to the topmost dialog stay
  for (int level = 0; level < context.OpenPopupStack.Size; ++level) {
    const ImGuiWindow* window = context.OpenPopupStack[level].Window;
    if (window && (window->Flags & ImGuiWindowFlags_Modal)) keep = level + 1;
  }
  if (keep < context.OpenPopupStack.Size) ImGui::ClosePopupToLevel(keep, true);
  else if (context.OpenPopupStack.Size == 0) show_shortcuts_ = false;  // nothing else open: the shortcuts list
}

// -----------------------------------------------------------------------------
// [SECTION] Menu bar and the status bar (notices)
// -----------------------------------------------------------------------------

void App::draw_menu_bar() {
  if (!ImGui::BeginMainMenuBar()) return;
  draw_file_menu();
  if (ImGui::BeginMenu("Edit")) {
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, history_.can_undo(state_))) history_.undo(state_, backend_.time());
    if (ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, history_.can_redo())) history_.redo(state_);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Lessons")) {
    for (const auto& [id, title] : lesson_titles_) {
      const bool current = state_.lesson.active() && state_.lesson.lesson->id == id;
      // "5. Self-attention on real sentences": the number --lesson takes (ids begin "05-").
      const std::string label = std::to_string(std::atoi(id.c_str())) + ". " + title;
      if (ImGui::MenuItem(label.c_str(), nullptr, current))
        replace_scenario("Starting the lesson \"" + title + "\"", [this, id = id] { start_lesson(id); });
    }
    if (state_.lesson.active()) {
      ImGui::Separator();
      if (ImGui::MenuItem("Leave the lesson")) state_.leave_lesson();
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (const auto& panel : panels_) {
      bool& shown = state_.ui.visible[static_cast<std::size_t>(panel->id())];
      ImGui::MenuItem(panel->title(), nullptr, &shown);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Light theme", nullptr, state_.ui.theme == Theme::Light)) state_.ui.theme = Theme::Light;
    if (ImGui::MenuItem("Dark theme", nullptr, state_.ui.theme == Theme::Dark)) state_.ui.theme = Theme::Dark;
    ImGui::Separator();
    if (ImGui::MenuItem("Sequential colormap", nullptr, state_.ui.colormap == view::ColormapId::Sequential))
      state_.ui.colormap = view::ColormapId::Sequential;
    if (ImGui::MenuItem("Colour-blind-safe colormap", nullptr,
                        state_.ui.colormap == view::ColormapId::ColorBlindSafe))
      state_.ui.colormap = view::ColormapId::ColorBlindSafe;
    ImGui::MenuItem("Numbers in heatmap cells", nullptr, &state_.ui.show_cell_values);
    ImGui::MenuItem("Heatmap colours up to the largest \xce\xb1", nullptr, &state_.ui.heatmap_contrast);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Off: the colour scale runs from 0 to 1 in every head.\n"
                        "On: from 0 to the head's largest \xce\xb1, for contrast when many keys share the weight.");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::MenuItem("Keyboard shortcuts", "F1", &show_shortcuts_);
    ImGui::EndMenu();
  }
  // Text size, always in reach for a teacher at a projector: "Text size 16 px [−][+]" against
  // the right edge, the two buttons last, so that they stay (nearly) under the pointer as the
  // text changes size and a few clicks in a row all land.
  const ImGuiStyle& style = ImGui::GetStyle();
  char size_text[16];
  std::snprintf(size_text, sizeof size_text, "%d px", static_cast<int>(state_.ui.font_size));
  const char* minus = "\xe2\x88\x92";
  const char* plus = "+";
  // A width that does not follow the text size (up to about 40 px), so that the buttons stay put.
  const float button_w = std::max({std::round(30.0f * backend_.content_scale()),
                                   ImGui::CalcTextSize(minus).x + style.FramePadding.x * 2.0f,
                                   ImGui::CalcTextSize(plus).x + style.FramePadding.x * 2.0f});
  const float group_w = ImGui::CalcTextSize("Text size").x + ImGui::CalcTextSize("64 px").x + button_w * 2.0f +
                        style.ItemSpacing.x * 3.0f + style.ItemInnerSpacing.x;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - group_w));
  ImGui::TextUnformatted("Text size");
  ImGui::SameLine();
  ImGui::TextUnformatted(size_text);
  ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - button_w * 2.0f - style.ItemInnerSpacing.x);
  if (ImGui::Button(minus, ImVec2(button_w, 0))) change_text_size(-2.0f);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("smaller text (Ctrl+-)");
  ImGui::SameLine(0.0f, style.ItemInnerSpacing.x);
  if (ImGui::Button(plus, ImVec2(button_w, 0))) change_text_size(+2.0f);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("larger text (Ctrl+=; Ctrl+0: as at start)");
  ImGui::EndMainMenuBar();
}

void App::change_text_size(float step) {
  state_.ui.font_size = std::clamp(state_.ui.font_size + step, 10.0f, 64.0f);
}

// The work an earlier run left unsaved, with the file it belongs to (Save writes there); unsaved.
void App::restore_recovered(Autosave::Recovered recovered) {
  const std::string name = std::filesystem::path(recovered.path).filename().string();
  state_.load(std::move(recovered.scenario), std::move(recovered.path), {});
  state_.saved_version = 0;  // not in its file yet
  report(Status::ok(), name.empty() ? "restored the work an earlier run left unsaved"
                                    : "restored the unsaved changes to " + name + ": save to keep them");
}

// The bar at the foot of the window is always there, one height, so that the panels above it
// never move: the offer to restore an earlier run's work, else the notice that matters most
// (app/session/notices.hpp), else the status line (app/session/status_line.hpp).
// Between the panels and around them.
float App::panel_gap() const { return std::round(4.0f * backend_.content_scale()); }

float App::status_bar_height() const {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;  // half the padding above and below
}

// Begins the bar's window in `background` and `text` colours; end_status_bar() ends it.
void App::begin_status_bar(const char* id, ImU32 background, ImU32 text) {
  theme_text_colour_ = ImGui::GetStyleColorVec4(ImGuiCol_Text);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float height = status_bar_height();
  ImGui::SetNextWindowPos(ImVec2(0, display.y - height));
  ImGui::SetNextWindowSize(ImVec2(display.x, height));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, background);
  ImGui::PushStyleColor(ImGuiCol_Text, text);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(ImGui::GetStyle().WindowPadding.x, ImGui::GetStyle().WindowPadding.y * 0.5f));
  ImGui::Begin(id, nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoBringToFrontOnFocus);
  const ImVec2 origin = ImGui::GetWindowPos();  // a hairline along the top edge, as a status bar has
  ImGui::GetWindowDrawList()->AddRectFilled(origin, ImVec2(origin.x + display.x, origin.y + 1.0f),
                                            ImGui::GetColorU32(ImGuiCol_Separator));
  ImGui::AlignTextToFramePadding();
}

// A tooltip over the bar, in the theme's text colour (the bar's own may be white on the
// tooltip's white, or dark grey on the dark theme's).
void App::status_bar_tooltip(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, theme_text_colour_);
  ImGui::SetTooltip("%s", text);
  ImGui::PopStyleColor();
}

void App::end_status_bar() {
  ImGui::End();
  ImGui::PopStyleVar(3);
  ImGui::PopStyleColor(2);
}

void App::draw_recovery_offer() {
  begin_status_bar("##recovery", IM_COL32(40, 110, 200, 255), IM_COL32(255, 255, 255, 255));
  if (recovery_offer_->path.empty()) {
    ImGui::TextUnformatted("AttnViz closed last time with unsaved work. Restore it?");
  } else {
    const std::string name = std::filesystem::path(recovery_offer_->path).filename().string();
    ImGui::Text("AttnViz closed last time with unsaved changes to %s. Restore them?", name.c_str());
    if (ImGui::IsItemHovered()) status_bar_tooltip(recovery_offer_->path.c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button("Restore")) {  // edits made meanwhile are asked about first (the offer stays till then)
    replace_scenario("Restoring the earlier work", [this] {
      if (!recovery_offer_) return;
      restore_recovered(std::move(*recovery_offer_));
      recovery_offer_.reset();
      autosave_.pause(false);
    });
  }
  ImGui::SameLine();
  if (recovery_offer_ && ImGui::Button("Discard")) {
    autosave_.discard();
    recovery_offer_.reset();
  }
  end_status_bar();
  if (!recovery_offer_) autosave_.pause(false);
}

// The notice, as NoticeBoard::choose() gives it: red for an error, green for what went well,
// amber for a warning.
void App::draw_notice(const Notice& notice) {
  const bool is_error = notice.kind == Notice::Kind::Error, is_done = notice.kind == Notice::Kind::Done;
  const bool is_working = notice.kind == Notice::Kind::Working;
  const ImU32 background = is_error ? IM_COL32(190, 40, 40, 255)
                          : is_done ? IM_COL32(40, 140, 70, 255)
                          : is_working ? IM_COL32(40, 110, 200, 255) : IM_COL32(235, 170, 40, 255);
  begin_status_bar("##notices", background,
                   is_error || is_done || is_working ? IM_COL32(255, 255, 255, 255) : IM_COL32(20, 20, 20, 255));
  ImGui::TextUnformatted(is_error ? "\xe2\x9c\x96" : is_done ? "\xe2\x9c\x94"
                         : is_working ? "\xe2\x80\xa6" : "\xe2\x9a\xa0");  // ✖ ✔ … ⚠
  ImGui::SameLine();
  ImGui::TextUnformatted(notice.text.c_str());
  const float text_end = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + ImGui::GetStyle().ItemSpacing.x;
  if (notice.lists_warnings && ImGui::IsItemHovered()) {
    std::string all;
    for (const std::string& warning : state_.file_warnings) all += (all.empty() ? "" : "\n") + warning;
    status_bar_tooltip(all.c_str());
  }
  if (notice.dismiss != Notice::Dismiss::None) {
    const char* label = "Dismiss";
    const float width = ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2;
    ImGui::SameLine(std::max(text_end, ImGui::GetWindowContentRegionMax().x - width));
    if (ImGui::Button(label)) {
      switch (notice.dismiss) {
        case Notice::Dismiss::ActionError: notices_.dismiss_action_error(); break;
        case Notice::Dismiss::FileWarnings: state_.file_warnings.clear(); break;
        case Notice::Dismiss::FontError: font_error_.clear(); break;
        case Notice::Dismiss::AutosaveError: autosave_.clear_error(); break;
        case Notice::Dismiss::None: break;
      }
    }
  }
  end_status_bar();
}

// With nothing to report: the shape of what is shown, and where the keys are explained.
void App::draw_status_line() {
  const ImGuiStyle& style = ImGui::GetStyle();
  begin_status_bar("##status", ImGui::GetColorU32(ImGuiCol_MenuBarBg), ImGui::GetColorU32(ImGuiCol_Text));
  const std::string summary = shape_summary(state_);
  const char* hint = "F1  keys and shortcuts";
  const float hint_width = ImGui::CalcTextSize(hint).x;
  const float right = ImGui::GetWindowContentRegionMax().x;
  // The summary gives way to the hint when the window is narrow (it ends in an ellipsis).
  const float summary_room = right - hint_width - 2 * style.ItemSpacing.x - ImGui::GetCursorPosX();
  ImGui::TextUnformatted(fit_text(summary, summary_room).c_str());
  if (ImGui::IsItemHovered() && ImGui::CalcTextSize(summary.c_str()).x > summary_room)
    status_bar_tooltip(summary.c_str());
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), right - hint_width));
  ImGui::TextDisabled("%s", hint);
  end_status_bar();
}

float App::draw_status_bar() {
  if (recovery_offer_) {
    draw_recovery_offer();
    return status_bar_height();
  }
  NoticeSources sources;
  sources.edit_version = state_.edit_version;
  sources.compute_error = state_.compute_error;
  sources.has_result = state_.has_result;
  sources.exporting = png_export_.valid();
  sources.export_path = png_export_path_;
  sources.file_warnings = &state_.file_warnings;
  sources.pipeline_warnings = &state_.pipeline.warnings();
  sources.font_error = font_error_;
  sources.autosave_error = autosave_.last_error();
  const Notice notice = notices_.choose(sources, backend_.time());
  if (notice.text.empty()) draw_status_line();
  else draw_notice(notice);
  return status_bar_height();
}

// -----------------------------------------------------------------------------
// [SECTION] Panels
// -----------------------------------------------------------------------------

void App::draw_panels(float top, float bottom) {
  if (state_.lesson.active()) state_.broken_lesson_claims();  // the lesson band grows for the note
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float gap = panel_gap();
  const view::Rect area{gap, top + gap, display.x - 2 * gap, bottom - top - 2 * gap};
  state_.layout.panels = view::layout_dashboard(area, state_.ui.visible, gap, lesson_band_height());
  ImGuiIO& io = ImGui::GetIO();
  PanelContext context{heatmaps_, state_.visual_text.escapes(), io.Fonts->Fonts.Size > 1 ? io.Fonts->Fonts[1] : nullptr,
                       io.Fonts->Fonts.Size > 2 ? io.Fonts->Fonts[2] : nullptr};
  // The panels tile the window and their background is the colour the frame is cleared to, so
  // they draw none: a software renderer pays for every pixel of every layer.
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoBackground;
  // Slots in drawing order: editors first, then views, so views show this frame's edits.
  for (view::PanelId slot : {view::PanelId::Lesson, view::PanelId::Input, view::PanelId::Weights,
                             view::PanelId::Heatmaps, view::PanelId::Arrows, view::PanelId::Output}) {
    const view::Rect r = state_.layout.panels[static_cast<std::size_t>(slot)];
    if (r.empty() || !state_.ui.visible[static_cast<std::size_t>(slot)]) continue;
    state_.recompute_if_needed();  // edits made by earlier panels show in this one
    ImGui::SetNextWindowPos(ImVec2(r.x, r.y));
    ImGui::SetNextWindowSize(ImVec2(r.w, r.h));
    // "Predict, then reveal": the views that would show the answer stay covered until then.
    const bool covered = state_.lesson.awaiting_prediction() &&
                         (slot == view::PanelId::Heatmaps || slot == view::PanelId::Arrows || slot == view::PanelId::Output);
    if (slot == view::PanelId::Heatmaps) {
      if (ImGui::Begin("Views##centre", nullptr, flags | ImGuiWindowFlags_NoTitleBar) && state_.has_result) {
        if (covered) draw_cover();
        else draw_centre_views(context);
      }
      ImGui::End();
      continue;
    }
    for (const auto& panel : panels_) {
      if (panel->id() != slot) continue;
      if (ImGui::Begin(panel->title(), nullptr, flags) && state_.has_result) {
        if (covered) draw_cover();
        else panel->draw_content(state_, context);
      }
      ImGui::End();
    }
  }
}

void App::draw_centre_views(PanelContext& context) {
  // The views share the centre as tabs. A change made elsewhere (a lesson step, --view) selects
  // its tab once; after that the tab bar follows the user's clicks.
  const bool select_programmatically = state_.ui.center_view != centre_view_shown_;
  Panel* active = nullptr;
  if (ImGui::BeginTabBar("views", ImGuiTabBarFlags_FittingPolicyScroll)) {  // whole names at large text sizes
    for (const auto& panel : panels_) {
      const std::optional<CenterView> view = panel->center_view();
      if (!view) continue;
      const ImGuiTabItemFlags tab_flags =
          select_programmatically && *view == state_.ui.center_view ? ImGuiTabItemFlags_SetSelected : 0;
      if (ImGui::BeginTabItem(panel->title(), nullptr, tab_flags)) {
        active = panel.get();
        if (!select_programmatically) state_.ui.center_view = *view;
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
  centre_view_shown_ = state_.ui.center_view;
  if (active) active->draw_content(state_, context);
}

void App::draw_cover() {
  const ImVec2 available = ImGui::GetContentRegionAvail();
  const char* text = "Hidden until you predict: pick a word in the lesson bar above.";
  const float width = std::min(available.x, ImGui::CalcTextSize(text).x);
  ImGui::SetCursorPos(ImVec2(ImGui::GetCursorPosX() + (available.x - width) * 0.5f,
                             ImGui::GetCursorPosY() + available.y * 0.45f));
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  ImGui::TextDisabled("%s", text);
  ImGui::PopTextWrapPos();
}

float App::lesson_band_height() const {
  // Tall enough for the title, the wrapped text and, on a predict step, the question and the
  // row of key buttons (measured, so a long text never hides them).
  const LessonStep* step = state_.lesson.current();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize();
  float height = ImGui::GetFrameHeight() + 2 * style.WindowPadding.y + font * 0.4f;  // title bar
  if (step) {
    // The lesson panel's text column: the window less the gaps, the padding, the buttons (16
    // fonts) and a scrollbar's room (lesson_panel.cpp wraps at the same), a little less for safety.
    const float gap = panel_gap();
    const float wrap = ImGui::GetIO().DisplaySize.x - 2 * gap - 2 * style.WindowPadding.x - font * 16.0f -
                       style.ScrollbarSize - font * 0.5f;
    ImFont* bold = ImGui::GetIO().Fonts->Fonts.Size > 1 ? ImGui::GetIO().Fonts->Fonts[1] : nullptr;
    if (bold) ImGui::PushFont(bold);
    const std::string heading = wrap_text_at_spaces(lesson_step_heading(state_.lesson), std::max(wrap, font * 10.0f));
    height += ImGui::CalcTextSize(heading.c_str()).y + style.ItemSpacing.y;
    if (bold) ImGui::PopFont();
    const std::string text = wrap_text_at_spaces(expand_lesson_text(step->text, state_.pipeline), std::max(wrap, font * 10.0f));
    height += ImGui::CalcTextSize(text.c_str()).y;
    if (!state_.broken_claims.empty() && state_.claims_version == state_.edit_version)
      height += ImGui::GetFrameHeightWithSpacing();  // "Since your change, the text no longer holds"
    if (step->predict) height += font * 1.4f + ImGui::GetFrameHeightWithSpacing() * 1.1f;
  }
  return std::round(std::max(height, ImGui::GetFrameHeightWithSpacing() * 3.2f + font));
}

// -----------------------------------------------------------------------------
// [SECTION] Files: open, save, export
// -----------------------------------------------------------------------------

void App::new_scenario() {
  replace_scenario("The built-in scenario", [this] {
    Result<Scenario> load = parse_scenario(builtin_scenario_json());
    if (load.ok()) {
      state_.leave_lesson();
      state_.load(std::move(*load), "", {});
    }
  });
}

void App::draw_file_menu() {
  if (!ImGui::BeginMenu("File")) return;
  const auto ask = [&](FileAction action, const char* title, const char* name, const char* extension) {
    file_action_ = action;
    file_dialog_.open_for_save(title, "", name, extension);
  };
  if (ImGui::MenuItem("New (the built-in scenario)", "Ctrl+N")) new_scenario();
  if (ImGui::MenuItem("Open\xe2\x80\xa6", "Ctrl+O")) {
    file_action_ = FileAction::Open;
    file_dialog_.open_for_open("Open a scenario", "");
  }
  if (ImGui::BeginMenu("Open recent", !recent_.entries().empty())) {
    std::optional<std::string> chosen;
    for (const std::string& path : recent_.entries())
      if (ImGui::MenuItem(path.c_str())) chosen = path;
    ImGui::Separator();
    if (ImGui::MenuItem("Clear the list")) {
      recent_.clear();
      static_cast<void>(recent_.save());  // best effort (recent_files.hpp)
    }
    ImGui::EndMenu();
    if (chosen) open_file_replacing(*chosen);
  }
  if (ImGui::MenuItem("Save", "Ctrl+S")) save(false);
  if (ImGui::MenuItem("Save as\xe2\x80\xa6", "Ctrl+Shift+S")) save(true);
  ImGui::Separator();
  if (ImGui::BeginMenu("Export")) {
    ImGui::TextUnformatted("PNG scale:");
    for (int scale : {1, 2, 3}) {
      ImGui::SameLine();
      char label[8];
      std::snprintf(label, sizeof label, "%d\xc3\x97", scale);
      if (ImGui::RadioButton(label, export_scale_ == scale)) export_scale_ = scale;
    }
    if (ImGui::MenuItem("Window as PNG\xe2\x80\xa6")) {
      png_crop_ = {};
      ask(FileAction::Png, "Export the window as PNG", "attnviz.png", ".png");
    }
    if (ImGui::BeginMenu("Panel as PNG")) {
      static constexpr const char* kNames[] = {"Input", "Weights", "Views (centre)", "Arrows", "Output", "Lesson"};
      for (int i = 0; i < view::kPanelCount; ++i) {
        const view::Rect r = state_.layout.panels[static_cast<std::size_t>(i)];
        if (!r.empty() && ImGui::MenuItem(kNames[i])) {
          png_crop_ = r;
          ask(FileAction::Png, "Export a panel as PNG", "attnviz-panel.png", ".png");
        }
      }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Heatmap of the selected head as SVG\xe2\x80\xa6"))
      ask(FileAction::HeatmapSvg, "Export the heatmap as SVG", "heatmap.svg", ".svg");
    if (ImGui::MenuItem("Arrows of the selected head as SVG\xe2\x80\xa6"))
      ask(FileAction::ArrowsSvg, "Export the arrows as SVG", "arrows.svg", ".svg");
    if (ImGui::MenuItem("Arrows of all heads as SVG\xe2\x80\xa6"))
      ask(FileAction::AllHeadsArrowsSvg, "Export the arrows as SVG", "arrows-all-heads.svg", ".svg");
    if (ImGui::MenuItem("Every matrix as CSV files\xe2\x80\xa6"))
      ask(FileAction::MatricesCsv, "Export every matrix as CSV into a new folder", "attnviz-matrices", "");
    if (ImGui::MenuItem("Every matrix as JSON\xe2\x80\xa6"))
      ask(FileAction::ResultJson, "Export every matrix as JSON", "attnviz-result.json", ".json");
    ImGui::EndMenu();
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Quit", "Ctrl+Q")) backend_.request_close();
  ImGui::EndMenu();
}

void App::save(bool ask_for_path) {
  if (ask_for_path || state_.scenario_path.empty() || state_.lesson.active()) {
    file_action_ = FileAction::SaveAs;
    // In the file's folder, its name proposed (a folder browsed to then is where it goes).
    const std::filesystem::path current(state_.scenario_path);
    file_dialog_.open_for_save("Save the scenario", current.empty() ? "" : current.parent_path().string(),
                               current.empty() ? file_name_for(state_.scenario.title) : current.filename().string(), ".json");
    return;
  }
  report(save_scenario(state_, recent_, state_.scenario_path), "saved " + state_.scenario_path);
  if (!state_.unsaved()) autosave_.discard();
}

// The question before unsaved edits are replaced: save them first, discard them, or cancel.
void App::draw_unsaved_question() {
  constexpr const char* kTitle = "Unsaved changes";
  if (saving_first_ && !file_dialog_.is_open()) {  // the Save As dialog was closed without saving
    saving_first_ = false;
    unsaved_guard_.cancel();
  }
  if (!unsaved_guard_.asking() || saving_first_) return;
  if (!ImGui::IsPopupOpen(kTitle)) {
    ImGui::OpenPopup(kTitle);
    unsaved_question_frame_ = ImGui::GetFrameCount();
  }
  ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal(kTitle, nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) return;
  // Return and Escape answer only once the question has been on screen: the Return that chose a
  // file in the Open dialog (the frame the question comes up in) is not a "Save first".
  const bool keys_answer = ImGui::GetFrameCount() > unsaved_question_frame_;
  ImGui::TextUnformatted(unsaved_guard_.question(state_).c_str());
  ImGui::TextUnformatted(unsaved_guard_.consequence().c_str());
  ImGui::Spacing();
  // Save first is the default (Return): nothing is lost that way.
  ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  const bool save_first = ImGui::Button("Save first") ||
                          (keys_answer && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false) ||
                                           ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter), false)));
  ImGui::PopStyleColor();
  if (save_first) {
    ImGui::CloseCurrentPopup();
    if (state_.scenario_path.empty()) {  // a file to save into first
      saving_first_ = true;
      save(true);
    } else {
      save(false);
      unsaved_guard_.saved(state_);  // a failed save shows why, and nothing is replaced
    }
  }
  ImGui::SameLine();
  if (ImGui::Button("Discard the changes")) {
    ImGui::CloseCurrentPopup();
    unsaved_guard_.discard();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || (keys_answer && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))) {
    ImGui::CloseCurrentPopup();
    unsaved_guard_.cancel();
  }
  ImGui::EndPopup();
}

void App::report(const Status& status, const std::string& success) {
  if (status) notices_.succeeded(success, backend_.time());
  else notices_.failed(status.message(), state_.edit_version);
}

void App::handle_file_dialog() {
  const std::optional<std::string> chosen = file_dialog_.draw();
  if (!chosen) return;
  const FileAction action = file_action_;
  file_action_ = FileAction::None;
  switch (action) {
    case FileAction::Open:
      open_file_replacing(*chosen);
      break;
    case FileAction::SaveAs:
      if (Status status = save_scenario(state_, recent_, *chosen); status) {
        state_.leave_lesson();
        autosave_.discard();
        report(status, "saved " + *chosen);
      } else {
        report(status, "");
      }
      if (saving_first_) {  // then what the save was for, if it saved
        saving_first_ = false;
        unsaved_guard_.saved(state_);
      }
      break;
    case FileAction::HeatmapSvg: report(export_heatmap_svg(state_, *chosen), "exported " + *chosen); break;
    case FileAction::ArrowsSvg: report(export_arrows_svg(state_, *chosen, false), "exported " + *chosen); break;
    case FileAction::AllHeadsArrowsSvg: report(export_arrows_svg(state_, *chosen, true), "exported " + *chosen); break;
    case FileAction::MatricesCsv: report(export_matrices_csv(state_, *chosen), "exported the matrices into " + *chosen); break;
    case FileAction::ResultJson: report(export_result_json(state_, *chosen), "exported " + *chosen); break;
    case FileAction::Png: png_request_ = PngRequest{*chosen, png_crop_, export_scale_, ImGui::GetFrameCount()}; break;
    case FileAction::None: break;
  }
}

void App::capture_png_if_requested() {
  // The frame in which the file dialog gave the path still shows the dialog: the next one.
  if (ImGui::GetFrameCount() <= png_request_->frame) {
    backend_.render_without_present();
    return;
  }
  const float detail = static_cast<float>(png_request_->scale);
  if (fonts_loaded_detail_ != detail) {  // rasterize the glyphs at the scale first (next frame)
    font_detail_ = detail;
    backend_.render_without_present();
    return;
  }
  backend_.render_without_present();
  // The picture is taken now; compressing and writing it (a second or so at 2x) goes on on a
  // thread of its own while the app goes on drawing.
  std::string error;
  std::optional<Picture> picture = take_picture(png_request_->crop, png_request_->scale, error);
  if (!picture) {
    report(Status::error(error), "");
  } else {
    finish_png_export(true);  // one at a time
    png_export_path_ = png_request_->path;
    png_export_ = std::async(std::launch::async, [picture = std::move(*picture), path = png_request_->path] {
      return save_picture(picture, path);
    });
  }
  png_request_.reset();
  font_detail_ = 1;  // back to the screen's glyphs on the next frame
}

void App::finish_png_export(bool wait) {
  if (!png_export_.valid()) return;
  if (!wait && png_export_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    state_.redraw_within(0.05);  // look again soon
    return;
  }
  report(png_export_.get(), "exported " + png_export_path_);
}

void App::draw_help_window() {
  if (!show_shortcuts_) return;
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 26, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Keyboard shortcuts", &show_shortcuts_, ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize)) {
    static constexpr const char* kShortcuts[][2] = {
        {"Ctrl+N", "new: the built-in scenario"},
        {"Ctrl+O", "open a scenario"},
        {"Ctrl+S", "save (Save as the first time)"},
        {"Ctrl+Shift+S", "save as"},
        {"Ctrl+Z", "undo (a whole drag or burst of typing is one step)"},
        {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
        {"Ctrl+= / Ctrl+-", "larger / smaller text (Ctrl+0: as at start)"},
        {"Ctrl+Q", "quit"},
        {"F1", "this list"},
        {"Escape", "close a menu, a list or this window; cancel a question; leave a sentence field"},
        {"drag a weight cell", "change it (Shift: finer); double-click to type"},
        {"click a token or row", "make it the selected query"},
        {"drop a file on the window", "open a scenario or a lesson"},
    };
    if (ImGui::BeginTable("shortcuts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_PadOuterX)) {
      // The keys' column as wide as its longest entry, and a gap before the second.
      ImGui::TableSetupColumn("keys", ImGuiTableColumnFlags_WidthFixed,
                              ImGui::CalcTextSize("drop a file on the window").x + ImGui::GetFontSize());
      ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
      for (const auto& [keys, what] : kShortcuts) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(keys);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what);
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

// -----------------------------------------------------------------------------
// [SECTION] Benchmark
// -----------------------------------------------------------------------------

namespace {

// Peak resident memory of this process in MB (VmHWM), or -1 where /proc is not available.
double peak_resident_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  return -1.0;
}

// Milliseconds since the kernel started this process (so the dynamic loader counts too), or -1.
double ms_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // Field 22, starttime in clock ticks since boot, counted after the ")" that ends field 2.
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {}
  timespec now{};
  if (field.empty() || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1.0;
  const double start_s = std::strtod(field.c_str(), nullptr) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return (static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 - start_s) * 1000.0;
}

// CPU time used by every thread of this process so far, in milliseconds.
double process_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) * 1e-3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// Draw calls in the last rendered frame (one per ImDrawCmd).
int draw_call_count() {
  const ImDrawData* data = ImGui::GetDrawData();
  int count = 0;
  for (int i = 0; data && i < data->CmdListsCount; ++i) count += data->CmdLists[i]->CmdBuffer.Size;
  return count;
}

double percentile(std::vector<double> sorted_values, double fraction) {
  std::sort(sorted_values.begin(), sorted_values.end());
  const auto index = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted_values.size()))) - 1;
  return sorted_values[std::min(index, sorted_values.size() - 1)];
}

}  // namespace

// Renders `frames` frames with vsync off as fast as it can, each frame editing one weight as a
// drag would (so every frame recomputes attention and redraws every view), and prints the CPU
// time per frame: from the start of the frame to the GL having finished drawing it.
int App::run_bench(int frames) {
  using Clock = std::chrono::steady_clock;
  constexpr int kWarmUpFrames = 10;  // fonts, textures and first-use allocations; not counted
  double first_frame_ms = -1;
  double build_ms_total = 0;
  double cpu_ms_at_start = 0;  // the part of the frame spent before rendering: events, recompute, panels
  std::vector<double> frame_ms;
  frame_ms.reserve(static_cast<std::size_t>(frames));
  for (int i = 0; i < kWarmUpFrames + frames; ++i) {
    const Clock::time_point start = Clock::now();
    // One weight of the selected head moves by a little each frame, back and forth: a key's, so
    // that every query's scores change and with them every view of the head (a query's weight
    // leaves alone the queries whose tokens have 0 in its feature, and the Output view's query 0
    // is one in the benchmark scenarios).
    HeadParameters& head = state_.scenario.parameters.heads[static_cast<std::size_t>(state_.selection.head)];
    head.W_K(0, 0) += (i % 2 == 0 ? 1e-3f : -1e-3f);
    state_.mark_edited();
    frame();
    const Clock::time_point built = Clock::now();
    backend_.end_frame();
    backend_.finish();
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (i >= kWarmUpFrames) build_ms_total += std::chrono::duration<double, std::milli>(built - start).count();
    if (i == 0) first_frame_ms = ms_since_process_start();
    if (i >= kWarmUpFrames) frame_ms.push_back(elapsed);
    if (i + 1 == kWarmUpFrames) cpu_ms_at_start = process_cpu_ms();
  }
  const double cpu_ms_per_frame = (process_cpu_ms() - cpu_ms_at_start) / frames;
  const double max_ms = *std::max_element(frame_ms.begin(), frame_ms.end());
  std::printf("p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", percentile(frame_ms, 0.50), percentile(frame_ms, 0.99), max_ms);
  const AttentionResult& r = state_.result();
  std::fprintf(stderr,
               "attnviz: bench: %d frames (after %d warm-up) at %dx%d, %s view, %lld queries x %lld keys, %d heads, "
               "d_model %d; mean %.2f ms building the frame (recompute and panels), the rest drawing it; "
               "%.2f ms of CPU per frame in all threads (the renderer's too); %d vertices, %d triangles, %d draw calls; "
               "%d windows shown from kept pictures; "
               "first frame %.0f ms after start; peak resident memory %.0f MB%s%s\n",
               frames, kWarmUpFrames, options_.width, options_.height, std::string(to_string(state_.ui.center_view)).c_str(),
               static_cast<long long>(r.n_query), static_cast<long long>(r.n_key), r.config.heads, r.config.d_model,
               build_ms_total / frames, cpu_ms_per_frame, ImGui::GetIO().MetricsRenderVertices, ImGui::GetIO().MetricsRenderIndices / 3,
               draw_call_count(), backend_.windows_reused(),
               first_frame_ms, peak_resident_mb(), state_.compute_error.empty() ? "" : "; error: ",
               state_.compute_error.c_str());
  return state_.compute_error.empty() ? 0 : 1;
}

// -----------------------------------------------------------------------------
// [SECTION] Screenshot
// -----------------------------------------------------------------------------

void App::render_frames() {
  for (int i = 0; i < options_.frames; ++i) {
    frame();
    if (i + 1 < options_.frames) backend_.end_frame();
  }
}

std::optional<App::Picture> App::take_picture(const view::Rect& crop, int scale_factor, std::string& error) {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels = scale_factor > 1 ? backend_.render_offscreen(scale_factor, width, height, error)
                                                      : backend_.read_pixels(width, height);
  if (pixels.empty()) {
    if (error.empty()) error = "cannot read the picture";
    return std::nullopt;
  }
  // The crop is in layout coordinates: pixels per layout unit follow the picture's size.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const ImVec2 scale(static_cast<float>(width) / display.x, static_cast<float>(height) / display.y);
  Picture picture{0, 0, width, height, width, std::move(pixels)};
  if (!crop.empty()) {
    picture.x = std::clamp(static_cast<int>(crop.x * scale.x), 0, width - 1);
    picture.y = std::clamp(static_cast<int>(crop.y * scale.y), 0, height - 1);
    picture.width = std::clamp(static_cast<int>(crop.w * scale.x), 1, width - picture.x);
    picture.height = std::clamp(static_cast<int>(crop.h * scale.y), 1, height - picture.y);
  }
  return picture;
}

Status App::save_picture(const Picture& picture, const std::string& path) {
  const std::uint8_t* first =
      picture.pixels.data() + (static_cast<std::size_t>(picture.y) * static_cast<std::size_t>(picture.stride) + static_cast<std::size_t>(picture.x)) * 4;
  // stb writes straight to the path: write a sibling temporary file and rename it into place.
  const std::string temporary = path + ".partial";
  if (!stbi_write_png(temporary.c_str(), picture.width, picture.height, 4, first, picture.stride * 4)) {
    std::remove(temporary.c_str());
    return Status::error("cannot write the PNG to " + path);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return Status::error("cannot write the PNG to " + path);
  }
  return Status::ok();
}

Status App::write_png(const std::string& path, const view::Rect& crop, int scale_factor) {
  std::string error;
  const std::optional<Picture> picture = take_picture(crop, scale_factor, error);
  return picture ? save_picture(*picture, path) : Status::error(error);
}

int App::write_screenshot(const std::string& path) {
  backend_.render_without_present();
  int width = 0, height = 0;
  backend_.framebuffer_size(width, height);
  if (Status status = write_png(path, {}, options_.scale); !status) {
    std::cerr << "attnviz: error: " << status.message() << '\n';
    return 1;
  }
  if (options_.layout_out) {
    const view::HeatmapGeometry& g = state_.layout.heatmap;
    std::ofstream out(*options_.layout_out);
    out << "{\"width\": " << width << ", \"height\": " << height
        << ", \"heatmap\": {\"head\": " << state_.layout.heatmap_head << ", \"rows\": " << g.rows
        << ", \"cols\": " << g.cols << ", \"x\": " << g.grid.x << ", \"y\": " << g.grid.y
        << ", \"cell_w\": " << g.cell_w << ", \"cell_h\": " << g.cell_h
        << ", \"show_values\": " << (g.show_values ? "true" : "false") << "}, \"colormap\": \""
        << view::to_string(state_.ui.colormap) << "\", \"windows_from_kept_pictures\": " << backend_.windows_reused()
        << ", \"status_bar_y\": " << ImGui::GetIO().DisplaySize.y - status_bar_height() << "}\n";
    if (!out) {
      std::cerr << "attnviz: error: cannot write " << *options_.layout_out << '\n';
      return 1;
    }
  }
  if (!state_.compute_error.empty()) std::cerr << "attnviz: warning: " << state_.compute_error << '\n';
  return 0;
}

}  // namespace attnviz::app
