#include "core/figures/format.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <string>

namespace attnviz::view {
namespace {

// The value of a typed number, or none; its warning, or "".
std::optional<float> value_of(const Result<float>& typed) {
  return typed ? std::optional<float>(*typed) : std::nullopt;
}
std::string note_of(const Result<float>& typed) {
  return typed.warnings.empty() ? "" : typed.warnings.front();
}

}  // namespace

TEST_CASE("numbers print with two decimals") {
  CHECK(format_number(0.7412f) == "0.74");
  CHECK(format_number(-1.2f) == "-1.20");
}

TEST_CASE("a negative number that rounds to zero prints without a minus sign") {
  CHECK(format_number(-0.001f) == "0.00");
}

TEST_CASE("huge numbers print in scientific notation") {
  CHECK(format_number(1e38f) == "1.0e+38");
}

TEST_CASE("NaN and infinity never print as numbers") {
  CHECK(format_number(std::numeric_limits<float>::quiet_NaN()) == "overflow");
  CHECK(format_number(std::numeric_limits<float>::infinity()) == "overflow");
}

TEST_CASE("a masked score prints as minus infinity and says masked") {
  CHECK(format_score(-std::numeric_limits<float>::infinity()) == "\u2212\u221E (masked)");
}

TEST_CASE("typed numbers: the forms a user types are read") {
  CHECK(value_of(parse_typed_number("0.5")) == 0.5f);
  CHECK(value_of(parse_typed_number(" -1e-3 ")) == -1e-3f);
  CHECK(value_of(parse_typed_number("+2")) == 2.0f);
  CHECK(value_of(parse_typed_number("\xe2\x88\x92"
                                    "0.25")) == -0.25f);  // a typographic minus
  CHECK(value_of(parse_typed_number("1,5")) == 1.5f);     // a decimal comma
  CHECK(value_of(parse_typed_number("1e38")) == 1e38f);
}

TEST_CASE("typed numbers: one too small for a float is 0 and says so") {
  const Result<float> tiny = parse_typed_number("3e-50");
  CHECK(value_of(tiny) == 0.0f);
  CHECK(note_of(tiny).find("below the smallest float") != std::string::npos);
  CHECK(note_of(parse_typed_number("0")).empty());
  CHECK(note_of(parse_typed_number("1e-40")).empty());    // a denormal float, not 0
  CHECK(value_of(parse_typed_number("1e-400")) == 0.0f);  // past even a double
  CHECK_FALSE(note_of(parse_typed_number("1e-400")).empty());
}

TEST_CASE("typed numbers: what is not a weight says why") {
  CHECK(parse_typed_number("abc").error() == "\"abc\" is not a number");
  CHECK(parse_typed_number("1,000.5").error() ==
        "\"1,000.5\" is not a number");  // a comma with a point: not a decimal comma
  CHECK(parse_typed_number("1e39").error().find("too large") != std::string::npos);
  CHECK(parse_typed_number("1e400").error().find("too large") != std::string::npos);
  CHECK(parse_typed_number("nan").error().find("NaN") != std::string::npos);
  CHECK(parse_typed_number("-inf").error().find("infinite") != std::string::npos);
  CHECK(parse_typed_number("  ").error() == "type a number");
  for (const char* text : {"abc", "1e39", "nan", "-inf", ""})
    CHECK_FALSE(value_of(parse_typed_number(text)));
}

}  // namespace attnviz::view

namespace attnviz::view {

TEST_CASE("small numbers keep two significant digits where two decimals would show fewer") {
  CHECK(format_significant(0.74f) == "0.74");
  CHECK(format_significant(0.05f) == "0.050");
  CHECK(format_significant(0.0018f) == "0.0018");  // not 0.00
  CHECK(format_significant(-0.0018f) == "-0.0018");
  CHECK(format_significant(0.001f) == "0.0010");
  CHECK(format_significant(0.000999999f) == "0.0010");  // rounds up a decade
  CHECK(format_significant(3.14159e-6f) == "3.1e-06");
  CHECK(format_significant(0.0f) == "0");
  CHECK(format_significant(0.0018f, 3) == "0.0018");  // three decimals would show 0.002: one digit
  CHECK(format_significant(0.018f, 3) == "0.018");
  CHECK(format_significant(12.5f) == "12.50");
}

TEST_CASE("counts print with their thousands separated") {
  CHECK(format_thousands(0) == "0");
  CHECK(format_thousands(999) == "999");
  CHECK(format_thousands(1000) == "1,000");
  CHECK(format_thousands(124439808) == "124,439,808");
}

}  // namespace attnviz::view
