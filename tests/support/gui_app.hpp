// Running the app as a user does, for the GUI tests: a screenshot under Xvfb with where things were
// drawn (--layout-out), read back as pixels and JSON; or an interactive session driven by
// xdotool, with the layout of its last frame.
#pragma once

#include "core/figures/colormap.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace attnviz::testing {

inline std::string shell_quoted(const std::string& text) {
  return "'" + text + "'";
}

inline std::string app_binary() {
  const char* path = std::getenv("ATTNVIZ_APP");
  REQUIRE_MESSAGE(path != nullptr, "set ATTNVIZ_APP to the attnviz binary");
  return path;
}

// How many times slower than a quiet machine this one is now: how long the app takes to start
// under Xvfb and write a picture at 1280x720, against kQuietStartSeconds (0.5 s measured on a quiet
// 2-core machine; about 1 s beside two busy loops). At least 1, at most 6; measured once per test
// process (a GUI test case is a process of its own).
inline double machine_pace() {
  static const double pace = [] {
    constexpr double kQuietStartSeconds = 0.5;
    TempDir dir;
    const std::string command = "ATTNVIZ_STATE_DIR=" + shell_quoted((dir.path / "state").string()) +
                                " xvfb-run -a -s '-screen 0 1280x800x24' " +
                                shell_quoted(app_binary()) + " --size 1280x720 --screenshot " +
                                shell_quoted((dir.path / "pace.png").string()) +
                                " > /dev/null 2>&1";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double measured = status == 0 ? std::clamp(seconds / kQuietStartSeconds, 1.0, 6.0) : 1.0;
    MESSAGE("the machine's pace: " << measured << " (the app started in " << seconds << " s)");
    return measured;
  }();
  return pace;
}

// A session's script with every line "sleep S" waiting S × machine_pace(): xdotool's next step
// comes once the app has drawn what the last one caused, on a busy machine too.
inline std::string paced(const std::string& script) {
  std::istringstream lines(script);
  std::ostringstream out;
  std::string line;
  while (std::getline(lines, line)) {
    double seconds = 0;
    std::size_t used = 0;
    if (line.rfind("sleep ", 0) == 0) {
      try {
        seconds = std::stod(line.substr(6), &used);
      } catch (const std::exception&) {
        used = 0;
      }
    }
    if (used > 0 && used == line.size() - 6)
      out << "sleep " << std::ceil(seconds * machine_pace() * 10.0) / 10.0 << '\n';
    else
      out << line << '\n';
  }
  return out.str();
}

struct Picture {
  int width = 0, height = 0;
  std::vector<unsigned char> pixels;  // RGBA
  view::Rgba8 at(int x, int y) const {
    const unsigned char* p = &pixels[(static_cast<std::size_t>(y) * width + x) * 4];
    return {p[0], p[1], p[2], p[3]};
  }
};

inline Picture read_png(const std::filesystem::path& path) {
  Picture picture;
  int channels = 0;
  unsigned char* data =
      stbi_load(path.string().c_str(), &picture.width, &picture.height, &channels, 4);
  REQUIRE_MESSAGE(data != nullptr, "cannot read " << path);
  picture.pixels.assign(data, data + static_cast<std::size_t>(picture.width) * picture.height * 4);
  stbi_image_free(data);
  return picture;
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "nothing written at " << path);
  return nlohmann::json::parse(in);
}

struct Shot {
  int status = -1;
  std::string errors;     // what the app wrote to standard error
  Picture picture;        // when it succeeded
  nlohmann::json layout;  // when it succeeded
};

// `attnviz ARGS --screenshot --layout-out` at 1280x720 unless ARGS give --size.
inline Shot take_shot(const TempDir& dir, const std::vector<std::string>& args) {
  const std::filesystem::path png = dir.path / "shot.png", layout = dir.path / "layout.json",
                              errors = dir.path / "stderr.txt";
  std::error_code ignored;
  std::filesystem::remove(png, ignored);
  std::string command = "ATTNVIZ_STATE_DIR=" + shell_quoted((dir.path / "state").string()) +
                        " xvfb-run -a -s '-screen 0 2000x1200x24' " + shell_quoted(app_binary());
  for (const std::string& arg : args) command += " " + shell_quoted(arg);
  command += " --screenshot " + shell_quoted(png.string()) + " --layout-out " +
             shell_quoted(layout.string()) + " > /dev/null 2> " + shell_quoted(errors.string());
  const int raw = std::system(command.c_str());
  const int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (status != 0) return {status, read_whole_file(errors), Picture{}, nlohmann::json::object()};
  return {status, read_whole_file(errors), read_png(png), read_json(layout)};
}

// An interactive session: the app opens a 1280x720 window with `args`, xdotool runs `keys` (one
// command per line) once it is up, then Ctrl+Q (and, when `quit_answer` is given, that key to
// the unsaved-changes question); the layout of its last frame, written as it exits.
inline nlohmann::json run_session(const TempDir& dir, const std::vector<std::string>& args,
                                  const std::string& keys, const std::string& quit_answer = "") {
  const std::filesystem::path script = dir.path / "session.sh",
                              layout = dir.path / "exit-layout.json";
  std::string command_line = shell_quoted(app_binary()) + " --size 1280x720";
  for (const std::string& arg : args) command_line += " " + shell_quoted(arg);
  const int quit_checks = static_cast<int>(std::ceil(50 * machine_pace()));  // 10 s, paced
  std::ofstream(script)
      << "export ATTNVIZ_STATE_DIR=" << shell_quoted((dir.path / "state").string()) << "\n"
      << command_line << " --layout-out " << shell_quoted(layout.string())
      << " 2>/dev/null & pid=$!\n"
      << "xdotool search --sync --onlyvisible --name AttnViz >/dev/null\n"
      << paced("sleep 1.5\n" + keys + "sleep 0.5\n") << "xdotool key ctrl+q\n"
      << (quit_answer.empty() ? "" : paced("sleep 0.5\n") + "xdotool key " + quit_answer + "\n")
      << "for i in $(seq " << quit_checks
      << "); do kill -0 $pid 2>/dev/null || exit 0; "
         "sleep 0.2; done\nkill -9 $pid; exit 1\n";
  const std::string command = "xvfb-run -a -s '-screen 0 2000x1200x24' sh " +
                              shell_quoted(script.string()) + " > /dev/null 2>&1";
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "the app did not quit on Ctrl+Q");
  return read_json(layout);
}

}  // namespace attnviz::testing
