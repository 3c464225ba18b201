// The dashboard at the text sizes a teacher uses in front of a class, a window resized while the
// app runs, and presenter mode driven by the keys a presentation clicker sends: the app runs
// under Xvfb and writes where it put things (--layout-out), at once (--screenshot) or as it exits
// (an interactive session driven by xdotool).
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::TempDir;

std::string quoted(const std::string& text) {
  return "'" + text + "'";
}

std::string app() {
  const char* path = std::getenv("ATTNVIZ_APP");
  REQUIRE_MESSAGE(path != nullptr, "set ATTNVIZ_APP to the attnviz binary");
  return quoted(path);
}

Json read_layout(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "no layout written at " << path);
  return Json::parse(in);
}

// A screenshot's layout: `args` to the app, at `size`.
Json layout_of(const TempDir& dir, const std::string& args) {
  const fs::path png = dir.path / "shot.png", layout = dir.path / "layout.json";
  const std::string command = "ATTNVIZ_STATE_DIR=" + quoted((dir.path / "state").string()) +
                              " xvfb-run -a -s '-screen 0 2000x1200x24' " + app() + " " + args +
                              " --screenshot " + quoted(png.string()) + " --layout-out " +
                              quoted(layout.string()) + " 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  return read_layout(layout);
}

// An interactive session: the app opens a 1280x720 window with `args`, xdotool runs `keys` (one
// command per line) once it is up, then Ctrl+Q; the layout of its last frame, written as it exits.
Json session(const TempDir& dir, const std::string& args, const std::string& keys) {
  const fs::path script = dir.path / "session.sh", layout = dir.path / "exit-layout.json";
  std::ofstream(script) << "export ATTNVIZ_STATE_DIR=" << quoted((dir.path / "state").string())
                        << "\n"
                        << app() << " --size 1280x720 " << args << " --layout-out "
                        << quoted(layout.string()) << " 2>/dev/null & pid=$!\n"
                        << "xdotool search --sync --onlyvisible --name AttnViz >/dev/null\n"
                        << "sleep 1.5\n"
                        << keys << "sleep 0.5\nxdotool key ctrl+q\n"
                        << "for i in $(seq 50); do kill -0 $pid 2>/dev/null || exit 0; "
                           "sleep 0.2; done\nkill -9 $pid; exit 1\n";
  const std::string command =
      "xvfb-run -a -s '-screen 0 2000x1200x24' sh " + quoted(script.string()) + " > /dev/null 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "the app did not quit on Ctrl+Q");
  return read_layout(layout);
}

std::set<std::string> panels_in(const Json& layout) {
  std::set<std::string> panels;
  for (const Json& window : layout["windows"])
    for (const Json& panel : window["panels"]) panels.insert(panel.get<std::string>());
  return panels;
}

}  // namespace

TEST_CASE("at 1280x720 every text size from 16 to 34 px leaves every panel a usable window") {
  TempDir dir;
  const std::set<std::string> all = {"input", "weights", "heatmaps", "arrows", "output"};
  std::set<std::string> arrangements;
  for (const int size : {16, 22, 28, 34}) {
    const Json layout = layout_of(dir, "--size 1280x720 --font-size " + std::to_string(size));
    INFO("text size " << size << ": " << layout.dump());
    CHECK(layout["text_size"] == size);
    CHECK(panels_in(layout) == all);
    arrangements.insert(layout["arrangement"].get<std::string>());
    const float top = 0, bottom = layout["status_bar_y"].get<float>();
    for (const Json& window : layout["windows"]) {
      const float x = window["x"], y = window["y"], w = window["w"], h = window["h"];
      CHECK(x >= 0);
      CHECK(x + w <= 1280);
      CHECK(y >= top);
      CHECK(y + h <= bottom);
      // Usable: room for at least sixteen characters across and eight lines of text down.
      CHECK(w >= 16 * size);
      CHECK(h >= 8 * size);
    }
  }
  // The layout changed with the text (panels became tabs) rather than shrinking them.
  CHECK(arrangements.size() >= 3);
  CHECK(arrangements.count("dashboard") == 1);
}

