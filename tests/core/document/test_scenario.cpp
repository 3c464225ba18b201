// Scenario files: parsing (defaults, validation with a key path in every message), writing,
// the round trip and saving/loading whole files.
#include "core/engine/parameters.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/document/scenario.hpp"

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

namespace attnviz {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A version-1 scenario with the target "a b" and the given extra fields.
std::string scenario_with(std::string_view fields) {
  std::string text = R"({"format": "attnviz-scenario", "version": 1, "target": "a b")";
  if (!fields.empty()) text += ", " + std::string(fields);
  return text + "}";
}

// A version-1 scenario made only of the given fields (no default target).
std::string document(std::string_view fields) {
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
bool same_matrix(const A& a, const B& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

void check_same_parameters(const Parameters& a, const Parameters& b, int heads) {
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
Json per_head(int heads, int rows, int cols, double value) {
  Json list = Json::array();
  for (int h = 0; h < heads; ++h) list.push_back(Json(rows, Json(cols, value)));
  return list;
}

Json scenario_json(const Json& weights) {
  return Json{{"format", "attnviz-scenario"}, {"version", 1}, {"target", "a b"}, {"weights", weights}};
}

// A temporary folder, removed with everything in it at the end of the test.
using TemporaryFolder = testing::TempDir;

std::string read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_whole(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

std::vector<std::string> folder_entries(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename());
  return names;
}

// Every field of the two scenarios is equal (floats exactly).
void check_same_scenario(const Scenario& a, const Scenario& b) {
  CHECK(a.title == b.title);
  CHECK(a.description == b.description);
  CHECK(a.mode == b.mode);
  CHECK(a.target == b.target);
  CHECK(a.source == b.source);
  CHECK(a.config == b.config);
  CHECK(a.positional == b.positional);
  CHECK(a.seed == b.seed);
  CHECK(a.max_tokens == b.max_tokens);
  CHECK(a.embeddings == b.embeddings);
  CHECK(same_matrix(a.mask, b.mask));
  CHECK(a.view_json.empty() == b.view_json.empty());
  if (!a.view_json.empty() && !b.view_json.empty())
    CHECK(Json::parse(a.view_json) == Json::parse(b.view_json));
  check_same_parameters(a.parameters, b.parameters, a.config.heads);
}

// Both scenarios compute exactly the same attention.
void check_same_results(const Scenario& a, const Scenario& b) {
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

// A scenario with every feature used and every weight random (wide magnitudes).
Scenario random_scenario() {
  AttentionConfig config;
  config.d_model = 6;
  config.heads = 3;
  config.d_k = 2;
  config.d_v = 3;
  config.d_att = 5;
  config.compatibility = Compatibility::Additive;
  config.temperature = 0.7f;
  config.hard = true;
  config.causal = true;
  Scenario s = make_scenario("The cat sat on the mat", config, 987654321);
  s.mode = Mode::Cross;
  s.source = "a dog ran home";
  s.positional = Positional::Sinusoidal;
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
        for (auto& x : additive_vector(s.parameters, head)) x = draw();
      } else {
        Matrix& m = parameter(s.parameters, name, head);
        for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = draw();
      }
    }
  s.parameters.heads[0].W_Q(0, 0) = std::numeric_limits<float>::denorm_min();
  s.parameters.heads[1].W_K(1, 1) = 0.1f;
  s.embeddings["cat"] = {0.1f, -2.5f, 1e-7f, 3.0f, draw(), draw()};
  s.embeddings["dog"] = {draw(), draw(), draw(), draw(), draw(), draw()};
  s.mask.resize(6, 4);
  for (Eigen::Index i = 0; i < s.mask.size(); ++i) s.mask.data()[i] = (rng() % 3 != 0) ? 1 : 0;
  s.mask(2, 1) = 0;
  return s;
}

}  // namespace

// -----------------------------------------------------------------------------
// The built-in scenario and defaults
// -----------------------------------------------------------------------------
TEST_CASE("the built-in scenario parses without warnings and holds the file's values") {
  const Result<Scenario> load = parse_scenario(builtin_scenario_json());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load.warnings.empty());
  const Scenario& s = *load;
  CHECK(s.title == "I like to eat apple");
  CHECK(s.config.heads == 2);
  CHECK(s.config.d_model == 8);
  CHECK(s.target == "i like to eat apple");
  CHECK(s.parameters.heads[0].W_Q(1, 0) == 4.0f);
  CHECK(s.parameters.heads[1].W_Q(4, 0) == 3.0f);
  CHECK(s.parameters.W_O(0, 1) == 1.0f);
}

TEST_CASE("a minimal file gets every default and weights drawn from seed 7") {
  const Result<Scenario> load =
      parse_scenario(R"({"format":"attnviz-scenario","version":1,"target":"a b"})");
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load.warnings.empty());
  const Scenario& s = *load;
  CHECK(s.target == "a b");
  CHECK(s.config.d_model == 8);
  CHECK(s.config.heads == 2);
  CHECK(s.config.d_k == 4);
  CHECK(s.config.d_v == 4);
  CHECK(s.config.d_att == 4);
  CHECK(s.config.compatibility == Compatibility::ScaledDot);
  CHECK(s.config.temperature == 1.0f);
  CHECK_FALSE(s.config.hard);
  CHECK_FALSE(s.config.causal);
  CHECK(s.mode == Mode::Self);
  CHECK(s.positional == Positional::None);
  CHECK(s.seed == 7u);
  CHECK(s.max_tokens == Limits::kDefaultMaxTokens);
  CHECK(s.embeddings.empty());
  CHECK(s.mask.size() == 0);
  CHECK(s.view_json.empty());
  check_same_parameters(s.parameters, seeded_parameters(s.config, 7), 2);
}

