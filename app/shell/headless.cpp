#include "app/shell/headless.hpp"

#include "app/panels/fit_part.hpp"
#include "core/models/model.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <type_traits>
#include <variant>

#include "core/document/file_io.hpp"

namespace attnviz::app {
namespace {

// -----------------------------------------------------------------------------
// [SECTION] Screenshots
// -----------------------------------------------------------------------------

// The frames before a picture: --frames of them, the last not yet rendered.
void render_frames(Shell& shell, const FrameFunction& frame) {
  for (int i = 0; i < shell.options.frames; ++i) {
    frame();
    if (i + 1 < shell.options.frames) shell.backend.end_frame();
  }
}

// A number of the layout file as it has always been written (an ostream's default: six
// significant digits, a whole number without a point), which nlohmann then writes with the
// shortest digits that read back the same.
nlohmann::ordered_json layout_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  const double shown = std::strtod(text, nullptr);
  if (shown == std::floor(shown) && std::fabs(shown) < 1e15)
    return static_cast<std::int64_t>(shown);
  return shown;
}

// Where things were drawn, for the GUI tests (tests/gui/test_gui.cpp): the picture's size, the
// big heatmap's grid, the colormap, the windows shown from kept pictures, the status bar's top.
nlohmann::ordered_json layout_json(Shell& shell, int width, int height) {
  const view::HeatmapGeometry& g = shell.state.frame.layout.heatmap;
  nlohmann::ordered_json heatmap;
  heatmap["head"] = shell.state.frame.layout.heatmap_head;
  heatmap["rows"] = g.rows;
  heatmap["cols"] = g.cols;
  heatmap["x"] = layout_number(g.grid.x);
  heatmap["y"] = layout_number(g.grid.y);
  heatmap["cell_w"] = layout_number(g.cell_w);
  heatmap["cell_h"] = layout_number(g.cell_h);
  heatmap["show_values"] = g.show_values;
  // The rows and columns whose cells are seen (scrolled), [first, last).
  heatmap["visible_rows"] = g.visible_rows();
  heatmap["visible_cols"] = g.visible_cols();
  nlohmann::ordered_json layout;
  layout["width"] = width;
  layout["height"] = height;
  layout["heatmap"] = std::move(heatmap);
  layout["colormap"] = std::string(view::to_string(shell.state.ui.colormap));
  layout["windows_from_kept_pictures"] = shell.backend.windows_reused();
  layout["status_bar_y"] = layout_number(ImGui::GetIO().DisplaySize.y - status_bar_height());
  // The tokens' names each view wrote (the views that wrote none are left out).
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const view::ViewInfo& info : view::kViews) {
    const LabelRecord& r = shell.state.frame.layout.labels[static_cast<std::size_t>(info.id)];
    if (!r.drawn) continue;
    nlohmann::ordered_json record;
    record["tokens"] = r.tokens;
    record["labelled"] = r.labelled;
    record["smallest_px"] = layout_number(r.smallest_px);
    record["scrolls"] = r.scrolls;
    labels[std::string(info.name)] = std::move(record);
  }
  layout["labels"] = std::move(labels);
  // The text size and how the panels were arranged for it: each window, and the panels in it
  // (more than one: as tabs). Presenter mode: the lesson band and the view.
  const AppState& state = shell.state;
  layout["text_size"] = layout_number(state.ui.text_size());
  layout["presenter"] = state.ui.presenter;
  layout["fullscreen"] = shell.backend.fullscreen();
  layout["lesson_step"] = state.lesson.active() ? state.lesson.step : -1;
  layout["welcome"] = shell.show_welcome;
  layout["guide"] = shell.show_guide;
  layout["lesson_note"] = state.lesson.active() ? state.lesson_change_seen.message : "";
  layout["query"] = state.selection.query;
  layout["layer"] = state.selection.layer;
  layout["head"] = state.selection.head;
  const Model* model = state.pipeline().current().trained_model();
  layout["model"] = model ? model->name : "";
  layout["tokens"] = state.pipeline().target().tokens.size();
  const ModelGridGeometry& grid = state.frame.layout.model_grid;
  if (grid.layers > 0) {
    nlohmann::ordered_json model_grid;
    model_grid["x"] = layout_number(grid.x);
    model_grid["y"] = layout_number(grid.y);
    model_grid["column"] = layout_number(grid.column);
    model_grid["row"] = layout_number(grid.row);
    model_grid["tile"] = layout_number(grid.tile);
    model_grid["layers"] = grid.layers;
    model_grid["heads"] = grid.heads;
    layout["model_grid"] = std::move(model_grid);
  }
  // Lists the views fill when drawn, empty when not.
  for (const char* list : {"pipeline_titles", "views_drawn", "views_lacking"})
    layout[list] = nlohmann::ordered_json::array();
  layout["centre_view"] = std::string(to_string(state.ui.center_view));
  // What the app remembers between runs: the recent files, and unsaved work offered back.
  layout["recent_files"] = shell.recent.entries();
  layout["recovery_offered"] = shell.recovery_offer.has_value();
  layout["document"] = state.document.path();
  layout["sentence"] = state.document.scenario().target;
  if (const view::Rect& field = state.frame.layout.sentence_field; !field.empty()) {
    nlohmann::ordered_json rect;
    rect["x"] = layout_number(field.x);
    rect["y"] = layout_number(field.y);
    rect["w"] = layout_number(field.w);
    rect["h"] = layout_number(field.h);
    layout["sentence_field"] = std::move(rect);
  }
  layout["unsaved"] = state.unsaved();
  // The sentence's characters the loaded fonts have no glyph for (drawn as ImGui's missing-glyph
  // box): a Chinese sentence without the fallback font, an emoji without Symbola.
  {
    const std::string shown =
        shell.state.frame.visual_text.escapes().escape(state.document.scenario().target);
    int missing = 0;
    const ImFont* font =
        ImGui::GetIO().Fonts->Fonts.empty() ? nullptr : ImGui::GetIO().Fonts->Fonts[0];
    for (const char* at = shown.c_str(); font != nullptr && *at != '\0';) {
      unsigned int character = 0;
      const int length = ImTextCharFromUtf8(&character, at, nullptr);
      if (length <= 0) break;
      at += length;
      if (character > ' ' && font->FindGlyphNoFallback(static_cast<ImWchar>(character)) == nullptr)
        ++missing;
    }
    layout["missing_glyphs"] = missing;
  }
  nlohmann::ordered_json tabs = nlohmann::ordered_json::array();
  for (const FrameLayout::Tab& tab : state.frame.layout.tabs) {
    nlohmann::ordered_json record;
    record["view"] = std::string(view::view_info(tab.view).name);
    record["x"] = layout_number(tab.x);
    record["y"] = layout_number(tab.y);
    record["w"] = layout_number(tab.w);
    record["h"] = layout_number(tab.h);
    tabs.push_back(std::move(record));
  }
  layout["tabs"] = std::move(tabs);
  // What the views said of this frame (app/session/frame_values.hpp): "flash.step" nests.
  for (const auto& [key, value] : state.frame.values.all()) {
    nlohmann::ordered_json* at = &layout;
    std::string_view rest = key;
    for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos;
         rest.remove_prefix(dot + 1))
      at = &(*at)[std::string(rest.substr(0, dot))];
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
            (*at)[std::string(rest)] = layout_number(v);
          else
            (*at)[std::string(rest)] = v;
        },
        value);
  }
  layout["arrangement"] =
      state.ui.presenter ? "presenter"
                         : std::string(view::to_string(state.frame.layout.dashboard.arrangement));
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  const auto add_window = [&](const view::Rect& r, const std::vector<std::string>& panels) {
    if (r.empty()) return;
    nlohmann::ordered_json window;
    window["x"] = layout_number(r.x);
    window["y"] = layout_number(r.y);
    window["w"] = layout_number(r.w);
    window["h"] = layout_number(r.h);
    window["panels"] = panels;
    windows.push_back(std::move(window));
  };
  if (state.ui.presenter) {
    const view::PresenterLayout& p = state.frame.layout.presenter;
    add_window(p.lesson, {"lesson"});
    add_window(p.sentence, {"sentence"});
    add_window(p.view, {"input", "weights", "heatmaps", "arrows", "output"});
  } else {
    for (const view::DashboardWindow& w : state.frame.layout.dashboard.windows) {
      std::vector<std::string> panels;
      for (const view::Slot slot : w.panels) panels.emplace_back(view::slot_name(slot));
      add_window(w.rect, panels);
    }
  }
  layout["windows"] = std::move(windows);
  return layout;
}

