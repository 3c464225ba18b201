// The app as a user runs it: `attnviz --screenshot` under Xvfb, then the PNG is read back and
// checked pixel by pixel at the positions the layout code reports (--layout-out). What each
// cell should show comes from the engine, which is tested against PyTorch elsewhere.
#include "core/document/scenario.hpp"
#include "core/figures/colormap.hpp"
#include "core/lessons/lesson.hpp"
#include "core/pipeline/pipeline.hpp"
#include "tests/gui/gui_shots.hpp"
#include "tests/support/gui_app.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace attnviz {
namespace {

using namespace gui_shots;
namespace fs = std::filesystem;

}  // namespace

TEST_CASE("the app starts on the built-in scenario and writes a screenshot") {
  TempDir dir;
  const Screenshot shot = screenshot(dir.path, {});
  CHECK(shot.image.width == 1280);
  CHECK(shot.image.height == 720);
  CHECK(shot.layout["heatmap"]["rows"] == 5);
  CHECK(shot.layout["heatmap"]["cols"] == 5);
  // Not a blank frame: the top colour of the colormap appears (apple -> eat is the largest weight).
  CHECK(shot.layout["heatmap"]["show_values"] == true);
}

TEST_CASE("a cross-attention source of words the lexicon does not know is said to be random") {
  // "le chat mange": no word of it has a feature, so its near-uniform weights mean nothing.
  TempDir dir;
  Scenario scenario = builtin();
  scenario.target = "the cat eats";
  scenario.edit_one_layer()->mode = Mode::Cross;
  scenario.edit_one_layer()->config.causal = false;
  scenario.edit_one_layer()->source = "le chat mange";
  const Screenshot shot =
      screenshot(dir.path, {"--scenario", write_scenario(dir.path, scenario).string()});
  CHECK(shot.layout["input"]["target_random_features"] == "");
  CHECK(shot.layout["input"]["source_random_features"].get<std::string>().find(
            "None of these words is in the teaching lexicon") == 0);
}

TEST_CASE("beside the Cheaper attention view, the Output view says it shows full attention") {
  // Lesson 17: the Reformer's view beside the Output view, which shows full attention's weights
  // (step 3, "it never sees animal", no longer shows the Output view at all).
  TempDir dir;
  const Screenshot cheaper = screenshot(dir.path, {"--lesson", "17", "--step", "0"});
  CHECK(cheaper.layout["output"]["full_attention_note"] == 1);
  const Screenshot never_sees = screenshot(dir.path, {"--lesson", "17", "--step", "2"});
  CHECK_FALSE(never_sees.layout.contains("output"));
  const Screenshot heatmaps = screenshot(dir.path, {});
  CHECK(heatmaps.layout["output"]["full_attention_note"] == 0);
}

// Renders the built-in scenario with hard attention and checks every cell of one head: the chosen
// key in the colormap's top colour, every other key in its bottom colour.
void check_hard_attention_cells(int head, view::ColormapId colormap,
                                const std::vector<std::string>& flags) {
  TempDir dir;
  Scenario scenario = builtin();
  scenario.edit_one_layer()->config.hard = true;
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const fs::path file = write_scenario(dir.path, scenario);
  std::vector<std::string> args = {"--scenario", file.string(), "--head", std::to_string(head)};
  args.insert(args.end(), flags.begin(), flags.end());
  const Screenshot shot = screenshot(dir.path, args);
  const view::Colormap& map = view::colormap(colormap);
  const Matrix& weights = pipeline.result().heads[static_cast<std::size_t>(head)].weights;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const view::Rgba8 expected = weights(i, j) == 1.0f ? map.back() : map.front();
      const view::Rgba8 seen = cell_colour(shot, i, j);
      INFO("cell " << i << "," << j << " expected " << describe(expected) << " saw "
                   << describe(seen));
      CHECK(close(seen, expected));
    }
}