TEST_CASE("d_k and d_v and d_att default to d_model / heads") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("d_model": 12, "heads": 3)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->config.d_k == 4);
  CHECK(load->config.d_v == 4);
  CHECK(load->config.d_att == 4);
  CHECK(load->parameters.heads.size() == 3u);
  CHECK(load->parameters.heads[2].W_Q.rows() == 12);
  CHECK(load->parameters.heads[2].W_Q.cols() == 4);
}

TEST_CASE("d_model not divisible by heads without d_k is an error naming d_k") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("d_model": 10, "heads": 3)")), "d_k");
}

TEST_CASE("d_model not divisible by heads loads when d_k is given") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("d_model": 10, "heads": 3, "d_k": 5)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->config.d_k == 5);
  CHECK(load->config.d_v == 5);
  CHECK(load->config.heads == 3);
}

TEST_CASE("line and block comments are accepted") {
  const Result<Scenario> load = parse_scenario(
      "// a line comment\n{\n  /* a block\n comment */ \"format\": \"attnviz-scenario\",\n"
      "  \"target\": \"a b\", // after a value\n  \"heads\": /* inline */ 4\n}\n");
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->config.heads == 4);
  CHECK(load->config.d_k == 2);
}

// -----------------------------------------------------------------------------
// Unknown keys, format and version
// -----------------------------------------------------------------------------
TEST_CASE("an unknown top-level key is a warning naming it and the file still loads") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("colour": "blue")"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  REQUIRE(load.warnings.size() == 1u);
  CHECK(contains(load.warnings[0], "colour"));
  CHECK(contains(load.warnings[0], "unknown"));
}

TEST_CASE("an unknown key inside weights is a warning naming weights.KEY") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("weights": {"W_X": [1]})"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  REQUIRE(load.warnings.size() == 1u);
  CHECK(contains(load.warnings[0], "weights.W_X"));
}

TEST_CASE("a file without format loads with a warning") {
  const Result<Scenario> load = parse_scenario(R"({"target": "a b"})");
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  REQUIRE(load.warnings.size() == 1u);
  CHECK(contains(load.warnings[0], "format"));
}

