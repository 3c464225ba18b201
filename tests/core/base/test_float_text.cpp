// The project's own float text (core/base/float_text.hpp) against the standard library's
// std::to_chars and std::from_chars, which the native build has: the same characters for every
// float tried (edge cases, every power of two, subnormals, and a seeded sample of bit patterns),
// and the same reading of texts, including the ones that are not numbers or are out of range.
#include "core/base/float_text.hpp"

#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace attnviz {
namespace {

template <typename T>
std::string standard_text(T value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::vector<float> floats_to_try() {
  std::vector<float> values = {
      0.0f,     -0.0f,        0.1f,       0.2f,        0.3f,          1.0f,
      -1.0f,    0.5f,         1e20f,      1e-20f,      3.4028235e38f, 1.17549435e-38f,
      1.4e-45f, 123456.0f,    1234567.0f, 12345678.0f, 0.001f,        0.0001f,
      1e-5f,    100000.0f,    1e6f,       1e7f,        16777216.0f,   0.57f,
      2.5f,     9.999999e-5f, 33554432.0f};
  for (int e = -149; e <= 127; ++e) {
    const float p = std::ldexp(1.0f, e);
    values.push_back(p);
    values.push_back(std::nextafter(p, 0.0f));
    values.push_back(std::nextafter(p, std::numeric_limits<float>::infinity()));
  }
  for (float x = 1.0f; x < 1.0f + 1e-5f; x = std::nextafter(x, 2.0f)) values.push_back(x);
  std::mt19937 random(2026);
  for (int i = 0; i < 200000; ++i) {
    const float x = float_from_bits(static_cast<std::uint32_t>(random()));
    if (std::isfinite(x)) values.push_back(x);
  }
  return values;
}

}  // namespace

TEST_CASE("write_shortest writes what std::to_chars writes, for every float tried") {
  int compared = 0, differ = 0;
  for (const float x : floats_to_try()) {
    ++compared;
    const std::string ours = shortest_text(x), standard = standard_text(x);
    if (ours != standard && ++differ <= 10) {
      CAPTURE(float_bits(x));
      CHECK(ours == standard);
    }
  }
  CHECK(differ == 0);
  MESSAGE(compared << " floats compared");
  CHECK(shortest_text(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(shortest_text(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(shortest_text(std::numeric_limits<float>::quiet_NaN()) == "nan");
  CHECK(shortest_text(0.1f) == "0.1");
  CHECK(shortest_text(1e20f) == "1e+20");
}

TEST_CASE("write_shortest writes what std::to_chars writes, for doubles") {
  std::mt19937_64 random(27);
  int differ = 0;
  std::vector<double> values = {0.0,
                                -0.0,
                                0.1,
                                1e300,
                                1e-300,
                                5e-324,
                                1.7976931348623157e308,
                                0.3,
                                2.0 / 3.0,
                                123456789012345678.0};
  for (int i = 0; i < 50000; ++i) {
    std::uint64_t bits = random();
    double x = 0;
    std::memcpy(&x, &bits, sizeof x);
    if (std::isfinite(x)) values.push_back(x);
  }
  for (const double x : values) {
    const std::string ours = shortest_text(x), standard = standard_text(x);
    if (ours != standard && ++differ <= 10) CHECK(ours == standard);
  }
  CHECK(differ == 0);
}

TEST_CASE("write_shortest says when the text does not fit, and fits in 32 characters") {
  char small[3];
  CHECK(write_shortest(small, small + sizeof small, 0.125f).ec == std::errc::value_too_large);
  char room[32];
  const auto written = write_shortest(room, room + sizeof room, -1.17549435e-38f);
  CHECK(written.ec == std::errc());
  CHECK(std::string(room, written.ptr) == "-1.1754944e-38");
}

TEST_CASE("parse_number reads what std::from_chars reads, and stops where it stops") {
  const char* texts[] = {"0",
                         "-0",
                         "1",
                         "0.5",
                         ".5",
                         "5.",
                         "1e10",
                         "1E-3",
                         "1e",
                         "1e+",
                         "1e+5x",
                         "-2.5e-3",
                         "+1",
                         " 1",
                         "",
                         "-",
                         ".",
                         "e5",
                         "inf",
                         "-INF",
                         "Infinity",
                         "infinit",
                         "nan",
                         "NaN(123)",
                         "nan(",
                         "1e40",
                         "-1e40",
                         "1e-50",
                         "1e-46",
                         "1e-45",
                         "1e-39",
                         "3.4028235e38",
                         "3.4028236e38",
                         "0x10",
                         "12abc",
                         "00012",
                         "1.5.5",
                         "0.1000000000000000055511151231257827",
                         "123456789012345678901234567890"};
  for (const char* text : texts) {
    CAPTURE(text);
    const std::string s = text;
    float ours = 7.0f, standard = 7.0f;
    const auto a = parse_number(s.data(), s.data() + s.size(), ours);
    const auto b = std::from_chars(s.data(), s.data() + s.size(), standard);
    CHECK(a.ec == b.ec);
    CHECK(a.ptr - s.data() == b.ptr - s.data());
    CHECK(float_bits(ours) == float_bits(standard));
    double ours_double = 7.0, standard_double = 7.0;
    const auto c = parse_number(s.data(), s.data() + s.size(), ours_double);
    const auto d = std::from_chars(s.data(), s.data() + s.size(), standard_double);
    CHECK(c.ec == d.ec);
    CHECK(c.ptr - s.data() == d.ptr - s.data());
    if (!std::isnan(standard_double)) CHECK(ours_double == standard_double);
  }
}

TEST_CASE("every shortest text reads back to its float") {
  for (const float x : floats_to_try()) {
    const std::string text = shortest_text(x);
    float back = 0;
    const auto read = parse_number(text.data(), text.data() + text.size(), back);
    REQUIRE(read.ec == std::errc());
    CHECK(read.ptr == text.data() + text.size());
    CHECK(float_bits(back) == float_bits(x));
  }
  CHECK(shortest_as_double(0.1f) == 0.1);
  CHECK(shortest_as_double(0.02f) == 0.02);
}

}  // namespace attnviz
