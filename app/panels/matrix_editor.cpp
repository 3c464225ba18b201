#include "app/panels/matrix_editor.hpp"

#include "app/panels/theme.hpp"
#include "core/base/float_text.hpp"
#include "core/figures/colormap.hpp"
#include "core/figures/format.hpp"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

namespace attnviz::app {
namespace {

// The lines between cells (drawn as the grid's background, showing through 1-pixel gaps).
ImU32 grid_line_colour(Theme theme) {
  return theme == Theme::Dark ? IM_COL32(70, 72, 82, 255) : IM_COL32(196, 198, 206, 255);
}

// A cell's number in at most `width` pixels: 2 decimals, fewer when they do not fit, then the
// shortest exponent form ("-3e+38"). Never allocates.
const char* format_cell(char* buffer, int size, float value, float width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    view::format_number_into(buffer, size, value, decimals);
    if (ImGui::CalcTextSize(buffer).x <= width) return buffer;
  }
  if (std::isfinite(value))
    std::snprintf(buffer, static_cast<std::size_t>(size), "%.0e", static_cast<double>(value));
  return buffer;
}

// "W_Q" is drawn as W with a subscript Q: the part after '_' up to a space at a smaller size,
// lowered; what follows the space (" (kv head 2)") at the full size again.
struct TitleParts {
  std::string_view main, sub, rest;  // sub and rest "" when there are none
};
TitleParts split_title(const char* title) {
  const std::string_view text(title);
  const std::size_t underscore = text.find('_');
  if (underscore == std::string_view::npos) return {text, {}, {}};
  const std::size_t space = text.find(' ', underscore);
  const std::size_t sub_end = space == std::string_view::npos ? text.size() : space;
  return {text.substr(0, underscore), text.substr(underscore + 1, sub_end - underscore - 1),
          text.substr(sub_end)};
}
constexpr float kSubscriptScale = 0.72f;
// At least 11 px (or the font's size): at a 13 px font a subscript Q of 9 px read as O.
float subscript_size(float size) {
  return std::max(size * kSubscriptScale, std::min(size, 11.0f));
}

float text_width(ImFont* font, float size, std::string_view text) {
  return font->CalcTextSizeA(size, FLT_MAX, 0.0f, text.data(), text.data() + text.size()).x;
}

ImVec2 title_size(ImFont* font, const char* title) {
  if (!font) font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const TitleParts parts = split_title(title);
  ImVec2 main = font->CalcTextSizeA(size, FLT_MAX, 0.0f, parts.main.data(),
                                    parts.main.data() + parts.main.size());
  if (!parts.sub.empty()) main.x += text_width(font, subscript_size(size), parts.sub) + 1.0f;
  if (!parts.rest.empty()) main.x += text_width(font, size, parts.rest);
  return main;
}

void draw_title(ImDrawList* list, ImFont* font, ImVec2 at, ImU32 colour, const char* title) {
  if (!font) font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const TitleParts parts = split_title(title);
  list->AddText(font, size, at, colour, parts.main.data(), parts.main.data() + parts.main.size());
  if (parts.sub.empty()) return;
  float x = at.x + text_width(font, size, parts.main) + 1.0f;
  // Lowered, but not into the accent bar under the title (which cut a Q's tail into an O).
  const float sub = subscript_size(size), drop = std::min(size * 0.38f, size - sub * 0.9f);
  list->AddText(font, sub, ImVec2(x, std::round(at.y + drop)), colour, parts.sub.data(),
                parts.sub.data() + parts.sub.size());
  if (parts.rest.empty()) return;
  x += text_width(font, sub, parts.sub);
  list->AddText(font, size, ImVec2(x, at.y), colour, parts.rest.data(),
                parts.rest.data() + parts.rest.size());
}

bool escape_pressed() {
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);
}

}  // namespace

// -----------------------------------------------------------------------------
// Sizes
// -----------------------------------------------------------------------------