TEST_CASE("a window resized from 1280x720 to 1920x1080 takes the text size that suits it") {
  TempDir dir;
  const Json layout = session(
      dir, "", "xdotool search --onlyvisible --name AttnViz windowsize 1920 1080\nsleep 1\n");
  CHECK(layout["width"] == 1920);
  CHECK(layout["height"] == 1080);
  CHECK(layout["text_size"] == 24);  // 16 at the start
  CHECK(layout["arrangement"] == "dashboard");
  float widest = 0;
  for (const Json& window : layout["windows"]) widest = std::max(widest, window["w"].get<float>());
  CHECK(widest > 1800);  // the Weights band spans the new width
}

TEST_CASE("a text size chosen stays when the window is resized") {
  TempDir dir;
  const Json layout =
      session(dir, "--font-size 20",
              "xdotool search --onlyvisible --name AttnViz windowsize 1920 1080\nsleep 1\n");
  CHECK(layout["width"] == 1920);
  CHECK(layout["text_size"] == 20);
}

TEST_CASE("presenter mode: F5 in, Page Down and arrows step the lesson, Escape out") {
  TempDir dir;
  // In, two steps forward (a clicker's Page Down, then an arrow), one back: step 2 of lesson 1.
  const Json inside = session(dir, "--lesson 1",
                              "xdotool key F5\nsleep 0.5\nxdotool key Next\nsleep 0.5\n"
                              "xdotool key Right\nsleep 0.5\nxdotool key Next\nsleep 0.5\n"
                              "xdotool key Prior\nsleep 0.5\n");
  CHECK(inside["presenter"] == true);
  CHECK(inside["lesson_step"] == 2);
  CHECK(inside["text_size"].get<float>() > 16);  // large text
  // One view fills the window under the lesson and the sentence: nothing else is shown.
  REQUIRE(inside["windows"].size() == 3);
  const Json& view = inside["windows"][2];
  CHECK(view["w"].get<float>() > 1260);
  CHECK(view["y"].get<float>() + view["h"].get<float>() > 700);

  const Json outside = session(dir, "--presenter", "xdotool key Escape\nsleep 0.5\n");
  CHECK(outside["presenter"] == false);
  CHECK(outside["arrangement"] == "dashboard");
}

TEST_CASE(
    "the welcome greets a first start, Escape dismisses it for good, Shift+F1 opens the guide") {
  TempDir dir;  // a fresh state folder: a first start
  const Json first = session(dir, "", "");
  CHECK(first["welcome"] == true);
  const Json dismissed = session(dir, "", "xdotool key Escape\nsleep 0.5\n");
  CHECK(dismissed["welcome"] == false);
  CHECK(fs::exists(dir.path / "state" / "welcome-dismissed"));
  const Json again = session(dir, "", "");
  CHECK(again["welcome"] == false);  // never again at start
  // A scenario, lesson or model named on the command line is what the teacher wants to see.
  TempDir other;
  CHECK(session(other, "--lesson 1", "")["welcome"] == false);
  // The user guide: Shift+F1 opens it.
  CHECK(session(dir, "", "xdotool key shift+F1\nsleep 0.5\n")["guide"] == true);
}

TEST_CASE("the lesson's note on a change appears in room kept for it: the views stay put") {
  // Lesson 12, step 4 asks the student to knock out layer 2, head 4 (selected): Ctrl+K.
  TempDir dir;
  const Json before = session(dir, "--lesson 12 --step 3", "");
  const Json after = session(dir, "--lesson 12 --step 3", "xdotool key ctrl+k\nsleep 1\n");
  CHECK(before["lesson_note"] == "");
  CHECK(after["lesson_note"] ==
        "You changed the model (layer 2, head 4 knocked out), as the step suggests. What the text "
        "above says still holds.");
  REQUIRE(before["windows"].size() == after["windows"].size());
  for (std::size_t i = 0; i < before["windows"].size(); ++i) {
    INFO("window " << i << ": " << before["windows"][i].dump() << " then "
                   << after["windows"][i].dump());
    CHECK(before["windows"][i]["y"] == after["windows"][i]["y"]);
    CHECK(before["windows"][i]["h"] == after["windows"][i]["h"]);
  }
}