TEST_CASE("a different format string is an error naming format") {
  CHECK_ERROR_MENTIONS(parse_scenario(R"({"format": "attnviz-result", "target": "a b"})"), "format");
}

TEST_CASE("a format that is not a string is an error naming format") {
  CHECK_ERROR_MENTIONS(parse_scenario(R"({"format": 1, "target": "a b"})"), "format");
}

TEST_CASE("version 2 is an error naming version") {
  CHECK_ERROR_MENTIONS(parse_scenario(R"({"format": "attnviz-scenario", "version": 2, "target": "a b"})"),
                       "version", "2");
}

// -----------------------------------------------------------------------------
// Bad JSON
// -----------------------------------------------------------------------------
TEST_CASE("empty text is an error") {
  CHECK_ERROR_MENTIONS(parse_scenario(""), "empty");
}

TEST_CASE("whitespace-only text is an error") {
  CHECK_ERROR_MENTIONS(parse_scenario(" \n\t\r\n  "), "empty");
}

TEST_CASE("truncated JSON is malformed JSON with a line number") {
  CHECK_ERROR_MENTIONS(parse_scenario(R"({"target": "a)"), "malformed JSON", "line");
}

TEST_CASE("JSON that is not an object is an error") {
  for (const char* text : {"[1,2]", "\"x\"", "3", "null", "true"}) {
    INFO("text: ", std::string(text));
    CHECK_ERROR_MENTIONS(parse_scenario(text), "object");
  }
}

TEST_CASE("deeply nested arrays are an error about nesting and not a crash") {
  CHECK_ERROR_MENTIONS(parse_scenario(std::string(10000, '[')), "nested");
  CHECK_ERROR_MENTIONS(parse_scenario(std::string(10000, '[') + std::string(10000, ']')), "nested");
  std::string deep_objects = "{\"target\": \"a b\", \"view\": ";
  for (int i = 0; i < 5000; ++i) deep_objects += "{\"x\": ";
  CHECK_ERROR_MENTIONS(parse_scenario(deep_objects), "nested");
}

TEST_CASE("brackets inside strings do not count as nesting") {
  const std::string title(200, '[');
  const Result<Scenario> load = parse_scenario(scenario_with("\"title\": \"" + title + "\""));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->title == title);
}

// -----------------------------------------------------------------------------
// Wrong types and out-of-range values
// -----------------------------------------------------------------------------
TEST_CASE("a string for d_model is an error naming d_model") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("d_model": "8")")), "d_model", "number");
}

TEST_CASE("a number for hard is an error naming hard") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("hard": 1)")), "hard");
}

TEST_CASE("a number for target is an error naming target") {
  CHECK_ERROR_MENTIONS(parse_scenario(document(R"("target": 5)")), "target", "string");
}

TEST_CASE("a string for temperature is an error naming temperature") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("temperature": "hot")")), "temperature",
                       "number");
}

TEST_CASE("a missing target is an error naming target") {
  CHECK_ERROR_MENTIONS(parse_scenario(document(R"("title": "no sentence")")), "target");
}

TEST_CASE("out-of-range d_model values are errors naming d_model") {
  for (const char* value : {"0", "-3", "1e9", "8.5", "1025"}) {
    INFO("d_model: ", std::string(value));
    CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(std::string("\"d_model\": ") + value)),
                         "d_model");
  }
}

TEST_CASE("heads 0 and 17 are errors naming heads") {
  for (const char* value : {"0", "17"}) {
    INFO("heads: ", std::string(value));
    CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(std::string("\"heads\": ") + value)), "heads");
  }
}

TEST_CASE("16 heads is the largest head count accepted") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("d_model": 16, "heads": 16)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->config.heads == 16);
  CHECK(load->config.d_k == 1);
}

TEST_CASE("d_k 0 is an error naming d_k") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("d_k": 0)")), "d_k");
}

TEST_CASE("d_v 0 and d_att 0 are errors naming the key") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("d_v": 0)")), "d_v");
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("d_att": 0)")), "d_att");
}