void MatrixEditor::begin_frame(Theme theme, ImFont* bold_font) {
  frame_ = ImGui::GetFrameCount();
  theme_ = theme;
  bold_font_ = bold_font;
  font_ = ImGui::GetFontSize();
  pad_x_ = std::round(font_ * 0.3f);
  cell_w_ = std::ceil(ImGui::CalcTextSize("-0.00").x) + 2.0f * pad_x_;
  header_h_ = std::round(font_ * 1.3f);
  row_h_ = std::round(font_ * 1.3f);
  if (typing_.active() && typing_.drawn_frame < frame_ - 1) typing_.close();  // its grid went away
  show_notice();
}

double MatrixEditor::next_change_in() const {
  const double now = ImGui::GetTime();
  // A little past each moment, so that the frame drawn then is past it too.
  constexpr double kMargin = 0.01;
  double in = std::numeric_limits<double>::infinity();
  if (hover_.id != 0 && !drag_.active() && !typing_.active() && hover_.since + kTooltipDelay >= now)
    in = hover_.since + kTooltipDelay - now + kMargin;
  if (notice_.until >= now) in = std::min(in, notice_.until - now + kMargin);
  return in;
}

const char* number_label(const void*, int index, char* buffer, int size) {
  std::snprintf(buffer, static_cast<std::size_t>(size), "%d", view::shown_number(index));
  return buffer;
}

void MatrixEditor::draw_strip(std::span<const StripGrid> grids, ImVec2 size,
                              const StripHandler& handle) {
  const float font = ImGui::GetFontSize();
  const float gap = std::round(font * 1.0f), group_gap = std::round(font * 2.0f);
  const ImGuiStyle& style = ImGui::GetStyle();
  // Rows as tall as the tallest grid allows; leave room for the scrollbar when it will show.
  int max_rows = 1;
  for (const StripGrid& grid : grids) max_rows = std::max(max_rows, grid.spec->rows);
  fit_rows(size.y, max_rows);
  float total_w = 0;
  for (const StripGrid& grid : grids)
    total_w += measure(*grid.spec).x + (grid.starts_group ? group_gap : gap);
  if (total_w > size.x) fit_rows(size.y - style.ScrollbarSize, max_rows);
  float tallest = 0;
  for (const StripGrid& grid : grids) tallest = std::max(tallest, measure(*grid.spec).y);

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 view_min = list->GetClipRectMin(),
               view_max = list->GetClipRectMax();  // what this window shows
  const float margin =
      std::round(font * 0.25f) + 2.0f;  // past a grid: its thickest outline's reach
  float x = origin.x, content_h = 0;
  for (std::size_t index = 0; index < grids.size(); ++index) {
    const MatrixGridSpec& spec = *grids[index].spec;
    if (grids[index].starts_group && index > 0) {  // a line between the groups
      const float line_x = std::round(x + group_gap * 0.5f - gap * 0.5f);
      list->AddLine(ImVec2(line_x, origin.y), ImVec2(line_x, origin.y + tallest),
                    ImGui::GetColorU32(ImGuiCol_Separator));
      x += group_gap - gap;
    }
    const ImVec2 grid = measure(spec);
    // Its outlines may reach a little past it: drawn within the margin, as far as the window shows.
    ImGui::SetCursorScreenPos(ImVec2(x, origin.y));
    if (ImGui::BeginChild(spec.id, grid, false,
                          ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse |
                              ImGuiWindowFlags_NoBackground)) {
      ImDrawList* grid_list = ImGui::GetWindowDrawList();
      grid_list->PushClipRect(
          ImVec2(std::max(view_min.x, x - margin), std::max(view_min.y, origin.y - margin)),
          ImVec2(std::min(view_max.x, x + grid.x + margin),
                 std::min(view_max.y, origin.y + grid.y + margin)));
      const MatrixGridEvents events = draw(spec, ImVec2(x, origin.y));
      handle(static_cast<int>(index), spec, events);
      grid_list->PopClipRect();
    }
    ImGui::EndChild();
    content_h = std::max(content_h, grid.y);
    x += grid.x + gap;
  }
  // The scrolling extent.
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(x - origin.x - gap, content_h));
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows) && io.MouseWheel != 0.0f &&
      !io.KeyShift && ImGui::GetScrollMaxY() <= 0.0f)
    ImGui::SetScrollX(ImGui::GetScrollX() - io.MouseWheel * font * 6.0f);
}