TEST_CASE(
    "with hard attention the chosen key's cell has the top colour and the others the bottom "
    "colour") {
  check_hard_attention_cells(0, view::ColormapId::Sequential, {});
}

TEST_CASE("the colour-blind-safe colormap is the one drawn when chosen") {
  check_hard_attention_cells(1, view::ColormapId::ColorBlindSafe, {"--colormap", "color-blind"});
}

// View ▸ "Heatmap colours up to the largest α": the scale runs from 0 to the head's largest
// weight, which gets the colormap's top colour; every cell is coloured by α / that largest.
TEST_CASE(
    "with the contrast scale each cell is coloured by its share of the head's largest weight") {
  TempDir dir;
  Scenario scenario = builtin();
  scenario.view_json = R"({"heatmap_contrast": true})";
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const fs::path file = write_scenario(dir.path, scenario);
  const Screenshot shot = screenshot(dir.path, {"--scenario", file.string(), "--head", "0"});
  const Matrix& weights = pipeline.result().heads[0].weights;
  const float top = weights.maxCoeff();
  REQUIRE(top < 0.9f);  // so that the scale differs from 0 .. 1
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const view::Rgba8 expected = view::sample(view::ColormapId::Sequential, weights(i, j) / top);
      const view::Rgba8 seen = cell_colour(shot, i, j);
      INFO("cell " << i << "," << j << " expected " << describe(expected) << " saw "
                   << describe(seen));
      CHECK(close(seen, expected, 3));
    }
}

// Whether cell (i, j) of the big heatmap is drawn as a masked cell: a 12-pixel square inside it
// holds only the theme's two masked greys, and both (the stripes).
bool drawn_masked(const Screenshot& shot, int i, int j, bool dark) {
  const view::MaskedLook look = view::masked_look(dark);
  const Json& h = shot.layout["heatmap"];
  const int x0 = static_cast<int>(h["x"].get<float>() + h["cell_w"].get<float>() * j) + 5;
  const int y0 = static_cast<int>(h["y"].get<float>() + h["cell_h"].get<float>() * i) + 5;
  bool base = false, stripe = false;
  for (int y = y0; y < y0 + 12; ++y)
    for (int x = x0; x < x0 + 12; ++x) {
      const view::Rgba8 seen = shot.image.at(x, y);
      if (close(seen, look.base, 3))
        base = true;
      else if (close(seen, look.stripe, 3))
        stripe = true;
      else
        return false;
    }
  return base && stripe;
}

// A masked cell holds no weight: it is hatched in grey, not drawn as a weight of 0 (the bottom
// colour, which it was), in either theme.
TEST_CASE("a causal scenario's upper triangle is drawn masked, not as weights of 0") {
  TempDir dir;
  Scenario scenario = builtin();
  scenario.edit_one_layer()->config.causal = true;
  const fs::path file = write_scenario(dir.path, scenario);
  for (const bool dark : {false, true}) {
    CAPTURE(dark);
    const Screenshot shot =
        screenshot(dir.path, {"--scenario", file.string(), "--theme", dark ? "dark" : "light"});
    const view::Colormap& map = view::colormap(view::ColormapId::Sequential);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(drawn_masked(shot, i, j, dark) == (j > i));
        if (j > i) CHECK_FALSE(close(cell_colour(shot, i, j), map.front(), 20));
      }
    CHECK(close(cell_colour(shot, 0, 0), map.back()));  // the first query can only see itself
  }
}

TEST_CASE("cross attention draws target rows and source columns") {
  TempDir dir;
  Scenario scenario = builtin();
  scenario.edit_one_layer()->mode = Mode::Cross;
  scenario.edit_one_layer()->source = "je mange une pomme rouge ce soir";
  const fs::path file = write_scenario(dir.path, scenario);
  const Screenshot shot = screenshot(dir.path, {"--scenario", file.string()});
  CHECK(shot.layout["heatmap"]["rows"] == 5);
  CHECK(shot.layout["heatmap"]["cols"] == 7);
}

