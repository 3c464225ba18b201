// Scenario files: parsing (defaults, validation with a key path in every message) and the view
// object. Writing, the round trip and whole files: test_scenario_files.cpp.
#include "tests/core/document/scenario_fixtures.hpp"

namespace attnviz {
using namespace scenario_fixtures;  // the helpers of these tests

// -----------------------------------------------------------------------------
// The built-in scenario and defaults
// -----------------------------------------------------------------------------
TEST_CASE("the built-in scenario parses without warnings and holds the file's values") {
  const Result<Scenario> load = parse_scenario(builtin_scenario_json());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load.warnings.empty());
  const Scenario& s = *load;
  CHECK(s.title.empty());  // untitled: it is called by its sentence, which the user changes
  CHECK(scenario_title(s) == "I like to eat apple");
  CHECK(s.one_layer().config.heads == 2);
  CHECK(s.one_layer().config.d_model == 8);
  CHECK(s.target == "i like to eat apple");
  CHECK(s.one_layer().parameters.heads[0].W_Q(1, 0) == 4.0f);
  CHECK(s.one_layer().parameters.heads[1].W_Q(4, 0) == 3.0f);
  CHECK(s.one_layer().parameters.W_O(0, 1) == 1.0f);
}

TEST_CASE("a minimal file gets every default and weights drawn from seed 7") {
  const Result<Scenario> load =
      parse_scenario(R"({"format":"attnviz-scenario","version":1,"target":"a b"})");
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load.warnings.empty());
  const Scenario& s = *load;
  CHECK(s.target == "a b");
  CHECK(s.one_layer().config.d_model == 8);
  CHECK(s.one_layer().config.heads == 2);
  CHECK(s.one_layer().config.d_k == 4);
  CHECK(s.one_layer().config.d_v == 4);
  CHECK(s.one_layer().config.d_att == 4);
  CHECK(s.one_layer().config.compatibility == Compatibility::ScaledDot);
  CHECK(s.one_layer().config.temperature == 1.0f);
  CHECK_FALSE(s.one_layer().config.hard);
  CHECK_FALSE(s.one_layer().config.causal);
  CHECK(s.one_layer().mode == Mode::Self);
  CHECK(s.one_layer().positional == Positional::None);
  CHECK(s.one_layer().seed == 7u);
  CHECK(s.max_tokens == Limits::kDefaultMaxTokens);
  CHECK(s.one_layer().embeddings.empty());
  CHECK(s.one_layer().mask.size() == 0);
  CHECK(s.view_json.empty());
  check_same_parameters(s.one_layer().parameters, seeded_parameters(s.one_layer().config, 7), 2);
}

TEST_CASE("d_k and d_v and d_att default to d_model / heads") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("d_model": 12, "heads": 3)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().config.d_k == 4);
  CHECK(load->one_layer().config.d_v == 4);
  CHECK(load->one_layer().config.d_att == 4);
  CHECK(load->one_layer().parameters.heads.size() == 3u);
  CHECK(load->one_layer().parameters.heads[2].W_Q.rows() == 12);
  CHECK(load->one_layer().parameters.heads[2].W_Q.cols() == 4);
}

TEST_CASE("d_model not divisible by heads without d_k is an error naming d_k") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("d_model": 10, "heads": 3)")), "d_k");
}

TEST_CASE("d_model not divisible by heads loads when d_k is given") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("d_model": 10, "heads": 3, "d_k": 5)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().config.d_k == 5);
  CHECK(load->one_layer().config.d_v == 5);
  CHECK(load->one_layer().config.heads == 3);
}

TEST_CASE("line and block comments are accepted") {
  const Result<Scenario> load = parse_scenario(
      "// a line comment\n{\n  /* a block\n comment */ \"format\": \"attnviz-scenario\",\n"
      "  \"target\": \"a b\", // after a value\n  \"heads\": /* inline */ 4\n}\n");
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().config.heads == 4);
  CHECK(load->one_layer().config.d_k == 2);
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
  CHECK_ERROR_MENTIONS(parse_scenario(R"({"format": "attnviz-result", "target": "a b"})"),
                       "format");
}

TEST_CASE("a format that is not a string is an error naming format") {
  CHECK_ERROR_MENTIONS(parse_scenario(R"({"format": 1, "target": "a b"})"), "format");
}

TEST_CASE("version 3 is an error naming version") {
  CHECK_ERROR_MENTIONS(
      parse_scenario(R"({"format": "attnviz-scenario", "version": 3, "target": "a b"})"), "version",
      "3");
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
    CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(std::string("\"heads\": ") + value)),
                         "heads");
  }
}