void MatrixEditor::fit_rows(float height, int max_rows) {
  // Rows share the height; never shorter than the text, never taller than a comfortable cell.
  const float fit =
      std::floor((height - header_h_ - 1.0f) / static_cast<float>(std::max(1, max_rows)));
  row_h_ = std::clamp(fit, std::round(font_ * 1.1f), std::round(font_ * 1.6f));
}

float MatrixEditor::Layout::column_x(int col) const {
  return col <= wide ? wide_w * static_cast<float>(col)
                     : wide_w * static_cast<float>(wide) + cell_w * static_cast<float>(col - wide);
}

int MatrixEditor::Layout::column_at(float x) const {
  const float wide_end = wide_w * static_cast<float>(wide);
  const int col = x < wide_end ? static_cast<int>(std::floor(x / wide_w))
                               : wide + static_cast<int>(std::floor((x - wide_end) / cell_w));
  return std::clamp(col, 0, std::max(0, cols - 1));
}

MatrixEditor::Layout MatrixEditor::layout_of(const MatrixGridSpec& spec, ImVec2 origin) {
  Layout l;
  l.origin = origin;
  l.rows = spec.rows;
  l.cols = spec.cols;
  l.cell_w = cell_w_;
  l.wide = std::clamp(spec.wide_columns, 0, spec.cols);
  l.wide_w = cell_w_;
  char buffer[64];
  for (int c = 0; c < l.wide && spec.column_label; ++c) {
    const char* text = spec.column_label(spec.label_context, c, buffer, sizeof buffer);
    l.wide_w = std::max(l.wide_w, std::ceil(ImGui::CalcTextSize(text).x) + 2.0f * pad_x_);
  }
  // The corner holds the bold title and the menu arrow.
  const float title_w = title_size(bold_font_, spec.title).x;
  l.label_w = std::ceil(
      std::max(spec.row_label_width + 2.0f * pad_x_, title_w + font_ * 0.9f + 2.0f * pad_x_));
  l.cells_w = l.column_x(l.cols);
  return l;
}

ImVec2 MatrixEditor::measure(const MatrixGridSpec& spec) {
  const Layout l = layout_of(spec, ImVec2(0, 0));
  return ImVec2(l.label_w + l.cells_w + 1.0f,
                header_h_ + row_h_ * static_cast<float>(spec.rows) + 1.0f);
}

// -----------------------------------------------------------------------------
// Drawing and the mouse
// -----------------------------------------------------------------------------