TEST_CASE("a dark theme screenshot at 4K has the requested size") {
  TempDir dir;
  const Screenshot shot = screenshot(dir.path, {"--theme", "dark", "--size", "3840x2160"});
  CHECK(shot.image.width == 3840);
  CHECK(shot.image.height == 2160);
  // Dark theme: the window background (top-left, under the menu bar) is dark.
  CHECK(view::relative_luminance(shot.image.at(2, shot.image.height - 3)) < 0.1f);
}

TEST_CASE("a picture at scale 2 has the same layout at twice the pixels") {
  // The export path of File > Export > PNG at 2x: glyphs rasterized twice as large and the frame
  // drawn offscreen at twice the size. With hard attention every cell is the colormap's top or
  // bottom colour, found at twice the layout's coordinates.
  TempDir dir;
  Scenario scenario = builtin();
  scenario.edit_one_layer()->config.hard = true;
  Pipeline pipeline;
  REQUIRE(pipeline.run(scenario));
  const fs::path file = write_scenario(dir.path, scenario);
  const Screenshot shot = screenshot(dir.path, {"--scenario", file.string(), "--scale", "2"});
  CHECK(shot.image.width == 2560);
  CHECK(shot.image.height == 1440);
  const Json& h = shot.layout["heatmap"];
  const view::Colormap& map = view::colormap(view::ColormapId::Sequential);
  const Matrix& weights = pipeline.result().heads[0].weights;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const int x = static_cast<int>(2 * (h["x"].get<float>() + h["cell_w"].get<float>() * j + 5));
      const int y = static_cast<int>(2 * (h["y"].get<float>() + h["cell_h"].get<float>() * i + 5));
      CHECK(close(shot.image.at(x, y), weights(i, j) == 1.0f ? map.back() : map.front()));
    }
}

TEST_CASE("a malformed scenario file exits with a message and writes no screenshot") {
  TempDir dir;
  const fs::path bad = dir.path / "bad.json";
  std::ofstream(bad) << "{\"target\": ";
  const fs::path png = dir.path / "shot.png";
  const AppRun run = run_app({"--scenario", bad.string(), "--screenshot", png.string()}, dir.path);
  CHECK(run.status == 1);
  CHECK(run.errors.find("malformed JSON") != std::string::npos);
  CHECK_FALSE(fs::exists(png));
}

// Opened by a user (a double-click in a file manager runs `attnviz FILE`), a malformed file still
// opens the window, on the built-in scenario, with the reason in the status bar.
TEST_CASE("a malformed scenario file opened by a user opens the window and says why") {
  TempDir dir;
  const fs::path bad = dir.path / "bad.json", errors = dir.path / "stderr.txt",
                 title = dir.path / "title.txt";
  std::ofstream(bad) << "{\"target\": ";
  const fs::path script = dir.path / "session.sh";
  std::ofstream(script)
      << "export ATTNVIZ_STATE_DIR=" << quoted((dir.path / "state").string()) << "\n"
      << quoted(app_path()) << " " << quoted(bad.string()) << " 2>" << quoted(errors.string())
      << " & pid=$!\n"
      << "timeout 10 xdotool search --sync --onlyvisible --name AttnViz getwindowname > "
      << quoted(title.string()) << "\n"
      << "kill $pid\n";
  const std::string command =
      "xvfb-run -a -s '-screen 0 1280x800x24' sh " + quoted(script.string()) + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK(testing::read_whole_file(title).find("AttnViz") != std::string::npos);  // a window opened
  CHECK(testing::read_whole_file(errors).find("malformed JSON") != std::string::npos);
}

TEST_CASE("without a display the app says how to run headless") {
  TempDir dir;
  const fs::path png = dir.path / "shot.png";
  const AppRun run = run_app({"--screenshot", png.string()}, dir.path, /*with_display=*/false);
  CHECK(run.status != 0);
  CHECK(run.errors.find("xvfb-run") != std::string::npos);
  CHECK_FALSE(fs::exists(png));
}

