// What the mouse and the keyboard do to one cell of a matrix grid, without a window: a drag
// (pressed on a cell, moved sideways, Escape, released) and typing (opened with the value, the
// text, finished). The matrix editor (app/panels/matrix_editor.cpp) feeds it ImGui's events and
// draws what it holds. No ImGui: unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attnviz::view {

// A value written into a cell.
struct CellChange {
  int row = -1, col = -1;
  float value = 0;
};

class CellDrag {
 public:
  // Drag speed per pixel for a matrix whose largest magnitude is `limit`: a drag of 100 pixels
  // sweeps its range up to 1 (0.01 a pixel at most, and for a matrix of near zeros); Shift, a
  // tenth of that.
  static float speed(float limit, bool fine);

  // The button pressed on (row, col) of grid `grid`, whose value is `value` and whose largest
  // magnitude is `limit` (kept for the whole drag: it does not speed up as the value grows).
  void press(std::uint32_t grid, int row, int col, float value, float limit);
  // The mouse moved `dx` pixels this frame, `travelled` pixels from where it was pressed
  // (`threshold`: how far before a drag moves anything; a click alone changes nothing), the cell
  // holding `current`: the value to write, if any.
  std::optional<CellChange> move(float dx, float travelled, float threshold, bool fine,
                                 float current);
  // Escape: the value as it was when pressed, and the rest of the drag ignored.
  std::optional<CellChange> cancel();
  void release() { *this = {}; }

  bool active() const { return grid_ != 0; }
  bool on(std::uint32_t grid) const { return grid_ != 0 && grid_ == grid; }
  bool moving() const { return moving_; }
  bool cancelled() const { return cancelled_; }
  int row() const { return row_; }
  int col() const { return col_; }

 private:
  std::uint32_t grid_ = 0;
  int row_ = -1, col_ = -1;
  float start_value_ = 0, limit_ = 0;
  bool moving_ = false, cancelled_ = false;
};

class CellTyping {
 public:
  // Typing into (row, col) of grid `grid`, the text starting as the shortest that reads back to
  // `value` ("0.57", not "0.569999992847"), in frame `frame`.
  void open(std::uint32_t grid, int row, int col, float value, int frame);
  void close() { *this = {}; }

  // What the text came to, the cell holding `current`: the value to write (none when the text is
  // not a number, or is the same value), and a message for a person ("" when none): a warning
  // ("1e39 is past the float range: 3.4028235e38"), or an error and the value kept.
  struct Finished {
    std::optional<CellChange> change;
    std::string message;
  };
  Finished finish(float current) const;

  bool open_on(std::uint32_t grid) const { return grid_ != 0 && grid_ == grid; }
  bool active() const { return grid_ != 0; }
  int row() const { return row_; }
  int col() const { return col_; }
  char* text() { return text_; }
  const char* text() const { return text_; }
  static constexpr int kTextSize = 64;

  // The field's frames (it takes a few to get the keyboard), and whether it had the keyboard.
  int frames = 0;
  bool was_active = false;
  int drawn_frame = -1;  // the last frame its grid drew it (a grid gone away closes it)

 private:
  std::uint32_t grid_ = 0;
  int row_ = -1, col_ = -1;
  char text_[kTextSize] = {};
};

}  // namespace attnviz::view