TEST_CASE("temperatures 0 and -1 and 1e6 are errors naming temperature") {
  for (const char* value : {"0", "-1", "1e6", "0.0009"}) {
    INFO("temperature: ", std::string(value));
    CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(std::string("\"temperature\": ") + value)),
                         "temperature");
  }
}

TEST_CASE("temperatures at the limits 0.001 and 1000 are accepted") {
  for (const char* value : {"0.001", "1000"}) {
    INFO("temperature: ", std::string(value));
    const Result<Scenario> load =
        parse_scenario(scenario_with(std::string("\"temperature\": ") + value));
    INFO("error: ", load.error());
    CHECK(load.ok());
  }
}

TEST_CASE("a scenario at the lowest temperature reads back after scenario_to_json") {
  AttentionConfig config;
  config.temperature = Limits::kMinTemperature;
  REQUIRE(validate(config).is_ok());
  const Result<Scenario> load = parse_scenario(scenario_to_json(make_scenario("a b", config, 7)));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->config.temperature == Limits::kMinTemperature);
}

TEST_CASE("max_tokens 0 is an error naming max_tokens") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("max_tokens": 0)")), "max_tokens");
}

TEST_CASE("a negative seed is an error naming seed") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("seed": -1)")), "seed");
}

// -----------------------------------------------------------------------------
// Sentences and enumerations
// -----------------------------------------------------------------------------
TEST_CASE("an empty target is an error naming target") {
  CHECK_ERROR_MENTIONS(parse_scenario(document(R"("target": "")")), "target");
}

TEST_CASE("a whitespace-only target is an error naming target") {
  CHECK_ERROR_MENTIONS(parse_scenario(document(R"("target": "   ")")), "target");
}

TEST_CASE("cross mode without a source is an error naming source") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("mode": "cross")")), "source");
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("mode": "cross", "source": "  ")")), "source");
}

TEST_CASE("cross mode with a source loads") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("mode": "cross", "source": "x y z")"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->mode == Mode::Cross);
  CHECK(load->source == "x y z");
}

TEST_CASE("an unknown mode is an error naming mode") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("mode": "sideways")")), "mode", "sideways");
}

TEST_CASE("an unknown compatibility is an error naming compatibility") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("compatibility": "dotty")")),
                       "compatibility", "dotty");
}

TEST_CASE("every compatibility name is read") {
  const std::pair<const char*, Compatibility> names[] = {
      {"dot", Compatibility::Dot},           {"scaled_dot", Compatibility::ScaledDot},
      {"general", Compatibility::General},   {"additive", Compatibility::Additive},
      {"cosine", Compatibility::Cosine}};
  for (const auto& [name, expected] : names) {
    INFO("compatibility: ", std::string(name));
    const Result<Scenario> load =
        parse_scenario(scenario_with(std::string("\"compatibility\": \"") + name + "\""));
    REQUIRE(load.ok());
    CHECK(load->config.compatibility == expected);
  }
}

TEST_CASE("an unknown positional encoding is an error naming positional") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("positional": "learned")")), "positional",
                       "learned");
}

// -----------------------------------------------------------------------------
// Weights
// -----------------------------------------------------------------------------
TEST_CASE("W_Q with the wrong number of heads is an error naming weights.W_Q and heads") {
  const Json weights = {{"W_Q", per_head(1, 8, 4, 0.5)}};
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json(weights).dump()), "weights.W_Q", "heads");
}

TEST_CASE("a head of W_Q with the wrong row count is an error naming the head") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[0].erase(7);
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()), "weights.W_Q[0]",
                       "rows");
}

TEST_CASE("a row of W_Q with the wrong length is an error naming the row") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[0][2].erase(3);
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()), "weights.W_Q[0][2]",
                       "numbers");
}

TEST_CASE("a string in a W_Q cell is an error naming the cell") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[0][2][1] = "x";
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()),
                       "weights.W_Q[0][2][1]", "number");
}

