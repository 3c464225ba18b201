// The frame loop: start-up, one frame, the pause between frames. What is drawn around the
// panels, and the commands they all call, are in the files shell.hpp lists.
#include "app/shell/app.hpp"

#include "app/platform/platform.hpp"
#include "app/session/file_actions.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // the caret blink timer of the text field being typed into

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <limits>

#include "app/session/state_dir.hpp"
#include "app/session/status_line.hpp"
#include "app/session/view_state.hpp"
#include "app/session/welcome.hpp"
#include "app/shell/headless.hpp"
#include "core/lessons/lesson.hpp"

namespace attnviz::app {

// -----------------------------------------------------------------------------
// [SECTION] Start
// -----------------------------------------------------------------------------

App::App(Options options) : shell_(std::move(options)) {}

Status App::start() {
  const Options& options = shell_.options;
  AppState& state = shell_.state;
  Result<std::vector<HostedPanel>> panels = make_panels();
  if (!panels) return panels.status();
  shell_.panels = std::move(*panels);
  // The scenario first. A bad file makes a picture or a benchmark an error before any window
  // opens; a user who opened it (a double-click in a file manager) gets the window, on the
  // built-in scenario, with the reason in the status bar (and on standard error).
  const bool headless = options.screenshot || options.screenshot_steps || options.bench_frames;
  Result<Scenario> load = options.scenario_path.empty() ? parse_scenario(builtin_scenario_json())
                                                        : load_scenario_file(options.scenario_path);
  std::string not_opened;
  if (!load.ok()) {
    if (headless) return load.status();
    std::cerr << "attnviz: error: " << load.error() << '\n';
    not_opened = "not opened: " + load.error();
    load = parse_scenario(builtin_scenario_json());
  }
  state.computed.pipeline.set_threads(options.threads.value_or(default_engine_threads()));
  // --threads N: N for the UI thread's products too (--threads 1 splits none, for comparing).
  state.computed.product_threads = options.threads.value_or(default_product_threads());
  if (platform::kBrowser) state.computed.model_files_ready = platform::model_files_ready;
  // A real model's recompute runs off this thread: a frame waits 8 ms for it, then shows the last
  // result until it arrives. Pictures wait for every result.
  // (So does the random-action test: a seed makes the same run.)
  if (!options.screenshot && !options.screenshot_steps && !options.monkey)
    state.computed.wait_for_model = std::chrono::milliseconds(8);
  // A model: --model's, or the file's. One that does not open is as a bad file.
  if (options.model) load->spec = ModelSpec::named(recorded_model_name(*options.model));
  if (Status status = prepare_model_scenario(state, *load, options.scenario_path); !status) {
    if (headless) return status;
    std::cerr << "attnviz: error: " << status.message() << '\n';
    not_opened = "not opened: " + status.message();
    load = parse_scenario(builtin_scenario_json());
  }
  const std::string view_json = load->view_json;
  state.load(std::move(*load), not_opened.empty() ? options.scenario_path : "",
             std::move(load.warnings));
  apply_view_state(view_json, state, state.file_warnings);
  if (options.theme) state.ui.theme = *options.theme;
  if (options.panels) state.ui.visible = *options.panels;
  if (options.colormap) state.ui.colormap = *options.colormap;
  if (!options.lesson.empty()) {
    Result<Lesson> lesson = load_lesson(options.lesson);
    if (!lesson.ok()) return lesson.status();
    state.start_lesson(std::move(*lesson), options.step.value_or(0));
  }
  if (options.view) state.ui.center_view = *options.view;
  shell_.requested_tab = options.tab;
  if (options.layer) state.selection.layer = *options.layer;
  if (options.head) state.selection.head = *options.head;
  if (options.query) state.selection.query = *options.query;
  // A readable default for the window: 16 px at 720 lines, growing with the window, and following
  // it as it is resized until a size is chosen.
  const float height = static_cast<float>(options.height);
  // With --presenter, --font-size is presenter mode's text size.
  const std::optional<float> dashboard_size = options.presenter ? std::nullopt : options.font_size;
  const std::optional<float> presenter_size = options.presenter ? options.font_size : std::nullopt;
  state.ui.font_size = dashboard_size.value_or(view::suited_font_size(height));
  state.ui.font_size_chosen = dashboard_size.has_value();
  state.ui.presenter_font_size = presenter_size.value_or(view::suited_presenter_font_size(height));
  state.ui.presenter_font_size_chosen = presenter_size.has_value();
  state.ui.presenter = options.presenter;
  // --scale: the same layout rendered offscreen at N times the pixels, glyphs rasterized to match.
  shell_.fonts.detail = static_cast<float>(options.scale);

  // Recovery: earlier runs' unsaved work, the oldest offered first. It is set aside first, so
  // that this run's autosave protects the new work while the offer waits without ever writing
  // over the earlier work. Screenshots never write, move or remove any of it; --recover restores
  // it.
  shell_.autosave = Autosave(app_state_dir());
  shell_.autosave.set_read_only(headless);
  shell_.recent = RecentFiles(default_recent_files_path());
  shell_.recent.load();
  if (Status kept = shell_.autosave.keep_earlier_work(); !kept)
    std::cerr << "attnviz: warning: " << kept.message() << '\n';
  Result<std::optional<Autosave::Recovered>> recovery = shell_.autosave.recoverable();
  std::optional<Autosave::Recovered> recovered =
      recovery.ok() ? std::move(*recovery) : std::nullopt;
  std::optional<Autosave::Recovered> to_restore;  // --recover: restored once the window is open
  if (recovered) {
    if (options.recover)
      to_restore = std::move(recovered);
    else if (!headless)
      shell_.recovery_offer = std::move(recovered);
  } else if (options.recover) {
    return Status::error(recovery.ok() ? "--recover: there is no unsaved work to restore (" +
                                             shell_.autosave.path() + ")"
                                       : recovery.error());
  }

  for (const BuiltinLesson& builtin : builtin_lessons()) {
    const Result<Lesson> lesson = parse_lesson(builtin.json, std::string(builtin.id));
    if (lesson.ok()) shell_.lesson_titles.emplace_back(std::string(builtin.id), lesson->title);
  }
  // The welcome, on a first start with nothing named to show (and no earlier work offered back).
  StartRequest start;
  start.names_something = !options.scenario_path.empty() || options.model.has_value() ||
                          !options.lesson.empty() || options.presenter ||
                          shell_.recovery_offer.has_value() || to_restore.has_value();
  start.headless = headless || options.monkey.has_value();
  // Not in the browser: a page is opened on a link a teacher gives (docs/browser.md).
  shell_.show_welcome =
      options.welcome || (!platform::kBrowser && offers_welcome(app_state_dir(), start));
  shell_.show_guide = options.guide;

  platform::WindowOptions window;
  window.width = options.width;
  window.height = options.height;
  window.vsync = !headless && !options.monkey;
  window.title = "AttnViz";
  if (Status status = shell_.backend.init(window); !status) return status;
  shell_.backend.set_ignore_mouse(headless || options.monkey);
  if (Status status = shell_.heatmaps.init(); !status) return status;
  if (to_restore) {
    commands_.restore_recovered(std::move(*to_restore));  // its notice needs the clock
    if (!headless) commands_.offer_next_recovery();       // an earlier run's work besides
  }
  state.recompute_if_needed();
  if (!not_opened.empty()) shell_.notices.failed(not_opened, state.document.version());
  return Status::success();
}

int App::run() {
  if (shell_.options.monkey) {  // before start(): its own folder, and state folder, first
    // Files named on the command line are found from where it was typed, not the monkey's folder.
    Options& named = shell_.options;
    const auto absolute = [](std::string& path) {
      std::error_code error;
      if (!path.empty()) path = std::filesystem::absolute(path, error).string();
    };
    absolute(named.scenario_path);
    if (named.model && named.model->find('/') != std::string::npos) absolute(*named.model);
    if (named.lesson.find('/') != std::string::npos || named.lesson.ends_with(".json"))
      absolute(named.lesson);
    monkey_ = std::make_unique<Monkey>(shell_, commands_, *shell_.options.monkey,
                                       shell_.options.monkey_actions);
    if (Status status = monkey_->prepare(); !status) {
      std::cerr << "attnviz: error: " << status.message() << '\n';
      return 1;
    }
    shell_.backend.set_clock(0.0);
  }
  if (Status status = start(); !status) {
    std::cerr << "attnviz: error: " << status.message() << '\n';
    platform::show_start_error(status.message());
    return 1;
  }
  const Options& options = shell_.options;
  const FrameFunction frame = [this] { this->frame(); };
  if (options.screenshot_steps) return run_lesson_screenshots(shell_, frame);
  if (options.bench_frames) return run_bench(shell_, frame, *options.bench_frames);
  if (options.screenshot) return run_screenshot(shell_, frame);
  if (monkey_) return run_monkey();
  platform::Backend& backend = shell_.backend;
  pacer_ = FramePacer(backend.refresh_rate());
  // ATTNVIZ_EXIT_AFTER=SECONDS closes the window after that long and reports how many frames were
  // drawn (the tests check that an idle app sleeps).
  const char* exit_after_text = std::getenv("ATTNVIZ_EXIT_AFTER");
  exit_after_ = exit_after_text ? std::strtod(exit_after_text, nullptr) : 0.0;
  loop_start_ = backend.time();
  if (platform::kBrowser) {
    // The page calls a pass for every frame it shows (requestAnimationFrame); main() returns and
    // the app lives on (main.cpp keeps it).
    platform::PageHooks hooks;
    hooks.app = this;
    hooks.frame = [](void* app) { static_cast<App*>(app)->browser_pass(); };
    hooks.run_frames_now = [](void* app, int frames) {
      static_cast<App*>(app)->run_frames_now(frames);
    };
    hooks.wants_text = [](void*) { return ImGui::GetIO().WantTextInput; };
    hooks.layout_json = [](void* app) { return static_cast<App*>(app)->layout_text(); };
    hooks.settled = [](void* app) {
      return static_cast<App*>(app)->next_plan_.sleeps_until_input();
    };
    platform::run_page_frames(hooks);
    return 0;
  }
  while (interactive_pass()) wait_for_next_frame();
  return finish_interactive();
}

bool App::interactive_pass() {
  platform::Backend& backend = shell_.backend;
  // The window's close button, as Ctrl+Q: unsaved edits are asked about first.
  if (backend.should_close() && !shell_.quit_agreed) {
    backend.cancel_close();
    commands_.quit();
  }
  if (shell_.quit_agreed) return false;
  this->frame();
  if (shell_.png.request) {
    capture_png_if_requested(shell_,
                             commands_);  // renders this frame into the back buffer and reads it
    backend.present();
  } else {
    backend.end_frame();
  }
  ++frames_drawn_;
  if (exit_after_ > 0 && backend.time() - loop_start_ >= exit_after_) shell_.quit_agreed = true;
  return !shell_.quit_agreed;
}

int App::finish_interactive() {
  const Options& options = shell_.options;
  platform::Backend& backend = shell_.backend;
  if (exit_after_ > 0)
    std::fprintf(stderr, "attnviz: %ld frames in %.1f s\n", frames_drawn_,
                 backend.time() - loop_start_);
  if (options.layout_out)
    if (Status status = write_layout(shell_); !status)
      std::cerr << "attnviz: error: " << status.message() << '\n';
  // A clean exit keeps the recovery file only while there are unsaved edits the user did not
  // choose to discard, and then with the last of them (typed just before Ctrl+Q, within the
  // autosave's interval; or a lesson's, which quits without asking). An earlier run's work still
  // offered is kept apart, and offered again at the next start.
  if (!shell_.state.unsaved() || shell_.quit_discards_edits)
    shell_.autosave.discard();
  else
    shell_.autosave.observe(shell_.state, std::numeric_limits<double>::infinity());
  return 0;
}

int App::run_monkey() {
  platform::Backend& backend = shell_.backend;
  backend.set_input_hook([this](std::vector<unsigned>& typed) { monkey_->give_input(typed); });
  while (!monkey_->done()) {
    backend.set_clock(monkey_->clock());
    monkey_->before_frame();
    if (!interactive_pass()) {  // Quit, and its question answered: the run goes on
      monkey_->quit_agreed();
      shell_.quit_agreed = false;
      shell_.quit_discards_edits = false;
      backend.cancel_close();
    }
  }
  const int status = finish_interactive();
  std::cerr << monkey_->summary() << '\n';
  backend.set_input_hook({});
  return status;
}

// The browser's frame: a pass when the plan says one is due (input since it was made, or a change
// due by itself), so that an idle page draws nothing. Quitting ends the loop.
void App::browser_pass() {
  platform::Backend& backend = shell_.backend;
  backend.follow_page();
  const double now = backend.time();
  const bool input = backend.input_events() != events_at_plan_;
  if (frames_drawn_ > 0 && (now < next_plan_.earliest || (!input && now < next_plan_.latest)))
    return;
  if (!interactive_pass()) {
    platform::stop_page_frames();
    finish_interactive();
    return;
  }
  next_plan_ = plan_next_frame();
  events_at_plan_ = backend.input_events();
  platform::after_page_frame(frames_drawn_, ImGui::GetIO().WantTextInput);
}

void App::run_frames_now(int frames) {
  for (int i = 0; i < frames && !shell_.quit_agreed; ++i) {
    if (!interactive_pass()) return;
    next_plan_ = plan_next_frame();
    events_at_plan_ = shell_.backend.input_events();
  }
}

std::string App::layout_text() {
  int width = 0, height = 0;
  shell_.backend.framebuffer_size(width, height);
  return layout_json_text(shell_, width, height);
}

// -----------------------------------------------------------------------------
// [SECTION] Frame
// -----------------------------------------------------------------------------

void App::frame() {
  AppState& state = shell_.state;
  platform::Backend& backend = shell_.backend;
  frame_start_ = backend.time();
  state.frame.redraw_in = std::numeric_limits<double>::infinity();
  commands_.follow_window_size();
  state.frame.layout.labels = {};
  state.frame.layout.model_grid = {};
  state.frame.layout.tabs.clear();
  state.frame.layout.sentence_field = {};
  state.frame.values.clear();
  apply_theme_and_fonts(shell_);
  if (const std::vector<std::string> dropped = backend.take_dropped_files(); !dropped.empty())
    commands_.open_dropped_files(dropped);
  backend.new_frame();
  stand_in_for_wide_characters(shell_);
  shell_.heatmaps.begin_frame(state.ui.theme == Theme::Dark);
  state.frame.visual_text.new_frame();
  state.frame.hovered = state.frame.hovered_next;
  state.frame.hovered_next = {};
  state.recompute_if_needed();

  handle_shortcuts(shell_, commands_);
  backend.set_title(window_title(state));
  // Presenter mode: no menu or status bar, only what the class is to look at.
  float menu_height = 0, status_height = 0;
  if (!state.ui.presenter) {
    draw_main_menu(shell_, commands_);
    menu_height = ImGui::GetFrameHeight();
    status_height = draw_status_bar(shell_, commands_);
  }
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  draw_panels(shell_, commands_, menu_height, display.y - status_height);
  state.apply_queued_edits();  // those of the last panel drawn
  // What an edit did besides what was asked (cross mode turned the causal mask off).
  if (std::string notice = state.document.take_notice(); !notice.empty())
    shell_.notices.succeeded(std::move(notice), backend.time());
  state.frame.visual_text.escapes()
      .take_typed();  // emoji typed with no sentence field to take them
  commands_.handle_file_dialog();
  finish_png_export(shell_, commands_, false);
  draw_unsaved_question(shell_, commands_);
  draw_help_window(shell_, commands_);
  draw_guide_window(shell_);
  draw_welcome_window(shell_, commands_);
  // One undo step per gesture: a drag or a burst of typing counts once it comes to rest.
  // (--bench-frames edits a weight every frame as one long drag would: one gesture.)
  shell_.history.observe(state, ImGui::IsAnyItemActive() || shell_.options.bench_frames.has_value(),
                         backend.time());
  shell_.autosave.observe(state, backend.time());
}

// When the next frame is due: at once while the user is doing something, after input for a few
// frames, when something drawn changes by itself, else when input comes.
FramePlan App::plan_next_frame() {
  platform::Backend& backend = shell_.backend;
  const ImGuiIO& io = ImGui::GetIO();
  FrameActivity activity;
  activity.now = backend.time();
  activity.frame_start = frame_start_;
  activity.input_events = backend.input_events();
  // A text field stays the active item while it has the keyboard: what it shows changes with
  // keys (input) and its caret (text_input), not every frame.
  const auto held = [](const auto& buttons) {
    return std::any_of(std::begin(buttons), std::end(buttons), [](bool down) { return down; });
  };
  activity.interacting =
      (ImGui::IsAnyItemActive() && !io.WantTextInput) || held(io.MouseDown) || held(io.KeysDown) ||
      shell_.png.request.has_value() ||  // a picture to take over the next frames
      backend.press_waiting();           // a tap shown as a press in the next frame
  activity.text_input = io.WantTextInput;
  activity.next_change = frame_start_ + shell_.state.frame.redraw_in;
  // The caret of the text field being typed into next blinks on or off: ImGui shows it while its
  // timer (reset by every key) is at most 0, and for 0.8 s of every 1.2 s after.
  if (const ImGuiInputTextState* text =
          io.WantTextInput ? ImGui::GetInputTextState(ImGui::GetActiveID()) : nullptr;
      text && io.ConfigInputTextCursorBlink) {
    constexpr double kBlinkPeriod = 1.2, kBlinkOn = 0.8;
    const double timer = text->CursorAnim, phase = std::fmod(std::max(timer, 0.0), kBlinkPeriod);
    const double toggle_in =
        timer <= 0 ? -timer : (phase < kBlinkOn ? kBlinkOn - phase : kBlinkPeriod - phase);
    activity.text_input = false;  // no need to look in often: the next toggle is known
    activity.next_change = std::min(activity.next_change, frame_start_ + toggle_in + 0.01);
  }
  activity.next_change = std::min(activity.next_change, shell_.notices.changes_at(activity.now));
  return pacer_.plan(activity);
}

// Sleeps until the next frame is due.
void App::wait_for_next_frame() {
  const FramePlan plan = plan_next_frame();
  shell_.backend.wait(plan.earliest, plan.latest);
}

}  // namespace attnviz::app