TEST_CASE("every step of every built-in lesson renders") {
  for (const BuiltinLesson& builtin : builtin_lessons()) {
    CAPTURE(builtin.id);
    Result<Lesson> lesson = parse_lesson(builtin.json, std::string(builtin.id));
    REQUIRE(lesson.ok());
    TempDir dir;
    const AppRun run = run_app(
        {"--lesson", std::string(builtin.id), "--screenshot-steps", dir.path.string()}, dir.path);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
    for (std::size_t step = 0; step < lesson->steps.size(); ++step) {
      char name[32];
      std::snprintf(name, sizeof name, "step-%02zu.png", step);
      const Image image = load_png(dir.path / name);
      CHECK(image.width == 1280);
      CHECK(image.height == 720);
    }
  }
}

// The folder of --screenshot-steps is made when it is not there (its parents too); where it
// cannot be, the app says which folder and why, and writes nothing.
TEST_CASE("--screenshot-steps makes its folder, and names it when it cannot") {
  const BuiltinLesson& builtin = builtin_lessons().front();
  Result<Lesson> lesson = parse_lesson(builtin.json, std::string(builtin.id));
  REQUIRE(lesson.ok());
  TempDir dir;
  const fs::path folder = dir.path / "not" / "there" / "yet";
  const AppRun run = run_app(
      {"--lesson", std::string(builtin.id), "--screenshot-steps", folder.string()}, dir.path);
  INFO("stderr: " << run.errors);
  REQUIRE(run.status == 0);
  for (std::size_t step = 0; step < lesson->steps.size(); ++step) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%02zu.png", step);
    CHECK(fs::is_regular_file(folder / name));
  }
  // A file where the folder, or one of its parents, would be.
  const fs::path file = dir.path / "a-file";
  std::ofstream(file) << "not a folder";
  for (const fs::path& blocked : {file, file / "steps"}) {
    CAPTURE(blocked);
    const AppRun refused = run_app(
        {"--lesson", std::string(builtin.id), "--screenshot-steps", blocked.string()}, dir.path);
    CHECK(refused.status == 1);
    CHECK(refused.errors.find("cannot make the folder " + blocked.string() +
                              " for --screenshot-steps: ") != std::string::npos);
    CHECK(refused.errors.find('\n') == refused.errors.size() - 1);  // one line
  }
  CHECK(testing::read_whole_file(file) == "not a folder");
}

TEST_CASE("an unknown lesson is an error before any window opens") {
  TempDir dir;
  const AppRun run =
      run_app({"--lesson", "99", "--screenshot", (dir.path / "x.png").string()}, dir.path, false);
  CHECK(run.status == 1);
  CHECK(run.errors.find("no built-in lesson") != std::string::npos);
}

// A real session: the app runs under Xvfb with its state in `state` (on `scenario`, else the
// built-in one), xdotool clicks into the end of the sentence field and runs `keys` (xdotool
// commands, one per line), and after the autosave interval the process is killed with SIGKILL.
// Returns the scenario the recovery file holds.
std::optional<Scenario> sentence_session(const TempDir& dir, const fs::path& state,
                                         const std::string& keys,
                                         const std::string& scenario = "") {
  const fs::path script = dir.path / "session.sh";
  // A returning user: the first start's welcome was dismissed (it would sit over the field).
  std::ofstream(script) << "export ATTNVIZ_STATE_DIR=" << quoted(state.string()) << "\n"
                        << "mkdir -p \"$ATTNVIZ_STATE_DIR\" && : > "
                        << "\"$ATTNVIZ_STATE_DIR/welcome-dismissed\"\n"
                        << quoted(app_path()) << (scenario.empty() ? "" : " " + quoted(scenario))
                        << " 2>/dev/null & pid=$!\n"
                        << "xdotool search --sync --onlyvisible --name AttnViz >/dev/null\n"
                        << testing::paced(
                               "sleep 1.5\n"
                               "xdotool mousemove 250 136 click 1\n"  // the end of
                               "sleep 0.5\n" +                        // the sentence field
                               keys +
                               "sleep 4\n")  // longer than autosave's interval
                        << "kill -9 $pid\n";
  const std::string command =
      "xvfb-run -a -s '-screen 0 1280x800x24' sh " + quoted(script.string()) + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  const fs::path recovery = state / "recovery.json";
  REQUIRE_MESSAGE(fs::exists(recovery), "no recovery file after SIGKILL");
  Result<Scenario> recovered = load_scenario_file(recovery.string());
  REQUIRE(recovered.ok());
  return std::move(*recovered);
}