TEST_CASE("after a knock-out, Next token lists the prediction before beside the one now") {
  // Lesson 12, step 4: knocking out layer 2, head 4 moves "t" from 12.5% (the model as trained,
  // as `attnviz-cli model predict gpt2-kjv-tiny` prints it) to first place.
  TempDir dir;
  const Json untouched = session(dir, "--lesson 12 --step 3 --view next", "");
  CHECK_FALSE(untouched["next"].contains("before_changes"));
  const Json knocked =
      session(dir, "--lesson 12 --step 3 --view next", "xdotool key ctrl+k\nsleep 1\n");
  REQUIRE(knocked["next"].contains("before_changes"));
  CHECK(knocked["next"]["before_changes"] == "layer 2, head 4 knocked out");
  CHECK(knocked["next"]["before_of_top"].get<double>() == doctest::Approx(0.1247).epsilon(0.01));
  // Knocked out and restored: nothing to compare.
  const Json restored = session(dir, "--lesson 12 --step 3 --view next",
                                "xdotool key ctrl+k\nsleep 1\nxdotool key ctrl+k\nsleep 1\n");
  CHECK_FALSE(restored["next"].contains("before_changes"));
}

TEST_CASE("presenter mode at 1280x720: the tabs take one row, the heatmap keeps rows to show") {
  // Lesson 13, step 3: 22 tokens in two rows of chips and four lines of text above the view. With
  // the tabs' long names at the presenter's text size the heatmap showed two and a half rows.
  TempDir dir;
  const Json layout = session(dir, "--lesson 13 --step 2 --presenter", "");
  REQUIRE(layout["tabs"].size() >= 10);
  for (const Json& tab : layout["tabs"]) {
    INFO(tab.dump());
    CHECK(tab["y"] == layout["tabs"][0]["y"]);
  }
  // Rows [first, last) at least partly in sight: five, "␣time" (the step's query, 4) among them.
  const int first = layout["heatmap"]["visible_rows"][0],
            last = layout["heatmap"]["visible_rows"][1];
  CHECK(last - first >= 5);
  CHECK(first <= 4);
  CHECK(4 < last);
}

TEST_CASE("presenter mode at 1280x720: a predict step's answers are all in the lesson band") {
  // Lesson 11, step 1: 16 answers at 24 px. On one row they ran past the text column, cut off
  // at the right answer; wrapped, the band grows to hold them while the views are covered.
  TempDir dir;
  const Json layout = layout_of(dir, "--size 1280x720 --presenter --lesson 11 --step 0");
  const Json& lesson = layout["lesson"];
  INFO(lesson.dump());
  CHECK_FALSE(lesson.contains("predict_buttons_cut"));
  CHECK(lesson["predict_rows_end"].get<float>() <= lesson["predict_band_h"].get<float>());
}

TEST_CASE("presenter mode without a lesson: the clicker moves the selected query") {
  TempDir dir;
  const Json layout = session(dir, "--presenter",
                              "xdotool key Next\nsleep 0.4\nxdotool key Next\nsleep 0.4\n"
                              "xdotool key Down\nsleep 0.4\nxdotool key Up\nsleep 0.4\n");
  CHECK(layout["presenter"] == true);
  CHECK(layout["query"] == 2);
  CHECK(layout["lesson_step"] == -1);
}

TEST_CASE("F11 makes the window full screen and back") {
  TempDir dir;
  const Json full = session(dir, "--presenter", "xdotool key F11\nsleep 1\n");
  CHECK(full["fullscreen"] == true);
  CHECK(full["width"] == 2000);  // the whole virtual screen
  CHECK(full["height"] == 1200);
}

}  // namespace attnviz