Status write_layout_file(Shell& shell, int width, int height) {
  return write_file(*shell.options.layout_out, layout_json(shell, width, height).dump() + "\n");
}

// Renders the frame built last and writes it (and --layout-out); the process's exit status.
int write_screenshot(Shell& shell, const std::string& path) {
  platform::Backend& backend = shell.backend;
  backend.render_without_present();
  int width = 0, height = 0;
  backend.framebuffer_size(width, height);
  if (Status status = write_png(backend, path, {}, shell.options.scale); !status) {
    std::cerr << "attnviz: error: " << status.message() << '\n';
    return 1;
  }
  if (shell.options.layout_out) {
    if (Status status = write_layout_file(shell, width, height); !status) {
      std::cerr << "attnviz: error: " << status.message() << '\n';
      return 1;
    }
  }
  if (!shell.state.computed.error.empty())
    std::cerr << "attnviz: warning: " << shell.state.computed.error << '\n';
  return 0;
}

// -----------------------------------------------------------------------------
// [SECTION] Benchmark metrics, from /proc
// -----------------------------------------------------------------------------

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
  const std::size_t name_end = text.rfind(')');
  if (name_end == std::string::npos || name_end + 2 > text.size()) return -1.0;  // no /proc
  std::istringstream fields(text.substr(name_end + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  timespec now{};
  if (field.empty() || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1.0;
  const double start_s =
      std::strtod(field.c_str(), nullptr) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return (static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9 - start_s) *
         1000.0;
}

// CPU time used by every thread of this process so far, in milliseconds.
double process_cpu_ms() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) * 1e-3;
  };
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
  const auto index =
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted_values.size()))) - 1;
  return sorted_values[std::min(index, sorted_values.size() - 1)];
}

}  // namespace