TEST_CASE("16 heads is the largest head count accepted") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("d_model": 16, "heads": 16)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().config.heads == 16);
  CHECK(load->one_layer().config.d_k == 1);
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
  CHECK(load->one_layer().config.temperature == Limits::kMinTemperature);
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
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("mode": "cross", "source": "  ")")),
                       "source");
}

TEST_CASE("cross mode with a source loads") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("mode": "cross", "source": "x y z")"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().mode == Mode::Cross);
  CHECK(load->one_layer().source == "x y z");
}

TEST_CASE("an unknown mode is an error naming mode") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("mode": "sideways")")), "mode", "sideways");
}

TEST_CASE("an unknown compatibility is an error naming compatibility") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("compatibility": "dotty")")),
                       "compatibility", "dotty");
}

TEST_CASE("every compatibility name is read") {
  const std::pair<const char*, Compatibility> names[] = {{"dot", Compatibility::Dot},
                                                         {"scaled_dot", Compatibility::ScaledDot},
                                                         {"general", Compatibility::General},
                                                         {"additive", Compatibility::Additive},
                                                         {"cosine", Compatibility::Cosine}};
  for (const auto& entry : names) {
    // Named copies, not a structured binding: doctest's INFO captures them in a lambda.
    const char* const name = entry.first;
    const Compatibility expected = entry.second;
    INFO("compatibility: ", std::string(name));
    const Result<Scenario> load =
        parse_scenario(scenario_with(std::string("\"compatibility\": \"") + name + "\""));
    REQUIRE(load.ok());
    CHECK(load->one_layer().config.compatibility == expected);
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
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()), "weights.W_Q[0][2][1]",
                       "number");
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
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()), "weights.W_Q[0][2][1]",
                       "outside the float range");
}

TEST_CASE("a weight of -1e39 is an error: outside the float range") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[1][0][0] = -1e39;
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_Q", w_q}}).dump()), "weights.W_Q[1][0][0]",
                       "outside the float range");
}

TEST_CASE("a weight of 1e38 loads as the float 1e38") {
  Json w_q = per_head(2, 8, 4, 0.5);
  w_q[0][2][1] = 1e38;
  const Result<Scenario> load = parse_scenario(scenario_json({{"W_Q", w_q}}).dump());
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().parameters.heads[0].W_Q(2, 1) == 1e38f);
  CHECK(load->one_layer().parameters.heads[0].W_Q(2, 0) == 0.5f);
}

TEST_CASE("the largest float as scenario_to_json writes it reads back") {
  // scenario_to_json writes FLT_MAX as 3.4028235e+38, a decimal a little above FLT_MAX that
  // still rounds to it: a saved scenario must load again.
  Scenario s = make_scenario("a b", AttentionConfig{}, 7);
  s.edit_one_layer()->parameters.heads[0].W_Q(0, 0) = std::numeric_limits<float>::max();
  s.edit_one_layer()->parameters.heads[1].W_V(2, 3) = std::numeric_limits<float>::lowest();
  const Result<Scenario> load = parse_scenario(scenario_to_json(s));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().parameters.heads[0].W_Q(0, 0) == std::numeric_limits<float>::max());
  CHECK(load->one_layer().parameters.heads[1].W_V(2, 3) == std::numeric_limits<float>::lowest());
}

