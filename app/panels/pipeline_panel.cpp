// The Pipeline view: the whole computation of the selected head as a chain of small matrices,
//   X → Q K V → S → scaled → masked → α → α·V → concat → ·W_O
// and for a real model the whole block of the selected layer around it:
//   x → n = norm₁(x) → Q K V (RoPE; the shared key/value head) → … → ·W_O + b → x + attn → MLP → +
// each a titled grid of coloured cells with its shape under it, laid out left to right and
// wrapped onto more rows when the view is narrow. Every tile uses one cell size, the largest that
// lets the whole chain fit, so the shapes compare at a glance. Matrices past 12 rows or columns
// show a window of them with "…" where rows or columns are left out (the window keeps the selected
// query, and the selected head's block of concat, in view). Signed stages use the diverging map,
// α the sequential one. The selected query's row is outlined wherever rows are queries, and the
// hovered token's row or column is highlighted. Hovering a cell shows the formula that produced
// it, filled with the numbers (app/view/formula.hpp).
//   [SECTION] Tiles
//   [SECTION] Layout
//   [SECTION] Drawing
//   [SECTION] Tooltips
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/view/chain_layout.hpp"
#include "app/view/formula.hpp"
#include "app/view/memo.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"
#include "core/text/lexicon.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

namespace attnviz::app {
namespace {

using view::is_masked;

class PipelinePanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    draw_selectors(state, context);
    const int head = state.selection.head;
    const int query = state.selection.query;
    build_tiles(state, head, query, context.bold_font);
    for (int k = 0; k < tile_count_; ++k)
      state.frame.values.append("pipeline_titles", tiles_[static_cast<std::size_t>(k)].title);

    // The chain in a child window, which scrolls when even the smallest cells do not fit.
    // Its padding and background are taken as it begins: the tooltips drawn inside keep theirs.
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
    const bool open = ImGui::BeginChild("##pipeline_chain", ImVec2(0, 0), false,
                                        ImGuiWindowFlags_HorizontalScrollbar);
    ImGui::PopStyleColor();
    ImGui::PopStyleVar();
    if (open) {
      const ImVec2 origin = ImGui::GetCursorScreenPos();
      const ImVec2 available = ImGui::GetContentRegionAvail();
      const view::ChainSize size = layout(available.x, available.y);
      scrolls_ = size.w > available.x + 0.5f || size.h > available.y + 0.5f;
      draw_tiles(state, context, origin, head, query);
      ImGui::SetCursorScreenPos(origin);
      ImGui::Dummy(ImVec2(std::max(1.0f, size.w), std::max(1.0f, size.h)));
    }
    ImGui::EndChild();
  }

 private:
  // ---------------------------------------------------------------------------
  // [SECTION] Tiles
  // ---------------------------------------------------------------------------
  // The stages come from the run (Run::block_stages): one table for every family of model.
  using Stage = StageId;
  using Axis = StageAxis;
  using Connector = StageJoin;

  struct Tile {
    Stage stage = Stage::X;
    int source = 0;  // its entry of stages_
    const Matrix* matrix = nullptr;
    char title[48] = {};
    char shape[32] = {};
    Axis rows = Axis::Other, cols = Axis::Other;
    bool sequential = false;  // α: the sequential map on [0, 1]; else diverging on ±limit
    float limit = 1;
  };

  static constexpr int kMaxTiles = 20;
  std::vector<BlockStage> stages_;  // the run's, for the selected layer and head
  // What stages_ was asked for: asked again only when the run computed again or the layer or
  // head changed (not every frame).
  view::Memo<std::uint64_t, int, int> stages_of_;  // the run, the layer, the head
  std::array<Tile, kMaxTiles> tiles_{};
  // Where each tile goes, its rows and columns shown (app/view/chain_layout.hpp).
  std::array<view::ChainTile, kMaxTiles> chain_{};
  view::ChainLayout layout_;
  int tile_count_ = 0;
  float cell_ = 16;         // the cell size the layout chose
  float widest_label_ = 0;  // the widest token at the full font size
  float label_font_ = 16;   // the token labels' font size, for this cell size
  float label_w_ = 0;       // width of the token labels
  int slot_focus_query_ = 0, slot_focus_concat_ = 0, slot_span_concat_ = 1;
  bool cross_ = false;
  bool values_ = false;       // cells large enough to print their numbers
  bool state_values_ = true;  // the View menu's "numbers in cells"
  float value_font_ = 12;
  bool scrolls_ = false;  // the chain is larger than the view: it scrolls

