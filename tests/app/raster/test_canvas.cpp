// The CPU rasterizer of the Arrows and Output views: lines, curves, discs and rings; coverage,
// blending, caching, and bad coordinates.
#include "app/raster/canvas.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace attnviz::view {
namespace {

struct Pixel {
  int r, g, b, a;
};

Pixel at(const Canvas& canvas, int x, int y) {
  const std::uint32_t p = canvas.pixels()[y * canvas.width() + x];
  return {static_cast<int>(p & 0xFF), static_cast<int>((p >> 8) & 0xFF),
          static_cast<int>((p >> 16) & 0xFF), static_cast<int>(p >> 24)};
}

constexpr Rgba8 kRed{255, 0, 0, 255};

// The canvas's total alpha in pixels' worth: a shape's drawn area.
double covered_area(const Canvas& canvas) {
  double sum = 0;
  for (int y = 0; y < canvas.height(); ++y)
    for (int x = 0; x < canvas.width(); ++x) sum += at(canvas, x, y).a / 255.0;
  return sum;
}

constexpr double kPi = 3.14159265358979;

// Nothing drawn anywhere.
void check_blank(const Canvas& canvas) {
  for (int y = 0; y < canvas.height(); ++y)
    for (int x = 0; x < canvas.width(); ++x) CHECK(at(canvas, x, y).a == 0);
}

}  // namespace

TEST_CASE("canvas: a horizontal line covers its rows fully and nothing else") {
  Canvas canvas;
  canvas.begin(20, 10);
  canvas.line(2.0f, 5.0f, 18.0f, 5.0f, 2.0f, kRed);  // rows 4 and 5 (centres 4.5, 5.5)
  REQUIRE(canvas.end());
  CHECK(at(canvas, 10, 4).a == 255);
  CHECK(at(canvas, 10, 5).a == 255);
  CHECK(at(canvas, 10, 4).r == 255);
  CHECK(at(canvas, 10, 4).g == 0);
  CHECK(at(canvas, 10, 3).a == 0);
  CHECK(at(canvas, 10, 6).a == 0);
  CHECK(at(canvas, 0, 5).a == 0);   // before the start
  CHECK(at(canvas, 19, 5).a == 0);  // after the end
}

TEST_CASE("canvas: edges between pixel centres are anti-aliased") {
  Canvas canvas;
  canvas.begin(20, 10);
  canvas.line(2.0f, 5.0f, 18.0f, 5.0f, 1.0f, kRed);  // from y 4.5 to 5.5: half of rows 4 and 5
  REQUIRE(canvas.end());
  CHECK(at(canvas, 10, 4).a == doctest::Approx(128).epsilon(0.02));
  CHECK(at(canvas, 10, 5).a == doctest::Approx(128).epsilon(0.02));
}

TEST_CASE("canvas: colours are premultiplied and blended over") {
  Canvas canvas;
  canvas.begin(20, 10);
  canvas.line(0.0f, 5.0f, 20.0f, 5.0f, 2.0f, Rgba8{255, 0, 0, 128});
  canvas.line(0.0f, 5.0f, 20.0f, 5.0f, 2.0f, Rgba8{0, 0, 255, 128});
  REQUIRE(canvas.end());
  const Pixel p = at(canvas, 10, 5);
  // Red at 0.5 under blue at 0.5: blue 0.5, red 0.25, alpha 0.75 (premultiplied).
  CHECK(p.b == doctest::Approx(128).epsilon(0.02));
  CHECK(p.r == doctest::Approx(64).epsilon(0.03));
  CHECK(p.a == doctest::Approx(192).epsilon(0.02));
}

TEST_CASE("canvas: a diagonal line covers the pixels along it") {
  Canvas canvas;
  canvas.begin(32, 32);
  canvas.line(2.0f, 2.0f, 30.0f, 30.0f, 2.0f, kRed);
  REQUIRE(canvas.end());
  for (int i = 4; i < 28; ++i) {
    CHECK(at(canvas, i, i).a > 200);     // on the line
    CHECK(at(canvas, i, i + 4).a == 0);  // well below it
  }
}