int run_screenshot(Shell& shell, const FrameFunction& frame) {
  render_frames(shell, frame);
  return write_screenshot(shell, *shell.options.screenshot);
}

int run_lesson_screenshots(Shell& shell, const FrameFunction& frame) {
  AppState& state = shell.state;
  if (!state.lesson.active()) {
    std::cerr << "attnviz: error: --screenshot-steps needs --lesson\n";
    return 2;
  }
  // The folder is made when it is not there, its parents too.
  const std::string& folder = *shell.options.screenshot_steps;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder)) {
    std::cerr << "attnviz: error: cannot make the folder " << folder << " for --screenshot-steps: "
              << (error ? error.message() : std::string("something else has that name")) << '\n';
    return 1;
  }
  const int count = static_cast<int>(state.lesson.lesson->steps.size());
  for (int step = 0; step < count; ++step) {
    state.go_to_lesson_step(step);
    render_frames(shell, frame);
    char name[32];
    std::snprintf(name, sizeof name, "/step-%02d.png", step);
    if (const int status = write_screenshot(shell, *shell.options.screenshot_steps + name);
        status != 0)
      return status;
    shell.backend.end_frame();
  }
  return 0;
}

// Renders `frames` frames with vsync off as fast as it can, each frame editing one weight as a
// drag would (so every frame recomputes attention and redraws every view), and prints the CPU
// time per frame: from the start of the frame to the GL having finished drawing it.
std::string layout_json_text(Shell& shell, int width, int height) {
  return layout_json(shell, width, height).dump();
}