TEST_CASE("W_O of the wrong shape is an error naming weights.W_O") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_O", Json(7, Json(8, 1.0))}}).dump()),
                       "weights.W_O", "rows");
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_json({{"W_O", Json(8, Json(9, 1.0))}}).dump()),
                       "weights.W_O[0]");
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
  const Parameters& p = load->one_layer().parameters;
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
  const Parameters seeded = seeded_parameters(s.one_layer().config, 7);
  Matrix expected_w_q = Matrix::Zero(8, 4);
  CHECK(same_matrix(s.one_layer().parameters.heads[0].W_Q, expected_w_q));
  expected_w_q(7, 3) = 2.0f;
  CHECK(same_matrix(s.one_layer().parameters.heads[1].W_Q, expected_w_q));
  for (ParameterName name : kAllParameterNames) {
    if (name == ParameterName::W_Q) continue;
    for (int head = 0; head < 2; ++head) {
      INFO("parameter ", to_string(name), " head ", head);
      if (name == ParameterName::v_a)
        CHECK(same_matrix(s.one_layer().parameters.heads[static_cast<std::size_t>(head)].v_a,
                          seeded.heads[static_cast<std::size_t>(head)].v_a));
      else
        CHECK(same_matrix(parameter(s.one_layer().parameters, name, head),
                          parameter(seeded, name, head)));
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
  REQUIRE(s.one_layer().embeddings.count("cat") == 1u);
  CHECK(s.one_layer().embeddings.at("cat") == expected);

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
// Dimension names
// -----------------------------------------------------------------------------
TEST_CASE("dimension names label the first dimensions and the rest by number") {
  const Result<Scenario> load =
      parse_scenario(document(R"("target": "alice", "d_model": 4, "heads": 1,
                  "dimension_names": ["alice", "alan", "bob"])"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load.warnings.empty());
  CHECK(dimension_name(load->one_layer(), 0) == "alice");
  CHECK(dimension_name(load->one_layer(), 2) == "bob");
  CHECK(dimension_name(load->one_layer(), 3).empty());  // not named: the views label it "3"
  CHECK(dimension_name(load->one_layer(), -1).empty());
}

TEST_CASE("without dimension names the dimensions are the lexicon's features") {
  const Result<Scenario> load = parse_scenario(scenario_with(R"("d_model": 14, "heads": 1)"));
  REQUIRE(load.ok());
  CHECK(dimension_name(load->one_layer(), 0) == "person");
  CHECK(dimension_name(load->one_layer(), 1) == "food");
  CHECK(dimension_name(load->one_layer(), 13).empty());  // the lexicon has 12 features
}

TEST_CASE("bad dimension names are errors naming dimension_names") {
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(
                           R"("d_model": 2, "heads": 1, "dimension_names": ["a", "b", "c"])")),
                       "dimension_names", "3 names", "d_model is 2");
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("dimension_names": ["a", 2])")),
                       "dimension_names[1]", "string");
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("dimension_names": ["a", "  "])")),
                       "dimension_names[1]", "empty");
  CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(R"("dimension_names": "a")")),
                       "dimension_names", "list");
}

TEST_CASE("a smaller d_model drops the names of the dimensions it removes") {
  Result<Scenario> load = parse_scenario(
      scenario_with(R"("d_model": 4, "heads": 1, "dimension_names": ["w", "x", "y", "z"])"));
  REQUIRE(load.ok());
  Scenario s = *load;
  AttentionConfig smaller = s.edit_one_layer()->config;
  smaller.d_model = 2;
  apply_config(*s.edit_one_layer(), smaller);
  CHECK(s.edit_one_layer()->dimension_names == std::vector<std::string>{"w", "x"});
  AttentionConfig larger = s.edit_one_layer()->config;
  larger.d_model = 6;
  apply_config(*s.edit_one_layer(), larger);
  CHECK(s.edit_one_layer()->dimension_names ==
        std::vector<std::string>{"w", "x"});  // the new ones by number
  CHECK(dimension_name(s.one_layer(), 4).empty());
  const Result<Scenario> again = parse_scenario(scenario_to_json(s));
  INFO("error: ", again.error());
  CHECK(again.ok());  // never more names than dimensions
}

// -----------------------------------------------------------------------------
// The custom mask
// -----------------------------------------------------------------------------
TEST_CASE("a mask of the right shape loads with each 0 in its cell") {
  const Result<Scenario> load =
      parse_scenario(document(R"("target": "a b c", "mask": [[1, 1, 1], [1, 1, 0], [1, 1, 1]])"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  const MaskMatrix& mask = load->one_layer().mask;
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
  const MaskMatrix& mask = load->one_layer().mask;
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
  const MaskMatrix& mask = load->one_layer().mask;
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

TEST_CASE("kv_groups: read, written back, and refused where it does not divide the heads") {
  const Result<Scenario> load =
      parse_scenario(scenario_with(R"("d_model": 8, "heads": 4, "kv_groups": 2)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load.value().one_layer().config.kv_groups == 2);
  const Result<Scenario> again = parse_scenario(scenario_to_json(load.value()));
  REQUIRE(again.ok());
  CHECK(again.value().one_layer().config.kv_groups == 2);
  // As many groups as heads is ordinary multi-head attention, with one spelling.
  const Result<Scenario> all =
      parse_scenario(scenario_with(R"("d_model": 8, "heads": 4, "kv_groups": 4)"));
  REQUIRE(all.ok());
  CHECK(all.value().one_layer().config.kv_groups == 0);
  CHECK(scenario_to_json(all.value()).find("kv_groups") == std::string::npos);
  for (const char* value : {"3", "0", "5", "-2", "\"two\"", "1.5"}) {
    INFO("kv_groups: ", std::string(value));
    CHECK_ERROR_MENTIONS(parse_scenario(scenario_with(
                             std::string(R"("d_model": 8, "heads": 4, "kv_groups": )") + value)),
                         "kv_groups");
  }
}

}  // namespace attnviz