TEST_CASE("a weight in the second head is named with its head index") {
  Json w_k = per_head(2, 8, 4, 0.5);
  w_k[1][5][3] = nullptr;
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_K", w_k}}).dump()),
                       "weights.W_K[1][5][3]");
}

TEST_CASE("a weight of 1e39 is an error: outside the float range") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[0][2][1] = 1e39;
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()),
                       "weights.W_Q[0][2][1]", "outside the float range");
}

TEST_CASE("a weight of -1e39 is an error: outside the float range") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[1][0][0] = -1e39;
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()),
                       "weights.W_Q[1][0][0]", "outside the float range");
}

TEST_CASE("a weight of 1e38 loads as the float 1e38") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[0][2][1] = 1e38;
  const Result<Scenario> load = parse_scenario(scenario_json({{"W_Q", w_q}}).dump());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->parameters.heads[0].W_Q(2, 1) == 1e38f);
  CHECK(load->parameters.heads[0].W_Q(2, 0) == 0.5f);
}

TEST_CASE("the largest float as scenario_to_json writes it reads back") {
  // scenario_to_json writes FLT_MAX as 3.4028235e+38, a decimal a little above FLT_MAX that
  // still rounds to it: a saved scenario must load again.
  Scenario s = make_scenario("a b", AttentionConfig{}, 7);
  s.parameters.heads[0].W_Q(0, 0) = std::numeric_limits<float>::max();
  s.parameters.heads[1].W_V(2, 3) = std::numeric_limits<float>::lowest();
  const Result<Scenario> load = parse_scenario(scenario_to_json(s));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->parameters.heads[0].W_Q(0, 0) == std::numeric_limits<float>::max());
  CHECK(load->parameters.heads[1].W_V(2, 3) == std::numeric_limits<float>::lowest());
}

TEST_CASE("W_O of the wrong shape is an error naming weights.W_O") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(scenario_json({{"W_O", Json(7, Json(8, 1.0))}}).dump()), "weights.W_O", "rows");
  CHECK_ERROR_MENTIONS(
      parse_scenario(scenario_json({{"W_O", Json(8, Json(9, 1.0))}}).dump()), "weights.W_O[0]");
}

TEST_CASE("v_a and W_a and W_1 and W_2 are read from the file") {
  Json weights;
  weights["v_a"] = Json::array({Json(4, 0.25), Json::array({1.5, 2.5, 3.5, 4.5})});
  weights["W_a"] = per_head(2, 4, 4, 0.0);
  weights["W_a"][0][1][2] = -7.25;
  weights["W_1"] = per_head(2, 4, 4, 0.0);
  weights["W_1"][1][3][0] = 0.125;
  weights["W_2"] = per_head(2, 4, 4, 0.0);
  weights["W_2"][0][0][3] = 9.0;
  const Result<Scenario> load = parse_scenario(scenario_json(weights).dump());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const Parameters& p = load->parameters;
  CHECK(p.heads[1].v_a[2] == 3.5f);
  CHECK(p.heads[0].v_a[0] == 0.25f);
  CHECK(p.heads[0].W_a(1, 2) == -7.25f);
  CHECK(p.heads[0].W_a(0, 0) == 0.0f);
  CHECK(p.heads[1].W_1(3, 0) == 0.125f);
  CHECK(p.heads[0].W_2(0, 3) == 9.0f);
}

TEST_CASE("v_a with the wrong length is an error naming its head") {
  Json weights;
  weights["v_a"] = Json::array({Json(4, 0.25), Json(3, 0.25)});
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json(weights).dump()), "weights.v_a[1]");
}

