#include "app/view/format.hpp"

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

}  // namespace attnviz::view
