// Convex polygons cut into horizontal bands: the same area and the same pixels as the polygon,
// fewer 4x4 blocks touched than a fan, and anything that is not a convex polygon refused.
#include "app/raster/convex_bands.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attnviz::view {
namespace {

constexpr float kPi = 3.14159265f;

// A rounded rectangle as ImGui builds one: each corner an arc of `steps` segments, clockwise on
// screen (y down) from the top-left corner's arc.
std::vector<Point> rounded_rectangle(float x0, float y0, float x1, float y1, float radius,
                                     int steps) {
  std::vector<Point> corners;
  const Point centres[4] = {{x0 + radius, y0 + radius},
                            {x1 - radius, y0 + radius},
                            {x1 - radius, y1 - radius},
                            {x0 + radius, y1 - radius}};
  for (int c = 0; c < 4; ++c) {
    const float start = kPi * (1.0f + 0.5f * static_cast<float>(c));
    for (int s = 0; s <= steps; ++s) {
      const float angle = start + 0.5f * kPi * static_cast<float>(s) / static_cast<float>(steps);
      corners.push_back(
          {centres[c].x + radius * std::cos(angle), centres[c].y + radius * std::sin(angle)});
    }
  }
  return corners;
}

double polygon_area(const std::vector<Point>& polygon) {
  double twice = 0;
  for (std::size_t i = 0; i < polygon.size(); ++i) {
    const Point& a = polygon[i];
    const Point& b = polygon[(i + 1) % polygon.size()];
    twice += static_cast<double>(a.x) * b.y - static_cast<double>(b.x) * a.y;
  }
  return std::abs(twice) / 2;
}

double triangle_area(const Point& a, const Point& b, const Point& c) {
  return std::abs((static_cast<double>(b.x) - a.x) * (c.y - a.y) -
                  (static_cast<double>(c.x) - a.x) * (b.y - a.y)) /
         2;
}

struct Pieces {
  std::vector<Point> points;
  std::vector<unsigned> triangles;
  const Point& corner(std::size_t triangle, int k) const {
    return points[triangles[triangle * 3 + static_cast<std::size_t>(k)]];
  }
  std::size_t count() const { return triangles.size() / 3; }
};

Pieces split(const std::vector<Point>& polygon) {
  Pieces pieces;
  REQUIRE(split_convex_into_bands(polygon.data(), static_cast<int>(polygon.size()), 4.0f,
                                  pieces.points, pieces.triangles));
  return pieces;
}

// Where p lies against a convex outline (corners in order, either winding), by its distance to
// each edge's line: 1 inside by more than `margin`, -1 outside by more than `margin` from some
// edge it is outside of, 0 within `margin` of the boundary (which side it falls on is the GPU's
// rule, not the split's).
int side_of(const Point& p, const Point* corners, std::size_t count, double margin) {
  double area = 0;
  for (std::size_t i = 0; i < count; ++i)
    area += static_cast<double>(corners[i].x) * corners[(i + 1) % count].y -
            static_cast<double>(corners[(i + 1) % count].x) * corners[i].y;
  const double orientation = area > 0 ? 1 : -1;
  bool strictly_inside = true;
  for (std::size_t i = 0; i < count; ++i) {
    const Point& u = corners[i];
    const Point& v = corners[(i + 1) % count];
    const double length =
        std::hypot(static_cast<double>(v.x) - u.x, static_cast<double>(v.y) - u.y);
    if (length == 0) continue;
    const double distance = orientation *
                            ((static_cast<double>(v.x) - u.x) * (p.y - u.y) -
                             (static_cast<double>(v.y) - u.y) * (p.x - u.x)) /
                            length;
    if (distance < -margin) return -1;
    if (distance < margin) strictly_inside = false;
  }
  return strictly_inside ? 1 : 0;
}

// Every sample point well inside the polygon lies in exactly one piece, every one well outside in
// none (points within a hair of an edge are skipped: which side they fall on is the GPU's rule).
void check_same_coverage(const std::vector<Point>& polygon, const Pieces& pieces) {
  float x_min = polygon[0].x, x_max = x_min, y_min = polygon[0].y, y_max = y_min;
  for (const Point& p : polygon) {
    x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x);
    y_min = std::min(y_min, p.y), y_max = std::max(y_max, p.y);
  }
  constexpr double kMargin = 1e-3;
  int checked = 0;
  for (float y = y_min - 2; y <= y_max + 2; y += 0.37f)
    for (float x = x_min - 2; x <= x_max + 2; x += 0.41f) {
      const Point p{x, y};
      const int in_polygon = side_of(p, polygon.data(), polygon.size(), kMargin);
      if (in_polygon == 0) continue;
      int covering = 0;
      bool on_a_piece_edge = false;
      for (std::size_t t = 0; t < pieces.count(); ++t) {
        const Point corners[3] = {pieces.corner(t, 0), pieces.corner(t, 1), pieces.corner(t, 2)};
        const int side = side_of(p, corners, 3, kMargin);
        covering += side == 1;
        on_a_piece_edge = on_a_piece_edge || side == 0;
      }
      if (on_a_piece_edge) continue;
      ++checked;
      CHECK_MESSAGE(covering == (in_polygon == 1 ? 1 : 0), "at (" << x << ", " << y << ")");
    }
  CHECK(checked > 100);
}

