// Model mode as a user sees it: the shipped models opened with --model or from a scenario file,
// the Model view's grid of every layer and head checked pixel by pixel against the model's
// attention (computed here by the engine, which is checked against PyTorch elsewhere), a knocked
// out head and what it changes in the layers above, and a model that does not open.
#include "core/document/scenario.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"
#include "tests/support/gui_app.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>
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

// The engine's own forward pass of model `name` over the text the app opens with.
struct EngineRun {
  std::unique_ptr<Model> model;
  std::unique_ptr<TransformerForward> forward;
  int tokens = 0;
};
EngineRun engine_on_builtin_text(const char* name) {
  Result<Model> model = open_model(name);
  REQUIRE(model.ok());
  EngineRun run{std::make_unique<Model>(std::move(*model)), nullptr, 0};
  Result<std::vector<ModelToken>> tokens = read_text(*run.model, builtin_text());
  REQUIRE(tokens.ok());
  std::vector<int> ids;
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  run.forward = std::make_unique<TransformerForward>(run.model->transformer);
  REQUIRE(run.forward->run(ids).is_ok());
  run.tokens = static_cast<int>(ids.size());
  return run;
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

// Whether each tile differs between two shots of the same text: [layer][head].
std::vector<std::vector<bool>> changed_tiles(const Shot& before, const Shot& after) {
  const int n = before.layout["tokens"].get<int>();
  const int heads = before.layout["model_grid"]["heads"].get<int>();
  const auto a = tiles(before, n), b = tiles(after, n);
  REQUIRE(a.size() == b.size());
  std::vector<std::vector<bool>> changed(a.size() / static_cast<std::size_t>(heads));
  for (std::size_t k = 0; k < a.size(); ++k)
    changed[k / static_cast<std::size_t>(heads)].push_back(!same(a[k], b[k]));
  return changed;
}

// The Model view of gpt2-kjv-tiny reading kText, from a scenario file whose "model" object has
// `model_keys` besides its name ("interventions": [...], "weights": [...]).
Shot model_view_of(const TempDir& dir, const std::string& model_keys) {
  const fs::path path = dir.path / "model.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2, "model": {"name": )"
                      << R"("gpt2-kjv-tiny")" << (model_keys.empty() ? "" : ", " + model_keys)
                      << R"(}, "target": ")" << kText << R"("})";
  return testing::take_shot(dir, {path.string(), "--view", "model", "--font-size", "14"});
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
  const Shot before = model_view_of(dir, "");
  INFO("stderr: " << before.errors);
  REQUIRE(before.status == 0);
  const Shot after =
      model_view_of(dir, R"("interventions": [{"layer": 0, "head": 2, "scale": 0}])");
  REQUIRE(after.status == 0);
  // Below the change: as before; the head itself greyed and crossed; above, its input lost the
  // head's output.
  const std::vector<std::vector<bool>> changed = changed_tiles(before, after);
  for (std::size_t layer = 0; layer < changed.size(); ++layer)
    for (std::size_t head = 0; head < changed[layer].size(); ++head) {
      INFO("layer " << layer << ", head " << head);
      CHECK(changed[layer][head] == (layer > 0 || head == 2));
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
  CHECK(next.layout["next"]["step_buttons_whole"] == 1);

  // A text of 64 tokens at 1280×720, every panel open: the view is short, and its Step buttons
  // must not be cut off under the list of tokens (they were, below it: issue 40).
  const Shot long_text = testing::take_shot(
      dir, {(std::filesystem::path(ATTNVIZ_SOURCE_DIR) / "tests/bench/scenarios/model-kjv-64.json")
                .string(),
            "--view", "next", "--size", "1280x720"});
  INFO("stderr: " << long_text.errors);
  REQUIRE(long_text.status == 0);
  CHECK(long_text.layout["tokens"] == 63);
  CHECK(long_text.layout["labels"]["next"]["labelled"] == 10);
  CHECK(long_text.layout["next"]["step_buttons_whole"] == 1);

  // The big heatmap of layer 2's head 3: cell (i, j) is the colormap at that head's α.
  const Shot heatmap = testing::take_shot(
      dir, {"--model", "stories260K", "--view", "heatmaps", "--layer", "1", "--head", "2"});
  REQUIRE(heatmap.status == 0);
  CHECK(heatmap.layout["layer"] == 1);
  const EngineRun engine = engine_on_builtin_text("stories260K");
  const Matrix alpha = engine.forward->attention(1, 2);
  const nlohmann::json& h = heatmap.layout["heatmap"];
  REQUIRE(h["rows"] == engine.tokens);
  for (int i = 0; i < engine.tokens; ++i) {
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

TEST_CASE("the heatmap scrolls to show the selected query of a long text") {
  // Issue 40: the last token of a 43-token text selected, the heatmap stayed at the top.
  TempDir dir;
  const fs::path path = dir.path / "long.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "gpt2-kjv-tiny"},
                            "target": "The teacher asked the students to open their books and read the first page aloud."})";
  const Shot shot = testing::take_shot(
      dir, {path.string(), "--view", "heatmaps", "--layer", "1", "--query", "35"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  const nlohmann::json& heatmap = shot.layout["heatmap"];
  const int n = shot.layout["tokens"].get<int>();
  REQUIRE(n == 37);
  REQUIRE(shot.layout["query"] == 35);
  INFO(heatmap.dump());
  CHECK(heatmap["visible_rows"][0].get<int>() > 0);    // scrolled down from the top ...
  CHECK(heatmap["visible_rows"][0].get<int>() <= 35);  // ... far enough to show the query's row
  CHECK(heatmap["visible_rows"][1].get<int>() > 35);
}

TEST_CASE("the Output and Neuron views scroll to the key the selected query attends to most") {
  // Issue 40: Output listed the 37 keys from the top whatever the query looked at.
  TempDir dir;
  const std::string text =
      "The teacher asked the students to open their books and read the first page aloud.";
  const fs::path path = dir.path / "long.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "gpt2-kjv-tiny"}, "target": ")"
                      << text << R"("})";
  // Layer 1, head 3 (previous-token) from query 35: the engine's own forward pass says where it
  // looks most (far down the list of keys).
  Result<Model> model = open_model("gpt2-kjv-tiny");
  REQUIRE(model.ok());
  Result<std::vector<ModelToken>> tokens = read_text(*model, text);
  REQUIRE(tokens.ok());
  std::vector<int> ids;
  for (const ModelToken& token : *tokens) ids.push_back(token.id);
  REQUIRE(ids.size() == 37);
  TransformerForward forward(model->transformer);
  REQUIRE(forward.run(ids).is_ok());
  const Matrix attention = forward.attention(0, 2);  // (n_query, n_key)
  Eigen::Index most = 0;
  attention.row(35).maxCoeff(&most);
  MESSAGE("query 35 attends most to key " << most);
  const Shot shot = testing::take_shot(
      dir, {path.string(), "--view", "output", "--layer", "0", "--head", "2", "--query", "35"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  const nlohmann::json& values = shot.layout["output"];
  INFO(values.dump());
  CHECK(most > 20);
  CHECK(values["first_row"].get<int>() > 0);      // scrolled down from the first key ...
  CHECK(values["first_row"].get<int>() <= most);  // ... far enough to show that one
  CHECK(most < values["last_row"].get<int>());
  // The Neuron view explains that key (the largest α) for the query: its row of α scrolls
  // sideways to it.
  const Shot neuron = testing::take_shot(
      dir, {path.string(), "--view", "neuron", "--layer", "0", "--head", "2", "--query", "35"});
  REQUIRE(neuron.status == 0);
  const nlohmann::json& row = neuron.layout["neuron"];
  INFO(row.dump());
  CHECK(row["first_key"].get<int>() > 0);
  CHECK(row["first_key"].get<int>() <= most);
  CHECK(most < row["last_key"].get<int>());
}

TEST_CASE("the rollout heatmap has its colour scale and names its rows and columns at 1280x720") {
  TempDir dir;
  const fs::path path = dir.path / "rollout.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "gpt2-kjv-tiny"},
                            "target": "The teacher asked the students to open their books.",
                            "view": {"layers_view": "rollout"}})";
  const Shot shot = testing::take_shot(dir, {path.string(), "--view", "layers"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  const int n = shot.layout["tokens"].get<int>();
  CHECK(n == 23);
  REQUIRE(shot.layout.contains("rollout"));
  CHECK(shot.layout["rollout"]["colour_scale"] == 1);
  // Too many rows for a name on each at this size: every third (or so), rows and columns alike,
  // never none (the view had no names at all: issue 40).
  const int labelled = shot.layout["rollout"]["labelled"].get<int>();
  CHECK(labelled >= n / 4);
  CHECK(labelled <= n);
  CHECK(shot.layout["labels"]["layers"]["labelled"] == labelled);
}

// Fill the mask as a student uses it: bert-web on a verse, the Fill view open; a click on the
// chip "earth" hides it behind [MASK] (the document's text changes, and Ctrl+S saves it), and
// the view's first guess there is the engine's.
TEST_CASE("Fill the mask: a click on a word hides it behind [MASK], and the view guesses it") {
  TempDir dir;
  const fs::path path = dir.path / "fill.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "bert-web"},
                            "target": "In the beginning God created the heavens and the earth."})";
  const Shot shot =
      testing::take_shot(dir, {path.string(), "--view", "fill", "--size", "1280x720"});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  REQUIRE(shot.layout.contains("clickable_chips"));
  int x = -1, y = -1;
  for (const auto& chip : shot.layout["clickable_chips"]) {
    std::istringstream fields(chip.get<std::string>());
    std::string text;
    int left = 0, top = 0, width = 0, height = 0;
    fields >> text >> left >> top >> width >> height;
    if (text == "earth") {
      x = left + width / 2;
      y = top + height / 2;
    }
  }
  REQUIRE_MESSAGE(x >= 0, shot.layout["clickable_chips"].dump());
  const nlohmann::json after =
      testing::run_session(dir, {path.string(), "--view", "fill"},
                           "xdotool mousemove " + std::to_string(x) + " " + std::to_string(y) +
                               " click 1\nsleep 0.8\nxdotool key ctrl+s\nsleep 0.6\n");
  CHECK(after["sentence"] == "In the beginning God created the heavens and the [MASK].");
  Result<Scenario> saved = load_scenario_file(path.string());  // the edit, saved with Ctrl+S
  REQUIRE(saved.ok());
  CHECK(saved->target == "In the beginning God created the heavens and the [MASK].");
  REQUIRE(after.contains("fill"));
  REQUIRE(after["fill"]["first"].size() == 1);
  // The engine's guess at the [MASK] of the same text.
  Result<Model> model = open_model("bert-web");
  REQUIRE(model.ok());
  Result<std::vector<ModelToken>> tokens =
      read_text(*model, "In the beginning God created the heavens and the [MASK].");
  REQUIRE(tokens.ok());
  std::vector<int> ids;
  int mask = -1;
  for (const ModelToken& token : *tokens) {
    if (token.id == model->tokenizer.mask_token()) mask = static_cast<int>(ids.size());
    ids.push_back(token.id);
  }
  REQUIRE(mask >= 0);
  TransformerForward forward(model->transformer);
  REQUIRE(forward.run(ids).is_ok());
  const RowVector logits = forward.logits(mask);
  Eigen::Index best = 0;
  logits.maxCoeff(&best);
  CHECK(after["fill"]["first"][0] == model->tokenizer.shown(static_cast<int>(best)));
}

}  // namespace attnviz

