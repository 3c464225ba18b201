// Scenario files: writing, the round trip through scenario_to_json and parse_scenario, and
// saving and loading whole files. Parsing: test_scenario.cpp.
#include "tests/core/document/scenario_fixtures.hpp"

namespace attnviz {
using namespace scenario_fixtures;  // the helpers of these tests

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
  for (const Mode mode : {Mode::Cross, Mode::Self}) {
    CAPTURE(to_string(mode));
    const Scenario original = random_scenario(mode);
    const Result<Scenario> again = parse_scenario(scenario_to_json(original));
    INFO("error: ", again.error());
    REQUIRE(again.ok());
    CHECK(again.warnings.empty());
    check_same_scenario(original, *again);
    // The random weights are not the seeded ones, so the comparison above is not vacuous.
    CHECK_FALSE(
        same_matrix(original.one_layer().parameters.W_O,
                    seeded_parameters(original.one_layer().config, original.one_layer().seed).W_O));
  }
}

TEST_CASE("a random scenario computes the same attention after a round trip") {
  for (const Mode mode : {Mode::Cross, Mode::Self}) {
    CAPTURE(to_string(mode));
    const Scenario original = random_scenario(mode);
    const Result<Scenario> again = parse_scenario(scenario_to_json(original));
    INFO("error: ", again.error());
    REQUIRE(again.ok());
    check_same_results(original, *again);
  }
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
  const Status status =
      save_scenario_file(path.string(), make_scenario("a b", AttentionConfig{}, 7));
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