TEST_CASE("canvas: the same lines again do not redraw, different ones do") {
  Canvas canvas;
  canvas.begin(20, 10);
  canvas.line(0.0f, 5.0f, 20.0f, 5.0f, 2.0f, kRed);
  CHECK(canvas.end());
  canvas.begin(20, 10);
  canvas.line(0.0f, 5.0f, 20.0f, 5.0f, 2.0f, kRed);
  CHECK_FALSE(canvas.end());
  canvas.begin(20, 10);
  canvas.line(0.0f, 6.0f, 20.0f, 6.0f, 2.0f, kRed);
  CHECK(canvas.end());
  CHECK(at(canvas, 10, 6).a == 255);
  CHECK(at(canvas, 10, 4).a == 0);  // the old line is gone
  canvas.begin(21, 10);             // a new size redraws too
  canvas.line(0.0f, 6.0f, 20.0f, 6.0f, 2.0f, kRed);
  CHECK(canvas.end());
  CHECK(canvas.width() == 21);
}

TEST_CASE("canvas: a curve's joints are covered once") {
  Canvas canvas;
  canvas.begin(64, 16);
  // A straight "curve": control points on the line; its segments meet end to end.
  const float p0[2] = {2, 8}, p1[2] = {20, 8}, p2[2] = {40, 8}, p3[2] = {62, 8};
  canvas.curve(p0, p1, p2, p3, 2.0f, Rgba8{255, 0, 0, 128}, 8);
  REQUIRE(canvas.end());
  // Semi-transparent: a pixel covered twice would be more opaque than the rest.
  for (int x = 4; x < 60; ++x)
    CHECK_MESSAGE(at(canvas, x, 8).a == doctest::Approx(128).epsilon(0.02), "x = " << x);
}

TEST_CASE("canvas: lines outside, huge, NaN or invisible draw nothing and do not crash") {
  Canvas canvas;
  canvas.begin(16, 16);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  canvas.line(-100.0f, -100.0f, -50.0f, -50.0f, 2.0f, kRed);
  canvas.line(0.0f, 0.0f, 1e30f, 1e30f, 2.0f, kRed);
  canvas.line(nan, 0.0f, 10.0f, 10.0f, 2.0f, kRed);
  canvas.line(0.0f, inf, 10.0f, 10.0f, 2.0f, kRed);
  canvas.line(0.0f, 8.0f, 16.0f, 8.0f, nan, kRed);
  canvas.line(0.0f, 8.0f, 16.0f, 8.0f, 1e30f, kRed);
  canvas.line(0.0f, 8.0f, 16.0f, 8.0f, 2.0f, Rgba8{255, 0, 0, 0});
  canvas.line(5.0f, 5.0f, 5.0f, 5.0f, 2.0f, kRed);  // zero length
  REQUIRE(canvas.end());
  check_blank(canvas);
}

TEST_CASE("canvas: a disc covers its inside fully, nothing a pixel past its edge, and its area") {
  Canvas canvas;
  canvas.begin(40, 40);
  canvas.disc(20.5f, 20.5f, 8.0f,
              kRed);  // centred on pixel (20, 20): pixel x is x - 20 away on its row
  REQUIRE(canvas.end());
  CHECK(at(canvas, 20, 20).a == 255);
  CHECK(at(canvas, 20, 20).r == 255);
  CHECK(at(canvas, 27, 20).a == 255);  // 7 away: inside
  CHECK(at(canvas, 28, 20).a ==
        doctest::Approx(128).epsilon(0.02));  // 8 away: on the edge, half covered
  CHECK(at(canvas, 29, 20).a == 0);           // 9 away: outside
  CHECK(at(canvas, 20, 11).a == 0);           // above, 9 away
  const double area = covered_area(canvas);
  MESSAGE("disc area " << area << " against " << kPi * 64);
  CHECK(area == doctest::Approx(kPi * 64).epsilon(0.02));
}

TEST_CASE("canvas: a ring covers a band around its radius and leaves its middle empty") {
  Canvas canvas;
  canvas.begin(40, 40);
  canvas.ring(20.5f, 20.5f, 10.0f, 2.0f, kRed);  // the band from 9 to 11 around pixel (20, 20)
  REQUIRE(canvas.end());
  CHECK(at(canvas, 20, 20).a == 0);                                   // the middle
  CHECK(at(canvas, 25, 20).a == 0);                                   // 5 away
  CHECK(at(canvas, 28, 20).a == 0);                                   // 8 away
  CHECK(at(canvas, 29, 20).a == doctest::Approx(128).epsilon(0.02));  // 9 away: the inner edge
  CHECK(at(canvas, 30, 20).a == 255);  // 10 away: the middle of the band
  CHECK(at(canvas, 31, 20).a == doctest::Approx(128).epsilon(0.02));  // 11 away: the outer edge
  CHECK(at(canvas, 32, 20).a == 0);                                   // 12 away
  const double area = covered_area(canvas);
  MESSAGE("ring area " << area << " against " << 2 * kPi * 10 * 2);
  CHECK(area == doctest::Approx(2 * kPi * 10 * 2).epsilon(0.02));
}

