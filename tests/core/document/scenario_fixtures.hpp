// What the scenario file's tests share: scenarios as text and as JSON, files in a temporary
// folder, and checks that two scenarios are the same field by field and in what they compute.
#pragma once

#include "core/document/scenario.hpp"
#include "core/engine/parameters.hpp"
#include "core/pipeline/pipeline.hpp"

#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz::scenario_fixtures {

using Json = nlohmann::json;
namespace fs = std::filesystem;

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A version-1 scenario with the target "a b" and the given extra fields.
inline std::string scenario_with(std::string_view fields) {
  std::string text = R"({"format": "attnviz-scenario", "version": 1, "target": "a b")";
  if (!fields.empty()) text += ", " + std::string(fields);
  return text + "}";
}

// A version-1 scenario made only of the given fields (no default target).
inline std::string document(std::string_view fields) {
  return R"({"format": "attnviz-scenario", "version": 1, )" + std::string(fields) + "}";
}

// The load failed with a one-line message containing every given word.
#define CHECK_ERROR_MENTIONS(load_expr, ...)                                               \
  do {                                                                                     \
    const Result<Scenario>& load_ = (load_expr);                                           \
    INFO("error: ", load_.error());                                                        \
    CHECK_FALSE(load_.ok());                                                               \
    CHECK(load_.error().find('\n') == std::string::npos);                                  \
    for (const std::string& word_ : std::initializer_list<std::string>{__VA_ARGS__})       \
      CHECK_MESSAGE(contains(load_.error(), word_), "the error does not mention ", word_); \
  } while (false)

