// The app's pictures as drawn by its renderer for a software GL: text from the string cache,
// triangles reshaped, windows shown from kept pictures, the frame benchmark's line, and the
// scripts a class may type (Chinese, emoji, Hebrew, Arabic) drawn as written. Each picture is
// compared with the one drawn the plain way, or read back where the layout says it is.
#include "core/document/scenario.hpp"
#include "core/lessons/lesson.hpp"
#include "tests/gui/gui_shots.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace attnviz {
namespace {

using namespace gui_shots;
namespace fs = std::filesystem;
using testing::TempDir;

}  // namespace

// The renderer draws each row of glyphs as one quad from a cache of rasterized strings; the
// picture must be the one ImGui's glyph-by-glyph drawing gives (up to rounding of the blend).
TEST_CASE("text drawn from the string cache looks the same as glyph by glyph") {
  TempDir dir;
  const fs::path cached = dir.path / "cached.png", glyphs = dir.path / "glyphs.png";
  for (const auto& [png, environment] :
       {std::pair{cached, std::string()},
        std::pair{glyphs, std::string("ATTNVIZ_NO_TEXT_CACHE=1")}}) {
    const AppRun run =
        run_app({"--screenshot", png.string(), "--size", "1280x720"}, dir.path, true, environment);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
  }
  const Image a = load_png(cached), b = load_png(glyphs);
  REQUIRE(a.width == b.width);
  REQUIRE(a.height == b.height);
  int far_apart = 0, dark = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x) {
      const view::Rgba8 p = a.at(x, y), q = b.at(x, y);
      if (!close(p, q, 40)) ++far_apart;
      if (q.r < 80 && q.g < 80 && q.b < 80) ++dark;  // text: the light theme's ink
    }
  CHECK(dark > 5000);  // there is text to compare
  CHECK_MESSAGE(far_apart < 50, far_apart << " pixels differ by more than 40");
}

// Pixels of two pictures of the same size further apart than `tolerance` in some channel.
int pixels_differing(const Image& a, const Image& b, int tolerance) {
  REQUIRE(a.width == b.width);
  REQUIRE(a.height == b.height);
  int different = 0;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x)
      if (!close(a.at(x, y), b.at(x, y), tolerance)) ++different;
  return different;
}

// The status bar keeps one height whatever it shows (app.cpp, draw_status_bar): a file's warning
// there leaves every panel where it was, pixel for pixel.
TEST_CASE("a notice in the status bar leaves the panels where they were") {
  TempDir dir;
  const std::string json = scenario_to_json(builtin());
  REQUIRE(json.front() == '{');
  const fs::path plain = dir.path / "plain.json", warned = dir.path / "warned.json";
  std::ofstream(plain) << json;
  std::ofstream(warned) << "{\"colour\": \"blue\", "
                        << json.substr(1);  // an unknown key: a warning
  const Screenshot quiet = screenshot(dir.path, {plain.string(), "--size", "1280x720"});
  const Screenshot noticed = screenshot(dir.path, {warned.string(), "--size", "1280x720"});
  const int bar = static_cast<int>(quiet.layout["status_bar_y"].get<float>());
  REQUIRE(bar > quiet.image.height / 2);
  REQUIRE(bar < quiet.image.height);
  CHECK(noticed.layout["status_bar_y"].get<float>() == quiet.layout["status_bar_y"].get<float>());
  int above = 0, below = 0;
  for (int y = 0; y < quiet.image.height; ++y)
    for (int x = 0; x < quiet.image.width; ++x)
      if (!close(quiet.image.at(x, y), noticed.image.at(x, y), 0)) ++(y < bar ? above : below);
  CHECK_MESSAGE(above == 0, above << " pixels above the status bar differ");
  CHECK(below > 1000);  // the notice is there: amber where the status line was
}

std::string bench_scenario() {
  return (fs::path(ATTNVIZ_SOURCE_DIR) / "tests/bench/scenarios/n64-h8.json").string();
}

