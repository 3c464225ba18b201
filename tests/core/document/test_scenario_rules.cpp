// The scenario's rules beyond its keys: cross mode has no causal mask (read from a file, switched
// to, computed), and an untitled scenario's title is its sentence (scenario_title).
#include "core/pipeline/pipeline.hpp"
#include "core/text/utf8.hpp"
#include "tests/core/document/scenario_fixtures.hpp"

namespace attnviz {
using namespace scenario_fixtures;  // the helpers of these tests

// -----------------------------------------------------------------------------
// Cross mode has no causal mask
// -----------------------------------------------------------------------------
TEST_CASE("a file asking for the causal mask in cross mode loads with it off and says so") {
  const Result<Scenario> load = parse_scenario(
      scenario_with(R"("mode": "cross", "source": "x y z", "causal": true, "hard": true)"));
  INFO("error: ", load.error());
  REQUIRE(load.ok());
  CHECK(load->one_layer().mode == Mode::Cross);
  CHECK_FALSE(load->one_layer().config.causal);
  CHECK(load->one_layer().config.hard);  // the rest is read as written
  REQUIRE(load.warnings.size() == 1);
  CHECK(load.warnings[0] == kCausalOffInCross);
  CHECK(contains(load.warnings[0], "causal"));
  CHECK(contains(load.warnings[0], "cross"));
  // Saved again, it says what it does: no causal mask, and no warning when read.
  const Result<Scenario> again = parse_scenario(scenario_to_json(*load));
  REQUIRE(again.ok());
  CHECK(again.warnings.empty());
  CHECK_FALSE(again->one_layer().config.causal);
}

TEST_CASE("the causal mask in self mode, or off in cross mode, loads without a warning") {
  const Result<Scenario> self = parse_scenario(scenario_with(R"("causal": true)"));
  REQUIRE(self.ok());
  CHECK(self->one_layer().config.causal);
  CHECK(self.warnings.empty());
  const Result<Scenario> cross =
      parse_scenario(scenario_with(R"("mode": "cross", "source": "x", "causal": false)"));
  REQUIRE(cross.ok());
  CHECK(cross.warnings.empty());
}

TEST_CASE("loading a file in cross mode with the causal mask warns with the file's name") {
  TemporaryFolder folder;
  const fs::path path = folder.path / "both.json";
  write_whole(path, scenario_with(R"("mode": "cross", "source": "x y", "causal": true)"));
  const Result<Scenario> load = load_scenario_file(path.string());
  REQUIRE(load.ok());
  CHECK_FALSE(load->one_layer().config.causal);
  REQUIRE(load.warnings.size() == 1);
  CHECK(load.warnings[0] == path.string() + ": " + std::string(kCausalOffInCross));
}

TEST_CASE("switching to cross mode turns the causal mask off, back to self it stays off") {
  AttentionConfig config;
  config.causal = true;
  Scenario s = make_scenario("the cat sat", config, 7);
  CHECK_FALSE(set_mode(*s.edit_one_layer(), Mode::Self, s.target));  // nothing to turn off
  CHECK(s.edit_one_layer()->config.causal);
  CHECK(set_mode(*s.edit_one_layer(), Mode::Cross, s.target));
  CHECK(s.edit_one_layer()->mode == Mode::Cross);
  CHECK_FALSE(s.edit_one_layer()->config.causal);
  CHECK(s.edit_one_layer()->source == "the cat sat");  // cross starts with the target as its source
  CHECK_FALSE(set_mode(*s.edit_one_layer(), Mode::Self, s.target));
  CHECK_FALSE(s.edit_one_layer()->config.causal);
  s.edit_one_layer()->source = "le chat";
  CHECK_FALSE(set_mode(*s.edit_one_layer(), Mode::Cross,
                       s.target));  // the mask was off already; a source is kept
  CHECK(s.edit_one_layer()->source == "le chat");
}

TEST_CASE("turn_off_causal_in_cross changes only a cross scenario with the mask on") {
  AttentionConfig config;
  config.causal = true;
  Scenario s = make_scenario("the cat sat", config, 7);
  CHECK_FALSE(turn_off_causal_in_cross(*s.edit_one_layer()));
  CHECK(s.edit_one_layer()->config.causal);
  s.edit_one_layer()->mode = Mode::Cross;
  s.edit_one_layer()->source = "a b";
  CHECK(turn_off_causal_in_cross(*s.edit_one_layer()));
  CHECK_FALSE(s.edit_one_layer()->config.causal);
  CHECK_FALSE(turn_off_causal_in_cross(*s.edit_one_layer()));
}

TEST_CASE("the pipeline refuses the causal mask in cross mode and keeps its last result") {
  AttentionConfig config;
  Scenario s = make_scenario("the cat sat", config, 7);
  s.edit_one_layer()->mode = Mode::Cross;
  s.edit_one_layer()->source = "le chat";
  Pipeline pipeline;
  REQUIRE(pipeline.run(s).is_ok());
  s.edit_one_layer()->config.causal =
      true;  // made in code, past parse_scenario and the app's edits
  s.edit_one_layer()->source = "le chat noir";
  const Status status = pipeline.run(s);
  CHECK_FALSE(status.is_ok());
  CHECK(contains(status.message(), "causal"));
  CHECK(contains(status.message(), "cross"));
  CHECK(pipeline.keys().tokens.size() == 2);  // the last good result
}

// -----------------------------------------------------------------------------
// Titles
// -----------------------------------------------------------------------------
namespace {

std::string title_of(std::string target, std::string title = "") {
  Scenario s = make_scenario(std::move(target), AttentionConfig{}, 7);
  s.title = std::move(title);
  return scenario_title(s);
}

}  // namespace

TEST_CASE("an untitled scenario's title is its sentence with a capital first letter") {
  CHECK(title_of("the animal was tired") == "The animal was tired");
  CHECK(title_of("i like to eat apple") == "I like to eat apple");
  CHECK(title_of("  the \t cat\n sat  ") == "The cat sat");
  CHECK(title_of("\xc3\xa9t\xc3\xa9 chaud") == "\xc3\xa9t\xc3\xa9 chaud");  // été: kept as typed
  CHECK(title_of("") == "");
  CHECK(title_of("   ") == "");
}

TEST_CASE("a named scenario's title stays whatever its sentence") {
  CHECK(title_of("the animal was tired", "Week 3: pronouns") == "Week 3: pronouns");
  CHECK(title_of("", "Week 3") == "Week 3");
}

TEST_CASE("the title follows the sentence as it changes, until the scenario is named") {
  Scenario s = make_scenario("i like to eat apple", AttentionConfig{}, 7);
  CHECK(scenario_title(s) == "I like to eat apple");
  s.target = "the animal was tired";
  CHECK(scenario_title(s) == "The animal was tired");
  s.title = "Pronouns";
  s.target = "the cat sat";
  CHECK(scenario_title(s) == "Pronouns");
}

TEST_CASE("a long sentence's title is cut at a space, with an ellipsis") {
  const std::string words =
      "the quick brown fox jumps over the lazy dog while the cat watches it from the wall";
  const std::string title = title_of(words);
  CHECK(title == "The quick brown fox jumps over the lazy dog while the cat\xe2\x80\xa6");
  CHECK(utf8_length(title) <= kMaxSentenceTitleLength + 1);
  // One long word: cut inside it, never inside a character.
  const std::string long_word(200, 'a');
  CHECK(title_of(long_word) ==
        "A" + std::string(kMaxSentenceTitleLength - 1, 'a') + "\xe2\x80\xa6");
  std::string hebrew;
  for (int i = 0; i < 100; ++i) hebrew += "\xd7\xa9";  // ש, two bytes each
  const std::string cut = title_of(hebrew);
  CHECK(utf8_length(cut) == kMaxSentenceTitleLength + 1);
  CHECK(cut.size() == 2 * kMaxSentenceTitleLength + 3);
  // A sentence of exactly the length is not cut.
  CHECK(title_of(std::string(kMaxSentenceTitleLength, 'b')) ==
        "B" + std::string(kMaxSentenceTitleLength - 1, 'b'));
}

TEST_CASE("an invalid byte in the sentence is U+FFFD in the title") {
  CHECK(title_of("caf\xff ok") == "Caf\xef\xbf\xbd ok");
}

TEST_CASE("an untitled scenario is saved with no title and reads back untitled") {
  Scenario s = make_scenario("the animal was tired", AttentionConfig{}, 7);
  const std::string json = scenario_to_json(s);
  CHECK_FALSE(contains(json, "\"title\""));
  const Result<Scenario> again = parse_scenario(json);
  REQUIRE(again.ok());
  CHECK(again->title.empty());
  CHECK(scenario_title(*again) == "The animal was tired");
  s.title = "Pronouns";
  const Result<Scenario> named = parse_scenario(scenario_to_json(s));
  REQUIRE(named.ok());
  CHECK(named->title == "Pronouns");
}

}  // namespace attnviz
