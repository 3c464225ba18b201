// Regression tests for crashes found while fuzzing (tests/fuzz/, `make fuzz`): each case replays
// the input that failed and states the behaviour that is now expected. Where a case was found by
// reading the code while writing the fuzz targets rather than by a fuzzer, it says so.
#include "core/document/scenario.hpp"
#include "core/lessons/lesson.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `levels` nested lists around a 1: [[[1]]].
std::string nested_lists(int levels) {
  return std::string(static_cast<std::size_t>(levels), '[') + "1" +
         std::string(static_cast<std::size_t>(levels), ']');
}

// A one-step lesson on "a b c" whose step has the given check.
std::string lesson_with_check(const std::string& check) {
  return R"({"format": "attnviz-lesson", "title": "t", "scenario": {"target": "a b c"},
             "steps": [{"title": "s", "checks": [)" +
         check + "]}]}";
}

}  // namespace

// fuzz_lesson, crash-fc86b1da (input "29007199254740993"): std::stoi threw std::out_of_range,
// uncaught, so `attnviz --lesson 29007199254740993` terminated.
TEST_CASE("a lesson number too large for an int finds no lesson instead of throwing") {
  CHECK_FALSE(find_builtin_lesson("29007199254740993"));
  CHECK_FALSE(find_builtin_lesson("2147483648"));
  CHECK(find_builtin_lesson("0000000005")->id == "05-self-attention");
}

// Found by reading parse_check (then confirmed under AddressSanitizer: SEGV): a permutation
// entry of 4294967296 read as the int 0, passed the range check and indexed a vector of n flags
// at 4294967296.
TEST_CASE("a permutation entry past the int range is refused instead of read out of bounds") {
  for (const char* entry : {"4294967296", "4294967297", "-4294967295", "18446744073709551615"}) {
    CAPTURE(entry);
    const Result<Lesson> load =
        parse_lesson(lesson_with_check(R"({"check": "permutation_equivariant", "permutation": [)" +
                                       std::string(entry) + ", 1, 2]}"),
                     "test");
    REQUIRE_FALSE(load.ok());
    CHECK(contains(load.error(),
                   "steps[0].checks[0].permutation: must hold each position 0..2 once"));
  }
}

// Found by reading json_depth (the nesting check counted inside comments): a comment holding a
// quote hid the nesting that followed, so a scenario nested past the limit loaded, and with
// deep enough nesting (300,000 levels) writing or copying its JSON overflowed the stack.
TEST_CASE("a quote in a comment does not hide nesting past the limit") {
  using namespace std::string_literals;
  // Line comments end at a line feed, a carriage return or a NUL, as in nlohmann's lexer.
  for (const std::string& comment : {"// a 5\" screen\n"s, "/* \" */"s, "// \"\r"s, "// \"\0"s}) {
    const std::string text =
        R"({"target": "a b", )" + comment + R"("view": {"v": )" + nested_lists(40) + "}}";
    CAPTURE(comment);
    const Result<Scenario> load = parse_scenario(text);
    REQUIRE_FALSE(load.ok());
    CHECK(contains(load.error(), "nested deeper than 32 levels"));
  }
}

TEST_CASE("brackets in comments do not count toward the nesting depth") {
  const std::string text =
      R"({"target": "a b", /* [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ */ // {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{
                              "view": {"v": [1, "]]]"]}})";
  const Result<Scenario> load = parse_scenario(text);
  INFO(load.error());
  REQUIRE(load.ok());
  const Result<Scenario> again = parse_scenario(scenario_to_json(*load));
  INFO(again.error());
  CHECK(again.ok());
}

// Found by reading parse_lesson (then confirmed: SIGSEGV from a stack overflow in the release
// build): lessons had no nesting limit, and copying the lesson's scenario JSON recursed once per
// level, so a lesson file nested 300,000 levels deep crashed the app it was dropped on.
TEST_CASE("a lesson nested deeper than the limit is refused before it is copied") {
  const std::string text =
      R"({"format": "attnviz-lesson", "title": "t", "scenario": {"target": "a b", "view": {"v": )" +
      nested_lists(300000) + R"(}}, "steps": [{"title": "s"}]})";
  const Result<Lesson> load = parse_lesson(text, "test");
  REQUIRE_FALSE(load.ok());
  CHECK(contains(load.error(), "nested deeper than 32 levels"));
}

}  // namespace attnviz
