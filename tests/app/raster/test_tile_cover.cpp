// The tiles of an area that boxes touch, and those tiles as rectangles: what the renderer puts
// back of a kept window's picture (render/list_cache.hpp).
#include "app/raster/tile_cover.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace attnviz::view {
namespace {

struct Box {
  float x0, y0, x1, y1;
};

// Which tiles the boxes touch, found pixel by pixel: the pixels [floor(x0), ceil(x1)) x
// [floor(y0), ceil(y1)) inside the area, each marking its tile.
std::vector<unsigned char> tiles_by_pixels(int width, int height, int tile,
                                           const std::vector<Box>& boxes) {
  const int columns = (width + tile - 1) / tile, rows = (height + tile - 1) / tile;
  std::vector<unsigned char> marks(static_cast<std::size_t>(columns * rows), 0);
  for (const Box& box : boxes)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        if (x >= std::floor(box.x0) && x < std::ceil(box.x1) && y >= std::floor(box.y0) &&
            y < std::ceil(box.y1))
          marks[static_cast<std::size_t>((y / tile) * columns + x / tile)] = 1;
  return marks;
}

// The rectangles of the tiles these boxes touch.
std::vector<PixelRect> pieces_of(int width, int height, int tile, const std::vector<Box>& boxes) {
  TileCover cover;
  cover.reset(width, height, tile);
  for (const Box& box : boxes) cover.add(box.x0, box.y0, box.x1, box.y1);
  std::vector<PixelRect> pieces;
  cover.pieces(pieces);
  return pieces;
}

int marked_count(const TileCover& cover) {
  int count = 0;
  for (int row = 0; row < cover.rows(); ++row)
    for (int column = 0; column < cover.columns(); ++column)
      count += cover.marked(column, row) ? 1 : 0;
  return count;
}

TEST_CASE("tile cover: a box marks the tiles that hold its pixels and no others") {
  TileCover cover;
  cover.reset(100, 50, 16);  // 7 columns (the last 4 pixels wide), 4 rows (the last 2 high)
  REQUIRE(cover.columns() == 7);
  REQUIRE(cover.rows() == 4);
  cover.add(15.5f, 0.25f, 16.5f, 1.0f);  // pixels 15 and 16 of row 0: tiles 0 and 1
  CHECK(cover.marked(0, 0));
  CHECK(cover.marked(1, 0));
  CHECK(marked_count(cover) == 2);
}

TEST_CASE("tile cover: a box that ends on a tile's edge does not mark the next tile") {
  TileCover cover;
  cover.reset(100, 50, 16);
  cover.add(0.0f, 0.0f, 16.0f, 16.0f);
  CHECK(cover.marked(0, 0));
  CHECK(marked_count(cover) == 1);
}

TEST_CASE("tile cover: an empty box or one outside the area or with a NaN marks nothing") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  TileCover cover;
  cover.reset(100, 50, 16);
  cover.add(-10.0f, -10.0f, 0.0f, 0.0f);   // above and left, touching the corner
  cover.add(100.0f, 0.0f, 120.0f, 10.0f);  // right of the area
  cover.add(0.0f, 50.0f, 10.0f, 60.0f);    // below it
  cover.add(5.0f, 5.0f, 5.0f, 10.0f);      // no width
  cover.add(8.0f, 5.0f, 4.0f, 10.0f);      // inside out
  cover.add(nan, 0.0f, 10.0f, 10.0f);
  cover.add(0.0f, 0.0f, 10.0f, nan);
  CHECK(marked_count(cover) == 0);
}

TEST_CASE("tile cover: an infinite box marks every tile") {
  const float infinity = std::numeric_limits<float>::infinity();
  TileCover cover;
  cover.reset(100, 50, 16);
  cover.add(-infinity, -infinity, infinity, infinity);
  CHECK(marked_count(cover) == 7 * 4);
}

TEST_CASE("tile cover: reset forgets the marks") {
  TileCover cover;
  cover.reset(100, 50, 16);
  cover.add(0.0f, 0.0f, 100.0f, 50.0f);
  cover.reset(100, 50, 16);
  CHECK(marked_count(cover) == 0);
}