TEST_CASE("weights not given are still the seeded values") {
  Json w_q = per_head(2, 8, 4, 0.0);
  w_q[1][7][3] = 2.0;
  const Result<Scenario> load = parse_scenario(scenario_json({{"W_Q", w_q}}).dump());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const Scenario& s = *load;
  const Parameters seeded = seeded_parameters(s.config, 7);
  Matrix expected_w_q = Matrix::Zero(8, 4);
  CHECK(same_matrix(s.parameters.heads[0].W_Q, expected_w_q));
  expected_w_q(7, 3) = 2.0f;
  CHECK(same_matrix(s.parameters.heads[1].W_Q, expected_w_q));
  for (ParameterName name : kAllParameterNames) {
    if (name == ParameterName::W_Q) continue;
    for (int head = 0; head < 2; ++head) {
      INFO("parameter ", to_string(name), " head ", head);
      if (name == ParameterName::v_a)
        CHECK(same_matrix(s.parameters.heads[static_cast<std::size_t>(head)].v_a,
                          seeded.heads[static_cast<std::size_t>(head)].v_a));
      else
        CHECK(same_matrix(parameter(s.parameters, name, head), parameter(seeded, name, head)));
    }
  }
}

TEST_CASE("weights that are not an object are an error naming weights") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("weights": [1, 2])")), "weights");
}

// -----------------------------------------------------------------------------
// Embeddings
// -----------------------------------------------------------------------------
TEST_CASE("an embedding override of the wrong length is an error naming the word") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("embeddings": {"zebra": [1, 2, 3]})")),
                       "embeddings", "zebra", "8");
}

TEST_CASE("a non-number in an embedding override is an error naming the word") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(scenario_with(R"("embeddings": {"zebra": [1, 2, 3, "four", 5, 6, 7, 8]})")),
      "zebra", "[3]", "number");
}

TEST_CASE("embeddings that are not an object are an error naming embeddings") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("embeddings": [1, 2])")), "embeddings");
}

TEST_CASE("an embedding override is stored and becomes the token's row of X") {
  const Result<Scenario> load = parse_scenario(document(
      R"("target": "the cat sat", "embeddings": {"cat": [1, -2, 0.5, 0, 0, 0, 0, 3.25]})"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const Scenario& s = *load;
  const std::vector<float> expected = {1, -2, 0.5f, 0, 0, 0, 0, 3.25f};
  REQUIRE(s.embeddings.count("cat") == 1u);
  CHECK(s.embeddings.at("cat") == expected);

  Pipeline pipeline;
  REQUIRE(pipeline.run(s).is_ok());
  REQUIRE(pipeline.X_target().rows() == 3);
  for (int d = 0; d < 8; ++d) {
    INFO("dimension ", d);
    CHECK(pipeline.X_target()(1, d) == expected[static_cast<std::size_t>(d)]);
  }
  CHECK(pipeline.target_sources()[1] == EmbeddingSource::Override);
  CHECK(pipeline.target_sources()[0] != EmbeddingSource::Override);
}

// -----------------------------------------------------------------------------
// The custom mask
// -----------------------------------------------------------------------------
TEST_CASE("a mask of the right shape loads with each 0 in its cell") {
  const Result<Scenario> load =
      parse_scenario(document(R"("target": "a b c", "mask": [[1, 1, 1], [1, 1, 0], [1, 1, 1]])"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const MaskMatrix& mask = load->mask;
  REQUIRE(mask.rows() == 3);
  REQUIRE(mask.cols() == 3);
  CHECK(mask(1, 2) == 0);
  CHECK(mask(2, 1) == 1);
  CHECK(mask.cast<int>().sum() == 8);
}

TEST_CASE("a mask with the wrong row count is an error naming mask") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(document(R"("target": "a b c", "mask": [[1, 1, 1], [1, 1, 1]])")), "mask",
      "rows");
}

TEST_CASE("a mask row of the wrong length is an error naming mask") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(document(R"("target": "a b c", "mask": [[1, 1, 1], [1, 1], [1, 1, 1]])")),
      "mask[1]");
}

TEST_CASE("a mask value of 2 is an error naming the cell") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(document(R"("target": "a b c", "mask": [[1, 1, 1], [1, 2, 1], [1, 1, 1]])")),
      "mask[1][1]");
}

