// The Arrows view's CPU line rasterizer: coverage, blending, caching, and bad coordinates.
#include "app/view/line_canvas.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace attnviz::view {
namespace {

struct Pixel {
  int r, g, b, a;
};

Pixel at(const LineCanvas& canvas, int x, int y) {
  const std::uint32_t p = canvas.pixels()[y * canvas.width() + x];
  return {static_cast<int>(p & 0xFF), static_cast<int>((p >> 8) & 0xFF), static_cast<int>((p >> 16) & 0xFF),
          static_cast<int>(p >> 24)};
}

constexpr Rgba8 kRed{255, 0, 0, 255};

}  // namespace

TEST_CASE("line canvas: a horizontal line covers its rows fully and nothing else") {
  LineCanvas canvas;
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

TEST_CASE("line canvas: edges between pixel centres are anti-aliased") {
  LineCanvas canvas;
  canvas.begin(20, 10);
  canvas.line(2.0f, 5.0f, 18.0f, 5.0f, 1.0f, kRed);  // from y 4.5 to 5.5: half of rows 4 and 5
  REQUIRE(canvas.end());
  CHECK(at(canvas, 10, 4).a == doctest::Approx(128).epsilon(0.02));
  CHECK(at(canvas, 10, 5).a == doctest::Approx(128).epsilon(0.02));
}

TEST_CASE("line canvas: colours are premultiplied and blended over") {
  LineCanvas canvas;
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

TEST_CASE("line canvas: a diagonal line covers the pixels along it") {
  LineCanvas canvas;
  canvas.begin(32, 32);
  canvas.line(2.0f, 2.0f, 30.0f, 30.0f, 2.0f, kRed);
  REQUIRE(canvas.end());
  for (int i = 4; i < 28; ++i) {
    CHECK(at(canvas, i, i).a > 200);          // on the line
    CHECK(at(canvas, i, i + 4).a == 0);       // well below it
  }
}

TEST_CASE("line canvas: the same lines again do not redraw, different ones do") {
  LineCanvas canvas;
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

TEST_CASE("line canvas: a curve's joints are covered once") {
  LineCanvas canvas;
  canvas.begin(64, 16);
  // A straight "curve": control points on the line; its segments meet end to end.
  const float p0[2] = {2, 8}, p1[2] = {20, 8}, p2[2] = {40, 8}, p3[2] = {62, 8};
  canvas.curve(p0, p1, p2, p3, 2.0f, Rgba8{255, 0, 0, 128}, 8);
  REQUIRE(canvas.end());
  // Semi-transparent: a pixel covered twice would be more opaque than the rest.
  for (int x = 4; x < 60; ++x) CHECK_MESSAGE(at(canvas, x, 8).a == doctest::Approx(128).epsilon(0.02), "x = " << x);
}

TEST_CASE("line canvas: lines outside, huge, NaN or invisible draw nothing and do not crash") {
  LineCanvas canvas;
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
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) CHECK(at(canvas, x, y).a == 0);
}

TEST_CASE("line canvas: an empty canvas is allowed") {
  LineCanvas canvas;
  canvas.begin(0, 0);
  canvas.line(0.0f, 0.0f, 10.0f, 10.0f, 2.0f, kRed);
  CHECK(canvas.end());
  CHECK(canvas.width() == 0);
}

}  // namespace attnviz::view