namespace attnviz {

// The Weights panel in model mode, as a student uses it: a cell of W_Q typed into, then Ctrl+S.
// The file records the edit (the model's own files are not written).
TEST_CASE("a weight of a real model typed into the Weights panel is saved in the scenario") {
  TempDir dir;
  const fs::path path = dir.path / "edit.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "stories260K"}, "target": "i like to eat apple"})";
  const fs::path model = fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/stories260K";
  const std::string model_bytes = testing::read_whole_file(model / "stories260K.bin");
  // W_Q's cell (1, 1) at 1280x720: the Weights panel's first grid, under its header row;
  // Ctrl+click types into it, as a double-click does (one click: the same on a busy machine,
  // whose slow frames may split a double-click in two).
  testing::run_session(dir, {path.string()},
                       "xdotool mousemove 86 536 keydown ctrl click 1 keyup ctrl\nsleep 0.4\n"
                       "xdotool type 5\nxdotool key Return\nsleep 0.4\n"
                       "xdotool key ctrl+s\nsleep 0.6\n");
  Result<Scenario> saved = load_scenario_file(path.string());
  REQUIRE(saved.ok());
  REQUIRE(saved->model());
  REQUIRE(saved->model()->weight_edits.size() == 1);
  CHECK(saved->model()->weight_edits[0] == ModelWeightEdit{0, HeadMatrix::Query, 0, 0, 0, 5.0f});
  CHECK(testing::read_whole_file(model / "stories260K.bin") == model_bytes);
}

// Weights changed in a file: the tiles of the layer below the change and of the other heads of its
// layer are as before, the edited head's is not (gpt2-kjv-tiny has no layer above it).
TEST_CASE("a scenario file with an edited W_Q changes that head and no tile below or beside it") {
  TempDir dir;
  const Shot before = model_view_of(dir, "");
  INFO("stderr: " << before.errors);
  REQUIRE(before.status == 0);
  std::string cells;
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 4; ++col)
      cells += (cells.empty() ? "" : ", ") + std::string("[") + std::to_string(row) + ", " +
               std::to_string(col) + ", " + (row % 2 ? "3" : "-3") + "]";
  const Shot after = model_view_of(
      dir, R"("weights": [{"layer": 1, "matrix": "W_Q", "head": 1, "cells": [)" + cells + "]}]");
  INFO("stderr: " << after.errors);
  REQUIRE(after.status == 0);
  const std::vector<std::vector<bool>> changed = changed_tiles(before, after);
  REQUIRE(changed.size() == 2);
  for (std::size_t head = 0; head < changed[0].size(); ++head) {
    INFO("head " << head);
    CHECK_FALSE(changed[0][head]);
    CHECK(changed[1][head] == (head == 1));
  }
}

}  // namespace attnviz

