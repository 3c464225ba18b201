#include "app/panels/heatmap_cells.hpp"

#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <cfloat>

namespace attnviz::app {

int CellSource::rows() const {
  return values ? static_cast<int>(values->rows()) : 0;
}

int CellSource::cols() const {
  return values ? static_cast<int>(values->cols()) : 0;
}

bool CellSource::hatched(int row, int col) const {
  if (masked_scores && row < masked_scores->rows() && col < masked_scores->cols() &&
      view::is_masked((*masked_scores)(row, col)))
    return true;
  return computed && row < computed->rows() && col < computed->cols() && (*computed)(row, col) == 0;
}

float CellSource::position(float value) const {
  const float span = high - low;
  return span > 0 ? (value - low) / span : 0.5f;
}

void draw_heatmap_cells(ImDrawList* list, PanelContext& context, Theme theme,
                        const view::HeatmapGeometry& g, const CellSource& source,
                        const CellDrawing& drawing) {
  if (!source.values || g.grid.empty()) return;
  const Matrix& values = *source.values;  // (rows, cols)
  const int rows = source.rows(), cols = source.cols();
  const auto hatch = [&](int i, int j) {
    const view::Rect c = g.cell(i, j);
    draw_masked_cell(list, ImVec2(c.x, c.y), ImVec2(c.right(), c.bottom()), theme);
  };
  // 1. The cells: one textured quad, or one rectangle per cell.
  if (context.heatmaps.ok() && source.texture && source.texture->texture()) {
    context.heatmaps.draw(list, *source.texture, source.block, ImVec2(g.grid.x, g.grid.y),
                          ImVec2(g.grid.right(), g.grid.bottom()), source.colormap, source.low,
                          source.high);
    if (!source.texture_marks_hatched)
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
          if (source.hatched(i, j)) hatch(i, j);
  } else {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        if (source.hatched(i, j)) {
          hatch(i, j);
          continue;
        }
        const view::Rect c = g.cell(i, j);
        list->AddRectFilled(ImVec2(c.x, c.y), ImVec2(c.right(), c.bottom()),
                            to_imgui(view::sample(source.colormap, source.position(values(i, j)))));
      }
  }
  // 2. The lines between cells, when cells are big enough to separate.
  if (drawing.grid_lines) draw_cell_grid_lines(list, g, rows, cols, palette(theme).grid);
  // 3. The numbers (none in a hatched cell: it holds no value, not a value of 0).
  if (!drawing.numbers) return;
  int first_row = 0, last_row = rows, first_col = 0, last_col = cols;
  if (drawing.visible_only) {
    const auto [row_begin, row_end] = g.visible_rows();
    const auto [col_begin, col_end] = g.visible_cols();
    first_row = row_begin, last_row = row_end, first_col = col_begin, last_col = col_end;
  }
  char text[32];
  for (int i = first_row; i < last_row; ++i)
    for (int j = first_col; j < last_col; ++j) {
      if (source.hatched(i, j)) continue;
      const float v = values(i, j);
      view::format_number_into(text, sizeof text, v, 2);  // the colour tells the sign too
      const view::Rect c = g.cell(i, j);
      const ImU32 colour =
          to_imgui(view::text_colour_on(view::sample(source.colormap, source.position(v))));
      if (drawing.number_size <= 0) {
        const ImVec2 size = ImGui::CalcTextSize(text);
        list->AddText(ImVec2(c.x + (c.w - size.x) * 0.5f, c.y + (c.h - size.y) * 0.5f), colour,
                      text);
      } else {
        const ImVec2 size =
            ImGui::GetFont()->CalcTextSizeA(drawing.number_size, FLT_MAX, 0.0f, text);
        list->AddText(ImGui::GetFont(), drawing.number_size,
                      ImVec2(c.x + (c.w - size.x) * 0.5f, c.y + (c.h - size.y) * 0.5f), colour,
                      text);
      }
    }
}

void outline_heatmap_row(ImDrawList* list, const view::HeatmapGeometry& g, int row, ImU32 colour,
                         float thickness) {
  const float y = g.grid.y + g.cell_h * static_cast<float>(row);
  list->AddRect(ImVec2(g.grid.x, y), ImVec2(g.grid.right(), y + g.cell_h), colour, 0, 0, thickness);
}

void outline_heatmap_column(ImDrawList* list, const view::HeatmapGeometry& g, int col, ImU32 colour,
                            float thickness) {
  const float x = g.grid.x + g.cell_w * static_cast<float>(col);
  list->AddRect(ImVec2(x, g.grid.y), ImVec2(x + g.cell_w, g.grid.bottom()), colour, 0, 0,
                thickness);
}

}  // namespace attnviz::app