// The renderer cuts solid fans into bands and pairs rectangles for a software GL (see
// render/ui_renderer.cpp); the picture must be the one ImGui's triangles give.
TEST_CASE("triangles reshaped for a software GL draw the same picture as ImGui's") {
  TempDir dir;
  const fs::path reshaped = dir.path / "reshaped.png", as_made = dir.path / "as_made.png";
  for (const auto& [png, environment] : {std::pair{reshaped, std::string()},
                                         std::pair{as_made, std::string("ATTNVIZ_NO_RESHAPE=1")}}) {
    const AppRun run = run_app(
        {"--screenshot", png.string(), "--size", "1280x720", "--scenario", bench_scenario()},
        dir.path, true, environment);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
  }
  const int different = pixels_differing(load_png(reshaped), load_png(as_made), 8);
  CHECK_MESSAGE(different < 20, different << " pixels differ by more than 8");
}

// Windows whose drawing did not change are shown from pictures kept from earlier frames (see
// render/list_cache.hpp): a screenshot after a few frames shows some that way (the layout file
// says how many), and must be the picture drawn afresh, pixel for pixel (a kept picture is a copy
// of the frame it was drawn in).
TEST_CASE("windows shown from kept pictures look the same as drawn afresh") {
  TempDir dir;
  const fs::path kept = dir.path / "kept.png", fresh = dir.path / "fresh.png";
  int shown_from_pictures[2] = {-1, -1};
  int run_index = 0;
  for (const auto& [png, environment] :
       {std::pair{kept, std::string()}, std::pair{fresh, std::string("ATTNVIZ_NO_LIST_CACHE=1")}}) {
    const fs::path layout = dir.path / "layout.json";
    const AppRun run = run_app({"--screenshot", png.string(), "--size", "1280x720", "--frames", "4",
                                "--scenario", bench_scenario(), "--layout-out", layout.string()},
                               dir.path, true, environment);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
    shown_from_pictures[run_index++] =
        nlohmann::json::parse(testing::read_whole_file(layout))["windows_from_kept_pictures"]
            .get<int>();
  }
  CHECK(shown_from_pictures[0] >= 2);  // the sentence's tokens and the menu bar at least
  CHECK(shown_from_pictures[1] == 0);
  const int different = pixels_differing(load_png(kept), load_png(fresh), 0);
  CHECK_MESSAGE(different == 0, different << " pixels differ");
}

// The heatmaps are drawn by a shader from a float texture (render/heatmap_renderer.hpp): a window
// of them is kept while the texture's content, the colormap and the range stay the same.
TEST_CASE("a window of heatmaps that did not change is shown from a kept picture") {
  TempDir dir;
  const fs::path kept = dir.path / "kept.png", fresh = dir.path / "fresh.png",
                 layout = dir.path / "layout.json";
  for (const auto& [png, environment] :
       {std::pair{kept, std::string()}, std::pair{fresh, std::string("ATTNVIZ_NO_LIST_CACHE=1")}}) {
    const AppRun run = run_app({"--screenshot", png.string(), "--size", "1280x720", "--frames", "4",
                                "--panels", "heatmaps", "--layout-out", layout.string()},
                               dir.path, true, environment);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
    if (png == kept)  // the menu bar, the centre views and the status bar
      CHECK(nlohmann::json::parse(testing::read_whole_file(layout))["windows_from_kept_pictures"]
                .get<int>() == 3);
  }
  const int different = pixels_differing(load_png(kept), load_png(fresh), 0);
  CHECK_MESSAGE(different == 0, different << " pixels differ");
}

// The number in "N windows shown from kept pictures" on the bench line.
int windows_from_kept_pictures(const std::string& bench_line) {
  const std::string what = " windows shown from kept pictures";
  const std::size_t at = bench_line.find(what);
  REQUIRE_MESSAGE(at != std::string::npos, bench_line);
  std::size_t start = at;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(bench_line[start - 1]))) --start;
  REQUIRE(start < at);
  return std::stoi(bench_line.substr(start, at - start));
}

