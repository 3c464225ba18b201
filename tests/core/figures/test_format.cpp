#include "core/figures/format.hpp"

#include <doctest/doctest.h>

#include <limits>

namespace attnviz::view {

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
  CHECK(parse_typed_number("0.5").value == 0.5f);
  CHECK(parse_typed_number(" -1e-3 ").value == -1e-3f);
  CHECK(parse_typed_number("+2").value == 2.0f);
  CHECK(parse_typed_number("\xe2\x88\x92" "0.25").value == -0.25f);  // a typographic minus
  CHECK(parse_typed_number("1,5").value == 1.5f);                      // a decimal comma
  CHECK(parse_typed_number("1e38").value == 1e38f);
}

TEST_CASE("typed numbers: one too small for a float is 0 and says so") {
  const TypedNumber tiny = parse_typed_number("3e-50");
  CHECK(tiny.value == 0.0f);
  CHECK(tiny.note.find("below the smallest float") != std::string::npos);
  CHECK(parse_typed_number("0").note.empty());
  CHECK(parse_typed_number("1e-40").note.empty());  // a denormal float, not 0
  CHECK(parse_typed_number("1e-400").value == 0.0f);  // past even a double
  CHECK_FALSE(parse_typed_number("1e-400").note.empty());
}

TEST_CASE("typed numbers: what is not a weight says why") {
  CHECK(parse_typed_number("abc").problem == "\"abc\" is not a number");
  CHECK(parse_typed_number("1,000.5").problem == "\"1,000.5\" is not a number");  // a comma with a point: not a decimal comma
  CHECK(parse_typed_number("1e39").problem.find("too large") != std::string::npos);
  CHECK(parse_typed_number("1e400").problem.find("too large") != std::string::npos);
  CHECK(parse_typed_number("nan").problem.find("NaN") != std::string::npos);
  CHECK(parse_typed_number("-inf").problem.find("infinite") != std::string::npos);
  CHECK(parse_typed_number("  ").problem == "type a number");
  for (const char* text : {"abc", "1e39", "nan", "-inf", ""}) CHECK_FALSE(parse_typed_number(text).value);
}

}  // namespace attnviz::view

namespace attnviz::view {

TEST_CASE("small numbers keep two significant digits where two decimals would show fewer") {
  CHECK(format_significant(0.74f) == "0.74");
  CHECK(format_significant(0.05f) == "0.050");
  CHECK(format_significant(0.0018f) == "0.0018");    // not 0.00
  CHECK(format_significant(-0.0018f) == "-0.0018");
  CHECK(format_significant(0.001f) == "0.0010");
  CHECK(format_significant(0.000999999f) == "0.0010");  // rounds up a decade
  CHECK(format_significant(3.14159e-6f) == "3.1e-06");
  CHECK(format_significant(0.0f) == "0");
  CHECK(format_significant(0.0018f, 3) == "0.0018");  // three decimals would show 0.002: one digit
  CHECK(format_significant(0.018f, 3) == "0.018");
  CHECK(format_significant(12.5f) == "12.50");
}

}  // namespace attnviz::view