namespace attnviz {

// The Pipeline view of a real model's block, for a head whose keys and values are its key/value
// head's (stories260K: heads 3 and 4 share key/value head 2), and for GPT-2's biases.
TEST_CASE("the Pipeline view shows a real model's whole block, with the shared key/value head") {
  TempDir dir;
  const Shot llama = testing::take_shot(
      dir, {"--model", "stories260K", "--view", "pipeline", "--layer", "2", "--head", "3"});
  INFO("stderr: " << llama.errors);
  REQUIRE(llama.status == 0);
  const std::vector<std::string> titles = llama.layout["pipeline_titles"];
  const std::vector<std::string> expected = {"x (layer 2's output)",
                                             "n = RMSNorm(x)",
                                             "Q = RoPE(nW_Q)",
                                             "K = RoPE(nW_K) (kv 2)",
                                             "V = nW_V (kv 2)",
                                             "S = QK\xe2\x8a\xa4",
                                             "\xc3\xb7\xe2\x88\x9a"
                                             "d_k",
                                             "causal mask",
                                             "\xce\xb1 = softmax",
                                             "\xce\xb1\xc2\xb7V",
                                             "concat",
                                             "attn = \xc2\xb7W_O",
                                             "x\xe2\x80\xb2 = x + attn",
                                             "m = MLP(norm\xe2\x82\x82(x\xe2\x80\xb2))",
                                             "x\xe2\x80\xb3 = x\xe2\x80\xb2 + m"};
  CHECK(titles == expected);
  CHECK(llama.layout["labels"]["pipeline"]["tokens"].get<int>() > 0);

  const fs::path path = dir.path / "gpt2.json";
  std::ofstream(path)
      << R"({"format": "attnviz-scenario", "version": 2, "model": {"name": )"
      << R"("gpt2-kjv-tiny", "interventions": [{"layer": 0, "head": 1, "scale": 0}]},)"
      << R"("target": ")" << kText << R"("})";
  const Shot gpt2 = testing::take_shot(dir, {path.string(), "--view", "pipeline", "--head", "1"});
  REQUIRE(gpt2.status == 0);
  const std::vector<std::string> gpt2_titles = gpt2.layout["pipeline_titles"];
  REQUIRE(gpt2_titles.size() == expected.size());
  CHECK(gpt2_titles[0] == "x = embed + position");
  CHECK(gpt2_titles[1] == "n = LayerNorm(x)");
  CHECK(gpt2_titles[3] == "K = nW_K + b");
  CHECK(gpt2_titles[10] ==
        "concat (\xc3\x97"
        "0.00)");
  CHECK(gpt2_titles[11] == "attn = \xc2\xb7W_O + b");
}

}  // namespace attnviz

