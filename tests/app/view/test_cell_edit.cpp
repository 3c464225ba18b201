// A matrix cell's drag and typing, without a window (app/view/cell_edit.hpp).
#include "app/view/cell_edit.hpp"

#include <doctest/doctest.h>

#include <cfloat>
#include <cstring>

namespace attnviz::view {

TEST_CASE("a drag moves nothing until past the threshold, then by the matrix's speed") {
  CellDrag drag;
  drag.press(7, 1, 2, 0.5f, 0.5f);
  CHECK(drag.on(7));
  CHECK_FALSE(drag.on(8));
  CHECK_FALSE(drag.move(2.0f, 2.0f, 3.0f, false, 0.5f));  // a click, not a drag yet
  CHECK_FALSE(drag.moving());
  const auto change = drag.move(2.0f, 4.0f, 3.0f, false, 0.5f);
  REQUIRE(change);
  CHECK(change->row == 1);
  CHECK(change->col == 2);
  CHECK(change->value == doctest::Approx(0.5f + 2.0f * 0.005f));  // 0.01 × the limit a pixel
  const auto fine = drag.move(2.0f, 6.0f, 3.0f, true, change->value);
  REQUIRE(fine);
  CHECK(fine->value == doctest::Approx(change->value + 2.0f * 0.0005f));
  CHECK_FALSE(drag.move(0.0f, 6.0f, 3.0f, false, fine->value));  // no motion, no edit
}

TEST_CASE("Escape puts the pressed value back and ignores the rest of the drag") {
  CellDrag drag;
  drag.press(7, 0, 0, -1.25f, 2.0f);
  REQUIRE(drag.move(10.0f, 10.0f, 3.0f, false, -1.25f));
  const auto back = drag.cancel();
  REQUIRE(back);
  CHECK(back->value == -1.25f);
  CHECK_FALSE(drag.cancel());
  CHECK_FALSE(drag.move(10.0f, 20.0f, 3.0f, false, -1.25f));
  drag.release();
  CHECK_FALSE(drag.active());
}

TEST_CASE("a drag never writes a value past the float range, and speeds never exceed 0.01") {
  CHECK(CellDrag::speed(1e30f, false) == 0.01f);
  CHECK(CellDrag::speed(0.0f, false) == 0.01f);  // a matrix of zeros
  CHECK(CellDrag::speed(0.25f, true) == doctest::Approx(0.00025f));
  CellDrag drag;
  drag.press(1, 0, 0, FLT_MAX, 1.0f);
  drag.move(0.0f, 10.0f, 3.0f, false, FLT_MAX);  // past the threshold
  const auto change = drag.move(1000.0f, 1000.0f, 3.0f, false, FLT_MAX);
  CHECK_FALSE(change);  // already at the largest float: clamped, the same value, no edit
}

TEST_CASE("typing starts with the shortest text of the value and gives back what it came to") {
  CellTyping typing;
  typing.open(3, 2, 1, 0.57f, 10);
  CHECK(std::strcmp(typing.text(), "0.57") == 0);
  CHECK(typing.open_on(3));
  CHECK(typing.drawn_frame == 10);
  CHECK_FALSE(typing.finish(0.57f).change);  // the same value: no edit
  std::strcpy(typing.text(), "-0.5");
  const CellTyping::Finished typed = typing.finish(0.57f);
  REQUIRE(typed.change);
  CHECK(typed.change->row == 2);
  CHECK(typed.change->col == 1);
  CHECK(typed.change->value == -0.5f);
  CHECK(typed.message.empty());
  std::strcpy(typing.text(), "-0");
  CHECK(typing.finish(0.0f).change);  // -0 over 0 is an edit: it prints differently
}

TEST_CASE("typing that is not a number keeps the value and says so") {
  CellTyping typing;
  typing.open(3, 0, 0, 0.25f, 0);
  std::strcpy(typing.text(), "nan");
  const CellTyping::Finished typed = typing.finish(0.25f);
  CHECK_FALSE(typed.change);
  CHECK(typed.message.find("kept 0.25") != std::string::npos);
  std::strcpy(typing.text(), "1e39");  // past the float range: refused, not rounded to infinity
  const CellTyping::Finished huge = typing.finish(0.25f);
  CHECK_FALSE(huge.change);
  CHECK(huge.message.find("kept 0.25") != std::string::npos);
}

}  // namespace attnviz::view
