#include "app/raster/tile_cover.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz::view {

void TileCover::reset(int width, int height, int tile) {
  width_ = std::max(width, 1);
  height_ = std::max(height, 1);
  tile_ = std::max(tile, 1);
  columns_ = (width_ + tile_ - 1) / tile_;
  rows_ = (height_ + tile_ - 1) / tile_;
  marks_.assign(static_cast<std::size_t>(columns_) * static_cast<std::size_t>(rows_), 0);
}

void TileCover::add(float x0, float y0, float x1, float y1) {
  if (!(x1 > x0 && y1 > y0)) return;  // empty, or a NaN
  const float width = static_cast<float>(width_), height = static_cast<float>(height_);
  const float left = std::clamp(std::floor(x0), 0.0f, width),
              right = std::clamp(std::ceil(x1), 0.0f, width);
  const float top = std::clamp(std::floor(y0), 0.0f, height),
              bottom = std::clamp(std::ceil(y1), 0.0f, height);
  if (!(right > left && bottom > top)) return;  // outside the area
  const int first_column = static_cast<int>(left) / tile_,
            last_column = (static_cast<int>(right) - 1) / tile_;
  const int first_row = static_cast<int>(top) / tile_,
            last_row = (static_cast<int>(bottom) - 1) / tile_;
  for (int row = first_row; row <= last_row; ++row)
    std::fill_n(marks_.begin() + static_cast<std::ptrdiff_t>(row) * columns_ + first_column,
                last_column - first_column + 1, static_cast<unsigned char>(1));
}

bool TileCover::marked(int column, int row) const {
  if (column < 0 || column >= columns_ || row < 0 || row >= rows_) return false;
  return marks_[static_cast<std::size_t>(row) * static_cast<std::size_t>(columns_) +
                static_cast<std::size_t>(column)] != 0;
}

void TileCover::pieces(std::vector<PixelRect>& out) {
  out.clear();
  open_.clear();
  for (int row = 0; row < rows_; ++row) {
    const auto continued =
        static_cast<std::ptrdiff_t>(open_.size());  // the row above's rectangles come first
    const int y = row * tile_, height = std::min(tile_, height_ - y);
    for (int column = 0; column < columns_;) {
      if (!marked(column, row)) {
        ++column;
        continue;
      }
      int end = column + 1;
      while (end < columns_ && marked(end, row)) ++end;
      const int x = column * tile_, width = std::min(end * tile_, width_) - x;
      const auto above = std::find_if(open_.begin(), open_.begin() + continued, [&](std::size_t r) {
        return out[r].x == x && out[r].width == width;
      });
      if (above != open_.begin() + continued) {
        out[*above].height += height;
        open_.push_back(*above);
      } else {
        open_.push_back(out.size());
        out.push_back({x, y, width, height});
      }
      column = end;
    }
    open_.erase(open_.begin(), open_.begin() + continued);
  }
}

}  // namespace attnviz::view