TEST_CASE("a killed app leaves a recovery file that restores the edits") {
  TempDir dir;
  const fs::path state = dir.path / "state";
  const std::optional<Scenario> recovered =
      sentence_session(dir, state, "xdotool type --delay 60 ' pie'\n");
  CHECK(recovered->target == "i like to eat apple pie");

  // The next start restores it.
  const fs::path png = dir.path / "restored.png", layout = dir.path / "layout.json";
  const std::string restore = "ATTNVIZ_STATE_DIR=" + quoted(state.string()) +
                              " xvfb-run -a -s '-screen 0 1920x1200x24' " + quoted(app_path()) +
                              " --recover --screenshot " + quoted(png.string()) + " --layout-out " +
                              quoted(layout.string()) + " 2>/dev/null";
  REQUIRE(std::system(restore.c_str()) == 0);
  CHECK(load_json(layout)["heatmap"]["rows"] == 6);
}

// xdotool presses and releases a chord at once: the app, waiting between frames, must begin a
// frame while the keys are down (ImGui 1.86 sees a key only then), or the shortcut is lost.
TEST_CASE("shortcuts pressed quickly between frames reach the text field") {
  TempDir dir;
  std::string keys;
  for (int i = 0; i < 4; ++i)
    keys += "xdotool key ctrl+BackSpace\nsleep 0.3\n";  // each deletes a word
  const std::optional<Scenario> recovered = sentence_session(dir, dir.path / "state", keys);
  CHECK(recovered->target == "i ");  // "i like to eat apple" less its last four words
}

// ImGui's own undo in a text field takes back a character per Ctrl+Z; the sentence field's takes
// back a word (app/session/text_undo.hpp).
TEST_CASE("Ctrl+Z in the sentence field takes back a word at a time") {
  TempDir dir;
  const std::string keys =
      "xdotool type --delay 80 ' pie is good'\nsleep 0.5\n"
      "xdotool key ctrl+z\nsleep 0.3\nxdotool key ctrl+z\nsleep 0.3\n";
  const std::optional<Scenario> recovered = sentence_session(dir, dir.path / "state", keys);
  CHECK(recovered->target == "i like to eat apple pie ");
}

// Debian's ImGui holds 16-bit characters: editing a sentence with emoji used to turn them into
// U+FFFD (and append NUL bytes). The field holds stand-ins for them (app/view/text_escapes.hpp).
TEST_CASE("editing a sentence with emoji keeps them") {
  TempDir dir;
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  const std::string sentence =
      "I \xf0\x9f\x8d\x95 and \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd caf\xc3\xa9";  // I 🍕 and 👍🏽
                                                                              // café
  load->target = sentence;
  const fs::path scenario = dir.path / "emoji.json";
  REQUIRE(save_scenario_file(scenario.string(), *load));
  const std::optional<Scenario> recovered = sentence_session(
      dir, dir.path / "state",
      "xdotool key End\nsleep 0.3\nxdotool type --delay 80 ' x'\nsleep 0.3\n", scenario.string());
  CHECK(recovered->target == sentence + " x");
}