MatrixGridEvents MatrixEditor::draw(const MatrixGridSpec& spec, ImVec2 origin) {
  MatrixGridEvents events;
  if (spec.rows <= 0 || spec.cols <= 0 || !spec.values) return events;
  const Layout l = layout_of(spec, origin);
  const Palette& colours = palette(theme_);
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 clip_min = list->GetClipRectMin(), clip_max = list->GetClipRectMax();

  const float cells_x = origin.x + l.label_w;
  const float cells_top = origin.y + header_h_;
  const float cells_h = row_h_ * static_cast<float>(l.rows);
  const float right = cells_x + l.cells_w;
  if (right + 1.0f < clip_min.x || origin.x > clip_max.x) return events;  // scrolled out of view

  // The header row sticks to the top of the view while long matrices scroll under it.
  const float header_y = std::clamp(clip_min.y, origin.y,
                                    std::max(origin.y, cells_top + cells_h - row_h_ - header_h_));
  const float view_top = std::max(header_y + header_h_, clip_min.y);
  const float view_bottom = clip_max.y;
  const int r0 =
      std::clamp(static_cast<int>(std::floor((view_top - cells_top) / row_h_)), 0, l.rows);
  const int r1 =
      std::clamp(static_cast<int>(std::ceil((view_bottom - cells_top) / row_h_)), r0, l.rows);
  const float view_left = std::max(clip_min.x, cells_x),
              view_right = std::min(clip_max.x, right + 1.0f);
  const int c0 = l.column_at(view_left - cells_x);
  const int c1 = view_right > view_left ? l.column_at(view_right - cells_x - 0.01f) + 1 : c0;
  const auto cell_min = [&](int r, int c) {
    return ImVec2(cells_x + l.column_x(c), cells_top + row_h_ * static_cast<float>(r));
  };
  const auto column_width = [&](int c) { return c < l.wide ? l.wide_w : l.cell_w; };
  const auto value_at = [&](int r, int c) {
    return spec.values[static_cast<std::size_t>(r) * static_cast<std::size_t>(l.cols) +
                       static_cast<std::size_t>(c)];
  };

  ImGui::PushID(spec.id);
  const ImGuiID grid_id = ImGui::GetID("##cells");

  // 1. The text field of a cell being typed into: submitted before the cells so that it, not
  //    the grid under it, gets the mouse, but drawn on a channel above them.
  const bool typing_here =
      typing_.open_on(grid_id) && typing_.row() < l.rows && typing_.col() < l.cols;
  if (typing_here) {
    list->ChannelsSplit(2);
    list->ChannelsSetCurrent(1);
    draw_typing(spec, cell_min(typing_.row(), typing_.col()), column_width(typing_.col()), events);
    list->ChannelsSetCurrent(0);
  }

  // 2. The cells: one invisible button over the visible part of the grid.
  const ImVec2 area_min(view_left, std::max(view_top, cells_top));
  const ImVec2 area_max(std::min(view_right, right), std::min(view_bottom, cells_top + cells_h));
  int hover_r = -1, hover_c = -1;
  bool cells_hovered = false;
  if (area_max.x - area_min.x >= 1.0f && area_max.y - area_min.y >= 1.0f) {
    ImGui::SetCursorScreenPos(area_min);
    ImGui::InvisibleButton("##cells", ImVec2(area_max.x - area_min.x, area_max.y - area_min.y));
    cells_hovered = ImGui::IsItemHovered();
    const ImVec2 m = io.MousePos;
    if (ImGui::IsMouseHoveringRect(area_min, area_max)) {
      hover_r = std::clamp(static_cast<int>(std::floor((m.y - cells_top) / row_h_)), 0, l.rows - 1);
      hover_c = l.column_at(m.x - cells_x);
    }
    if (!cells_hovered) hover_r = hover_c = -1;
    if (spec.editable && cells_hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);

    // Press: start a drag on the cell under the mouse (Ctrl+click types instead).
    if (ImGui::IsItemActivated() && spec.editable && hover_r >= 0) {
      drag_.release();
      if (io.KeyCtrl)
        typing_.open(grid_id, hover_r, hover_c, value_at(hover_r, hover_c), frame_);
      else
        drag_.press(grid_id, hover_r, hover_c, value_at(hover_r, hover_c), spec.limit);
    }
    // Double-click: type the value.
    if (spec.editable && cells_hovered && hover_r >= 0 &&
        ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
      drag_.release();
      typing_.open(grid_id, hover_r, hover_c, value_at(hover_r, hover_c), frame_);
    }
    // Moving: one continuous edit of the pressed cell, whichever cell the mouse is over now.
    if (drag_.on(grid_id)) {
      if (!ImGui::IsItemActive() || drag_.row() >= l.rows || drag_.col() >= l.cols) {
        drag_.release();
      } else if (!drag_.cancelled()) {
        ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
        std::optional<view::CellChange> change;
        if (escape_pressed()) {  // Escape puts the value back and ends the drag
          events = {};
          change = drag_.cancel();
        } else {
          change = drag_.move(io.MouseDelta.x, m.x - io.MouseClickedPos[0].x, io.MouseDragThreshold,
                              io.KeyShift, value_at(drag_.row(), drag_.col()));
        }
        if (change) {
          events.edited = true;
          events.row = change->row;
          events.col = change->col;
          events.value = change->value;
        }
      }
    }
    if (ImGui::IsItemHovered() && ImGui::IsMouseClicked(ImGuiMouseButton_Right))
      events.open_menu = true;
  }
  if (hover_r >= 0) events.hovered_row = hover_r;

  // 3. Paint the visible cells: their colours, the grid lines, their numbers.
  list->PushClipRect(ImVec2(clip_min.x, view_top), clip_max, true);
  const std::uint32_t* cell_colours = nullptr;  // (r1 - r0, c1 - c0), RGBA
  if (r1 > r0 && c1 > c0) {
    // The cells' colours as one texel each, stretched over the cells; the 1-pixel grid lines on
    // top.
    CellTexture& cells = cell_textures_[grid_id];
    const int columns = c1 - c0, rows = r1 - r0;
    cells.texels.resize(static_cast<std::size_t>(columns) * static_cast<std::size_t>(rows));
    for (int r = r0; r < r1; ++r)
      for (int c = c0; c < c1; ++c) {
        const view::Rgba8 colour =
            view::sample_diverging(value_at(r, c), spec.limit, spec.colormap);
        cells.texels[static_cast<std::size_t>(r - r0) * static_cast<std::size_t>(columns) +
                     static_cast<std::size_t>(c - c0)] =
            static_cast<std::uint32_t>(colour.r) | static_cast<std::uint32_t>(colour.g) << 8 |
            static_cast<std::uint32_t>(colour.b) << 16 | 0xFF000000u;
      }
    cells.texture.upload(columns, rows, cells.texels.data());
    cell_colours = cells.texels.data();
    const float top = cells_top + row_h_ * static_cast<float>(r0),
                bottom = cells_top + row_h_ * static_cast<float>(r1);
    // Two runs of equal widths at most: the wide columns first, then the rest.
    for (const auto& [from, to] :
         {std::pair{c0, std::min(c1, l.wide)}, std::pair{std::max(c0, l.wide), c1}}) {
      if (to <= from) continue;
      const float u0 = static_cast<float>(from - c0) / static_cast<float>(columns);
      const float u1 = static_cast<float>(to - c0) / static_cast<float>(columns);
      cells.texture.draw(list, ImVec2(cells_x + l.column_x(from), top),
                         ImVec2(cells_x + l.column_x(to), bottom), ImVec2(u0, 0.0f),
                         ImVec2(u1, 1.0f));
    }
    const ImU32 line = grid_line_colour(theme_);
    const float right_edge = cells_x + l.column_x(c1) + 1.0f;
    for (int r = r0; r <= r1; ++r) {
      const float y = cells_top + row_h_ * static_cast<float>(r);
      list->AddRectFilled(ImVec2(cells_x + l.column_x(c0), y), ImVec2(right_edge, y + 1.0f), line);
    }
    for (int c = c0; c <= c1; ++c) {
      const float x = cells_x + l.column_x(c);
      list->AddRectFilled(ImVec2(x, top), ImVec2(x + 1.0f, bottom + 1.0f), line);
    }
  }
  const bool show_text = row_h_ >= font_ * 0.95f;
  char text[48];
  for (int r = r0; r < r1 && show_text && cell_colours; ++r)
    for (int c = c0; c < c1; ++c) {
      const float v = value_at(r, c);
      // The cell's colour, as painted above.
      const std::uint32_t texel =
          cell_colours[static_cast<std::size_t>(r - r0) * static_cast<std::size_t>(c1 - c0) +
                       static_cast<std::size_t>(c - c0)];
      const view::Rgba8 background{static_cast<std::uint8_t>(texel & 0xFFu),
                                   static_cast<std::uint8_t>((texel >> 8) & 0xFFu),
                                   static_cast<std::uint8_t>((texel >> 16) & 0xFFu), 255};
      const ImVec2 p = cell_min(r, c);
      const float w = column_width(c);
      if (typing_.open_on(grid_id) && typing_.row() == r && typing_.col() == c) continue;
      // An exact zero reads "0", faint, so that the numbers that matter stand out.
      const bool zero = v == 0.0f;
      if (zero)
        std::snprintf(text, sizeof text, "0");
      else
        format_cell(text, sizeof text, v, w - 4.0f);
      const ImVec2 size = ImGui::CalcTextSize(text);
      const view::Rgba8 ink = view::text_colour_on(background);
      list->AddText(ImVec2(std::round(p.x + 1.0f + (w - 1.0f - size.x) * 0.5f),
                           std::round(p.y + 1.0f + (row_h_ - 1.0f - size.y) * 0.5f)),
                    IM_COL32(ink.r, ink.g, ink.b, zero ? 90 : 255), text);
    }
  // The divider between the target's and the source's tokens.
  if (spec.divider_row > 0 && spec.divider_row < l.rows) {
    const float y = cells_top + row_h_ * static_cast<float>(spec.divider_row) + 0.5f;
    list->AddLine(ImVec2(origin.x, y), ImVec2(right + 1.0f, y), colours.text_dim, 2.0f);
  }
  // Outlines: the hovered token's row, the hovered cell, the dragged cell.
  const float thick = std::max(2.0f, std::round(font_ * 0.12f));
  if (spec.highlight_row >= 0 && spec.highlight_row < l.rows) {
    const float y = cells_top + row_h_ * static_cast<float>(spec.highlight_row);
    list->AddRect(ImVec2(origin.x, y), ImVec2(right + 1.0f, y + row_h_ + 1.0f), colours.highlight,
                  0, 0, thick);
  }
  const bool dragging_here = drag_.on(grid_id) && !drag_.cancelled();
  if (hover_r >= 0 && !dragging_here && spec.editable) {
    const ImVec2 p = cell_min(hover_r, hover_c);
    list->AddRect(p, ImVec2(p.x + column_width(hover_c) + 1.0f, p.y + row_h_ + 1.0f), colours.text,
                  0, 0, 1.5f);
  }
  if (dragging_here) {
    const ImVec2 p = cell_min(drag_.row(), drag_.col());
    list->AddRect(ImVec2(p.x - 1.0f, p.y - 1.0f),
                  ImVec2(p.x + column_width(drag_.col()) + 2.0f, p.y + row_h_ + 2.0f),
                  colours.selection, 0, 0, thick);
  }

  // 4. Row labels, right-aligned against the cells.
  const int active_row = dragging_here ? drag_.row() : hover_r;
  const int active_col = dragging_here ? drag_.col() : hover_c;
  list->PushClipRect(ImVec2(origin.x, view_top), ImVec2(cells_x - 1.0f, clip_max.y), true);
  for (int r = r0; r < r1 && spec.row_label; ++r) {
    const char* label = spec.row_label(spec.label_context, r, text, sizeof text);
    const ImVec2 size = ImGui::CalcTextSize(label);
    const float y = cells_top + row_h_ * static_cast<float>(r) + (row_h_ + 1.0f - size.y) * 0.5f;
    const ImU32 colour = r == spec.selected_row                         ? colours.selection
                         : (r == active_row || r == spec.highlight_row) ? colours.text
                                                                        : colours.text_dim;
    list->AddText(ImVec2(std::round(cells_x - pad_x_ - size.x), std::round(y)), colour, label);
  }
  list->PopClipRect();
  list->PopClipRect();
  // Hover and clicks on the labels (tokens: hover highlights, click selects, right-click menu).
  const ImVec2 labels_min(std::max(origin.x, clip_min.x), view_top);
  const ImVec2 labels_max(cells_x, std::min(view_bottom, cells_top + cells_h));
  if (labels_max.x > labels_min.x && labels_max.y > labels_min.y && !ImGui::IsAnyItemActive() &&
      ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(labels_min, labels_max)) {
    const int r = std::clamp(static_cast<int>(std::floor((io.MousePos.y - cells_top) / row_h_)), 0,
                             l.rows - 1);
    events.hovered_row = events.label_hovered = r;
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) events.label_clicked = r;
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right)) events.label_menu = r;
  }

  // 5. The header: column labels, and the title in the corner (a button: it opens the menu).
  list->PushClipRect(ImVec2(std::max(clip_min.x, cells_x), header_y),
                     ImVec2(std::min(clip_max.x, right + 1.0f), header_y + header_h_), true);
  for (int c = c0; c < c1 && spec.column_label; ++c) {
    const char* label = spec.column_label(spec.label_context, c, text, sizeof text);
    const ImVec2 size = ImGui::CalcTextSize(label);
    const float x = cells_x + l.column_x(c) + (column_width(c) + 1.0f - size.x) * 0.5f;
    list->AddText(ImVec2(std::round(x), std::round(header_y + header_h_ - size.y - font_ * 0.1f)),
                  c == active_col ? colours.text : colours.text_dim, label);
  }
  list->PopClipRect();
  ImGui::SetCursorScreenPos(ImVec2(origin.x, header_y));
  ImGui::InvisibleButton("##title", ImVec2(l.label_w, header_h_),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool title_hovered = ImGui::IsItemHovered();
  if (ImGui::IsItemClicked(ImGuiMouseButton_Left) || ImGui::IsItemClicked(ImGuiMouseButton_Right))
    events.open_menu = true;
  if (title_hovered || ImGui::IsPopupOpen("##menu"))
    list->AddRectFilled(ImVec2(origin.x, header_y),
                        ImVec2(origin.x + l.label_w - 2.0f, header_y + header_h_ - 1.0f),
                        ImGui::GetColorU32(ImGuiCol_HeaderHovered),
                        ImGui::GetStyle().FrameRounding);
  const ImVec2 title_extent = title_size(bold_font_, spec.title);
  const ImVec2 title_at(std::round(origin.x + pad_x_),
                        std::round(header_y + (header_h_ - font_) * 0.5f - font_ * 0.08f));
  draw_title(list, bold_font_, title_at, colours.text, spec.title);
  // ▾: the title opens a menu.
  const float arrow = font_ * 0.28f;
  const ImVec2 arrow_centre(title_at.x + title_extent.x + font_ * 0.45f,
                            header_y + header_h_ * 0.5f + arrow * 0.3f);
  list->AddTriangleFilled(ImVec2(arrow_centre.x - arrow, arrow_centre.y - arrow * 0.6f),
                          ImVec2(arrow_centre.x + arrow, arrow_centre.y - arrow * 0.6f),
                          ImVec2(arrow_centre.x, arrow_centre.y + arrow * 0.6f), colours.text_dim);
  if (spec.accent != 0)  // the head's colour, as in the head selector
    list->AddRectFilled(ImVec2(origin.x + 1.0f, header_y + header_h_ - 3.0f),
                        ImVec2(origin.x + l.label_w - 3.0f, header_y + header_h_ - 1.0f),
                        spec.accent, 1.0f);
  if (title_hovered && spec.title_tooltip) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(font_ * 32.0f);
    ImGui::TextUnformatted(spec.title_tooltip);
    ImGui::TextDisabled("click for actions (randomize, zero, scale, reset, ...)");
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // 6. Tooltips: the dragged value, live; the hovered cell's value after a short rest.
  const auto cell_name = [&](int r, int c, char* out, int size) {
    char row_text[48], col_text[48];
    const char* rl =
        spec.row_label ? spec.row_label(spec.label_context, r, row_text, sizeof row_text) : "";
    const char* cl = spec.column_label
                         ? spec.column_label(spec.label_context, c, col_text, sizeof col_text)
                         : "";
    if (l.rows == 1)
      std::snprintf(out, static_cast<std::size_t>(size), "%s[%s]", spec.title, cl);
    else
      std::snprintf(out, static_cast<std::size_t>(size), "%s[%s, %s]", spec.title, rl, cl);
  };
  char name[160], value_text[48];
  if (dragging_here && drag_.moving()) {
    cell_name(drag_.row(), drag_.col(), name, sizeof name);
    view::format_number_into(value_text, sizeof value_text,
                             events.edited ? events.value : value_at(drag_.row(), drag_.col()), 4);
    ImGui::SetTooltip("%s = %s", name, value_text);
  } else if (hover_r >= 0 && !drag_.active() && notice_.until < ImGui::GetTime()) {
    if (hover_.id != grid_id || hover_.row != hover_r || hover_.col != hover_c)
      hover_ = {grid_id, hover_r, hover_c, ImGui::GetTime()};
    if (ImGui::GetTime() - hover_.since > kTooltipDelay && !typing_.active()) {
      cell_name(hover_r, hover_c, name, sizeof name);
      view::format_number_into(value_text, sizeof value_text, value_at(hover_r, hover_c), 4);
      ImGui::BeginTooltip();
      ImGui::Text("%s = %s", name, value_text);
      if (spec.editable)
        ImGui::TextDisabled(
            "drag sideways to change (Shift: fine, Esc: undo) \xc2\xb7 double-click to type");
      ImGui::EndTooltip();
    }
  } else if (hover_.id == grid_id) {
    hover_ = {};
  }

  if (typing_here) list->ChannelsMerge();
  ImGui::PopID();
  return events;
}