namespace attnviz {

// A real model's queries and keys have d_head dimensions: the Geometry view draws them in the
// plane of the selected query and the key it attends to most, which the test finds on the
// engine's own attention.
TEST_CASE("the Geometry view of a real model is the plane of q and its most attended key") {
  TempDir dir;
  const int layer = 1, head = 2, query = 8;
  const Shot shot = testing::take_shot(
      dir, {"--model", "gpt2-kjv-tiny", "--view", "geometry", "--layer", std::to_string(layer),
            "--head", std::to_string(head), "--query", std::to_string(query)});
  INFO("stderr: " << shot.errors);
  REQUIRE(shot.status == 0);
  CHECK(shot.layout["geometry_mode"] == "plane");
  const EngineRun engine = engine_on_builtin_text("gpt2-kjv-tiny");
  const std::span<const float> row = engine.forward->attention_row(layer, head, query);
  const int most = static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
  CHECK(shot.layout["geometry_plane_key"].get<int>() == most);
}

}  // namespace attnviz

namespace attnviz {

// The commands of the one table (app/shell/command_table.cpp) from the keyboard and from the
// Model view's context menu: each knocks out the selected head, and the file records it.
TEST_CASE("Ctrl+K and the Model view's context menu knock out a head: one command, two ways in") {
  TempDir dir;
  const fs::path path = dir.path / "knock.json";
  const auto write = [&] {
    std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                              "model": {"name": "gpt2-kjv-tiny"}, "target": "And God said"})";
  };
  write();
  testing::run_session(dir, {path.string(), "--layer", "1", "--head", "2"},
                       "xdotool key ctrl+k\nsleep 0.4\nxdotool key ctrl+s\nsleep 0.6\n");
  Result<Scenario> saved = load_scenario_file(path.string());
  REQUIRE(saved.ok());
  REQUIRE(saved->model());
  REQUIRE(saved->model()->interventions.size() == 1);
  CHECK(saved->model()->interventions[0].layer == 1);
  CHECK(saved->model()->interventions[0].head == 2);
  CHECK(saved->model()->interventions[0].change.ablated());

  // The context menu of a tile of the Model view: a right-click selects the head and opens the
  // menu at the pointer; its first item after the heading is Knock out.
  write();
  const Shot shot = take_shot(dir, {path.string(), "--view", "model"});
  REQUIRE(shot.status == 0);
  const auto& grid = shot.layout["model_grid"];
  REQUIRE(grid["layers"] == 2);
  const double tile = grid["tile"], column = grid["column"], row = grid["row"];
  const int x = static_cast<int>(static_cast<double>(grid["x"]) + 3 * column + tile / 2);  // head 4
  const int y = static_cast<int>(static_cast<double>(grid["y"]) + 0 * row + tile / 2);  // layer 1
  const std::string at = std::to_string(x) + " " + std::to_string(y);
  const std::string item = std::to_string(x + 30) + " " + std::to_string(y + 36);
  testing::run_session(dir, {path.string(), "--view", "model"},
                       "xdotool mousemove " + at + " click 3\nsleep 0.5\nxdotool mousemove " +
                           item + " click 1\nsleep 0.5\nxdotool key ctrl+s\nsleep 0.6\n");
  saved = load_scenario_file(path.string());
  REQUIRE(saved.ok());
  REQUIRE(saved->model());
  REQUIRE(saved->model()->interventions.size() == 1);
  CHECK(saved->model()->interventions[0].layer == 0);
  CHECK(saved->model()->interventions[0].head == 3);
  CHECK(saved->model()->interventions[0].change.ablated());
}