// ImGui's Escape takes a text field's whole edit back; every letter had already changed the views.
TEST_CASE("Escape leaves the sentence field with what was typed") {
  TempDir dir;
  const std::optional<Scenario> recovered = sentence_session(
      dir, dir.path / "state",
      "xdotool type --delay 60 ' pie'\nsleep 0.3\nxdotool key Escape\nsleep 0.3\n");
  CHECK(recovered->target == "i like to eat apple pie");
}

// ImGui's text field drops a typed private-use character, and an emoji reaches ImGui as U+FFFD:
// the field inserts the emoji's stand-in itself (app/view/text_escapes.hpp).
TEST_CASE("an emoji typed into the sentence field is kept") {
  TempDir dir;
  const std::optional<Scenario> recovered =
      sentence_session(dir, dir.path / "state",
                       "xdotool type --delay 150 ' \xf0\x9f\x8d\x95 x'\nsleep 0.3\n");  // " 🍕 x"
  CHECK(recovered->target == "i like to eat apple \xf0\x9f\x8d\x95 x");
}

// The Return that chooses a file in the Open dialog is not an answer to the unsaved-changes
// question that choice brings up: it used to be taken as "Save first", writing the edits over the
// file open without asking. A second Return, with the question on screen, answers it.
TEST_CASE("Return in the Open dialog leaves the unsaved-changes question to be answered") {
  TempDir dir;
  const fs::path scenario = dir.path / "week3.json", other = dir.path / "other.json";
  const fs::path after_first = dir.path / "after-first-return.json";
  REQUIRE(save_scenario_file(scenario.string(), builtin()));
  REQUIRE(save_scenario_file(other.string(), builtin()));
  const std::string before = testing::read_whole_file(scenario);
  const fs::path script = dir.path / "session.sh";
  std::ofstream(script)
      << "export ATTNVIZ_STATE_DIR=" << quoted((dir.path / "state").string()) << "\n"
      << quoted(app_path()) << " " << quoted(scenario.string()) << " 2>/dev/null & pid=$!\n"
      << "xdotool search --sync --onlyvisible --name AttnViz >/dev/null\n"
      << testing::paced(
             "sleep 1.5\n"
             "xdotool mousemove 250 136 click 1\nsleep 0.5\n"  // the sentence's end
             "xdotool type --delay 80 ' pie'\nsleep 0.5\n"
             "xdotool key ctrl+o\nsleep 1\n"
             "xdotool mousemove 650 549 click 1\nsleep 0.3\n"  // the File field
             "xdotool type --delay 40 " +
             quoted(other.string()) + "\nsleep 0.3\n" + "xdotool key Return\nsleep 1\n")
      << "cp " << quoted(scenario.string()) << " " << quoted(after_first.string()) << "\n"
      << testing::paced("xdotool key Return\nsleep 1\n")  // Save first
      << "kill -9 $pid\n";
  const std::string command =
      "xvfb-run -a -s '-screen 0 1280x800x24' sh " + quoted(script.string()) + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK_MESSAGE(testing::read_whole_file(after_first) == before,
                "week3.json was written without asking");
  Result<Scenario> saved = load_scenario_file(scenario.string());
  REQUIRE(saved.ok());
  CHECK(saved->target == "i like to eat apple pie");  // the answer "Save first"
}