template <typename A, typename B>
inline bool same_matrix(const A& a, const B& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

inline void check_same_parameters(const Parameters& a, const Parameters& b, int heads) {
  REQUIRE(a.heads.size() == static_cast<std::size_t>(heads));
  REQUIRE(b.heads.size() == static_cast<std::size_t>(heads));
  for (ParameterName name : kAllParameterNames)
    for (int head = 0; head < (name == ParameterName::W_O ? 1 : heads); ++head) {
      INFO("parameter ", to_string(name), " head ", head);
      if (name == ParameterName::v_a)
        CHECK(same_matrix(a.heads[static_cast<std::size_t>(head)].v_a,
                          b.heads[static_cast<std::size_t>(head)].v_a));
      else
        CHECK(same_matrix(parameter(a, name, head), parameter(b, name, head)));
    }
}

// A JSON list of (rows, cols) matrices, one per head, every cell `value`.
inline Json per_head(int heads, int rows, int cols, double value) {
  Json list = Json::array();
  for (int h = 0; h < heads; ++h) list.push_back(Json(rows, Json(cols, value)));
  return list;
}

inline Json scenario_json(const Json& weights) {
  return Json{
      {"format", "attnviz-scenario"}, {"version", 1}, {"target", "a b"}, {"weights", weights}};
}

// A temporary folder, removed with everything in it at the end of the test.
using TemporaryFolder = testing::TempDir;

inline std::string read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_whole(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

inline std::vector<std::string> folder_entries(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename());
  return names;
}

// Every field of the two scenarios is equal (floats exactly).
inline void check_same_scenario(const Scenario& a, const Scenario& b) {
  CHECK(a.title == b.title);
  CHECK(a.description == b.description);
  CHECK(a.target == b.target);
  CHECK(a.max_tokens == b.max_tokens);
  CHECK(a.view_json.empty() == b.view_json.empty());
  if (!a.view_json.empty() && !b.view_json.empty())
    CHECK(Json::parse(a.view_json) == Json::parse(b.view_json));
  REQUIRE(a.has_model() == b.has_model());
  if (a.has_model()) {
    CHECK(*a.model() == *b.model());
    return;
  }
  const OneLayerSpec &p = a.one_layer(), &q = b.one_layer();
  CHECK(p.mode == q.mode);
  CHECK(p.source == q.source);
  CHECK(p.config == q.config);
  CHECK(p.positional == q.positional);
  CHECK(p.seed == q.seed);
  CHECK(p.embeddings == q.embeddings);
  CHECK(p.dimension_names == q.dimension_names);
  CHECK(same_matrix(p.mask, q.mask));
  CHECK(p.mask_pattern == q.mask_pattern);
  check_same_parameters(p.parameters, q.parameters, p.config.heads);
}

// Both scenarios compute exactly the same attention.
inline void check_same_results(const Scenario& a, const Scenario& b) {
  Pipeline pa, pb;
  REQUIRE(pa.run(a).is_ok());
  REQUIRE(pb.run(b).is_ok());
  const AttentionResult& ra = pa.result();
  const AttentionResult& rb = pb.result();
  REQUIRE(ra.heads.size() == rb.heads.size());
  for (std::size_t h = 0; h < ra.heads.size(); ++h) {
    INFO("head ", h);
    CHECK(same_matrix(ra.heads[h].weights, rb.heads[h].weights));
    CHECK(same_matrix(ra.heads[h].output, rb.heads[h].output));
  }
  CHECK(same_matrix(ra.concat, rb.concat));
  CHECK(same_matrix(ra.output, rb.output));
}

// A scenario with every feature used and every weight random (wide magnitudes): in cross mode
// with a source sentence, or in self mode with the causal mask (cross mode has none).
inline Scenario random_scenario(Mode mode = Mode::Cross) {
  AttentionConfig config;
  config.d_model = 6;
  config.heads = 3;
  config.d_k = 2;
  config.d_v = 3;
  config.d_att = 5;
  config.compatibility = Compatibility::Additive;
  config.temperature = 0.7f;
  config.hard = true;
  config.causal = mode == Mode::Self;
  Scenario s = make_scenario("The cat sat on the mat", config, 987654321);
  s.edit_one_layer()->mode = mode;
  if (mode == Mode::Cross) s.edit_one_layer()->source = "a dog ran home";
  s.edit_one_layer()->positional = Positional::Sinusoidal;
  s.max_tokens = 100;
  s.title = "A random scenario";
  s.description = "Every feature, \"quoted\" and\nmulti-line.";
  s.view_json = R"({"head": 1, "panel": "weights", "zoom": 1.25})";

  std::mt19937 rng(20240601);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 4);
  const auto draw = [&] { return unit(rng) * std::pow(10.0f, static_cast<float>(exponent(rng))); };
  for (ParameterName name : kAllParameterNames)
    for (int head = 0; head < (name == ParameterName::W_O ? 1 : config.heads); ++head) {
      if (name == ParameterName::v_a) {
        for (auto& x : additive_vector(s.edit_one_layer()->parameters, head)) x = draw();
      } else {
        Matrix& m = parameter(s.edit_one_layer()->parameters, name, head);
        for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = draw();
      }
    }
  s.edit_one_layer()->parameters.heads[0].W_Q(0, 0) = std::numeric_limits<float>::denorm_min();
  s.edit_one_layer()->parameters.heads[1].W_K(1, 1) = 0.1f;
  s.edit_one_layer()->embeddings["cat"] = {0.1f, -2.5f, 1e-7f, 3.0f, draw(), draw()};
  s.edit_one_layer()->embeddings["dog"] = {draw(), draw(), draw(), draw(), draw(), draw()};
  s.edit_one_layer()->dimension_names = {"animal", "size", "naming \"it\"",
                                         "é"};  // fewer than d_model
  s.edit_one_layer()->mask.resize(6, mode == Mode::Cross ? 4 : 6);
  for (Eigen::Index i = 0; i < s.edit_one_layer()->mask.size(); ++i)
    s.edit_one_layer()->mask.data()[i] = (rng() % 3 != 0) ? 1 : 0;
  s.edit_one_layer()->mask(2, 1) = 0;
  return s;
}

}  // namespace attnviz::scenario_fixtures
