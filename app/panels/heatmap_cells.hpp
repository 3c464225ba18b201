// One heatmap's cells, drawn the one way every heatmap in the app is (the Heatmaps view, the
// Compare view's three, the Cheaper attention parts' pair grids): from a cell source (the values,
// which cells hold none, the colour scale, and the renderer's texture when the values are in one),
// in a view::HeatmapGeometry. The cells as one textured quad (or, without the shader or a texture,
// one rectangle per cell), the cells that hold no value hatched, the lines between cells, the
// numbers in them, and the outlines of a row or a column. What differs between the views (their
// labels, what hover and a click do) stays in each view.
#pragma once

#include "app/panels/panel.hpp"
#include "core/figures/colormap.hpp"
#include "core/figures/figure_layout.hpp"

#include <imgui.h>

namespace attnviz::render {
class MatrixStackTexture;
}

namespace attnviz::app {

struct CellSource {
  const Matrix* values = nullptr;  // (rows, cols)
  // Which cells hold no value (hatched, no number): where these scores are masked (-inf), or
  // where `computed` is 0 (a pair a method never computes); neither: every cell holds one.
  const Matrix* masked_scores = nullptr;  // (rows, cols) or smaller
  const MaskMatrix* computed = nullptr;   // (rows, cols)
  view::ColormapId colormap = view::ColormapId::Sequential;
  float low = 0, high = 1;  // the colour scale's ends
  // The values in the renderer's texture (a block of a stack), drawn as one quad; none: drawn
  // cell by cell.
  const render::MatrixStackTexture* texture = nullptr;
  int block = 0;
  bool texture_marks_hatched = true;  // false: it holds signed numbers, the hatching drawn over it

  int rows() const;
  int cols() const;
  bool hatched(int row, int col) const;
  // Where a value falls on the colour scale, 0 to 1 (0.5 for a scale of no width).
  float position(float value) const;
};

struct CellDrawing {
  bool grid_lines = true;
  bool numbers = false;
  // The numbers' size: 0, the font's (measured as ImGui measures text); else this many pixels.
  float number_size = 0;
  bool visible_only = false;  // numbers only in the cells the geometry's viewport shows
};

// Draws the cells of `source` in `g` into `list`.
void draw_heatmap_cells(ImDrawList* list, PanelContext& context, Theme theme,
                        const view::HeatmapGeometry& g, const CellSource& source,
                        const CellDrawing& drawing);

// A row's or a column's outline, `thickness` pixels, across the whole grid.
void outline_heatmap_row(ImDrawList* list, const view::HeatmapGeometry& g, int row, ImU32 colour,
                         float thickness);
void outline_heatmap_column(ImDrawList* list, const view::HeatmapGeometry& g, int col, ImU32 colour,
                            float thickness);

}  // namespace attnviz::app