TEST_CASE("canvas: a ring thinner than a pixel is a pixel wide and fainter") {
  Canvas canvas;
  canvas.begin(40, 40);
  canvas.ring(20.5f, 20.5f, 10.0f, 0.5f, kRed);
  REQUIRE(canvas.end());
  CHECK(covered_area(canvas) == doctest::Approx(0.5 * 2 * kPi * 10).epsilon(0.03));
}

TEST_CASE("canvas: shapes are drawn in the order given, lines and discs alike") {
  Canvas canvas;
  canvas.begin(20, 20);
  canvas.line(0.0f, 10.0f, 20.0f, 10.0f, 4.0f, kRed);
  canvas.disc(10.0f, 10.0f, 3.0f, Rgba8{0, 0, 255, 255});
  canvas.line(10.0f, 0.0f, 10.0f, 20.0f, 2.0f, Rgba8{0, 255, 0, 255});
  REQUIRE(canvas.end());
  CHECK(at(canvas, 4, 10).r == 255);   // the red line
  CHECK(at(canvas, 11, 11).b == 255);  // the disc over the red line
  CHECK(at(canvas, 10, 10).g == 255);  // the green line over the disc
  CHECK(at(canvas, 10, 10).b == 0);
}

TEST_CASE("canvas: a disc that moves redraws, the same disc again does not") {
  Canvas canvas;
  canvas.begin(20, 20);
  canvas.disc(5.0f, 5.0f, 2.0f, kRed);
  CHECK(canvas.end());
  canvas.begin(20, 20);
  canvas.disc(5.0f, 5.0f, 2.0f, kRed);
  CHECK_FALSE(canvas.end());
  canvas.begin(20, 20);
  canvas.disc(15.0f, 15.0f, 2.0f, kRed);
  CHECK(canvas.end());
  CHECK(at(canvas, 5, 5).a == 0);
  CHECK(at(canvas, 15, 15).a == 255);
}

TEST_CASE(
    "canvas: discs and rings outside, huge, NaN, empty or invisible draw nothing and do not "
    "crash") {
  Canvas canvas;
  canvas.begin(16, 16);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  canvas.disc(-50.0f, -50.0f, 5.0f, kRed);
  canvas.disc(nan, 8.0f, 5.0f, kRed);
  canvas.disc(8.0f, inf, 5.0f, kRed);
  canvas.disc(8.0f, 8.0f, nan, kRed);
  canvas.disc(8.0f, 8.0f, 1e30f, kRed);
  canvas.disc(8.0f, 8.0f, 0.0f, kRed);
  canvas.disc(8.0f, 8.0f, -3.0f, kRed);
  canvas.disc(8.0f, 8.0f, 5.0f, Rgba8{255, 0, 0, 0});
  canvas.ring(8.0f, 8.0f, 5.0f, nan, kRed);
  canvas.ring(8.0f, 8.0f, 5.0f, 1e30f, kRed);
  canvas.ring(8.0f, 8.0f, 5.0f, 0.0f, kRed);
  canvas.ring(1e30f, 8.0f, 5.0f, 1.0f, kRed);
  REQUIRE(canvas.end());
  check_blank(canvas);
}

TEST_CASE(
    "canvas: recording the next frame while the last one draws leaves the last one's pixels") {
  Canvas canvas;
  canvas.begin(20, 10);
  canvas.line(0.0f, 5.0f, 20.0f, 5.0f, 2.0f, kRed);
  REQUIRE(canvas.end());  // drawing on another thread now
  canvas.begin(30, 12);   // the next frame, another size and another line
  canvas.line(0.0f, 2.0f, 30.0f, 2.0f, 2.0f, kRed);
  CHECK(canvas.width() == 20);  // the pixels are still the last end()'s
  CHECK(at(canvas, 10, 5).a == 255);
  CHECK(at(canvas, 10, 1).a == 0);
  REQUIRE(canvas.end());
  CHECK(canvas.width() == 30);
  CHECK(at(canvas, 10, 1).a == 255);
  CHECK(at(canvas, 10, 5).a == 0);
}

TEST_CASE("canvas: an empty canvas is allowed") {
  Canvas canvas;
  canvas.begin(0, 0);
  canvas.line(0.0f, 0.0f, 10.0f, 10.0f, 2.0f, kRed);
  CHECK(canvas.end());
  CHECK(canvas.width() == 0);
}

}  // namespace attnviz::view
