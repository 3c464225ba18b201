// What the GUI tests share: running the app under Xvfb, reading back its screenshot and its
// layout (--layout-out), and comparing colours and pictures (test_gui.cpp, test_rendering_gui.cpp).
#pragma once

#include "core/document/scenario.hpp"
#include "core/figures/colormap.hpp"
#include "tests/support/gui_app.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnviz::gui_shots {

namespace fs = std::filesystem;
using Json = nlohmann::json;

inline std::string app_path() {
  const char* path = std::getenv("ATTNVIZ_APP");
  REQUIRE_MESSAGE(path != nullptr, "set ATTNVIZ_APP to the attnviz binary");
  return path;
}

using testing::TempDir;

inline std::string quoted(const std::string& text) {
  return "'" + text + "'";
}

struct AppRun {
  int status = -1;
  std::string errors;
  std::string output;
};

// Runs attnviz with the arguments on a virtual screen big enough for the window; `environment`
// is put before the command ("NAME=value ...").
inline AppRun run_app(const std::vector<std::string>& args, const fs::path& dir,
                      bool with_display = true, const std::string& environment = "") {
  std::string command = environment.empty() ? "" : "env " + environment + " ";
  if (with_display)
    command += "xvfb-run -a -s '-screen 0 3900x2300x24' ";
  else
    command += "env -u DISPLAY -u WAYLAND_DISPLAY ";
  command += quoted(app_path());
  for (const std::string& arg : args) command += " " + quoted(arg);
  const fs::path errors = dir / "stderr.txt", output = dir / "stdout.txt";
  command += " > " + quoted(output.string()) + " 2> " + quoted(errors.string());
  AppRun run;
  const int raw = std::system(command.c_str());
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.errors = testing::read_whole_file(errors);
  run.output = testing::read_whole_file(output);
  return run;
}

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> pixels;
  view::Rgba8 at(int x, int y) const {
    const unsigned char* p = &pixels[(static_cast<std::size_t>(y) * width + x) * 4];
    return {p[0], p[1], p[2], p[3]};
  }
};

inline Image load_png(const fs::path& path) {
  Image image;
  int channels = 0;
  unsigned char* data = stbi_load(path.string().c_str(), &image.width, &image.height, &channels, 4);
  REQUIRE_MESSAGE(data != nullptr, "cannot read " << path);
  image.pixels.assign(data, data + static_cast<std::size_t>(image.width) * image.height * 4);
  stbi_image_free(data);
  return image;
}

inline Json load_json(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return Json::parse(in);
}

inline bool close(view::Rgba8 a, view::Rgba8 b, int tolerance = 2) {
  return std::abs(a.r - b.r) <= tolerance && std::abs(a.g - b.g) <= tolerance &&
         std::abs(a.b - b.b) <= tolerance;
}

inline std::string describe(view::Rgba8 c) {
  return std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b);
}

inline Scenario builtin() {
  Result<Scenario> load = parse_scenario(builtin_scenario_json());
  REQUIRE(load.ok());
  return *load;
}

inline fs::path write_scenario(const fs::path& dir, const Scenario& scenario) {
  fs::path path = dir / "scenario.json";
  std::ofstream(path) << scenario_to_json(scenario);
  return path;
}

struct Screenshot {
  Image image;
  Json layout;
};

inline Screenshot screenshot(const fs::path& dir, std::vector<std::string> args) {
  const fs::path png = dir / "shot.png", layout = dir / "layout.json";
  args.insert(args.end(), {"--screenshot", png.string(), "--layout-out", layout.string()});
  const AppRun run = run_app(args, dir);
  INFO("stderr: " << run.errors);
  REQUIRE(run.status == 0);
  return {load_png(png), load_json(layout)};
}

// The colour drawn in cell (i, j) of the big heatmap, sampled just inside its top-left corner
// (clear of the centred number, the grid lines and the selection outline).
inline view::Rgba8 cell_colour(const Screenshot& shot, int i, int j) {
  const Json& h = shot.layout["heatmap"];
  const float x = h["x"].get<float>() + h["cell_w"].get<float>() * j + 5;
  const float y = h["y"].get<float>() + h["cell_h"].get<float>() * i + 5;
  return shot.image.at(static_cast<int>(x), static_cast<int>(y));
}

// The heatmaps of a sentence of one word: every weight is 1 whatever the word, so two such
// pictures differ only where the word is drawn.
inline Screenshot one_word_heatmaps(const fs::path& dir, const char* word) {
  Scenario scenario = builtin();
  scenario.target = word;
  scenario.title = "";
  Screenshot shot = screenshot(dir, {"--scenario", write_scenario(dir, scenario).string(),
                                     "--panels", "heatmaps", "--size", "800x600"});
  REQUIRE(shot.layout["heatmap"]["rows"] == 1);
  return shot;
}

inline int pixels_unlike(const Image& a, const Image& b) {
  int count = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x) count += close(a.at(x, y), b.at(x, y), 30) ? 0 : 1;
  return count;
}

}  // namespace attnviz::gui_shots
