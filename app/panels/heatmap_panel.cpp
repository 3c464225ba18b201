// The Heatmaps panel: the selected head's attention weights (rows = queries, columns = keys)
// drawn as one float texture through a colormap shader, with token labels, numbers in the
// cells when they fit, and a tooltip with the raw and scaled score of the hovered cell; beside
// it, a thumbnail of every head (a click selects the head).
#include "app/panels/heatmap_cells.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/view/follow_scroll.hpp"
#include "app/view/formula.hpp"
#include "app/view/memo.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace attnviz::app {
namespace {

ImVec2 corner(const view::Rect& r) {
  return ImVec2(r.x, r.y);
}
ImVec2 far_corner(const view::Rect& r) {
  return ImVec2(r.right(), r.bottom());
}

class HeatmapPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const AttentionResult& r = state.result();
    context.heatmaps.upload_weights(r);
    update_scale_tops(state);

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 available = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    const int heads = static_cast<int>(r.heads.size());
    // Thumbnails on the right when there is more than one head.
    const float strip =
        heads > 1 ? std::clamp(available.x * 0.2f, font * 5.0f, font * 12.0f) : 0.0f;
    // Under the header, a line saying which way the queries and the keys go.
    const float header_h = font * 1.6f, axes_h = font * 1.2f;
    const view::Rect main_area{origin.x, origin.y + header_h + axes_h,
                               available.x - strip - (strip > 0 ? font : 0.0f),
                               available.y - header_h - axes_h};
    draw_main(state, context, main_area);
    draw_axis_captions(state, origin.x, main_area.y - axes_h);
    // Cells stop growing at a size (a short sentence in a wide view): the colour scale ends above
    // the grid's right edge, and the thumbnails follow it rather than the far side of the view.
    const view::HeatmapGeometry& drawn = state.frame.layout.heatmap;
    const float used_w = drawn.grid.empty() ? main_area.w
                                            : std::clamp(drawn.scroll_window().right() - origin.x,
                                                         font * 16.0f, main_area.w);
    draw_header(state, origin, used_w);
    if (strip > 0)
      draw_thumbnails(state, context,
                      {std::min(origin.x + available.x - strip, origin.x + used_w + font * 1.5f),
                       origin.y, strip, available.y});
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(available);
  }

 private:
  // The top of each head's colour scale (UiSettings::heatmap_top), for the result and setting
  // they were found for: the header, the grid and the thumbnails read them every frame.
  std::vector<float> scale_tops_;
  view::Memo<std::uint64_t, bool, std::size_t> scale_tops_of_;  // version, contrast, heads
  // The mouse wheel turned over the names (across, down): scrolls the cells in the next frame.
  std::array<float, 2> label_wheel_{};
  view::FollowedToken followed_query_, followed_key_;  // what the cells last scrolled to show

  void update_scale_tops(const AppState& state) {
    const AttentionResult& r = state.result();
    if (!scale_tops_of_.changed(r.version, state.ui.heatmap_contrast, r.heads.size())) return;
    scale_tops_.resize(r.heads.size());
    for (std::size_t h = 0; h < r.heads.size(); ++h)
      scale_tops_[h] = state.ui.heatmap_top(r.heads[h].weights);
  }

  void draw_header(const AppState& state, ImVec2 origin, float width) {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    char label[96];
    // A model's: "α, layer 2, head 3 of 12".
    char layer[32] = "";
    if (state.pipeline().layer_count() > 1)
      std::snprintf(layer, sizeof layer, "layer %d, ", view::shown_number(state.selection.layer));
    std::snprintf(label, sizeof label, "\xce\xb1, %shead %d of %d", layer,
                  view::shown_number(state.selection.head),
                  static_cast<int>(state.result().heads.size()));
    // The top of the scale: 1, or the head's largest α (View menu).
    const int head = state.selection.head;
    const float top = scale_tops_[static_cast<std::size_t>(head)];
    char top_text[16] = "1";
    if (top != 1.0f) view::format_number_into(top_text, sizeof top_text, top, 2);
    const float top_room = ImGui::CalcTextSize(top_text).x + font * 0.5f;
    // The colour scale, 0 .. 1, at the right: as wide as the room beside the label allows (the
    // label loses "of N" first, then the scale goes).
    const auto room_for_bar = [&] {
      const float scale_left = origin.x + ImGui::CalcTextSize(label).x + font * 0.6f +
                               font * 0.9f;  // "0" before the bar
      return std::min({width * 0.35f, font * 10.0f, origin.x + width - top_room - scale_left});
    };
    float bar_w = room_for_bar();
    if (bar_w < font * 2.0f) {
      std::snprintf(label, sizeof label, "\xce\xb1, %shead %d", layer,
                    view::shown_number(state.selection.head));
      bar_w = room_for_bar();
    }
    list->AddText(origin, colours.text, label);
    if (bar_w < font * 2.0f) return;
    draw_colour_scale(list, ImVec2(origin.x + width - bar_w - top_room, origin.y), bar_w,
                      state.ui.colormap, top_text,
                      state.ui.heatmap_contrast ? colours.highlight : colours.text_dim,
                      colours.text_dim);
  }

  // "queries ↓" over the row labels (rows are queries) and "keys →" over the column labels, on the
  // line at `y`.
  static void draw_axis_captions(const AppState& state, float left, float y) {
    const view::HeatmapGeometry& g = state.frame.layout.heatmap;
    if (g.grid.empty()) return;
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const char* queries = "queries \xe2\x86\x93";  // ↓
    const char* keys = "keys \xe2\x86\x92";        // →
    const float queries_w = ImGui::CalcTextSize(queries).x;
    const float queries_x = std::max(left, g.row_labels.right() - queries_w);
    const float keys_x = std::max(g.grid.x, queries_x + queries_w + font * 0.8f);
    list->AddText(ImVec2(queries_x, y), colours.text_dim, queries);
    list->AddText(ImVec2(keys_x, y), colours.text_dim, keys);
  }

  void draw_main(const AppState& state, PanelContext& context, const view::Rect& area) {
    const AttentionResult& r = state.result();
    const int head_index = state.selection.head;
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    const int rows = static_cast<int>(r.n_query), cols = static_cast<int>(r.n_key);
    const float font = ImGui::GetFontSize();

    view::HeatmapStyle style;
    style.line_height = font;
    // Presenter mode gives the view the whole window: a short sentence's cells may grow larger.
    style.max_cell_w = style.max_cell_h = font * (state.ui.presenter ? 8.0f : 5.0f);
    style.value_text_width = ImGui::CalcTextSize("0.00").x;
    style.row_label_width = style.column_label_width = 0;
    for (const Token& t : queries)
      style.row_label_width =
          std::max(style.row_label_width, ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
    for (const Token& t : keys)
      style.column_label_width = std::max(style.column_label_width,
                                          ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
    style.row_label_width = std::min(style.row_label_width, font * 10.0f);
    style.column_label_width = std::min(style.column_label_width, font * 10.0f);
    // Cells a line tall and wide at least, so that every name fits beside its row and under its
    // column: past that the cells scroll (a child window over them; the names follow).
    style.min_cell_w = style.min_cell_h = font;
    style.scrollbar = ImGui::GetStyle().ScrollbarSize;
    style.widen_for_values = state.ui.show_cell_values;
    const view::HeatmapGeometry laid = view::layout_heatmap(area, rows, cols, style);
    state.frame.layout.heatmap = laid;
    state.frame.layout.heatmap_head = head_index;
    if (laid.grid.empty()) return;

    const bool scrolling = laid.scrolls_x || laid.scrolls_y;
    if (!scrolling) {
      draw_cells(state, context, laid, ImGui::GetWindowDrawList());
      draw_labels(state, context, laid, style, false);
      return;
    }
    const view::Rect window = laid.scroll_window();
    ImGui::SetCursorScreenPos(corner(window));
    ImGui::SetNextWindowContentSize(ImVec2(laid.grid.w, laid.grid.h));
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
    ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
    const bool open = ImGui::BeginChild(
        "##heatmap_cells", ImVec2(window.w, window.h), false,
        laid.scrolls_x ? ImGuiWindowFlags_HorizontalScrollbar : ImGuiWindowFlags_None);
    ImGui::PopStyleColor();
    ImGui::PopStyleVar();
    view::HeatmapGeometry g = laid;
    if (open) {
      // The selected query's row, and the key a lesson points at, kept in sight when they change
      // (a click in another view, a lesson step, the clicker): view/follow_scroll.hpp.
      const float bar = ImGui::GetStyle().ScrollbarSize;
      const int query = state.selection.query;
      if (followed_query_.changed_to(query) && laid.scrolls_y && query >= 0 && query < rows)
        ImGui::SetScrollY(view::scroll_to_show(
            ImGui::GetScrollY(), static_cast<float>(query) * laid.cell_h,
            static_cast<float>(query + 1) * laid.cell_h, window.h - (laid.scrolls_x ? bar : 0.0f),
            laid.grid.h, laid.cell_h));
      const int key =
          state.pinned.valid() && state.pinned.side == Side::Key ? state.pinned.index : -1;
      if (followed_key_.changed_to(key) && laid.scrolls_x && key >= 0 && key < cols)
        ImGui::SetScrollX(view::scroll_to_show(
            ImGui::GetScrollX(), static_cast<float>(key) * laid.cell_w,
            static_cast<float>(key + 1) * laid.cell_w, window.w - (laid.scrolls_y ? bar : 0.0f),
            laid.grid.w, laid.cell_w));
      // The wheel turned over the names scrolls the cells too (from the next frame).
      if (label_wheel_[0] != 0.0f)
        ImGui::SetScrollX(ImGui::GetScrollX() - label_wheel_[0] * g.cell_w * 3.0f);
      if (label_wheel_[1] != 0.0f)
        ImGui::SetScrollY(ImGui::GetScrollY() - label_wheel_[1] * g.cell_h * 3.0f);
      g = laid.scrolled(ImGui::GetScrollX(), ImGui::GetScrollY());
      state.frame.layout.heatmap = g;
      draw_cells(state, context, g, ImGui::GetWindowDrawList());
    }
    label_wheel_ = {0.0f, 0.0f};
    ImGui::EndChild();
    draw_labels(state, context, g, style, true);
  }

  // The cells, their numbers and outlines, and the mouse over them, in `list` (the panel's, or
  // the child window's that scrolls them).
  void draw_cells(const AppState& state, PanelContext& context, const view::HeatmapGeometry& g,
                  ImDrawList* list) {
    const AttentionResult& r = state.result();
    const int head_index = state.selection.head;
    const HeadResult& head = r.heads[static_cast<std::size_t>(head_index)];
    const float top =
        scale_tops_[static_cast<std::size_t>(head_index)];  // the colour scale: 0 .. top
    const int rows = static_cast<int>(r.n_query), cols = static_cast<int>(r.n_key);
    const Palette& colours = palette(state.ui.theme);
    const float font = ImGui::GetFontSize();
    // 1. The cells, the lines between them, the numbers in those in sight (the weights' texture
    // marks the masked cells).
    CellSource cells{.values = &head.weights,
                     .masked_scores = &head.masked_scores,
                     .colormap = state.ui.colormap,
                     .low = 0.0f,
                     .high = top,  // the colour scale: 0 .. top
                     .texture = &context.heatmaps.weights,
                     .block = head_index};
    draw_heatmap_cells(
        list, context, state.ui.theme, g, cells,
        {.numbers = g.show_values && state.ui.show_cell_values, .visible_only = true});
    // 2. The selected query's row, and the hovered token's row or column.
    const float thick = highlight_width(state.ui, font);
    outline_heatmap_row(list, g, state.selection.query, colours.selection, thick);
    for (int i = 0; i < rows; ++i)
      if (state.highlights_query(i) && i != state.selection.query)
        outline_heatmap_row(list, g, i, colours.highlight, thick);
    for (int j = 0; j < cols; ++j)
      if (state.highlights_key(j)) outline_heatmap_column(list, g, j, colours.highlight, thick);
    // 3. Hover and click.
    if (!ImGui::IsWindowHovered()) return;
    const ImGuiIO& io = ImGui::GetIO();
    if (const auto cell = g.hit(io.MousePos.x, io.MousePos.y)) {
      const int i = (*cell)[0], j = (*cell)[1];
      state.frame.hovered_next = {Side::Query, i, /*this_side_only=*/true};
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = i;
      draw_cell_tooltip(state, head, i, j);
    }
  }

  // Queries down the left, keys across the top, every one (the cells are a line at least), in
  // step with the cells; hovering one highlights its token, clicking a query selects it.
  void draw_labels(const AppState& state, PanelContext& context, const view::HeatmapGeometry& g,
                   const view::HeatmapStyle& style, bool scrolling) {
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    const int rows = g.rows, cols = g.cols;
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const view::Rect row_labels = g.visible_row_labels(), column_labels = g.visible_column_labels();
    const auto [first_row, last_row] = g.visible_rows();
    const auto [first_col, last_col] = g.visible_cols();
    int labelled = 0;  // names written whole, or scrolled out of sight (written when scrolled to)
    list->PushClipRect(corner(row_labels), far_corner(row_labels), true);
    for (int i = 0; i < rows; ++i) {
      if (i < first_row || i >= last_row) {
        ++labelled;
        continue;
      }
      // A name longer than its room keeps its start, with "…" (cut, its end showed instead).
      const std::string shown = fit_label(
          state.frame.visual_text, queries[static_cast<std::size_t>(i)].text, g.row_labels.w);
      const char* text = shown.c_str();
      const ImVec2 size = ImGui::CalcTextSize(text);
      const bool marked = state.highlights_query(i) || state.selection.query == i;
      const float centre = g.grid.y + g.cell_h * (static_cast<float>(i) + 0.5f);
      list->AddText(ImVec2(g.row_labels.right() - size.x, centre - size.y * 0.5f),
                    marked ? colours.selection : colours.text, text);
      labelled += shown == state.frame.visual_text(queries[static_cast<std::size_t>(i)].text);
    }
    list->PopClipRect();
    list->PushClipRect(corner(column_labels),
                       ImVec2(column_labels.right(), column_labels.bottom() + 1), true);
    for (int j = 0; j < cols; ++j) {
      if (j < first_col || j >= last_col) {
        ++labelled;
        continue;
      }
      const std::string shown =
          fit_label(state.frame.visual_text, keys[static_cast<std::size_t>(j)].text,
                    g.vertical_column_labels ? g.column_labels.h
                                             : std::max(g.cell_w, style.column_label_width));
      const char* text = shown.c_str();
      const ImVec2 size = ImGui::CalcTextSize(text);
      const ImU32 colour = state.highlights_key(j) ? colours.selection : colours.text;
      const float centre = g.grid.x + g.cell_w * (static_cast<float>(j) + 0.5f);
      if (g.vertical_column_labels)
        add_vertical_text(list, corner(column_labels),
                          ImVec2(centre - size.y * 0.5f, g.column_labels.bottom() - size.x), colour,
                          text);
      else
        list->AddText(ImVec2(centre - size.x * 0.5f, g.column_labels.bottom() - size.y), colour,
                      text);
      labelled += shown == state.frame.visual_text(keys[static_cast<std::size_t>(j)].text);
    }
    list->PopClipRect();
    state.frame.layout.labels_of(view::ViewId::Heatmaps)
        .add(rows + cols, labelled, font, scrolling);
    // Hover and click on the names.
    if (!ImGui::IsWindowHovered()) return;
    const ImGuiIO& io = ImGui::GetIO();
    if (row_labels.contains(io.MousePos.x, io.MousePos.y)) {
      const int i =
          std::clamp(static_cast<int>((io.MousePos.y - g.grid.y) / g.cell_h), 0, rows - 1);
      state.frame.hovered_next = {Side::Query, i};
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = i;
      if (scrolling) label_wheel_[1] = io.MouseWheel;
    } else if (column_labels.contains(io.MousePos.x, io.MousePos.y)) {
      state.frame.hovered_next = {
          Side::Key,
          std::clamp(static_cast<int>((io.MousePos.x - g.grid.x) / g.cell_w), 0, cols - 1)};
      if (scrolling) label_wheel_[0] = io.MouseWheel != 0.0f ? io.MouseWheel : io.MouseWheelH;
    }
  }

  void draw_cell_tooltip(const AppState& state, const HeadResult& head, int i, int j) {
    const AttentionConfig& c = state.result().config;
    const char* query =
        state.frame.visual_text(state.pipeline().target().tokens[static_cast<std::size_t>(i)].text);
    const char* key =
        state.frame.visual_text(state.pipeline().keys().tokens[static_cast<std::size_t>(j)].text);
    ImGui::BeginTooltip();
    // The tokens' places too: a long sentence has many "the"s.
    ImGui::Text("query %d \"%s\" \xe2\x86\x92 key %d \"%s\"   (head %d)", view::shown_number(i),
                query, view::shown_number(j), key, view::shown_number(state.selection.head));
    ImGui::Separator();
    ImGui::Text("score %s = %s", compatibility_formula(c.compatibility),
                view::format_number(head.raw_scores(i, j), 3).c_str());
    if (c.compatibility == Compatibility::ScaledDot)
      ImGui::Text("scaled \xc3\xb7\xe2\x88\x9a%d%s = %s", c.d_k,
                  c.temperature != 1.0f ? " \xc3\xb7T" : "",
                  view::format_number(head.scaled_scores(i, j), 3).c_str());
    else if (c.temperature != 1.0f)
      ImGui::Text("\xc3\xb7T (T = %.2f) = %s", static_cast<double>(c.temperature),
                  view::format_number(head.scaled_scores(i, j), 3).c_str());
    if (view::is_masked(head.masked_scores(i, j))) {
      ImGui::TextUnformatted(view::masked_cell_note(view::mask_reason(c.causal, i, j)).c_str());
      ImGui::TextUnformatted("\xce\xb1 = 0: the softmax leaves it out");
    } else {
      ImGui::Text("\xce\xb1 = %s", view::format_significant(head.weights(i, j), 3).c_str());
    }
    ImGui::EndTooltip();
  }

  static const char* compatibility_formula(Compatibility c) {
    switch (c) {
      case Compatibility::Dot:
      case Compatibility::ScaledDot:
        return "q\xc2\xb7k";
      case Compatibility::General:
        return "q\xc2\xb7W\xe2\x82\x90\xc2\xb7k";
      case Compatibility::Additive:
        return "v\xc2\xb7tanh(qW\xe2\x82\x81+kW\xe2\x82\x82)";
      case Compatibility::Cosine:
        return "cos(q, k)";
    }
    return "";
  }

  void draw_thumbnails(const AppState& state, PanelContext& context, const view::Rect& area) {
    const AttentionResult& r = state.result();
    const int heads = static_cast<int>(r.heads.size());
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const int columns = heads <= 4 ? 1 : (heads <= 10 ? 2 : 3);
    const int rows_of_thumbs = (heads + columns - 1) / columns;
    const float gap = font * 0.4f;
    const float size = std::max(
        8.0f,
        std::min((area.w - gap * static_cast<float>(columns - 1)) / static_cast<float>(columns),
                 area.h / static_cast<float>(rows_of_thumbs) - font - gap));
    // The matrix's shape, rows by columns, with square cells: a 16-token head is a square, not
    // the big heatmap's shape (its cells are wide for their numbers, and scroll). A matrix far
    // from square (64 queries by 6 keys) is kept within 4:1, so that it is no thin strip.
    const float aspect = std::clamp(
        static_cast<float>(r.n_query) / static_cast<float>(std::max<Eigen::Index>(1, r.n_key)),
        0.25f, 4.0f);
    const float w = aspect > 1.0f ? size / aspect : size, h = aspect > 1.0f ? size : size * aspect;
    const ImGuiIO& io = ImGui::GetIO();
    for (int head = 0; head < heads; ++head) {
      const float x = area.x + static_cast<float>(head % columns) * (size + gap);
      const float y = area.y + static_cast<float>(head / columns) * (size + font + gap);
      // "head 3" where it fits above the thumbnail, else "h3", else "3" (many heads, a narrow
      // view).
      char label[16];
      const int number = view::shown_number(head);
      std::snprintf(label, sizeof label, "head %d", number);
      if (ImGui::CalcTextSize(label).x > size + gap * 0.5f)
        std::snprintf(label, sizeof label, "h%d", number);
      if (ImGui::CalcTextSize(label).x > size + gap * 0.5f)
        std::snprintf(label, sizeof label, "%d", number);
      list->AddText(ImVec2(x, y),
                    head == state.selection.head ? colours.selection : colours.text_dim, label);
      const ImVec2 p0(x, y + font), p1(x + w, y + font + h);
      if (context.heatmaps.ok())
        context.heatmaps.draw(list, context.heatmaps.weights, head, p0, p1, state.ui.colormap, 0.0f,
                              scale_tops_[static_cast<std::size_t>(head)]);
      if (head == state.selection.head)
        list->AddRect(ImVec2(p0.x - 2, p0.y - 2), ImVec2(p1.x + 2, p1.y + 2), colours.selection, 0,
                      0, 2.0f);
      const bool hovered = io.MousePos.x >= x && io.MousePos.x < x + size && io.MousePos.y >= y &&
                           io.MousePos.y < y + font + size;
      if (hovered && ImGui::IsWindowHovered()) {
        ImGui::SetTooltip("head %d: click to show it large", view::shown_number(head));
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.head = head;
      }
    }
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Heatmaps, HeatmapPanel);

}  // namespace attnviz::app