TEST_CASE(
    "a translation model's cross grid: a right-click knocks a cross head out, never to the "
    "previous token") {
  TempDir dir;
  const fs::path path = dir.path / "cross.json";
  std::ofstream(path) << R"({"format": "attnviz-scenario", "version": 2,
                            "model": {"name": "marian-web-es", "part": "cross"},
                            "target": "God gives eternal life."})";
  const Shot shot = take_shot(dir, {path.string(), "--view", "model"});
  REQUIRE(shot.status == 0);
  // The grid of the part shown: the cross-attention's, 3 layers of 4 heads.
  const auto& grid = shot.layout["model_grid"];
  REQUIRE(grid["layers"] == 3);
  REQUIRE(grid["heads"] == 4);
  const double tile = grid["tile"], column = grid["column"], row = grid["row"];
  const int x = static_cast<int>(static_cast<double>(grid["x"]) + 0 * column + tile / 2);  // head 1
  const int y = static_cast<int>(static_cast<double>(grid["y"]) + 1 * row + tile / 2);  // layer 2
  const std::string at = std::to_string(x) + " " + std::to_string(y);
  // The menu at the pointer: its heading, Knock out, Uniform attention, All on the previous token
  // (refused: a cross head's keys are the source), As trained.
  const std::string knock_out = std::to_string(x + 30) + " " + std::to_string(y + 36);
  const std::string previous = std::to_string(x + 30) + " " + std::to_string(y + 76);
  testing::run_session(dir, {path.string(), "--view", "model"},
                       "xdotool mousemove " + at + " click 3\nsleep 0.5\nxdotool mousemove " +
                           previous + " click 1\nsleep 0.5\nxdotool key Escape\nsleep 0.3\n" +
                           "xdotool key ctrl+s\nsleep 0.6\n");
  Result<Scenario> saved = load_scenario_file(path.string());
  REQUIRE(saved.ok());
  REQUIRE(saved->model());
  CHECK(saved->model()->interventions.empty());
  testing::run_session(dir, {path.string(), "--view", "model"},
                       "xdotool mousemove " + at + " click 3\nsleep 0.5\nxdotool mousemove " +
                           knock_out + " click 1\nsleep 0.5\nxdotool key ctrl+s\nsleep 0.6\n");
  saved = load_scenario_file(path.string());
  REQUIRE(saved.ok());
  REQUIRE(saved->model());
  REQUIRE(saved->model()->interventions.size() == 1);
  CHECK(saved->model()->interventions[0].part == ModelPart::Cross);
  CHECK(saved->model()->interventions[0].layer == 1);
  CHECK(saved->model()->interventions[0].head == 0);
  CHECK(saved->model()->interventions[0].change.ablated());
}

}  // namespace attnviz