void MatrixEditor::draw_typing(const MatrixGridSpec& spec, const ImVec2& cell_min, float width,
                               MatrixGridEvents& events) {
  typing_.drawn_frame = frame_;
  // As wide as the cell, and as the text typed so far (it may cover the cells beside it meanwhile).
  const float w =
      std::max({width + 1.0f, std::ceil(ImGui::CalcTextSize("-0.0000000").x) + 2.0f * pad_x_,
                std::ceil(ImGui::CalcTextSize(typing_.text()).x + font_) + 2.0f * pad_x_});
  ImGui::SetCursorScreenPos(cell_min);
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding,
                      ImVec2(pad_x_ * 0.5f, std::max(0.0f, (row_h_ + 1.0f - font_) * 0.5f)));
  ImGui::PushStyleVar(ImGuiStyleVar_FrameRounding, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_FrameBorderSize, 1.0f);
  ImGui::PushStyleColor(ImGuiCol_Border, palette(theme_).selection);
  ImGui::SetNextItemWidth(w);
  if (typing_.frames == 0) {
    ImGui::SetWindowFocus();  // the keyboard goes to this window, then to the field
    ImGui::SetKeyboardFocusHere();
  }
  const bool entered =
      ImGui::InputText("##type", typing_.text(), view::CellTyping::kTextSize,
                       ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  const bool active = ImGui::IsItemActive();
  ImGui::PopStyleColor();
  ImGui::PopStyleVar(3);
  ++typing_.frames;
  if (active) typing_.was_active = true;
  // Enter, or a click elsewhere, applies the text; Escape restores the text first, so it applies
  // the unchanged value (no edit).
  const bool finished = entered || (typing_.was_active && !active);
  if (!finished) {
    if (!typing_.was_active && typing_.frames > 4) typing_.close();  // never got the keyboard
    return;
  }
  const float current =
      spec.values[static_cast<std::size_t>(typing_.row()) * static_cast<std::size_t>(spec.cols) +
                  static_cast<std::size_t>(typing_.col())];
  const view::CellTyping::Finished typed = typing_.finish(current);
  // What the typing came to, under the cell for a few seconds; an earlier message is old news.
  notice_.until = 0;
  if (!typed.message.empty()) {
    std::snprintf(notice_.text, sizeof notice_.text, "%s", typed.message.c_str());
    notice_.until = ImGui::GetTime() + 4.0;
    notice_.at = ImVec2(cell_min.x, cell_min.y + row_h_ + 2.0f);
  }
  if (typed.change) {
    events.edited = true;
    events.row = typed.change->row;
    events.col = typed.change->col;
    events.value = typed.change->value;
  }
  typing_.close();
}

bool MatrixEditor::begin_menu(const MatrixGridSpec& spec, bool open) {
  ImGui::PushID(spec.id);
  if (open) ImGui::OpenPopup("##menu");
  if (ImGui::BeginPopup("##menu")) return true;
  ImGui::PopID();
  return false;
}

void MatrixEditor::end_menu() {
  ImGui::EndPopup();
  ImGui::PopID();
}

void MatrixEditor::show_notice() {
  if (notice_.until < ImGui::GetTime()) return;
  ImGui::SetNextWindowPos(notice_.at);
  ImGui::PushStyleColor(ImGuiCol_PopupBg, IM_COL32(235, 170, 40, 250));
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(20, 20, 20, 255));
  ImGui::PushStyleColor(ImGuiCol_Border, IM_COL32(150, 100, 10, 255));
  ImGui::Begin("##matrix notice", nullptr,
               ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_NoInputs |
                   ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoNav |
                   ImGuiWindowFlags_NoFocusOnAppearing);
  ImGui::TextUnformatted(notice_.text);
  ImGui::End();
  ImGui::PopStyleColor(3);
}

}  // namespace attnviz::app
