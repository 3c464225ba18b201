// A small software rasterizer for views that draw many shapes (the Arrows view's lines, the
// Output view's points): anti-aliased straight lines, cubic curves, discs and rings drawn on the
// CPU into an RGBA image, which the app shows as one textured quad.
//
// Why: a software GL (Mesa's llvmpipe, what a classroom VM or Xvfb has) pays about a microsecond
// for every triangle and shades every 4x4 pixel block a triangle touches, so a long thin line
// costs it ~10x its area, anti-aliasing triples that, and an anti-aliased circle is ~30
// triangles. Here a shape costs the pixels it covers, and a frame whose shapes did not change
// costs nothing: the shapes are recorded each frame, in order, and the image is redrawn only when
// the record differs from the last one — on a thread of its own, while the frame goes on being
// built.
//
// Pixels are premultiplied RGBA8, rows top first; colours are given with straight alpha.
#pragma once

#include "core/figures/colormap.hpp"

#include <cstdint>
#include <future>
#include <variant>
#include <vector>

namespace attnviz::view {

class Canvas {
 public:
  Canvas() = default;
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;
  ~Canvas();  // waits for a drawing in progress

  // Starts recording a frame of `width` x `height` pixels. Coordinates are in pixels, (0, 0) at
  // the top-left corner of the image.
  void begin(int width, int height);
  void line(float x0, float y0, float x1, float y1, float thickness, Rgba8 colour);
  // A cubic Bézier curve from p0 to p3 with control points p1, p2, drawn as `segments` lines.
  void curve(const float p0[2], const float p1[2], const float p2[2], const float p3[2],
             float thickness, Rgba8 colour, int segments);
  // A filled disc, its edge anti-aliased (as ImGui's AddCircleFilled).
  void disc(float centre_x, float centre_y, float radius, Rgba8 colour);
  // A circle's outline `thickness` wide, centred on `radius` (as ImGui's AddCircle); thinner than
  // a pixel is a pixel wide and fainter, as with lines.
  void ring(float centre_x, float centre_y, float radius, float thickness, Rgba8 colour);
  // Ends the frame: redraws the image if anything differs from the last frame, on a thread of
  // its own, so that the caller goes on building the frame meanwhile (pixels() waits for it).
  // Returns whether the pixels change (the texture needs an upload).
  bool end();

  // The size of the pixels: the last end()'s.
  int width() const { return drawn_width_ < 0 ? 0 : drawn_width_; }
  int height() const { return drawn_height_ < 0 ? 0 : drawn_height_; }
  // width() * height() pixels, each R, G, B, A bytes in memory order, premultiplied; waits for
  // a drawing still in progress. Null for an empty image, or when there was no memory for it.
  const std::uint32_t* pixels() const;

 private:
  struct Line {
    float x0, y0, x1, y1, thickness;
    std::uint32_t rgba;  // straight alpha, R in the lowest byte
    std::uint32_t caps;  // which ends are anti-aliased caps (the others are joints of a curve)
    bool operator==(const Line&) const = default;
  };
  struct Round {  // a disc, or a ring when thickness > 0
    float centre_x, centre_y, radius, thickness;
    std::uint32_t rgba;
    bool operator==(const Round&) const = default;
  };
  using Shape = std::variant<Line, Round>;
  void rasterize(const Line& line);
  void rasterize(const Round& round);
  void draw();        // drawn_ into pixels_ (on the drawing thread)
  void wait() const;  // until the drawing in progress, if any, is done

  int width_ = 0, height_ = 0;
  int drawn_width_ = -1, drawn_height_ = -1;
  std::vector<Shape> recording_;    // this frame's shapes, in drawing order
  std::vector<Shape> drawn_;        // the shapes the pixels show
  std::vector<float> accumulated_;  // premultiplied RGBA in 0..1 while drawing
  std::vector<std::uint32_t> pixels_;
  // The drawing in progress reads drawn_ and writes accumulated_ and pixels_; the caller meanwhile
  // only records into recording_.
  mutable std::future<void> drawing_;
};

}  // namespace attnviz::view
