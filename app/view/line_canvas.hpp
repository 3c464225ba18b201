// A small software rasterizer for views that draw many lines (the Arrows view): anti-aliased
// straight lines and cubic curves drawn on the CPU into an RGBA image, which the app shows as one
// textured quad.
//
// Why: a software GL (Mesa's llvmpipe, what a classroom VM or Xvfb has) shades every 4x4 pixel
// block a triangle touches, so a long thin line costs it ~10x its area, and anti-aliasing
// triples that. Here a line costs its length times its width, and a frame whose lines did not
// change costs nothing: the lines are recorded each frame, and the image is redrawn only when the
// record differs from the last one.
//
// Pixels are premultiplied RGBA8, rows top first; colours are given with straight alpha.
#pragma once

#include "app/view/colormap.hpp"

#include <cstdint>
#include <vector>

namespace attnviz::view {

class LineCanvas {
 public:
  // Starts recording a frame of `width` x `height` pixels. Coordinates are in pixels, (0, 0) at
  // the top-left corner of the image.
  void begin(int width, int height);
  void line(float x0, float y0, float x1, float y1, float thickness, Rgba8 colour);
  // A cubic Bézier curve from p0 to p3 with control points p1, p2, drawn as `segments` lines.
  void curve(const float p0[2], const float p1[2], const float p2[2], const float p3[2], float thickness,
             Rgba8 colour, int segments);
  // Ends the frame: redraws the image if anything differs from the last frame. Returns whether
  // the pixels changed (the texture needs an upload).
  bool end();

  int width() const { return width_; }
  int height() const { return height_; }
  // width() * height() pixels, each R, G, B, A bytes in memory order, premultiplied.
  const std::uint32_t* pixels() const { return pixels_.data(); }

 private:
  struct Line {
    float x0, y0, x1, y1, thickness;
    std::uint32_t rgba;  // straight alpha, R in the lowest byte
    std::uint32_t caps;  // which ends are anti-aliased caps (the others are joints of a curve)
    bool operator==(const Line&) const = default;
  };
  void rasterize(const Line& line);

  int width_ = 0, height_ = 0;
  int drawn_width_ = -1, drawn_height_ = -1;
  std::vector<Line> recording_;  // this frame's lines
  std::vector<Line> drawn_;      // the lines the pixels show
  std::vector<float> accumulated_;  // premultiplied RGBA in 0..1 while drawing
  std::vector<std::uint32_t> pixels_;
};

}  // namespace attnviz::view