// The bench moves one weight of W_K: the sentence's tokens, the menu bar, the Weights window's
// frame and the grids of W_Q and W_V (each a window of its own, its cells a picture made on the
// CPU whose pixels did not change) stay as they were.
TEST_CASE(
    "while a weight moves every frame the windows it does not change are shown from kept "
    "pictures") {
  TempDir dir;
  const AppRun kept = run_app({"--bench-frames", "5", "--scenario", bench_scenario()}, dir.path);
  INFO("stderr: " << kept.errors);
  REQUIRE(kept.status == 0);
  CHECK(windows_from_kept_pictures(kept.errors) >= 5);
  const AppRun fresh = run_app({"--bench-frames", "5", "--scenario", bench_scenario()}, dir.path,
                               true, "ATTNVIZ_NO_LIST_CACHE=1");
  REQUIRE(fresh.status == 0);
  CHECK(windows_from_kept_pictures(fresh.errors) == 0);
}

// A lesson's steps change the sentence, the weights and the views between screenshots: no kept
// picture may outlive the drawing it was taken from.
TEST_CASE("every lesson step with kept pictures is the picture drawn afresh") {
  const BuiltinLesson& builtin = builtin_lessons().front();
  Result<Lesson> lesson = parse_lesson(builtin.json, std::string(builtin.id));
  REQUIRE(lesson.ok());
  TempDir dir;
  const fs::path kept = dir.path / "kept", fresh = dir.path / "fresh";
  fs::create_directories(kept);
  fs::create_directories(fresh);
  for (const auto& [folder, environment] :
       {std::pair{kept, std::string()}, std::pair{fresh, std::string("ATTNVIZ_NO_LIST_CACHE=1")}}) {
    const AppRun run =
        run_app({"--lesson", std::string(builtin.id), "--screenshot-steps", folder.string()},
                dir.path, true, environment);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
  }
  for (std::size_t step = 0; step < lesson->steps.size(); ++step) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%02zu.png", step);
    CAPTURE(name);
    const int different = pixels_differing(load_png(kept / name), load_png(fresh / name), 0);
    CHECK_MESSAGE(different == 0, different << " pixels differ");
  }
}

TEST_CASE("--bench-frames prints the frame-time line") {
  TempDir dir;
  const AppRun run = run_app({"--bench-frames", "5", "--size", "800x600"}, dir.path);
  INFO("stderr: " << run.errors);
  REQUIRE(run.status == 0);
  const std::regex line(R"(p50_ms=[0-9.]+ p99_ms=[0-9.]+ max_ms=[0-9.]+\n)");
  CHECK_MESSAGE(std::regex_match(run.output, line), run.output);
  CHECK(run.errors.find("5 frames") != std::string::npos);
}

TEST_CASE("--bench-frames needs a positive number and no screenshot") {
  TempDir dir;
  CHECK(run_app({"--bench-frames", "0"}, dir.path, false).status == 2);
  CHECK(run_app({"--bench-frames", "5", "--screenshot", "x.png"}, dir.path, false).status == 2);
  CHECK(run_app({"--bench-training"}, dir.path, false).status == 2);  // needs --bench-frames
}

TEST_CASE("--bench-training times the frames while a new model trains, and says how far it got") {
  TempDir dir;
  const AppRun run =
      run_app({"--bench-frames", "60", "--bench-training", "--size", "800x600"}, dir.path);
  INFO("stderr: " << run.errors);
  REQUIRE(run.status == 0);
  CHECK(run.errors.find("train view") != std::string::npos);
  // "a new model trained meanwhile: N steps in the timed frames": N more than 0.
  std::smatch steps;
  REQUIRE(std::regex_search(run.errors, steps, std::regex(R"(trained meanwhile: (\d+) steps)")));
  CHECK(std::stoll(steps[1].str()) > 0);
}

// DejaVu has no Chinese or Japanese: the characters a sentence needs come from a fallback font.
// Two sentences of one different character each: drawn as glyphs they differ, drawn as the
// missing-glyph mark they would be the same picture.
TEST_CASE("Chinese characters in a sentence are drawn, not replaced by a mark") {
  TempDir dir;
  std::vector<Image> shots;
  for (const char* word : {"\xe7\x8c\xab", "\xe7\x8b\x97"}) {  // 猫 (cat), 狗 (dog)
    Scenario scenario = builtin();
    scenario.target = word;
    scenario.title = "";
    const fs::path png = dir.path / "cjk.png";
    const AppRun run = run_app(
        {"--screenshot", png.string(), "--scenario", write_scenario(dir.path, scenario).string(),
         "--panels", "input", "--size", "800x600"},
        dir.path);
    INFO("stderr: " << run.errors);
    REQUIRE(run.status == 0);
    shots.push_back(load_png(png));
  }
  int different = 0;
  for (int y = 0; y < shots[0].height; ++y)
    for (int x = 0; x < shots[0].width; ++x)
      if (!close(shots[0].at(x, y), shots[1].at(x, y), 30)) ++different;
  CHECK(different > 30);
}

