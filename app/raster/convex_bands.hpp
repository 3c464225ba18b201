// A convex polygon cut into horizontal bands, each band an axis-aligned rectangle with the bits
// of the polygon left and right of it: the same pixels as a fan of triangles, in far fewer 4x4
// pixel blocks.
//
// Why: a software GL (Mesa's llvmpipe) shades every 4x4 block a triangle touches, once per
// triangle. ImGui fills a rounded rectangle (a button, a frame, a chip, a title bar) as a fan from
// one corner: a dozen long slivers that each touch a row of blocks across the whole shape, so the
// shape is shaded several times over. Cut into bands (none thinner than a block but the last), a
// rounded rectangle is three rectangles (which llvmpipe draws as such, see render/ui_renderer.cpp)
// and its corners small triangles.
#pragma once

#include <vector>

namespace attnviz::view {

struct Point {
  float x = 0, y = 0;
};

// Appends the pieces of the convex `polygon` (its corners in order, either way round) to `points`
// and `triangles` (indices into `points`, three per triangle; each rectangle is two triangles
// (a b c) (a c d) with a, b, c, d its top-left, top-right, bottom-right and bottom-left corners).
// `block` is the height of the renderer's pixel blocks in the polygon's units (4 at one pixel per
// unit), the bands' boundaries falling between its rows of blocks (at multiples of `block`).
// Returns false, appending nothing, when the polygon is not convex, has fewer than three corners,
// a corner is not finite, or `block` is not a positive number.
bool split_convex_into_bands(const Point* polygon, int count, float block,
                             std::vector<Point>& points, std::vector<unsigned>& triangles);

}  // namespace attnviz::view