// Ctrl+Q with unsaved edits asks first, as New and Open do: the app stays open until the question
// is answered (Escape cancels it; Return saves first, then quits).
TEST_CASE("Ctrl+Q with unsaved edits asks before quitting") {
  TempDir dir;
  const fs::path scenario = dir.path / "week3.json";
  REQUIRE(save_scenario_file(scenario.string(), builtin()));
  const fs::path open_after_asking = dir.path / "open-after-asking",
                 open_after_cancel = dir.path / "open-after-cancel",
                 closed_after_saving = dir.path / "closed-after-saving";
  const fs::path script = dir.path / "session.sh";
  std::ofstream(script) << "export ATTNVIZ_STATE_DIR=" << quoted((dir.path / "state").string())
                        << "\n"
                        << quoted(app_path()) << " " << quoted(scenario.string())
                        << " 2>/dev/null & pid=$!\n"
                        << "xdotool search --sync --onlyvisible --name AttnViz >/dev/null\n"
                        << "sleep 1.5\n"
                        << "xdotool mousemove 250 136 click 1\nsleep 0.5\n"  // the sentence field
                        << "xdotool type --delay 80 ' pie'\nsleep 0.5\n"
                        << "xdotool key ctrl+q\nsleep 1\n"
                        << "kill -0 $pid && touch " << quoted(open_after_asking.string()) << "\n"
                        << "xdotool key Escape\nsleep 1\n"  // Cancel
                        << "kill -0 $pid && touch " << quoted(open_after_cancel.string()) << "\n"
                        << "xdotool key ctrl+q\nsleep 1\n"
                        << "xdotool key Return\nsleep 1.5\n"  // Save first
                        << "kill -0 $pid 2>/dev/null || touch "
                        << quoted(closed_after_saving.string()) << "\n"
                        << "kill -9 $pid 2>/dev/null\n"
                        << "exit 0\n";
  const std::string command =
      "xvfb-run -a -s '-screen 0 1280x800x24' sh " + quoted(script.string()) + " > /dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK_MESSAGE(fs::exists(open_after_asking), "Ctrl+Q quit without asking");
  CHECK_MESSAGE(fs::exists(open_after_cancel), "Escape (Cancel) quit");
  CHECK_MESSAGE(fs::exists(closed_after_saving), "the app stayed open after Save first");
  Result<Scenario> saved = load_scenario_file(scenario.string());
  REQUIRE(saved.ok());
  CHECK(saved->target == "i like to eat apple pie");
}

TEST_CASE("an idle app sleeps between the frames it needs") {
  // Nothing happens for 3 s: the first frames settle the layout, then the app sleeps until input
  // comes, looking in twice a second (app/session/frame_pacing.hpp). An app drawing as fast as it
  // can, as this one did, draws hundreds of frames here even with a software GL.
  TempDir dir;
  const AppRun run =
      run_app({"--size", "1280x720"}, dir.path, true,
              "ATTNVIZ_EXIT_AFTER=3 ATTNVIZ_STATE_DIR=" + quoted((dir.path / "state").string()));
  INFO("stderr: " << run.errors);
  REQUIRE(run.status == 0);
  std::smatch match;
  REQUIRE(std::regex_search(run.errors, match,
                            std::regex(R"(attnviz: ([0-9]+) frames in ([0-9.]+) s)")));
  const int frames = std::stoi(match[1]);
  CHECK(std::stod(match[2]) >= 3.0);
  CHECK(frames >= 4);   // the frames that settle the layout
  CHECK(frames <= 20);  // and then about two a second
}

TEST_CASE("--recover without unsaved work says so") {
  TempDir dir;
  const std::string command = "ATTNVIZ_STATE_DIR=" + quoted((dir.path / "empty").string()) + " " +
                              quoted(app_path()) + " --recover --screenshot " +
                              quoted((dir.path / "x.png").string()) + " 2> " +
                              quoted((dir.path / "err").string());
  const int raw = std::system(command.c_str());
  CHECK(WEXITSTATUS(raw) == 1);
  CHECK(testing::read_whole_file(dir.path / "err").find("no unsaved work") != std::string::npos);
}

TEST_CASE("a bad command-line option is a usage error") {
  TempDir dir;
  const AppRun run = run_app({"--size", "12"}, dir.path, false);
  CHECK(run.status == 2);
  CHECK(run.errors.find("--size") != std::string::npos);
}

}  // namespace attnviz
