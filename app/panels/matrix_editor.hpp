// A matrix drawn as a grid of coloured cells (diverging colormap, value printed in each cell)
// whose cells are edited with the mouse: drag sideways to change a value (Shift: fine), double-
// click or Ctrl+click to type one. The grid only reports edits; the caller writes them into the
// document. Only the visible rows and columns are drawn, and each grid is one ImGui item (plus
// one for its title), so a 1024 x 1024 matrix costs what its visible cells cost.
#pragma once

#include "app/session/app_state.hpp"

#include "app/render/image_texture.hpp"
#include "app/view/cell_edit.hpp"

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

namespace attnviz::app {

// Writes the label of row or column `index` into `buffer` and returns the text to show (the
// buffer, or a string that lives through the frame such as a token's text).
using LabelFunction = const char* (*)(const void* context, int index, char* buffer, int size);
// Rows and columns by number, from 1 as everywhere in the app (view::shown_number).
const char* number_label(const void* context, int index, char* buffer, int size);

struct MatrixGridSpec {
  const char* id = "";                  // unique among the grids of the window
  const char* title = "";               // drawn bold in the top-left corner
  const char* title_tooltip = nullptr;  // one line, shown when the title is hovered
  const float* values = nullptr;        // row-major, rows x cols
  int rows = 0, cols = 0;
  float limit = 1.0f;  // colour scale: -limit (blue) .. 0 (white, or dark grey) .. +limit (red)
  view::ColormapId colormap =
      view::ColormapId::Diverging;  // or DivergingDark (AppState::ui.diverging())
  LabelFunction row_label = nullptr, column_label = nullptr;
  const void* label_context = nullptr;
  float row_label_width = 0;  // widest row label, measured by the caller
  int wide_columns = 0;       // leading columns sized for word labels (the lexicon features)
  int divider_row = -1;       // a line above this row (target | source tokens)
  int highlight_row = -1;     // outlined: the hovered token
  int selected_row = -1;      // label in the selection colour: the selected query
  ImU32 accent = 0;           // a bar under the title (the head's colour); 0 for none
  bool editable = true;
};

// What happened to one grid this frame.
struct MatrixGridEvents {
  bool edited = false;  // write `value` into (row, col)
  int row = -1, col = -1;
  float value = 0;
  int hovered_row = -1;    // the mouse is over this row's cells or label
  bool open_menu = false;  // the title was clicked or the cells right-clicked
  int label_hovered = -1;  // the mouse is over a row label
  int label_clicked = -1;  // a row label was clicked
  int label_menu = -1;     // a row label was right-clicked
};

class MatrixEditor {
 public:
  // Once per frame, before the grids.
  void begin_frame(Theme theme, ImFont* bold_font);
  // Rows as tall as `max_rows` rows allow in `height` (within limits).
  void fit_rows(float height, int max_rows);

  // The grid's size with its labels (measures the wide columns' labels).
  ImVec2 measure(const MatrixGridSpec& spec);
  // Draws the grid with its top-left corner at `origin` (screen coordinates, inside the current
  // window) and handles the mouse.
  MatrixGridEvents draw(const MatrixGridSpec& spec, ImVec2 origin);

  // Grids side by side from the cursor, in the current window (which scrolls both ways): each in
  // a child window of its own (so that one that did not change is drawn from a kept picture while
  // another is edited), a line before each that starts a group, rows fitted to `size`'s height.
  // `handle` gets each grid's index in `grids` and its events, inside its child (where its menus
  // open). A vertical wheel scrolls sideways when there is nothing to scroll vertically.
  struct StripGrid {
    const MatrixGridSpec* spec = nullptr;
    bool starts_group = false;
  };
  using StripHandler =
      std::function<void(int index, const MatrixGridSpec& spec, const MatrixGridEvents& events)>;
  void draw_strip(std::span<const StripGrid> grids, ImVec2 size, const StripHandler& handle);

  // The grid's action menu (opened by its title or a right-click): when this returns true, add
  // menu items, then call end_menu().
  bool begin_menu(const MatrixGridSpec& spec, bool open);
  void end_menu();

  // Seconds until something the grids show changes by itself (a cell's tooltip appears, a notice
  // goes); infinity when nothing does.
  double next_change_in() const;

  // Drag speed per pixel for a matrix whose largest magnitude is `limit` (view::CellDrag).
  static float drag_speed(float limit, bool fine) { return view::CellDrag::speed(limit, fine); }

 private:
  struct Layout {
    ImVec2 origin;
    float label_w = 0, wide_w = 0, cell_w = 0, cells_w = 0;
    int rows = 0, cols = 0, wide = 0;
    float column_x(int col) const;  // left edge of a column, relative to the cells' left edge
    int column_at(float x) const;   // the column at x (relative), clamped
  };
  Layout layout_of(const MatrixGridSpec& spec, ImVec2 origin);
  void draw_typing(const MatrixGridSpec& spec, const ImVec2& cell_min, float width,
                   MatrixGridEvents& events);
  void show_notice();

  static constexpr double kTooltipDelay = 0.45;  // seconds over a cell before its tooltip shows

  Theme theme_ = Theme::Light;
  ImFont* bold_font_ = nullptr;
  float font_ = 16, pad_x_ = 4, cell_w_ = 48, row_h_ = 20, header_h_ = 20;
  int frame_ = 0;

  // The cell being dragged (one drag, from press to release, edits one cell) and the cell being
  // typed into, by the grid's item id: what they do is app/view/cell_edit.hpp's.
  view::CellDrag drag_;
  view::CellTyping typing_;

  // A rejected entry, shown for a few seconds beside its cell.
  struct Notice {
    char text[160] = {};
    double until = 0;
    ImVec2 at;
  } notice_;

  // The hovered cell, for the delayed tooltip.
  struct Hover {
    ImGuiID id = 0;
    int row = -1, col = -1;
    double since = 0;
  } hover_;

  // The cells' colours: one texel per visible cell, drawn as one quad per column width (a
  // software renderer pays per rectangle: a grid of small ones costs three times the pixels).
  struct CellTexture {
    render::ImageTexture texture{render::ImageTexture::Alpha::Opaque};  // every cell opaque
    std::vector<std::uint32_t> texels;
  };
  std::unordered_map<ImGuiID, CellTexture> cell_textures_;  // one per grid drawn
};

}  // namespace attnviz::app
