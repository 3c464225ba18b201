#include "app/raster/convex_bands.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz::view {

namespace {

float cross(const Point& a, const Point& b, const Point& c) {
  return (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x);
}

// Convex and once round: every turn the same way (or straight), and x and y each change
// direction at most twice along the boundary (a pentagram turns one way too, but not once round).
bool convex(const Point* polygon, int count) {
  int turn = 0;
  for (int i = 0; i < count; ++i) {
    const float c = cross(polygon[i], polygon[(i + 1) % count], polygon[(i + 2) % count]);
    const int sign = (c > 0) - (c < 0);
    if (sign == 0) continue;
    if (turn != 0 && sign != turn) return false;
    turn = sign;
  }
  if (turn == 0) return false;  // all on one line: no area
  for (const bool along_y : {false, true}) {
    int first = 0, last = 0, changes = 0;
    for (int i = 0; i < count; ++i) {
      const Point& a = polygon[i];
      const Point& b = polygon[(i + 1) % count];
      const float d = along_y ? b.y - a.y : b.x - a.x;
      const int sign = (d > 0) - (d < 0);
      if (sign == 0) continue;
      if (first == 0) first = sign;
      if (last != 0 && sign != last) ++changes;
      last = sign;
    }
    if (last != 0 && last != first) ++changes;  // round the corner from the last edge to the first
    if (changes > 2) return false;
  }
  return true;
}

// The polygon's extent across the horizontal line at height y (which meets it).
void section(const Point* polygon, int count, float y, float& left, float& right) {
  left = std::numeric_limits<float>::infinity();
  right = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < count; ++i) {
    const Point& a = polygon[i];
    const Point& b = polygon[(i + 1) % count];
    if (y < std::min(a.y, b.y) || y > std::max(a.y, b.y)) continue;
    if (a.y == b.y) {
      left = std::min({left, a.x, b.x});
      right = std::max({right, a.x, b.x});
      continue;
    }
    const float x = y == a.y ? a.x : y == b.y ? b.x : a.x + (y - a.y) * (b.x - a.x) / (b.y - a.y);
    left = std::min(left, x);
    right = std::max(right, x);
  }
}

}  // namespace

bool split_convex_into_bands(const Point* polygon, int count, float block,
                             std::vector<Point>& points, std::vector<unsigned>& triangles) {
  if (count < 3 || !(block > 0) || !std::isfinite(block)) return false;
  for (int i = 0; i < count; ++i)
    if (!std::isfinite(polygon[i].x) || !std::isfinite(polygon[i].y)) return false;
  if (!convex(polygon, count)) return false;

  std::vector<float> levels(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) levels[static_cast<std::size_t>(i)] = polygon[i].y;
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());

  const auto add = [&](Point p) {
    points.push_back(p);
    return static_cast<unsigned>(points.size() - 1);
  };
  // A convex piece (corners in order) as a fan from its first corner, zero-area triangles left out.
  std::vector<Point> piece;
  const auto fan = [&]() {
    for (std::size_t i = 2; i < piece.size(); ++i) {
      if (cross(piece[0], piece[i - 1], piece[i]) == 0.0f) continue;
      triangles.insert(triangles.end(), {add(piece[0]), add(piece[i - 1]), add(piece[i])});
    }
  };
  // Where the bands meet: at corners' heights, none nearer than a block to the last (a thinner
  // band would shade the same row of blocks as its neighbour). On a shape wider than tall they
  // move to the nearest boundary between rows of blocks, so that two bands never share a row; on
  // a taller one that would leave a sliver of a corner the height of the band beside the middle
  // rectangle, dearer than the shared row.
  float x_min = polygon[0].x, x_max = x_min;
  for (int i = 1; i < count; ++i)
    x_min = std::min(x_min, polygon[i].x), x_max = std::max(x_max, polygon[i].x);
  const bool align = x_max - x_min >= levels.back() - levels.front();
  std::vector<float> cuts{levels.front()};
  for (std::size_t k = 1; k + 1 < levels.size(); ++k) {
    if (levels[k] - cuts.back() < block) continue;
    const float cut = align ? std::round(levels[k] / block) * block : levels[k];
    if (cut > cuts.back() && cut < levels.back()) cuts.push_back(cut);
  }
  cuts.push_back(levels.back());

  std::vector<float> heights, lefts, rights;
  std::size_t next_level = 1;  // the first corner height below the current band's top
  for (std::size_t band = 0; band + 1 < cuts.size(); ++band) {
    const float y0 = cuts[band], y1 = cuts[band + 1];
    // The band's outline meets the polygon's edges at its top, its bottom, and every corner's
    // height in between.
    heights.assign(1, y0);
    while (next_level < levels.size() && levels[next_level] <= y0) ++next_level;
    for (std::size_t k = next_level; k < levels.size() && levels[k] < y1; ++k)
      heights.push_back(levels[k]);
    heights.push_back(y1);
    lefts.clear();
    rights.clear();
    for (const float y : heights) {
      float left, right;
      section(polygon, count, y, left, right);
      lefts.push_back(left);
      rights.push_back(right);
    }
    const float inner_left = *std::max_element(lefts.begin(), lefts.end());
    const float inner_right = *std::min_element(rights.begin(), rights.end());
    const std::size_t n = heights.size();
    if (!(inner_right > inner_left)) {  // the band narrows to a point: the whole band as one piece
      piece.clear();
      for (std::size_t k = 0; k < n; ++k) piece.push_back({lefts[k], heights[k]});
      for (std::size_t k = n; k-- > 0;) piece.push_back({rights[k], heights[k]});
      fan();
      continue;
    }
    // The rectangle between the band's inner sides, as (a b c) (a c d) ...
    const unsigned a = add({inner_left, y0}), b = add({inner_right, y0});
    const unsigned c = add({inner_right, y1}), d = add({inner_left, y1});
    triangles.insert(triangles.end(), {a, b, c, a, c, d});
    // ... and what lies outside it on either side, out to the polygon's edge.
    piece.assign(1, Point{inner_left, y0});
    for (std::size_t k = 0; k < n; ++k) piece.push_back({lefts[k], heights[k]});
    piece.push_back({inner_left, y1});
    fan();
    piece.assign(1, Point{inner_right, y0});
    for (std::size_t k = 0; k < n; ++k) piece.push_back({rights[k], heights[k]});
    piece.push_back({inner_right, y1});
    fan();
  }
  return true;
}

}  // namespace attnviz::view
