// Model mode as a user sees it: the shipped models opened with --model or from a scenario file,
// the Model view's grid of every layer and head checked pixel by pixel against the model's
// attention (computed here by the engine, which is checked against PyTorch elsewhere), a knocked
// out head and what it changes in the layers above, and a model that does not open.
#include "core/document/scenario.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"
#include "tests/support/gui_app.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using testing::Picture;
using testing::Shot;
using testing::TempDir;

constexpr const char* kText = "In the beginning God created the heaven and the earth.";

// The colour at the centre of cell (i, j) of tile (layer, head) of the Model view, for a text of
// `n` tokens.
view::Rgba8 tile_cell(const Shot& shot, int layer, int head, int n, int i, int j) {
  const nlohmann::json& g = shot.layout["model_grid"];
  const float cell = g["tile"].get<float>() / static_cast<float>(n);
  const float x = g["x"].get<float>() + g["column"].get<float>() * static_cast<float>(head) +
                  cell * (static_cast<float>(j) + 0.5f);
  const float y = g["y"].get<float>() + g["row"].get<float>() * static_cast<float>(layer) +
                  cell * (static_cast<float>(i) + 0.5f);
  return shot.picture.at(static_cast<int>(x), static_cast<int>(y));
}

// The text the app opens with: the built-in scenario's sentence.
std::string builtin_text() {
  Result<Scenario> builtin = parse_scenario(builtin_scenario_json());
  REQUIRE(builtin.ok());
  return builtin->target;
}

bool near(view::Rgba8 a, view::Rgba8 b, int tolerance = 3) {
  return std::abs(a.r - b.r) <= tolerance && std::abs(a.g - b.g) <= tolerance &&
         std::abs(a.b - b.b) <= tolerance;
}

std::string shown(view::Rgba8 c) {
  return std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b);
}

// Every tile's pixels, by (layer, head): to tell which tiles changed.
std::vector<std::vector<view::Rgba8>> tiles(const Shot& shot, int n) {
  const nlohmann::json& g = shot.layout["model_grid"];
  std::vector<std::vector<view::Rgba8>> out;
  for (int layer = 0; layer < g["layers"].get<int>(); ++layer)
    for (int head = 0; head < g["heads"].get<int>(); ++head) {
      std::vector<view::Rgba8> cells;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) cells.push_back(tile_cell(shot, layer, head, n, i, j));
      out.push_back(std::move(cells));
    }
  return out;
}

bool same(const std::vector<view::Rgba8>& a, const std::vector<view::Rgba8>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!near(a[k], b[k], 0)) return false;
  return true;
}

}  // namespace