TEST_CASE("a mask of true and false is accepted") {
  const Result<Scenario> load =
      parse_scenario(document(R"("target": "a b", "mask": [[true, false], [false, true]])"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const MaskMatrix& mask = load->mask;
  REQUIRE(mask.rows() == 2);
  CHECK(mask(0, 0) == 1);
  CHECK(mask(0, 1) == 0);
  CHECK(mask(1, 0) == 0);
  CHECK(mask(1, 1) == 1);
}

TEST_CASE("in cross mode the mask has a row per target token and a column per source token") {
  const Result<Scenario> load = parse_scenario(document(
      R"("mode": "cross", "target": "a b", "source": "x y z", "mask": [[1, 1, 0], [0, 1, 1]])"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const MaskMatrix& mask = load->mask;
  REQUIRE(mask.rows() == 2);
  REQUIRE(mask.cols() == 3);
  CHECK(mask(0, 2) == 0);
  CHECK(mask(1, 0) == 0);
  CHECK(mask(1, 2) == 1);
}

TEST_CASE("in cross mode a mask shaped by the target alone is an error naming mask") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(document(
          R"("mode": "cross", "target": "a b", "source": "x y z", "mask": [[1, 1], [1, 1]])")),
      "mask[0]");
}

// -----------------------------------------------------------------------------
// The view
// -----------------------------------------------------------------------------
TEST_CASE("the view object is kept as JSON text") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("view": {"head": 1, "panels": ["weights", "scores"]})"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const std::string& view = load->view_json;
  REQUIRE_FALSE(view.empty());
  const Json parsed = Json::parse(view);
  CHECK(parsed["head"] == 1);
  CHECK(parsed["panels"][1] == "scores");
}

TEST_CASE("a view that is not an object is an error naming view") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("view": 3)")), "view");
}

// -----------------------------------------------------------------------------
// The round trip
// -----------------------------------------------------------------------------
TEST_CASE("the built-in scenario survives scenario_to_json and parse_scenario unchanged") {
  const Result<Scenario> original = parse_scenario(builtin_scenario_json());
  REQUIRE(original.ok());
  const Result<Scenario> again = parse_scenario(scenario_to_json(*original));
  INFO("error: ", again.error());
  REQUIRE(again.ok());
  CHECK(again.warnings.empty());
  check_same_scenario(*original, *again);
}

TEST_CASE("the built-in scenario computes the same attention after a round trip") {
  const Result<Scenario> original = parse_scenario(builtin_scenario_json());
  REQUIRE(original.ok());
  const Result<Scenario> again = parse_scenario(scenario_to_json(*original));
  REQUIRE(again.ok());
  check_same_results(*original, *again);
}

TEST_CASE("a random scenario with every feature survives a round trip unchanged") {
  const Scenario original = random_scenario();
  const Result<Scenario> again = parse_scenario(scenario_to_json(original));
  INFO("error: ", again.error());
  REQUIRE(again.ok());
  CHECK(again.warnings.empty());
  check_same_scenario(original, *again);
  // The random weights are not the seeded ones, so the comparison above is not vacuous.
  CHECK_FALSE(same_matrix(original.parameters.W_O,
                          seeded_parameters(original.config, original.seed).W_O));
}

TEST_CASE("a random scenario computes the same attention after a round trip") {
  const Scenario original = random_scenario();
  const Result<Scenario> again = parse_scenario(scenario_to_json(original));
  INFO("error: ", again.error());
  REQUIRE(again.ok());
  check_same_results(original, *again);
}

// -----------------------------------------------------------------------------
// Saving and loading files
// -----------------------------------------------------------------------------
TEST_CASE("saving into a folder that does not exist is an error naming the path") {
  TemporaryFolder folder;
  const std::string path = (folder.path / "missing" / "scenario.json").string();
  const Status status = save_scenario_file(path, make_scenario("a b", AttentionConfig{}, 7));
  INFO("message: ", status.message());
  CHECK_FALSE(status.is_ok());
  CHECK(contains(status.message(), path));
  CHECK_FALSE(fs::exists(folder.path / "missing"));
}