  // Colour limits, per (result version, head): the largest |x| of every signed matrix.
  view::Memo<std::uint64_t, int> limits_of_;  // the result's version, the head
  std::array<float, kMaxTiles> limits_{};

  Tile& add_tile(Stage stage, const Matrix& m, Axis rows, Axis cols, Connector connector) {
    view::ChainTile& placed = chain_[static_cast<std::size_t>(tile_count_)];
    placed = view::ChainTile{};
    placed.n_rows = static_cast<int>(m.rows());
    placed.n_cols = static_cast<int>(m.cols());
    placed.rows = rows;
    placed.concat = stage == Stage::Concat;
    placed.connector = connector;
    Tile& t = tiles_[static_cast<std::size_t>(tile_count_++)];
    t = Tile{};
    t.stage = stage;
    t.matrix = &m;
    t.rows = rows;
    t.cols = cols;
    std::snprintf(t.shape, sizeof t.shape, "%d\xc3\x97%d", static_cast<int>(m.rows()),
                  static_cast<int>(m.cols()));
    return t;
  }

  void build_tiles(const AppState& state, int head, int query, ImFont* title_font) {
    const AttentionResult& r = state.result();
    const AttentionConfig& c = r.config;
    const bool cross = state.pipeline().cross();
    tile_count_ = 0;
    const Run& run = state.pipeline().current();
    if (stages_of_.changed(run.run_count(), state.selection.layer, head))
      run.block_stages(state.selection.layer, head, stages_);
    for (std::size_t k = 0; k < stages_.size() && k < kMaxTiles; ++k) {
      const BlockStage& stage = stages_[k];
      Tile& t = add_tile(stage.id, *stage.matrix, stage.rows, stage.cols, stage.join);
      t.source = static_cast<int>(k);
      t.sequential = stage.probabilities;
      std::snprintf(t.title, sizeof t.title, "%s", stage.title.c_str());
    }

    // Colour limits (cached: they scan every entry).
    if (limits_of_.changed(r.version, head)) {
      for (int k = 0; k < tile_count_; ++k) {
        const Matrix& m = *tiles_[static_cast<std::size_t>(k)].matrix;
        limits_[static_cast<std::size_t>(k)] =
            view::largest_magnitude(m.data(), static_cast<std::size_t>(m.size()));
      }
    }
    for (int k = 0; k < tile_count_; ++k) {
      Tile& t = tiles_[static_cast<std::size_t>(k)];
      t.limit = limits_[static_cast<std::size_t>(k)];
      // Measured in the font the title is drawn in (bold: wider than the text font).
      view::ChainTile& placed = chain_[static_cast<std::size_t>(k)];
      placed.title_w =
          title_font ? title_font->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0.0f, t.title).x
                     : ImGui::CalcTextSize(t.title).x;
      placed.shape_w = ImGui::CalcTextSize(t.shape).x * 0.85f;
    }
    slot_focus_query_ = query;
    slot_focus_concat_ = head * c.d_v;
    slot_span_concat_ = c.d_v;
    cross_ = cross;
    // Token labels: the widest token (at the full font size).
    widest_label_ = std::max(widest_token(state, state.pipeline().target().tokens),
                             widest_token(state, state.pipeline().keys().tokens));
  }

  // ---------------------------------------------------------------------------
  // [SECTION] Layout
  // ---------------------------------------------------------------------------
  // The tiles placed in `width` × `height` (app/view/chain_layout.hpp), and whether the cells are
  // large enough for their numbers; the size used.
  view::ChainSize layout(float width, float height) {
    const float font = ImGui::GetFontSize();
    layout_ = view::ChainLayout(font, widest_label_, cross_, slot_focus_query_, slot_focus_concat_,
                                slot_span_concat_);
    const view::ChainSize size =
        layout_.fit(std::span(chain_.data(), static_cast<std::size_t>(tile_count_)), width, height);
    cell_ = layout_.cell();
    label_font_ = layout_.label_font();
    label_w_ = layout_.label_w();
    value_font_ = std::max(8.0f, std::round(font * 0.78f));
    const float number_w = ImGui::GetFont()->CalcTextSizeA(value_font_, FLT_MAX, 0, "-0.00").x;
    values_ = state_values_ && cell_ >= number_w + 3.0f && cell_ >= value_font_ * 1.1f;
    return size;
  }

  // ---------------------------------------------------------------------------
  // [SECTION] Drawing
  // ---------------------------------------------------------------------------
  void draw_selectors(const AppState& state, PanelContext& context) {
    const float font = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    draw_query_selector(state, context, "##pipeline_query", 8.0f, 0.35f);
    ImGui::SameLine();
    draw_head_selector(state, context, "##pipeline_head");
    // A hint, when it fits on the line.
    const char* hint = "hover a cell for its formula";
    const float hint_w = ImGui::CalcTextSize(hint).x;
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + font + hint_w <= right) {
      ImGui::SameLine(0, font);
      ImGui::SetCursorScreenPos(ImVec2(right - hint_w, ImGui::GetCursorScreenPos().y));
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("%s", hint);
    }
    state_values_ = state.ui.show_cell_values;
  }

  ImU32 cell_colour(const AppState& state, const Tile& t, float v) const {
    if (t.sequential) return to_imgui(view::sample(state.ui.colormap, std::isfinite(v) ? v : 0.0f));
    return to_imgui(
        view::sample_diverging(std::isfinite(v) ? v : 0.0f, t.limit, state.ui.diverging()));
  }

  void draw_tiles(const AppState& state, PanelContext& context, ImVec2 origin, int head,
                  int query) {
    const AttentionResult& r = state.result();
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const float cell = cell_;
    const float thick = std::max(2.0f, font * 0.12f);
    const ImGuiIO& io = ImGui::GetIO();
    const bool hovering = ImGui::IsWindowHovered();
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    ImFont* value_font = ImGui::GetFont();

    int hovered_tile = -1, hovered_row = -1, hovered_col = -1;
    for (int k = 0; k < tile_count_; ++k) {
      const Tile& t = tiles_[static_cast<std::size_t>(k)];
      const view::ChainTile& p = chain_[static_cast<std::size_t>(k)];  // where it goes
      const Matrix& m = *t.matrix;
      const float gx = origin.x + p.grid_x, gy = origin.y + p.grid_y;
      const float gw = cell * static_cast<float>(p.col_slots.count),
                  gh = cell * static_cast<float>(p.row_slots.count);

      // The connector before the tile, level with the middle of its grid.
      if (k > 0 || p.x > 0) {
        const float lead = p.x - layout_.connector_w(p.connector);
        if (p.connector == Connector::Arrow) {
          const char* arrow = "\xe2\x86\x92";
          const ImVec2 size = ImGui::CalcTextSize(arrow);
          list->AddText(ImVec2(origin.x + lead + (layout_.connector_w(p.connector) - size.x) * 0.5f,
                               gy + std::min(gh, cell * 5.0f) * 0.5f - size.y * 0.5f),
                        colours.text_dim, arrow);
        }
      }
      // Title, centred over the grid (or the tile when the title is wider).
      {
        const float centre = gx + gw * 0.5f;
        // Within the tile: a title wider than the grid stays clear of the next tile's.
        const float tx = std::max(
            origin.x + p.x, std::min(centre - p.title_w * 0.5f, origin.x + p.x + p.w - p.title_w));
        if (context.bold_font) ImGui::PushFont(context.bold_font);
        list->AddText(ImVec2(tx, origin.y + p.y), colours.text, t.title);
        if (context.bold_font) ImGui::PopFont();
      }
      // Cells.
      char text[32];
      for (int rs = 0; rs < p.row_slots.count; ++rs) {
        const int i = p.row_slots.index[static_cast<std::size_t>(rs)];
        for (int cs = 0; cs < p.col_slots.count; ++cs) {
          const int j = p.col_slots.index[static_cast<std::size_t>(cs)];
          const ImVec2 p0(gx + cell * static_cast<float>(cs), gy + cell * static_cast<float>(rs));
          const ImVec2 p1(p0.x + cell, p0.y + cell);
          if (i < 0 || j < 0) {  // a "…" slot
            const char* dots =
                i < 0 && j < 0 ? "\xe2\x8b\xb1" : (i < 0 ? "\xe2\x8b\xae" : "\xe2\x8b\xaf");
            const ImVec2 size = ImGui::CalcTextSize(dots);
            list->AddText(ImVec2(p0.x + (cell - size.x) * 0.5f, p0.y + (cell - size.y) * 0.5f),
                          colours.text_dim, dots);
            continue;
          }
          const float v = m(i, j);
          // A masked score is −∞, and its weight no weight at all (not a weight of 0): both are
          // drawn as the heatmaps draw a masked cell.
          const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
          if (t.stage == Stage::Masked && is_masked(v)) {
            draw_masked_cell(list, p0, p1, state.ui.theme);
            if (values_)
              centred_value(list, value_font, p0, cell, colours.text, "\xe2\x88\x92\xe2\x88\x9e");
          } else if (t.stage == Stage::Weights && is_masked(h.masked_scores(i, j))) {
            draw_masked_cell(list, p0, p1, state.ui.theme);
          } else {
            const ImU32 fill = cell_colour(state, t, v);
            list->AddRectFilled(p0, p1, fill);
            if (values_) {
              view::format_number_into(text, sizeof text, v, 2);
              const ImVec4 f = ImGui::ColorConvertU32ToFloat4(fill);
              const view::Rgba8 rgba{static_cast<std::uint8_t>(f.x * 255.0f),
                                     static_cast<std::uint8_t>(f.y * 255.0f),
                                     static_cast<std::uint8_t>(f.z * 255.0f), 255};
              centred_value(list, value_font, p0, cell, to_imgui(view::text_colour_on(rgba)), text);
            }
          }
          if (hovering && io.MousePos.x >= p0.x && io.MousePos.x < p1.x && io.MousePos.y >= p0.y &&
              io.MousePos.y < p1.y)
            hovered_tile = k, hovered_row = i, hovered_col = j;
        }
      }
      // Grid lines and a frame.
      if (cell >= 8.0f) {
        for (int cs = 1; cs < p.col_slots.count; ++cs) {
          const float lx = gx + cell * static_cast<float>(cs);
          list->AddLine(ImVec2(lx, gy), ImVec2(lx, gy + gh), colours.grid);
        }
        for (int rs = 1; rs < p.row_slots.count; ++rs) {
          const float ly = gy + cell * static_cast<float>(rs);
          list->AddLine(ImVec2(gx, ly), ImVec2(gx + gw, ly), colours.grid);
        }
      }
      list->AddRect(ImVec2(gx - 1, gy - 1), ImVec2(gx + gw + 1, gy + gh + 1),
                    with_alpha(colours.text_dim, 0.5f));
      // The shape under the grid ("20×64" is the whole matrix, even when a window is shown).
      {
        const float size = font * 0.85f;
        const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, t.shape);
        list->AddText(ImGui::GetFont(), size,
                      ImVec2(gx + gw * 0.5f - ts.x * 0.5f, gy + gh + font * 0.15f),
                      colours.text_dim, t.shape);
      }
      // Token labels left of the grid.
      if (p.labels) {
        const auto& tokens = t.rows == Axis::Queries ? queries : keys;
        // Every row's name (the rows are as tall as the names); the selected and the hovered one
        // in their colours.
        int special[2] = {-1, -1};
        int tokens_shown = 0, labelled = 0;
        for (int rs = 0; rs < p.row_slots.count; ++rs) {
          const int i = p.row_slots.index[static_cast<std::size_t>(rs)];
          if (i < 0) continue;
          if (t.rows == Axis::Queries && i == query) special[0] = rs;
          if (t.rows == Axis::Queries ? state.highlights_query(i) : state.highlights_key(i))
            special[1] = rs;
        }
        list->PushClipRect(ImVec2(gx - label_w_, gy - 1), ImVec2(gx - font * 0.15f, gy + gh + 1),
                           true);
        for (int rs = 0; rs < p.row_slots.count; ++rs) {
          const int i = p.row_slots.index[static_cast<std::size_t>(rs)];
          if (i < 0) continue;
          ++tokens_shown;
          const bool selected = rs == special[0], marked = rs == special[1];
          const char* name = state.frame.visual_text(tokens[static_cast<std::size_t>(i)].text);
          const ImVec2 size = ImGui::GetFont()->CalcTextSizeA(label_font_, FLT_MAX, 0, name);
          ++labelled;
          list->AddText(ImGui::GetFont(), label_font_,
                        ImVec2(gx - font * 0.25f - size.x,
                               gy + cell * (static_cast<float>(rs) + 0.5f) - size.y * 0.5f),
                        selected ? colours.selection : (marked ? colours.highlight : colours.text),
                        name);
        }
        list->PopClipRect();
        state.frame.layout.labels_of(view::ViewId::Pipeline)
            .add(tokens_shown, labelled, label_font_, scrolls_);
        const ImVec2 mouse = io.MousePos;
        if (hovering && mouse.x >= gx - label_w_ && mouse.x < gx && mouse.y >= gy &&
            mouse.y < gy + gh) {
          const int i = p.row_slots.index[static_cast<std::size_t>(
              std::clamp(static_cast<int>((mouse.y - gy) / cell), 0, p.row_slots.count - 1))];
          if (i >= 0) {
            state.frame.hovered_next = {t.rows == Axis::Queries ? Side::Query : Side::Key, i};
            if (t.rows == Axis::Queries && ImGui::IsMouseClicked(ImGuiMouseButton_Left))
              context.selection.query = i;
          }
        }
      }
      // The selected head's block of concat, in the head's colour.
      if (t.stage == Stage::Concat) {
        const int d_v = r.config.d_v;
        int first = -1, last = -1;
        for (int cs = 0; cs < p.col_slots.count; ++cs) {
          const int j = p.col_slots.index[static_cast<std::size_t>(cs)];
          if (j >= head * d_v && j < (head + 1) * d_v) {
            if (first < 0) first = cs;
            last = cs;
          }
        }
        if (first >= 0) {  // a bar over the block's columns
          const float bar = std::max(3.0f, font * 0.2f);
          list->AddRectFilled(ImVec2(gx + cell * static_cast<float>(first), gy - bar - 2),
                              ImVec2(gx + cell * static_cast<float>(last + 1), gy - 2),
                              head_colour(state.ui.theme, head));
        }
      }
      // The selected query's row, the hovered token's row or column.
      for (int rs = 0; rs < p.row_slots.count; ++rs) {
        const int i = p.row_slots.index[static_cast<std::size_t>(rs)];
        if (i < 0) continue;
        const ImVec2 p0(gx, gy + cell * static_cast<float>(rs)),
            p1(gx + gw, gy + cell * static_cast<float>(rs + 1));
        if (t.rows == Axis::Queries && i == query)
          list->AddRect(p0, p1, colours.selection, 0, 0, thick);
        else if ((t.rows == Axis::Queries && state.highlights_query(i)) ||
                 (t.rows == Axis::Keys && state.highlights_key(i)))
          list->AddRect(p0, p1, colours.highlight, 0, 0, thick);
      }
      if (t.cols == Axis::Keys)
        for (int cs = 0; cs < p.col_slots.count; ++cs) {
          const int j = p.col_slots.index[static_cast<std::size_t>(cs)];
          if (j < 0 || !state.highlights_key(j)) continue;
          list->AddRect(ImVec2(gx + cell * static_cast<float>(cs), gy),
                        ImVec2(gx + cell * static_cast<float>(cs + 1), gy + gh), colours.highlight,
                        0, 0, thick);
        }
    }

    if (hovered_tile < 0) return;
    const Tile& t = tiles_[static_cast<std::size_t>(hovered_tile)];
    // The shared hover: a query row, else a key (row of K, V or X source; column of the scores).
    if (t.rows == Axis::Queries) {
      // A cell of a scores grid: its row is the query; the same token's key column is another cell.
      state.frame.hovered_next = {Side::Query, hovered_row,
                                  /*this_side_only=*/t.cols == Axis::Keys};
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = hovered_row;
    } else if (t.rows == Axis::Keys) {
      state.frame.hovered_next = {Side::Key, hovered_row};
    }
    draw_tooltip(state, t, hovered_row, hovered_col);
  }

  void centred_value(ImDrawList* list, ImFont* font, ImVec2 p0, float cell, ImU32 colour,
                     const char* text) const {
    const ImVec2 size = font->CalcTextSizeA(value_font_, FLT_MAX, 0, text);
    list->AddText(font, value_font_,
                  ImVec2(p0.x + (cell - size.x) * 0.5f, p0.y + (cell - size.y) * 0.5f), colour,
                  text);
  }

  // ---------------------------------------------------------------------------
  // [SECTION] Tooltips
  // ---------------------------------------------------------------------------
  // What the hovered cell is and how it was computed, from its stage's recipe.
  void draw_tooltip(const AppState& state, const Tile& t, int i, int j) const {
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    const view::ExplainedCell cell = view::explain_cell(
        stages_[static_cast<std::size_t>(t.source)], i, j, [&](Axis axis, Eigen::Index k) {
          const auto& tokens = axis == Axis::Keys ? keys : queries;
          return std::string(state.frame.visual_text(tokens[static_cast<std::size_t>(k)].text));
        });
    draw_formula_tooltip(cell.heading.c_str(), cell.formula.c_str());
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Pipeline, PipelinePanel);

}  // namespace attnviz::app