TEST_CASE(
    "--model: the Model view draws every layer and head's attention as the model computes it") {
  TempDir dir;
  const Shot shot =
      testing::take_shot(dir, {"--model", "gpt2-kjv-tiny", "--view", "model", "--font-size", "14"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  Result<Model> model = open_model("gpt2-kjv-tiny");
  REQUIRE(model.ok());
  const TransformerConfig& config = model->transformer.config();
  CHECK(shot.layout["model"] == "gpt2-kjv-tiny");
  REQUIRE(shot.layout.contains("model_grid"));
  CHECK(shot.layout["model_grid"]["layers"] == config.n_layers);
  CHECK(shot.layout["model_grid"]["heads"] == config.n_heads);

  // The built-in scenario's sentence, as the model reads it.
  Result<std::vector<ModelToken>> tokens = read_text(*model, builtin_text());
  REQUIRE(tokens.ok());
  const int n = static_cast<int>(tokens->size());
  CHECK(shot.layout["tokens"] == n);
  std::vector<int> ids;
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  TransformerForward forward(model->transformer);
  REQUIRE(forward.run(ids));
  // Each tile's cells are the colormap at α (0 to 1: the default colour scale).
  int checked = 0;
  for (int layer = 0; layer < config.n_layers; ++layer)
    for (int head = 0; head < config.n_heads; ++head) {
      const Matrix alpha = forward.attention(layer, head);  // (n, n)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const view::Rgba8 expected = view::sample(view::ColormapId::Sequential, alpha(i, j));
          const view::Rgba8 drawn = tile_cell(shot, layer, head, n, i, j);
          INFO("layer " << layer << " head " << head << " cell " << i << "," << j << ": drawn "
                        << shown(drawn) << ", α " << alpha(i, j) << " is " << shown(expected));
          CHECK(near(drawn, expected, 6));
          ++checked;
        }
    }
  CHECK(checked == config.n_layers * config.n_heads * n * n);
}

TEST_CASE(
    "a scenario file with a knocked-out head: its tile is crossed, later layers change, "
    "earlier ones do not") {
  TempDir dir;
  const auto scenario = [&](const std::string& interventions) {
    const fs::path path = dir.path / "model.json";
    std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2, "model": {"name": )"
                        << R"("gpt2-kjv-tiny", "interventions": [)" << interventions
                        << R"(]}, "target": ")" << kText << R"("})";
    return path.string();
  };
  const Shot before =
      testing::take_shot(dir, {scenario(""), "--view", "model", "--font-size", "14"});
  INFO("stderr: " << before.errors);
  REQUIRE(before.status == 0);
  const int n = before.layout["tokens"].get<int>();
  const Shot after = testing::take_shot(dir, {scenario(R"({"layer": 0, "head": 2, "scale": 0})"),
                                              "--view", "model", "--font-size", "14"});
  REQUIRE(after.status == 0);
  const auto a = tiles(before, n), b = tiles(after, n);
  const int heads = before.layout["model_grid"]["heads"].get<int>();
  REQUIRE(a.size() == b.size());
  for (int k = 0; k < static_cast<int>(a.size()); ++k) {
    const int layer = k / heads, head = k % heads;
    INFO("layer " << layer << ", head " << head);
    if (layer == 0 && head != 2) CHECK(same(a[k], b[k]));        // below the change: as before
    if (layer == 0 && head == 2) CHECK_FALSE(same(a[k], b[k]));  // greyed and crossed
    if (layer > 0) CHECK_FALSE(same(a[k], b[k]));                // its input lost the head's output
  }
}

TEST_CASE("a scenario naming a model that is not there opens nothing and says which") {
  TempDir dir;
  const fs::path path = dir.path / "missing.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "gpt-17-huge"}, "target": "hello"})";
  const Shot shot = testing::take_shot(dir, {path.string()});
  CHECK(shot.status != 0);
  CHECK(shot.errors.find("gpt-17-huge") != std::string::npos);
  const Shot bad = testing::take_shot(dir, {"--model", "no-such-model"});
  CHECK(bad.status != 0);
  CHECK(bad.errors.find("no-such-model") != std::string::npos);
}

TEST_CASE("the Next token view and the heatmap of a model's second layer") {
  TempDir dir;
  const Shot next = testing::take_shot(dir, {"--model", "stories260K", "--view", "next"});
  INFO("stderr: " << next.errors);
  REQUIRE(next.status == 0);
  CHECK(next.layout["model"] == "stories260K");
  const nlohmann::json& labels = next.layout["labels"];
  REQUIRE(labels.contains("next"));
  CHECK(labels["next"]["labelled"] == 10);  // the ten most likely tokens, each named

  // The big heatmap of layer 2's head 3: cell (i, j) is the colormap at that head's α.
  const Shot heatmap = testing::take_shot(
      dir, {"--model", "stories260K", "--view", "heatmaps", "--layer", "1", "--head", "2"});
  REQUIRE(heatmap.status == 0);
  CHECK(heatmap.layout["layer"] == 1);
  Result<Model> model = open_model("stories260K");
  REQUIRE(model.ok());
  Result<std::vector<ModelToken>> tokens = read_text(*model, builtin_text());
  REQUIRE(tokens.ok());
  std::vector<int> ids;
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  TransformerForward forward(model->transformer);
  REQUIRE(forward.run(ids));
  const Matrix alpha = forward.attention(1, 2);
  const nlohmann::json& h = heatmap.layout["heatmap"];
  REQUIRE(h["rows"] == static_cast<int>(ids.size()));
  for (int i = 0; i < static_cast<int>(ids.size()); ++i) {
    const int j = 0;  // the first token's column: never masked
    const float x = h["x"].get<float>() + h["cell_w"].get<float>() * static_cast<float>(j) + 5;
    const float y = h["y"].get<float>() + h["cell_h"].get<float>() * static_cast<float>(i) + 5;
    const view::Rgba8 drawn = heatmap.picture.at(static_cast<int>(x), static_cast<int>(y));
    const view::Rgba8 expected = view::sample(view::ColormapId::Sequential, alpha(i, j));
    INFO("row " << i << ": drawn " << shown(drawn) << ", expected " << shown(expected));
    CHECK(near(drawn, expected, 6));
  }
}

TEST_CASE("the Across layers view names every token of the text in its logit lens") {
  TempDir dir;
  const Shot shot = testing::take_shot(dir, {"--model", "gpt2-kjv-tiny", "--view", "layers"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  const int n = shot.layout["tokens"].get<int>();
  REQUIRE(shot.layout["labels"].contains("layers"));
  CHECK(shot.layout["labels"]["layers"]["tokens"] == n);
  CHECK(shot.layout["labels"]["layers"]["labelled"] == n);
}

}  // namespace attnviz