TEST_CASE("a failed save into a read-only folder leaves the old file byte-identical") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: running as root, which ignores folder permissions");
    return;
  }
  TemporaryFolder folder;
  const fs::path path = folder.path / "scenario.json";
  const std::string old_contents = "{\"old\": true}\n";
  write_whole(path, old_contents);
  REQUIRE(::chmod(folder.path.c_str(), 0555) == 0);
  const Status status = save_scenario_file(path.string(), make_scenario("a b", AttentionConfig{}, 7));
  ::chmod(folder.path.c_str(), 0755);
  INFO("message: ", status.message());
  CHECK_FALSE(status.is_ok());
  CHECK(contains(status.message(), path.string()));
  CHECK(read_whole(path) == old_contents);
  CHECK(folder_entries(folder.path) == std::vector<std::string>{"scenario.json"});
}

TEST_CASE("saving over an existing file replaces it and leaves no temporary file") {
  TemporaryFolder folder;
  const fs::path path = folder.path / "scenario.json";
  write_whole(path, std::string(100000, 'x'));
  Scenario s = make_scenario("a b c", AttentionConfig{}, 11);
  s.title = "saved";
  const Status status = save_scenario_file(path.string(), s);
  INFO("message: ", status.message());
  REQUIRE(status.is_ok());
  CHECK(read_whole(path) == scenario_to_json(s));
  CHECK(folder_entries(folder.path) == std::vector<std::string>{"scenario.json"});
}

TEST_CASE("a saved file loads back as the same scenario") {
  TemporaryFolder folder;
  const fs::path path = folder.path / "new.json";
  const Scenario original = random_scenario();
  REQUIRE(save_scenario_file(path.string(), original).is_ok());
  const Result<Scenario> load = load_scenario_file(path.string());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  check_same_scenario(original, *load);
}

TEST_CASE("loading a missing file is an error with the path and No such file") {
  TemporaryFolder folder;
  const std::string path = (folder.path / "absent.json").string();
  const Result<Scenario> load = load_scenario_file(path);
  CHECK_ERROR_MENTIONS(load, path, "No such file");
}

TEST_CASE("loading a folder is an error with the path") {
  TemporaryFolder folder;
  const Result<Scenario> load = load_scenario_file(folder.path.string());
  CHECK_ERROR_MENTIONS(load, folder.path.string(), "folder");
}

TEST_CASE("a file with an error names the file and the key") {
  TemporaryFolder folder;
  const fs::path path = folder.path / "bad.json";
  write_whole(path, scenario_with(R"("heads": 0)"));
  CHECK_ERROR_MENTIONS(load_scenario_file(path.string()), path.string(), "heads");
}

TEST_CASE("warnings from a file name the file") {
  TemporaryFolder folder;
  const fs::path path = folder.path / "warn.json";
  write_whole(path, scenario_with(R"("colour": "blue")"));
  const Result<Scenario> load = load_scenario_file(path.string());
  REQUIRE(load.ok());
  REQUIRE(load.warnings.size() == 1u);
  CHECK(contains(load.warnings[0], path.string()));
  CHECK(contains(load.warnings[0], "colour"));
}

TEST_CASE("a number too large for a double such as 1e999 is an error naming it and not a crash") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("weights": {"v_a": [[1e999, 0, 0, 0], [0, 0, 0, 0]]})"));
  CHECK_FALSE(load.ok());
  CHECK(load.error().find("1e999") != std::string::npos);
  CHECK(load.error().find("overflow") != std::string::npos);
}

TEST_CASE("NaN written in a file is malformed JSON") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("embeddings": {"a": [NaN, 0, 0, 0, 0, 0, 0, 0]})"));
  CHECK_FALSE(load.ok());
  CHECK(load.error().find("malformed JSON") != std::string::npos);
}

}  // namespace attnviz
