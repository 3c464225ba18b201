#include "app/session/options.hpp"

#include "core/base/threads.hpp"
#include "core/engine/attention.hpp"
#include "core/models/model_files.hpp"

#include <charconv>
#include <thread>

namespace attnviz::app {

namespace {

// {panels} and {views}: the names of core/figures/views.hpp's table.
constexpr const char* kUsageTemplate = R"(attnviz — see attention, live

Usage:
  attnviz [SCENARIO.json] [options]
  attnviz --screenshot OUT.png [--scenario SCENARIO.json] [--size WxH] [--frames N] [options]

Options:
  --scenario FILE     open this scenario (same as the positional argument)
  --screenshot FILE   render without user input, write a PNG of the whole window, exit
  --size WxH          window size in pixels (default 1280x720)
  --frames N          frames rendered before the screenshot (default 3)
  --scale N           the same picture at N times the pixels (1-4), crisp text: for slides
  --theme light|dark  colour theme
  --font-size PX      font size in pixels (default: from the window height)
  --panels LIST       panels to show, comma-separated: {panels}
  --layer L           a model's selected layer, counted from 0 (shown as layer L+1)
  --head H            selected head, counted from 0 (the app shows it as head H+1)
  --query Q           selected query token, counted from 0 (shown as query Q+1)
  --colormap NAME     sequential | color-blind
  --view NAME         centre view: {views}; or arrows, output (their tab, when
                      they are tabs: large text, presenter mode)
  --model MODEL       open a real trained model for the scenario's text: a shipped model's name
                      ({models}) or a model's folder or file
  --lesson NAME       start a lesson: a built-in lesson's name or number, or a lesson file
  --step N            start the lesson at step N, counted from 0 (shown as step N+1)
  --screenshot-steps DIR  with --lesson: write DIR/step-NN.png for every step (DIR is made
                      if missing), exit
  --layout-out FILE   with --screenshot (else as the app exits): write where the heatmap cells
                      were drawn, the token names each view wrote, where the status bar
                      begins, how many windows were shown from pictures kept from earlier
                      frames, the text size and the panels' windows (JSON)
  --bench-frames N    render N frames with vsync off, editing one weight every frame, and print
                      p50_ms= p99_ms= max_ms= of the CPU frame time (with --scenario, --size)
  --bench-training    with --bench-frames: a new model trains in the Training view on its own
                      thread while the frames are timed (no weight is edited), and the steps
                      it took are printed
  --threads N         threads for the attention engine, 1-16 (default 2 with 4 or more hardware
                      threads, else 1); the numbers are the same for any N
  --welcome           show the welcome (it shows by itself on a first start with nothing
                      named to open, until dismissed), also with --screenshot
  --guide             open the user guide (Help > User guide, Shift+F1), also with --screenshot
  --presenter         presenter mode: one view fills the window, under the sentence, in large
                      text (--font-size sets that text's size); F5 in the app
  --recover           restore the work an earlier run left unsaved (after a crash) without asking
  --monkey SEED       the random-action test: seeded random clicks, drags, keys, typing, menu
                      picks, lessons, models and weight edits in a temporary folder (its own
                      state folder too), then exit; with --monkey-actions N (default 1000)
  --help, --version
)";

bool parse_int(const std::string& text, int low, int high, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= low && out <= high;
}

void replace_once(std::string& text, std::string_view placeholder, const std::string& with) {
  text.replace(text.find(placeholder), placeholder.size(), with);
}

}  // namespace

std::string usage() {
  std::string text = kUsageTemplate;
  replace_once(text, "{panels}", view::user_slot_names(","));
  replace_once(text, "{views}", view::centre_view_names(" | ", " | "));
  std::string models;
  for (const std::string& name : shipped_model_names())
    models += (models.empty() ? "" : ", ") + name;
  replace_once(text, "{models}", models.empty() ? "none found" : models);
  return text;
}

int default_engine_threads() {
  if (!kHasThreads) return 1;
  return std::thread::hardware_concurrency() >= 4 ? 2 : 1;
}

int default_product_threads() {
  if (!kHasThreads) return 1;
  return std::thread::hardware_concurrency() >= 2 ? 2 : 1;
}

Status parse_options(const std::vector<std::string>& args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto next = [&]() -> const std::string* {
      return i + 1 < args.size() ? &args[++i] : nullptr;
    };
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--recover") {
      o.recover = true;
    } else if (arg == "--presenter") {
      o.presenter = true;
    } else if (arg == "--welcome") {
      o.welcome = true;
    } else if (arg == "--guide") {
      o.guide = true;
    } else if (arg == "--version") {
      o.version = true;
    } else if (arg == "--scenario") {
      const std::string* v = next();
      if (!v) return Status::error("--scenario needs a file");
      o.scenario_path = *v;
    } else if (arg == "--screenshot") {
      const std::string* v = next();
      if (!v) return Status::error("--screenshot needs a PNG file name");
      o.screenshot = *v;
    } else if (arg == "--layout-out") {
      const std::string* v = next();
      if (!v) return Status::error("--layout-out needs a file name");
      o.layout_out = *v;
    } else if (arg == "--size") {
      const std::string* v = next();
      const std::size_t x = v ? v->find('x') : std::string::npos;
      if (x == std::string::npos || !parse_int(v->substr(0, x), 200, 8192, o.width) ||
          !parse_int(v->substr(x + 1), 200, 8192, o.height))
        return Status::error("--size needs WIDTHxHEIGHT, each from 200 to 8192 (e.g. 1280x720)");
    } else if (arg == "--scale") {
      const std::string* v = next();
      if (!v || !parse_int(*v, 1, 4, o.scale)) return Status::error("--scale needs 1, 2, 3 or 4");
    } else if (arg == "--frames") {
      const std::string* v = next();
      if (!v || !parse_int(*v, 1, 100000, o.frames))
        return Status::error("--frames needs a number from 1 to 100000");
    } else if (arg == "--threads") {
      const std::string* v = next();
      int threads = 0;
      if (!v || !parse_int(*v, 1, AttentionEngine::kMaxThreads, threads))
        return Status::error("--threads needs a number from 1 to " +
                             std::to_string(AttentionEngine::kMaxThreads));
      o.threads = threads;
    } else if (arg == "--bench-frames") {
      const std::string* v = next();
      int frames = 0;
      if (!v || !parse_int(*v, 1, 1000000, frames))
        return Status::error("--bench-frames needs a number from 1 to 1000000");
      o.bench_frames = frames;
    } else if (arg == "--bench-training") {
      o.bench_training = true;
    } else if (arg == "--theme") {
      const std::string* v = next();
      if (v && *v == "light")
        o.theme = Theme::Light;
      else if (v && *v == "dark")
        o.theme = Theme::Dark;
      else
        return Status::error("--theme needs light or dark");
    } else if (arg == "--font-size") {
      const std::string* v = next();
      int size = 0;
      if (!v || !parse_int(*v, 8, 96, size))
        return Status::error("--font-size needs a number from 8 to 96");
      o.font_size = static_cast<float>(size);
    } else if (arg == "--panels") {
      const std::string* v = next();
      if (!v) return Status::error("--panels needs a list such as heatmaps,arrows");
      view::PanelVisibility visible{};
      std::size_t start = 0;
      while (start <= v->size()) {
        const std::size_t comma = std::min(v->find(',', start), v->size());
        const std::string name = v->substr(start, comma - start);
        const auto id = view::parse_panel(name);
        if (!id)
          return Status::error("--panels: unknown panel '" + name + "' (" +
                               view::user_slot_names() + ")");
        visible[static_cast<std::size_t>(*id)] = true;
        start = comma + 1;
      }
      o.panels = visible;
    } else if (arg == "--head" || arg == "--query" || arg == "--layer") {
      const std::string* v = next();
      int value = 0;
      if (!v || !parse_int(*v, 0, 100000, value)) return Status::error(arg + " needs a number");
      (arg == "--head" ? o.head : arg == "--query" ? o.query : o.layer) = value;
    } else if (arg == "--colormap") {
      const std::string* v = next();
      if (v && *v == "sequential")
        o.colormap = view::ColormapId::Sequential;
      else if (v && (*v == "color-blind" || *v == "colour-blind"))
        o.colormap = view::ColormapId::ColorBlindSafe;
      else
        return Status::error("--colormap needs sequential or color-blind");
    } else if (arg == "--view") {
      const std::string* v = next();
      const auto view = v ? parse_center_view(*v) : std::nullopt;
      if (view) {
        o.view = view;
      } else if (v && (*v == "arrows" || *v == "output")) {  // shown as a tab when panels give way
        o.tab = *v == "arrows" ? view::ViewId::Arrows : view::ViewId::Output;
      } else {
        return Status::error("--view needs " + view::centre_view_names(", ", ", ") +
                             ", arrows or output");
      }
    } else if (arg == "--model") {
      const std::string* v = next();
      if (!v || v->empty()) return Status::error("--model needs a model's name, folder or file");
      o.model = *v;
    } else if (arg == "--lesson") {
      const std::string* v = next();
      if (!v) return Status::error("--lesson needs a lesson name, number or file");
      o.lesson = *v;
    } else if (arg == "--screenshot-steps") {
      const std::string* v = next();
      if (!v) return Status::error("--screenshot-steps needs a folder");
      o.screenshot_steps = *v;
    } else if (arg == "--monkey") {
      const std::string* v = next();
      std::uint64_t seed = 0;
      const auto [ptr, ec] =
          v ? std::from_chars(v->data(), v->data() + v->size(), seed) : std::from_chars_result{};
      if (!v || v->empty() || ec != std::errc() || ptr != v->data() + v->size())
        return Status::error("--monkey needs a seed (a whole number from 0)");
      o.monkey = seed;
    } else if (arg == "--monkey-actions") {
      const std::string* v = next();
      if (!v || !parse_int(*v, 1, 10000000, o.monkey_actions))
        return Status::error("--monkey-actions needs a number from 1 to 10000000");
    } else if (arg == "--step") {
      const std::string* v = next();
      int step = 0;
      if (!v || !parse_int(*v, 0, 10000, step)) return Status::error("--step needs a step number");
      o.step = step;
    } else if (!arg.empty() && arg[0] == '-') {
      return Status::error("unknown option '" + arg + "' (see --help)");
    } else if (o.scenario_path.empty()) {
      o.scenario_path = arg;
    } else {
      return Status::error("unexpected argument '" + arg + "' (see --help)");
    }
  }
  if (o.layout_out && (o.screenshot_steps || o.bench_frames))
    return Status::error("--layout-out goes with --screenshot, or alone (written at exit)");
  if (o.bench_training && !o.bench_frames)
    return Status::error("--bench-training goes with --bench-frames N");
  if (o.bench_frames && (o.screenshot || o.screenshot_steps))
    return Status::error("--bench-frames does not go with --screenshot or --screenshot-steps");
  if (o.model && !o.lesson.empty())
    return Status::error("--model does not go with --lesson (a lesson names its scenarios)");
  if (o.monkey && (o.screenshot || o.screenshot_steps || o.bench_frames || o.recover))
    return Status::error(
        "--monkey does not go with --screenshot, --screenshot-steps, --bench-frames or --recover");
  if (o.screenshot_steps && o.lesson.empty())
    return Status::error("--screenshot-steps goes with --lesson");
  return Status::success();
}

}  // namespace attnviz::app
