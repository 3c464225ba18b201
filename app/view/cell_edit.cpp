#include "app/view/cell_edit.hpp"

#include "app/view/values.hpp"
#include "core/base/float_text.hpp"
#include "core/figures/format.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace attnviz::view {

float CellDrag::speed(float limit, bool fine) {
  // Never more than 0.01 a pixel: a weight dragged large would make every later drag of the
  // matrix coarser, each more than the last (a larger value is typed).
  const float magnitude = std::isfinite(limit) && limit > 1e-3f ? std::min(limit, 1.0f) : 1.0f;
  return magnitude * (fine ? 0.001f : 0.01f);
}

void CellDrag::press(std::uint32_t grid, int row, int col, float value, float limit) {
  *this = {};
  grid_ = grid;
  row_ = row;
  col_ = col;
  start_value_ = value;
  limit_ = limit;
}

std::optional<CellChange> CellDrag::move(float dx, float travelled, float threshold, bool fine,
                                         float current) {
  if (!active() || cancelled_) return std::nullopt;
  if (!moving_ && std::fabs(travelled) >= threshold) moving_ = true;
  if (!moving_ || dx == 0.0f) return std::nullopt;
  const float next = std::clamp(current + dx * speed(limit_, fine), -FLT_MAX, FLT_MAX);
  if (!std::isfinite(next) || next == current) return std::nullopt;
  return CellChange{row_, col_, next};
}

std::optional<CellChange> CellDrag::cancel() {
  if (!active() || cancelled_) return std::nullopt;
  cancelled_ = true;
  return CellChange{row_, col_, start_value_};
}

void CellTyping::open(std::uint32_t grid, int row, int col, float value, int frame) {
  *this = {};
  drawn_frame = frame;
  grid_ = grid;
  row_ = row;
  col_ = col;
  const auto result = write_shortest(text_, text_ + kTextSize - 1, value);
  *result.ptr = '\0';
}

CellTyping::Finished CellTyping::finish(float current) const {
  Finished finished;
  const Result<float> typed = parse_typed_number(text_);
  finished.message = typed ? (typed.warnings.empty() ? "" : typed.warnings.front()) : typed.error();
  if (!typed) {
    char kept[48];
    format_number_into(kept, sizeof kept, current, 4);
    finished.message += std::string(": kept ") + kept;
    return finished;
  }
  // The same value is no edit; -0 typed over 0 is one (it prints differently).
  const float value = *typed;
  if (value != current || std::signbit(value) != std::signbit(current))
    finished.change = CellChange{row_, col_, value};
  return finished;
}

}  // namespace attnviz::view