// 4x4 blocks a software GL shades: per triangle, every block its edges do not exclude; a
// rectangle given as (a b c) (a c d) counts once (llvmpipe draws it as one rectangle).
long blocks_touched(const Pieces& pieces, bool pair_rectangles) {
  long blocks = 0;
  for (std::size_t t = 0; t < pieces.count(); ++t) {
    Point corner[3] = {pieces.corner(t, 0), pieces.corner(t, 1), pieces.corner(t, 2)};
    const bool rectangle_pair = pair_rectangles && t + 1 < pieces.count() &&
                                pieces.triangles[t * 3 + 3] == pieces.triangles[t * 3] &&
                                pieces.triangles[t * 3 + 4] == pieces.triangles[t * 3 + 2] &&
                                corner[0].y == corner[1].y && corner[1].x == corner[2].x;
    float x0 = std::min({corner[0].x, corner[1].x, corner[2].x}),
          x1 = std::max({corner[0].x, corner[1].x, corner[2].x});
    float y0 = std::min({corner[0].y, corner[1].y, corner[2].y}),
          y1 = std::max({corner[0].y, corner[1].y, corner[2].y});
    if (rectangle_pair) {
      const Point& d = pieces.corner(t + 1, 2);
      x0 = std::min(x0, d.x), x1 = std::max(x1, d.x), y0 = std::min(y0, d.y),
      y1 = std::max(y1, d.y);
    }
    const double orientation =
        (static_cast<double>(corner[1].x) - corner[0].x) * (corner[2].y - corner[0].y) -
        (static_cast<double>(corner[2].x) - corner[0].x) * (corner[1].y - corner[0].y);
    for (float by = std::floor(y0 / 4) * 4; by < y1; by += 4)
      for (float bx = std::floor(x0 / 4) * 4; bx < x1; bx += 4) {
        bool excluded = false;
        for (int e = 0; e < 3 && !excluded && !rectangle_pair; ++e) {
          const Point& a = corner[e];
          const Point& b = corner[(e + 1) % 3];
          int out = 0;
          for (int k = 0; k < 4; ++k) {
            const float x = bx + static_cast<float>(k & 1) * 4,
                        y = by + static_cast<float>(k >> 1) * 4;
            const double side = ((static_cast<double>(b.x) - a.x) * (y - a.y) -
                                 (static_cast<double>(b.y) - a.y) * (x - a.x)) *
                                orientation;
            out += side < 0;
          }
          excluded = out == 4;
        }
        blocks += !excluded;
      }
    if (rectangle_pair) ++t;
  }
  return blocks;
}

Pieces fan_of(const std::vector<Point>& polygon) {
  Pieces fan;
  fan.points = polygon;
  for (unsigned i = 2; i < polygon.size(); ++i)
    fan.triangles.insert(fan.triangles.end(), {0u, i - 1, i});
  return fan;
}

}  // namespace

TEST_CASE("convex bands: a rounded rectangle keeps its area and its pixels") {
  const std::vector<Point> chip = rounded_rectangle(10.3f, 20.6f, 70.8f, 42.2f, 4.8f, 3);
  const Pieces pieces = split(chip);
  double area = 0;
  for (std::size_t t = 0; t < pieces.count(); ++t)
    area += triangle_area(pieces.corner(t, 0), pieces.corner(t, 1), pieces.corner(t, 2));
  CHECK(area == doctest::Approx(polygon_area(chip)).epsilon(1e-5));
  check_same_coverage(chip, pieces);
}

TEST_CASE("convex bands: a rounded rectangle's middle is one rectangle between rows of blocks") {
  const Pieces pieces = split(rounded_rectangle(0.0f, 0.0f, 60.0f, 22.0f, 5.0f, 3));
  // The arcs end at heights 5 and 17; the band between them starts and ends on the rows of
  // blocks nearest (4 and 16) and is all one rectangle but for slivers of the arcs.
  bool found = false;
  for (std::size_t t = 0; t + 1 < pieces.count(); ++t) {
    const Point& a = pieces.corner(t, 0);
    const Point& c = pieces.corner(t, 2);
    const bool pair = pieces.triangles[t * 3 + 3] == pieces.triangles[t * 3] &&
                      pieces.triangles[t * 3 + 4] == pieces.triangles[t * 3 + 2];
    if (pair && a.y == 4.0f && c.y == 16.0f && a.x < 0.5f && c.x > 59.5f) found = true;
  }
  CHECK(found);
}