TEST_CASE("tile cover: a column of marked tiles is one rectangle cut at the area's bottom edge") {
  const std::vector<PixelRect> pieces = pieces_of(100, 50, 16, {{20.0f, 3.0f, 30.0f, 49.5f}});
  REQUIRE(pieces.size() == 1);
  CHECK(pieces[0] == PixelRect{16, 0, 16, 50});
}

TEST_CASE("tile cover: a tile in the last column and row is cut at the area's edges") {
  const std::vector<PixelRect> pieces = pieces_of(100, 50, 16, {{99.0f, 49.0f, 100.0f, 50.0f}});
  REQUIRE(pieces.size() == 1);
  CHECK(pieces[0] == PixelRect{96, 48, 4, 2});
}

TEST_CASE("tile cover: runs over different columns on consecutive rows stay separate rectangles") {
  // Row 0: tiles 0 and 1; row 1: tile 0.
  const std::vector<PixelRect> pieces =
      pieces_of(64, 32, 16, {{0.0f, 0.0f, 32.0f, 1.0f}, {0.0f, 16.0f, 16.0f, 17.0f}});
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0] == PixelRect{0, 0, 32, 16});
  CHECK(pieces[1] == PixelRect{0, 16, 16, 16});
}

// Random boxes (some reaching past the area) on areas whose sides are and are not multiples of
// the tile: the rectangles cover each pixel of a marked tile once and no other pixel, and the
// marked tiles are those found pixel by pixel.
TEST_CASE("tile cover: the rectangles cover exactly the pixels of the tiles the boxes touch") {
  std::mt19937 random(20261122);
  std::uniform_real_distribution<float> coordinate(-20.0f, 140.0f), extent(0.0f, 40.0f);
  std::uniform_int_distribution<int> count_of(0, 12);
  for (const auto& size :
       {std::tuple{100, 50, 16}, std::tuple{64, 64, 16}, std::tuple{37, 91, 8}}) {
    // Named copies, not a structured binding: doctest's messages capture them in a lambda.
    const int width = std::get<0>(size), height = std::get<1>(size), tile = std::get<2>(size);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<Box> boxes;
      const int count = count_of(random);
      for (int b = 0; b < count; ++b) {
        const float x0 = coordinate(random), y0 = coordinate(random);
        boxes.push_back({x0, y0, x0 + extent(random), y0 + extent(random)});
      }
      TileCover cover;
      cover.reset(width, height, tile);
      for (const Box& box : boxes) cover.add(box.x0, box.y0, box.x1, box.y1);
      const std::vector<unsigned char> expected = tiles_by_pixels(width, height, tile, boxes);
      for (int row = 0; row < cover.rows(); ++row)
        for (int column = 0; column < cover.columns(); ++column)
          CHECK(cover.marked(column, row) ==
                (expected[static_cast<std::size_t>(row * cover.columns() + column)] != 0));
      std::vector<PixelRect> pieces;
      cover.pieces(pieces);
      std::vector<int> coverage(static_cast<std::size_t>(width * height), 0);
      for (const PixelRect& piece : pieces) {
        REQUIRE(piece.width > 0);
        REQUIRE(piece.height > 0);
        REQUIRE(piece.x >= 0);
        REQUIRE(piece.y >= 0);
        REQUIRE(piece.x + piece.width <= width);
        REQUIRE(piece.y + piece.height <= height);
        for (int y = piece.y; y < piece.y + piece.height; ++y)
          for (int x = piece.x; x < piece.x + piece.width; ++x)
            ++coverage[static_cast<std::size_t>(y * width + x)];
      }
      int wrong = 0;
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
          const int want = cover.marked(x / tile, y / tile) ? 1 : 0;
          wrong += coverage[static_cast<std::size_t>(y * width + x)] != want ? 1 : 0;
        }
      CHECK_MESSAGE(wrong == 0, wrong << " pixels covered wrongly, " << width << "x" << height
                                      << " tile " << tile);
    }
  }
}

}  // namespace
}  // namespace attnviz::view