// ImGui 1.86 holds 16-bit characters: an emoji is drawn from its stand-in's glyph, rasterized from
// Symbola into the atlas. Two sentences of one different emoji each: drawn as glyphs they differ,
// drawn as the missing-glyph mark they would be the same picture.
TEST_CASE("emoji in a sentence are drawn, not replaced by a mark") {
  TempDir dir;
  const Image pizza = one_word_heatmaps(dir.path, "\xf0\x9f\x8d\x95").image;  // 🍕
  const Image robot = one_word_heatmaps(dir.path, "\xf0\x9f\xa4\x96").image;  // 🤖
  CHECK(pixels_unlike(pizza, robot) > 30);
}

// Hebrew is read from the right, so a word's first letter is drawn at its right end. A query's
// name is right-aligned against the heatmap: the glyph nearest the grid is the word's first
// letter, the same for "אבבבב" (alef, then bets) as for "אאאאא" and not for "בבבבא".
TEST_CASE("a Hebrew word's first letter is drawn at its right end") {
  TempDir dir;
  const auto last_glyph =
      [&](const char* word) {  // the 14 columns left of the grid, on the query's row
        const Screenshot shot = one_word_heatmaps(dir.path, word);
        const Json& h = shot.layout["heatmap"];
        const int right = h["x"].get<int>(), top = h["y"].get<int>(),
                  bottom = top + h["cell_h"].get<int>();
        Image band{14, bottom - top, {}};
        for (int y = top; y < bottom; ++y)
          for (int x = right - 14; x < right; ++x) {
            const view::Rgba8 pixel = shot.image.at(x, y);
            band.pixels.insert(band.pixels.end(), {pixel.r, pixel.g, pixel.b, pixel.a});
          }
        return band;
      };
  const Image alefs = last_glyph("\xd7\x90\xd7\x90\xd7\x90\xd7\x90\xd7\x90");       // אאאאא
  const Image alef_first = last_glyph("\xd7\x90\xd7\x91\xd7\x91\xd7\x91\xd7\x91");  // אבבבב
  const Image alef_last = last_glyph("\xd7\x91\xd7\x91\xd7\x91\xd7\x91\xd7\x90");   // בבבבא
  const int first_vs_alefs = pixels_unlike(alef_first, alefs),
            last_vs_alefs = pixels_unlike(alef_last, alefs);
  INFO("pixels unlike the alefs' last glyph: alef first " << first_vs_alefs << ", alef last "
                                                          << last_vs_alefs);
  CHECK(last_vs_alefs > 20);
  CHECK(first_vs_alefs * 3 < last_vs_alefs);
}

// Arabic letters join: "ببب" is drawn as beh's initial, medial and final forms, the same picture
// as a word typed in those presentation forms (U+FE91 U+FE92 U+FE90), and not the picture of
// three stand-alone behs (U+FE8F).
TEST_CASE("Arabic letters are drawn joined") {
  TempDir dir;
  const Image typed = one_word_heatmaps(dir.path, "\xd8\xa8\xd8\xa8\xd8\xa8").image;  // ببب
  const Image joined =
      one_word_heatmaps(dir.path, "\xef\xba\x91\xef\xba\x92\xef\xba\x90").image;  // ﺑﺒﺐ
  const Image apart =
      one_word_heatmaps(dir.path, "\xef\xba\x8f\xef\xba\x8f\xef\xba\x8f").image;  // ﺏﺏﺏ
  CHECK(pixels_unlike(typed, joined) == 0);
  CHECK(pixels_unlike(typed, apart) > 30);
}

}  // namespace attnviz