TEST_CASE(
    "convex bands: a rounded rectangle touches under 60 percent of the 4x4 blocks its fan does") {
  const std::vector<Point> chip = rounded_rectangle(10.3f, 20.6f, 70.8f, 42.2f, 4.8f, 3);
  const long fan = blocks_touched(fan_of(chip), false);
  const long bands = blocks_touched(split(chip), true);
  MESSAGE("blocks: fan " << fan << ", bands " << bands);
  CHECK(bands * 10 < fan * 6);
}

TEST_CASE("convex bands: shapes with pointed tops and bottoms keep their pixels") {
  const std::vector<Point> triangle = {{5.0f, 1.0f}, {30.0f, 40.0f}, {-12.0f, 25.0f}};
  check_same_coverage(triangle, split(triangle));
  const std::vector<Point> diamond = {{20.0f, 0.0f}, {40.0f, 20.0f}, {20.0f, 40.0f}, {0.0f, 20.0f}};
  check_same_coverage(diamond, split(diamond));
  std::vector<Point> circle;
  circle.reserve(24);
  for (int k = 0; k < 24; ++k)
    circle.push_back({50.0f + 17.3f * std::cos(2 * kPi * static_cast<float>(k) / 24),
                      40.0f + 17.3f * std::sin(2 * kPi * static_cast<float>(k) / 24)});
  check_same_coverage(circle, split(circle));
}

TEST_CASE("convex bands: repeated corners and a sliver of a shape keep their pixels") {
  // ImGui repeats a corner where an arc ends on a straight side.
  std::vector<Point> chip = rounded_rectangle(3.2f, 4.7f, 50.1f, 20.9f, 4.0f, 3);
  chip.insert(chip.begin() + 4, chip[4]);
  chip.insert(chip.begin() + 9, chip[9]);
  check_same_coverage(chip, split(chip));
  const std::vector<Point> sliver = {
      {0.0f, 10.0f}, {40.0f, 10.0f}, {40.0f, 10.01f}, {0.0f, 10.01f}};
  const Pieces pieces = split(sliver);
  double area = 0;
  for (std::size_t t = 0; t < pieces.count(); ++t)
    area += triangle_area(pieces.corner(t, 0), pieces.corner(t, 1), pieces.corner(t, 2));
  CHECK(area == doctest::Approx(0.4).epsilon(1e-3));
}

TEST_CASE("convex bands: either winding gives the same pieces' area") {
  std::vector<Point> chip = rounded_rectangle(0.0f, 0.0f, 40.0f, 16.0f, 4.0f, 4);
  const double forward = polygon_area(chip);
  std::reverse(chip.begin(), chip.end());
  const Pieces pieces = split(chip);
  double area = 0;
  for (std::size_t t = 0; t < pieces.count(); ++t)
    area += triangle_area(pieces.corner(t, 0), pieces.corner(t, 1), pieces.corner(t, 2));
  CHECK(area == doctest::Approx(forward).epsilon(1e-5));
  check_same_coverage(chip, pieces);
}

TEST_CASE("convex bands: anything but a finite convex polygon is refused and nothing is appended") {
  std::vector<Point> points{{1.0f, 1.0f}};
  std::vector<unsigned> triangles{7u};
  const auto refused = [&](const std::vector<Point>& polygon) {
    const bool ok = split_convex_into_bands(polygon.data(), static_cast<int>(polygon.size()), 4.0f,
                                            points, triangles);
    return !ok && points.size() == 1 && triangles.size() == 1;
  };
  CHECK(refused({}));
  CHECK(refused({{0.0f, 0.0f}, {1.0f, 1.0f}}));
  CHECK(refused({{0.0f, 0.0f}, {1.0f, 1.0f}, {2.0f, 2.0f}, {3.0f, 3.0f}}));  // a line
  CHECK(refused({{0.0f, 5.0f}, {10.0f, 5.0f}, {20.0f, 5.0f}}));              // no height
  CHECK(refused({{0.0f, 0.0f},
                 {10.0f, 0.0f},
                 {10.0f, 4.0f},
                 {4.0f, 4.0f},
                 {4.0f, 10.0f},
                 {0.0f, 10.0f}}));  // an L
  std::vector<Point> pentagram;
  pentagram.reserve(5);
  for (int k = 0; k < 5; ++k)
    pentagram.push_back({10.0f * std::cos(4 * kPi * static_cast<float>(k) / 5),
                         10.0f * std::sin(4 * kPi * static_cast<float>(k) / 5)});
  CHECK(refused(pentagram));  // turns one way, but twice round
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(refused({{0.0f, 0.0f}, {10.0f, 0.0f}, {nan, 10.0f}}));
  CHECK(refused({{0.0f, 0.0f}, {std::numeric_limits<float>::infinity(), 0.0f}, {5.0f, 10.0f}}));
}

}  // namespace attnviz::view
