// Which parts of a rectangle of pixels some boxes touch, as a few rectangles of square tiles.
//
// Why: the renderer keeps pictures of windows whose drawing did not change (render/list_cache.hpp)
// and puts back only the parts of a picture where the window draws something, each triangle's
// bounding box being one box here; the rest of the picture is the background the frame is cleared
// to anyway. A software GL (Mesa's llvmpipe) pays more to read a picture than to clear, and a
// window's frame around child windows (the Weights window around its grids) is mostly background.
#pragma once

#include <cstddef>
#include <vector>

namespace attnviz::view {

struct PixelRect {
  int x = 0, y = 0, width = 0, height = 0;
  bool operator==(const PixelRect&) const = default;
};

class TileCover {
 public:
  // Starts over, nothing marked, for an area of width x height pixels in tiles of tile x tile
  // pixels (those of the last column and row cut at the area's edge). Sizes below 1 count as 1.
  void reset(int width, int height, int tile);
  // Marks every tile holding a pixel of the box [x0, x1) x [y0, y1) widened to whole pixels
  // (pixel x covers [x, x + 1)), in the area's pixels. An empty box, one outside the area or one
  // with a NaN marks nothing; infinities reach the area's edge.
  void add(float x0, float y0, float x1, float y1);

  int columns() const { return columns_; }
  int rows() const { return rows_; }
  bool marked(int column, int row) const;
  // The marked tiles as disjoint rectangles in the area's pixels, top to bottom: the runs of
  // marked tiles along each row, a run over the same columns as a rectangle that ends on the row
  // above making that rectangle taller.
  void pieces(std::vector<PixelRect>& out);

 private:
  int width_ = 1, height_ = 1, tile_ = 1, columns_ = 1, rows_ = 1;
  std::vector<unsigned char> marks_;  // (rows, columns)
  std::vector<std::size_t> open_;     // pieces(): the rectangles that end on the row above
};

}  // namespace attnviz::view