Status write_layout(Shell& shell) {
  int width = 0, height = 0;
  shell.backend.framebuffer_size(width, height);
  return write_layout_file(shell, width, height);
}

int run_bench(Shell& shell, const FrameFunction& frame, int frames) {
  using Clock = std::chrono::steady_clock;
  AppState& state = shell.state;
  platform::Backend& backend = shell.backend;
  constexpr int kWarmUpFrames = 10;  // fonts, textures and first-use allocations; not counted
  double first_frame_ms = -1;
  double build_ms_total = 0;
  double cpu_ms_at_start =
      0;  // the part of the frame spent before rendering: events, recompute, panels
  std::vector<double> frame_ms;
  frame_ms.reserve(static_cast<std::size_t>(frames));
  HeadIntervention knocked_out;
  knocked_out.output_scale = 0.0f;
  int edits = 0;
  bool last_edit_typed = false;
  Clock::time_point edit_time;
  std::vector<double> keystroke_ms, ablation_ms;  // a model's: edit to result shown
  double roles_ms = -1;  // when roles measured off the UI thread were ready
  // --bench-training: the Training view shows while a new model trains on its thread (the
  // frames redraw its curves and heads as its steps come); no weight is edited.
  const bool training = shell.options.bench_training;
  if (training) {
    state.ui.center_view = CenterView::Training;
    set_training_kind(state.ui, TrainingKind::Model);
    state.frame.start_training = true;
  }
  const auto steps_taken = [&state] {
    const FrameValues::Value* steps = state.frame.values.find("train.steps_taken");
    const long long* count = steps ? std::get_if<long long>(steps) : nullptr;
    return count ? *count : 0LL;
  };
  long long steps_at_start = 0;
  for (int i = 0; i < kWarmUpFrames + frames; ++i) {
    if (i + 1 == kWarmUpFrames && state.pipeline().current().roles_pending()) {
      // An encoder–decoder's cross heads are measured on a thread of their own for a second or
      // so after the model opens: the timed frames start once they are (a start-up's cost,
      // printed apart, not an edit's).
      state.pipeline().current().wait_for_roles();
      roles_ms = ms_since_process_start();
    }
    const Clock::time_point start = Clock::now();
    // One weight of the selected head moves by a little each frame, back and forth: a key's, so
    // that every query's scores change and with them every view of the head (a query's weight
    // leaves alone the queries whose tokens have 0 in its feature, and the Output view's query 0
    // is one in the benchmark scenarios).
    if (training) {
      // Nothing edited: the frames follow the training.
    } else if (state.document.scenario().model()) {
      // A real model: keystrokes at the end of the text for the first half of the frames (a
      // letter typed, then taken back: the last token's position), then a head of the first
      // layer knocked out and restored (every position of every layer). An edit waits for the
      // last one's result (a slow model's frames go on meanwhile); how long each result took to
      // show is kept.
      const bool shown =
          !state.computed.computing() && state.computed.version == state.document.version();
      if (shown) {
        if (edits > 0 && i >= kWarmUpFrames)
          (last_edit_typed ? keystroke_ms : ablation_ms)
              .push_back(std::chrono::duration<double, std::milli>(start - edit_time).count());
        const std::string& text = state.document.scenario().target;
        last_edit_typed = i < kWarmUpFrames + frames / 2;
        if (last_edit_typed)
          state.document.set_target(edits % 2 == 0 ? text + "s" : text.substr(0, text.size() - 1));
        else
          state.document.set_head_intervention(0, 0,
                                               edits % 2 == 0 ? knocked_out : HeadIntervention{});
        ++edits;
        edit_time = start;
      }
    } else {
      const int head = state.selection.head;
      const float weight = state.document.scenario()
                               .one_layer()
                               .parameters.heads[static_cast<std::size_t>(head)]
                               .W_K(0, 0);
      state.document.set_weight(ParameterName::W_K, head, 0, 0,
                                weight + (i % 2 == 0 ? 1e-3f : -1e-3f));
    }
    frame();
    const Clock::time_point built = Clock::now();
    backend.end_frame();
    backend.finish();
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (i >= kWarmUpFrames)
      build_ms_total += std::chrono::duration<double, std::milli>(built - start).count();
    if (i == 0) first_frame_ms = ms_since_process_start();
    if (i >= kWarmUpFrames) frame_ms.push_back(elapsed);
    if (i + 1 == kWarmUpFrames) {
      cpu_ms_at_start = process_cpu_ms();
      steps_at_start = steps_taken();
    }
  }
  const double cpu_ms_per_frame = (process_cpu_ms() - cpu_ms_at_start) / frames;
  const double max_ms = *std::max_element(frame_ms.begin(), frame_ms.end());
  std::printf("p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", percentile(frame_ms, 0.50),
              percentile(frame_ms, 0.99), max_ms);
  if (training) {
    const double seconds = std::accumulate(frame_ms.begin(), frame_ms.end(), 0.0) / 1000.0;
    const long long steps = steps_taken() - steps_at_start;
    std::fprintf(stderr,
                 "attnviz: bench: a new model trained meanwhile: %lld steps in the timed frames "
                 "(%.0f steps a second)%s\n",
                 steps, static_cast<double>(steps) / std::max(seconds, 1e-9),
                 steps > 0 ? "" : " -- it did not train: the numbers are not of training");
  }
  if (!keystroke_ms.empty() && !ablation_ms.empty())
    std::fprintf(stderr,
                 "attnviz: bench: from an edit to its result on screen: a keystroke p50 %.1f ms, "
                 "p99 %.1f ms, max %.1f ms (%zu); a knocked-out head p50 %.1f ms, max %.1f ms "
                 "(%zu)\n",
                 percentile(keystroke_ms, 0.5), percentile(keystroke_ms, 0.99),
                 *std::max_element(keystroke_ms.begin(), keystroke_ms.end()), keystroke_ms.size(),
                 percentile(ablation_ms, 0.5),
                 *std::max_element(ablation_ms.begin(), ablation_ms.end()), ablation_ms.size());
  const std::string roles_line = roles_ms < 0 ? std::string()
                                              : ", the heads' roles measured " +
                                                    std::to_string(std::lround(roles_ms)) +
                                                    " ms after start";
  const AttentionResult& r = state.result();
  std::fprintf(
      stderr,
      "attnviz: bench: %d frames (after %d warm-up) at %dx%d, %s view, %s%lld queries x %lld keys, "
      "%d heads, "
      "d_model %d; mean %.2f ms building the frame (recompute and panels), the rest drawing it; "
      "%.2f ms of CPU per frame in all threads (the renderer's too); %d vertices, %d triangles, %d "
      "draw calls; "
      "%d windows shown from kept pictures; "
      "first frame %.0f ms after start%s; peak resident memory %.0f MB%s%s\n",
      frames, kWarmUpFrames, shell.options.width, shell.options.height,
      std::string(to_string(state.ui.center_view)).c_str(),
      state.pipeline().current().trained_model()
          ? (state.pipeline().current().trained_model()->name +
             " (keystrokes, then knocked-out heads), ")
                .c_str()
          : "",
      static_cast<long long>(r.n_query), static_cast<long long>(r.n_key), r.config.heads,
      r.config.d_model, build_ms_total / frames, cpu_ms_per_frame,
      ImGui::GetIO().MetricsRenderVertices, ImGui::GetIO().MetricsRenderIndices / 3,
      draw_call_count(), backend.windows_reused(), first_frame_ms, roles_line.c_str(),
      peak_resident_mb(),
      state.computed.error.empty() ? "" : "; error: ", state.computed.error.c_str());
  return state.computed.error.empty() ? 0 : 1;
}

}  // namespace attnviz::app
