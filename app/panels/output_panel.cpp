// The Output panel: how the selected query's output in the selected head is made, as
// output = Σ_j α_j · v_j, shown two ways:
//   - the arithmetic: one row per key with its weight α_j (a bar), its value vector v_j (cells on
//     a diverging scale), the scaled contribution α_j · v_j (cells), and under them the sum, the
//     head's output — all on one colour scale, so the sum visibly is the weighted average;
//   - a picture: the value vectors projected to 2-D (principal components when d_v > 2), each a
//     point sized by α_j, and the output as a star at Σ α_j · p(v_j), which is exactly the
//     projection of the output because the projection is affine; thin lines of opacity α_j run
//     from the output to each value.
//   [SECTION] Selectors
//   [SECTION] The arithmetic
//   [SECTION] The picture
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/raster/canvas.hpp"
#include "app/render/image_texture.hpp"
#include "app/view/follow_scroll.hpp"
#include "app/view/formula.hpp"
#include "app/view/memo.hpp"
#include "app/view/projection.hpp"
#include "app/view/values.hpp"
#include "core/figures/format.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

// Whether an item `width` wide still fits on the line after the last item.
// A finite weight in [0, 1] (the engine never gives anything else; this guards the drawing).
float weight_of(const Matrix& weights, Eigen::Index i, Eigen::Index j) {
  const float a = weights(i, j);
  return std::isfinite(a) ? std::clamp(a, 0.0f, 1.0f) : 0.0f;
}

void add_star(ImDrawList* list, ImVec2 centre, float radius, ImU32 fill, ImU32 edge,
              float edge_width) {
  ImVec2 points[10];
  for (int k = 0; k < 10; ++k) {
    const float angle = -1.5707963f + static_cast<float>(k) * 0.62831853f;
    const float r = k % 2 == 0 ? radius : radius * 0.45f;
    points[k] = ImVec2(centre.x + r * std::cos(angle), centre.y + r * std::sin(angle));
  }
  // The star is concave: a filled pentagon in the middle and a triangle per point.
  ImVec2 inner[5];
  for (int k = 0; k < 5; ++k) inner[k] = points[2 * k + 1];
  list->AddConvexPolyFilled(inner, 5, fill);
  for (int k = 0; k < 5; ++k)
    list->AddTriangleFilled(points[(2 * k + 9) % 10], points[2 * k], points[2 * k + 1], fill);
  list->AddPolyline(points, 10, edge, ImDrawFlags_Closed, edge_width);
}

class OutputPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const AttentionResult& r = state.result();
    draw_selectors(state, context);
    draw_full_attention_note(state, "output.full_attention_note");
    const int head = state.selection.head;
    const int query = state.selection.query;
    const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
    update_cache(r, head, query);

    const bool masked = h.fully_masked_rows.size() > query && h.fully_masked_rows(query) != 0;
    if (masked) {
      ImGui::PushStyleColor(ImGuiCol_Text, palette(state.ui.theme).highlight);
      ImGui::TextWrapped("This query can attend to no key: output 0.");
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Every key is masked for this query, so every weight \xce\xb1 is 0\n"
            "and the output, \xce\xa3 \xce\xb1\xc2\xb7v, is the zero vector.");
    }

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImVec2 available = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    if (available.x < font * 6) return draw_no_room_note();
    // Lower than the headings, two rows and the sum (large text in a small panel): the panel
    // scrolls down to them.
    available.y = std::max(available.y, font * 6.0f);
    // Side by side when the panel is wide, else the arithmetic above the picture.
    const float gap = font * 0.8f;
    view::Rect bars{origin.x, origin.y, available.x, available.y};
    view::Rect picture = bars;
    const ImVec2 wanted =
        bars_wanted_size(state, static_cast<int>(h.V.rows()), static_cast<int>(h.V.cols()));
    if (available.x >= available.y * 1.3f) {
      bars.w = std::floor(std::clamp(wanted.x, available.x * 0.4f, available.x * 0.65f));
      picture.x = bars.right() + gap;
      picture.w = available.x - bars.w - gap;
    } else {
      bars.h = std::floor(std::clamp(wanted.y, available.y * 0.35f, available.y * 0.6f));
      picture.y = bars.bottom() + gap;
      picture.h = available.y - bars.h - gap;
    }
    draw_bars(state, context, bars, h, head, query);
    draw_picture(state, picture, h, head, query, masked);
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(available);
  }

 private:
  // Per (result, head): the 2-D picture of the values, and the colour limit of the cells.
  view::Memo<std::uint64_t, int> projection_of_;  // the result's version, the head
  view::Memo<std::uint64_t, int, int> order_of_;  // ... and the query
  view::Projection2D map_;
  Matrix projected_;  // (n_key, 2)
  bool projection_ok_ = false;
  float limit_ = 1;  // the largest |v| of the head's values: shared by v, α·v and the output
  std::array<float, 2> output_point_{};
  // Keys by decreasing α for the selected query (for sorting rows and choosing labels).
  std::vector<int> by_weight_;
  std::vector<ImVec4> placed_labels_;  // label boxes of the picture, to avoid overlaps
  std::vector<int> labelled_keys_;     // keys labelled in the picture this frame
  // The picture's lines and points, drawn on the CPU when they change (see view/canvas.hpp: an
  // anti-aliased circle is ~30 triangles to a software GL, and there is one per key) ...
  view::Canvas canvas_;
  render::ImageTexture canvas_texture_;  // ... and shown as one textured quad
  bool sort_rows_ = false;
  // Another query (or head) was chosen: the rows scroll to show the key it attends to most (a
  // lesson's pinned key instead, when it changes): view/follow_scroll.hpp.
  bool rows_to_top_ = false;
  view::FollowedToken followed_key_;
  std::uint64_t view_generation_ = 0;  // the host scrolls every view back to the top when it moves

  void update_cache(const AttentionResult& r, int head, int query) {
    const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
    const bool new_projection = projection_of_.changed(r.version, head);
    if (new_projection) {
      projection_ok_ = view::project_to_2d(h.V, projected_, map_);
      limit_ = view::largest_magnitude(h.V.data(), static_cast<std::size_t>(h.V.size()));
    }
    const int previous_query = std::get<2>(order_of_.inputs());
    if (order_of_.changed(r.version, head, query)) {
      by_weight_.resize(static_cast<std::size_t>(r.n_key));
      std::iota(by_weight_.begin(), by_weight_.end(), 0);
      std::stable_sort(by_weight_.begin(), by_weight_.end(), [&](int a, int b) {
        return weight_of(h.weights, query, a) > weight_of(h.weights, query, b);
      });
      output_point_ = map_.apply(h.output.row(query).data());
      if (new_projection || previous_query != query) rows_to_top_ = true;
    }
  }

  // -----------------------------------------------------------------------------
  // [SECTION] Selectors
  // -----------------------------------------------------------------------------

  void draw_selectors(const AppState& state, PanelContext& context) {
    const float font = ImGui::GetFontSize();
    ImGui::AlignTextToFramePadding();
    draw_query_selector(state, context, "##query", 8.0f, 0.4f);
    ImGui::SameLine();
    draw_head_selector(state, context, "##head");
    const char* sort_label = "sort by \xce\xb1";
    const float sort_w = ImGui::CalcTextSize(sort_label).x + ImGui::GetFrameHeight() +
                         ImGui::GetStyle().ItemInnerSpacing.x;
    if (fits_after_last_item(sort_w, font)) {
      ImGui::SameLine(0, font);
      ImGui::Checkbox(sort_label, &sort_rows_);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("list the keys with the largest weight first");
    }
  }

  // -----------------------------------------------------------------------------
  // [SECTION] The arithmetic
  // -----------------------------------------------------------------------------

  struct Columns {
    float label_x, label_w;
    float alpha_x, alpha_w, number_w;  // number_w: 0 when the weight is not printed
    float times_x, op_w;
    float value_x, equals_x, scaled_x;
    float cell_w;
    bool values_printed;
  };

  // The size the arithmetic would take with the largest rows and cells.
  ImVec2 bars_wanted_size(const AppState& state, int n_key, int d_v) const {
    const float font = ImGui::GetFontSize();
    float widest = ImGui::CalcTextSize("key").x;
    for (const Token& t : state.pipeline().keys().tokens)
      widest = std::max(widest, ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
    const float label = std::clamp(widest + font * 0.4f, font * 2.0f, font * 7.0f);
    const float width = label + font * 0.3f + ImGui::CalcTextSize("0.00").x + font * 4.3f +
                        font * 2.2f + 2.0f * static_cast<float>(d_v) * font * 3.2f + font * 0.6f;
    const float height = font * (1.3f + 1.6f + 0.4f) + static_cast<float>(n_key) * font * 2.0f;
    return ImVec2(width, height);
  }

  Columns layout_columns(const AppState& state, const view::Rect& area, int d_v,
                         float row_h) const {
    const float font = ImGui::GetFontSize();
    Columns c{};
    float widest = 0;
    for (const Token& t : state.pipeline().keys().tokens)
      widest = std::max(widest, ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
    widest = std::max(widest, ImGui::CalcTextSize("key").x);
    c.label_x = area.x;
    c.label_w = std::clamp(widest + font * 0.4f, font * 2.0f,
                           std::max(font * 2.0f, std::min(font * 7.0f, area.w * 0.28f)));
    c.number_w = area.w >= font * 20.0f ? ImGui::CalcTextSize("0.00").x + font * 0.3f : 0.0f;
    const float bar_w = std::clamp(area.w * 0.1f, font * 1.6f, font * 4.0f);
    c.alpha_x = c.label_x + c.label_w + font * 0.3f;
    c.alpha_w = c.number_w + bar_w;
    c.op_w = font * 1.1f;
    c.times_x = c.alpha_x + c.alpha_w;
    c.value_x = c.times_x + c.op_w;
    const float blocks = std::max(2.0f, area.right() - c.value_x - c.op_w - font * 0.4f);
    c.cell_w = std::min(font * 3.2f, blocks * 0.5f / static_cast<float>(std::max(1, d_v)));
    c.equals_x = c.value_x + c.cell_w * static_cast<float>(d_v);
    c.scaled_x = c.equals_x + c.op_w;
    c.values_printed =
        c.cell_w >= ImGui::CalcTextSize("-0.00").x + font * 0.3f && row_h >= font * 1.05f;
    return c;
  }

  // One row of cells on the shared diverging scale; `scale` multiplies every value (α_j, or 1).
  void draw_cells(ImDrawList* list, const AppState& state, const Columns& c, float x, float y,
                  float h, const float* values, int count, float scale) const {
    const Palette& colours = palette(state.ui.theme);
    char text[32];
    for (int k = 0; k < count; ++k) {
      const float v = values[k] * scale;
      const float x0 = x + c.cell_w * static_cast<float>(k);
      const view::Rgba8 fill =
          view::sample_diverging(std::isfinite(v) ? v : 0.0f, limit_, state.ui.diverging());
      list->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + c.cell_w, y + h), to_imgui(fill));
      if (c.values_printed) {
        view::format_number_into(text, sizeof text, v, 2);
        const ImVec2 size = ImGui::CalcTextSize(text);
        list->AddText(ImVec2(x0 + (c.cell_w - size.x) * 0.5f, y + (h - size.y) * 0.5f),
                      to_imgui(view::text_colour_on(fill)), text);
      }
    }
    if (c.cell_w >= 6.0f) {  // thin separators between cells, and a frame
      for (int k = 1; k < count; ++k) {
        const float xk = x + c.cell_w * static_cast<float>(k);
        list->AddLine(ImVec2(xk, y), ImVec2(xk, y + h), colours.grid);
      }
    }
    if (h >= ImGui::GetFontSize() * 0.8f)
      list->AddRect(ImVec2(x, y), ImVec2(x + c.cell_w * static_cast<float>(count), y + h),
                    with_alpha(colours.text_dim, 0.5f));
  }

  // `text` centred in the box, at `size` pixels (0: the current font size).
  void centred_text(ImDrawList* list, float x, float w, float y, float h, ImU32 colour,
                    const char* text, float size = 0) const {
    if (size <= 0) size = ImGui::GetFontSize();
    const ImVec2 extent = ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, text);
    list->AddText(ImGui::GetFont(), size,
                  ImVec2(x + (w - extent.x) * 0.5f, y + (h - extent.y) * 0.5f), colour, text);
  }

  void draw_bars(const AppState& state, PanelContext& context, const view::Rect& area,
                 const HeadResult& h, int head, int query) {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const auto& keys = state.pipeline().keys().tokens;
    const float font = ImGui::GetFontSize();
    const int n_key = static_cast<int>(h.V.rows()), d_v = static_cast<int>(h.V.cols());

    // Heights: a heading, the rows (scrolling when they do not fit), the sum.
    const float heading_h = font * 1.3f, sum_h = font * 1.6f;
    const view::Rect rows_area{area.x, area.y + heading_h, area.w,
                               area.h - heading_h - sum_h - font * 0.4f};
    if (rows_area.h < font * 0.5f) return;
    // Rows a line tall at least, so that every key's name is written at the text size: past that
    // the rows scroll (a child window; its scroll bar takes from the width of the cells).
    const float min_row = font, max_row = font * 2.0f;
    const float row_h = std::clamp(rows_area.h / static_cast<float>(n_key), min_row, max_row);
    const float rows_h = row_h * static_cast<float>(n_key);
    const bool scrolling = rows_h > rows_area.h + 0.5f;
    const float shown_h = scrolling ? rows_area.h : rows_h;
    const float gap = row_h >= font   ? std::max(1.0f, row_h * 0.12f)
                      : row_h >= 6.0f ? 1.0f
                                      : 0.0f;  // between rows
    const float label_size = row_label_size(row_h);
    const float scrollbar = scrolling ? ImGui::GetStyle().ScrollbarSize : 0.0f;
    const Columns c =
        layout_columns(state, {area.x, area.y, area.w - scrollbar, area.h}, d_v, row_h - gap);

    // Column headings.
    const ImU32 dim = colours.text_dim;
    list->AddText(ImVec2(c.label_x + c.label_w - ImGui::CalcTextSize("key").x, area.y), dim, "key");
    centred_text(list, c.alpha_x, c.alpha_w, area.y, font, dim, "\xce\xb1");
    const float block_w = c.cell_w * static_cast<float>(d_v);
    const char* value_heading = block_w >= ImGui::CalcTextSize("value v").x ? "value v" : "v";
    const char* scaled_heading =
        block_w >= ImGui::CalcTextSize("\xce\xb1\xc2\xb7v").x ? "\xce\xb1\xc2\xb7v" : "";
    centred_text(list, c.value_x, block_w, area.y, font, dim, value_heading);
    centred_text(list, c.scaled_x, block_w, area.y, font, dim, scaled_heading);

    // The rows.
    const ImGuiIO& io = ImGui::GetIO();
    float rows_top = rows_area.y;
    if (scrolling) {
      ImGui::SetCursorScreenPos(ImVec2(rows_area.x, rows_area.y));
      ImGui::SetNextWindowContentSize(ImVec2(0.0f, rows_h));
      ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
      ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
      ImGui::BeginChild("##output_rows", ImVec2(rows_area.w, rows_area.h), false);
      ImGui::PopStyleColor();
      ImGui::PopStyleVar();
      const int pinned =
          state.pinned.valid() && state.pinned.side == Side::Key && state.pinned.index < n_key
              ? state.pinned.index
              : -1;
      if (state.view_generation != view_generation_) {
        view_generation_ = state.view_generation;
        rows_to_top_ = true;
      }
      if (followed_key_.changed_to(pinned) || rows_to_top_) {
        const int key = pinned >= 0 ? pinned : by_weight_.empty() ? 0 : by_weight_.front();
        const auto sorted_at = std::find(by_weight_.begin(), by_weight_.end(), key);
        const int row = sort_rows_ && sorted_at != by_weight_.end()
                            ? static_cast<int>(sorted_at - by_weight_.begin())
                            : key;
        ImGui::SetScrollY(view::scroll_to_show(
            rows_to_top_ ? 0.0f : ImGui::GetScrollY(), row_h * static_cast<float>(row),
            row_h * static_cast<float>(row + 1), rows_area.h, rows_h, row_h));
      }
      list = ImGui::GetWindowDrawList();
      rows_top = ImGui::GetCursorScreenPos().y;  // scrolled
      // For the tests: the rows [first, last) at least partly in sight.
      const float scrolled = ImGui::GetScrollY();
      state.frame.values.set("output.first_row", static_cast<int>(scrolled / row_h));
      state.frame.values.set(
          "output.last_row",
          std::min(n_key, static_cast<int>(std::ceil((scrolled + rows_area.h) / row_h))));
    }
    rows_to_top_ = false;
    const bool mouse_in_rows =
        ImGui::IsWindowHovered() && rows_area.contains(io.MousePos.x, io.MousePos.y);
    list->PushClipRect(ImVec2(area.x, rows_area.y), ImVec2(area.right(), rows_area.bottom()), true);
    int hovered_key = -1, labelled = 0;
    for (int row = 0; row < n_key; ++row) {
      const int j = sort_rows_ ? by_weight_[static_cast<std::size_t>(row)] : row;
      const float y = rows_top + row_h * static_cast<float>(row);
      ++labelled;  // written below, or when scrolled to
      if (y + row_h < rows_area.y || y > rows_area.bottom()) continue;
      const float alpha = weight_of(h.weights, query, j);
      const bool highlighted = state.highlights_key(j);
      if (mouse_in_rows && io.MousePos.y >= y && io.MousePos.y < y + row_h) hovered_key = j;
      if (highlighted)
        list->AddRectFilled(ImVec2(area.x, y), ImVec2(area.right(), y + row_h), colours.chip_hover,
                            font * 0.2f);
      const float cy = y + gap * 0.5f, ch = row_h - gap;
      // The key's name, every one ("…" when long: fit_label measures in the current font, and the
      // width scales with the size).
      {
        const std::string text =
            fit_label(state.frame.visual_text, keys[static_cast<std::size_t>(j)].text,
                      (c.label_w - font * 0.2f) * font / label_size);
        const ImVec2 size = ImGui::GetFont()->CalcTextSizeA(label_size, FLT_MAX, 0, text.c_str());
        list->PushClipRect(ImVec2(c.label_x, rows_area.y),
                           ImVec2(c.label_x + c.label_w, rows_area.bottom()), true);
        list->AddText(ImGui::GetFont(), label_size,
                      ImVec2(c.label_x + c.label_w - size.x, y + (row_h - size.y) * 0.5f),
                      alpha > 0 ? colours.text : colours.text_dim, text.c_str());
        list->PopClipRect();
      }
      // α: the number and a bar from 0 to 1; for a masked key, which has no weight, the masked
      // look and no number.
      const bool masked_key = view::is_masked(h.masked_scores(query, j));
      if (c.number_w > 0 && ch >= font * 0.8f && !masked_key) {
        char text[16];
        view::format_number_into(text, sizeof text, alpha, 2);
        list->AddText(ImVec2(c.alpha_x, y + (row_h - font) * 0.5f), colours.text, text);
      }
      const float bar_x = c.alpha_x + c.number_w, bar_w = c.alpha_w - c.number_w;
      const float bar_h = std::max(1.0f, std::min(ch, font * 0.8f)),
                  bar_y = y + (row_h - bar_h) * 0.5f;
      if (masked_key) {
        draw_masked_cell(list, ImVec2(bar_x, bar_y), ImVec2(bar_x + bar_w, bar_y + bar_h),
                         state.ui.theme);
      } else {
        list->AddRectFilled(ImVec2(bar_x, bar_y), ImVec2(bar_x + bar_w, bar_y + bar_h),
                            with_alpha(colours.text_dim, 0.18f));
        list->AddRectFilled(ImVec2(bar_x, bar_y), ImVec2(bar_x + bar_w * alpha, bar_y + bar_h),
                            head_colour(state.ui.theme, head));
      }
      // v_j, then α_j · v_j.
      const float* v = h.V.row(j).data();
      if (ch >= label_size * 0.8f) {
        centred_text(list, c.times_x, c.op_w, y, row_h, colours.text_dim, "\xc3\x97", label_size);
        centred_text(list, c.equals_x, c.op_w, y, row_h, colours.text_dim, "=", label_size);
      }
      draw_cells(list, state, c, c.value_x, cy, ch, v, d_v, 1.0f);
      draw_cells(list, state, c, c.scaled_x, cy, ch, v, d_v, alpha);
    }
    list->PopClipRect();
    if (scrolling) {
      ImGui::EndChild();
      list = ImGui::GetWindowDrawList();
    }
    state.frame.layout.labels_of(view::ViewId::Output).add(n_key, labelled, label_size, scrolling);

    // The sum: a rule under the contributions, then "output = Σ" and the head's output.
    const float sum_y = rows_area.y + shown_h + font * 0.4f;
    list->AddLine(ImVec2(c.scaled_x - c.op_w * 0.9f, sum_y - font * 0.2f),
                  ImVec2(c.scaled_x + block_w, sum_y - font * 0.2f), colours.text,
                  std::max(1.0f, font * 0.08f));
    const float cell_h = std::min(sum_h, std::max(row_h - gap, font * 1.2f));
    const float sum_cy = sum_y + (sum_h - cell_h) * 0.5f;
    float alpha_sum = 0;
    for (int j = 0; j < n_key; ++j) alpha_sum += weight_of(h.weights, query, j);
    // "output =" ends where the "=" column begins, and may reach a font size into the α column
    // when the columns are narrow; else only "=" is written. Σ of the α's goes in the α column
    // where it clears it.
    if (context.bold_font) ImGui::PushFont(context.bold_font);
    const bool whole = c.equals_x - ImGui::CalcTextSize("output =").x >= c.times_x - font;
    const char* output_text = whole ? "output =" : "=";
    const ImVec2 size = ImGui::CalcTextSize(output_text);
    const float output_x = c.equals_x - size.x - font * 0.15f;
    list->AddText(ImVec2(output_x, sum_y + (sum_h - size.y) * 0.5f), colours.text, output_text);
    centred_text(list, c.equals_x, c.op_w, sum_y, sum_h, colours.text, "\xce\xa3");
    if (context.bold_font) ImGui::PopFont();
    char text[48];
    std::snprintf(text, sizeof text, "\xce\xa3 = %s", view::format_number(alpha_sum, 2).c_str());
    const float alpha_text_w = ImGui::CalcTextSize(text).x;
    if (c.alpha_w >= alpha_text_w &&
        c.alpha_x + (c.alpha_w + alpha_text_w) * 0.5f + font * 0.3f <= output_x)
      centred_text(list, c.alpha_x, c.alpha_w, sum_y, sum_h, colours.text_dim, text);
    Columns sum_columns = c;
    sum_columns.values_printed = c.cell_w >= ImGui::CalcTextSize("-0.00").x + font * 0.3f;
    draw_cells(list, state, sum_columns, c.scaled_x, sum_cy, cell_h, h.output.row(query).data(),
               d_v, 1.0f);
    list->AddRect(ImVec2(c.scaled_x - 1, sum_cy - 1),
                  ImVec2(c.scaled_x + block_w + 1, sum_cy + cell_h + 1), colours.text, 0, 0,
                  std::max(1.0f, font * 0.08f));

    // Hover: the shared highlight, and the numbers of the row.
    const bool mouse_on_sum = ImGui::IsWindowHovered() && io.MousePos.y >= sum_y &&
                              io.MousePos.y < sum_y + sum_h && io.MousePos.x >= area.x &&
                              io.MousePos.x < area.right();
    if (hovered_key >= 0) {
      state.frame.hovered_next = {Side::Key, hovered_key};
      draw_row_tooltip(state, h, query, hovered_key);
    } else if (mouse_on_sum) {
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(
          "output = \xce\xa3 \xce\xb1\xc2\xb7v: the sum of the rows above (column by column)");
      draw_vector_text("output", h.output.row(query).data(), d_v);
      ImGui::TextDisabled(
          "colours: blue negative, red positive, scale \xc2\xb1%s (the largest |v|)",
          view::format_number(limit_, 2).c_str());
      ImGui::EndTooltip();
    }
  }

  static void draw_vector_text(const char* name, const float* values, int count,
                               float scale = 1.0f) {
    char line[256];
    int used = std::snprintf(line, sizeof line, "%s = [", name);
    const int shown = std::min(count, 8);
    for (int k = 0; k < shown && used < static_cast<int>(sizeof line) - 24; ++k) {
      if (k > 0)
        used += std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), ", ");
      used += view::format_significant_into(line + used, static_cast<int>(sizeof line) - used,
                                            values[k] * scale, 2);
    }
    std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), "%s]",
                  count > shown ? ", \xe2\x80\xa6" : "");
    ImGui::TextUnformatted(line);
  }

  void draw_row_tooltip(const AppState& state, const HeadResult& h, int query, int key) const {
    const auto& keys = state.pipeline().keys().tokens;
    const float alpha = weight_of(h.weights, query, key);
    ImGui::BeginTooltip();
    const bool masked = view::is_masked(h.masked_scores(query, key));
    ImGui::Text("key %d: \"%s\"   \xce\xb1 = %s", view::shown_number(key),
                state.frame.visual_text(keys[static_cast<std::size_t>(key)].text),
                masked ? "0 (masked)" : view::format_significant(alpha, 3).c_str());
    if (masked)
      ImGui::TextDisabled(
          "%s", view::masked_cell_note(view::mask_reason(state.result().config.causal, query, key))
                    .c_str());
    draw_vector_text("v", h.V.row(key).data(), static_cast<int>(h.V.cols()));
    draw_vector_text("\xce\xb1\xc2\xb7v", h.V.row(key).data(), static_cast<int>(h.V.cols()), alpha);
    ImGui::EndTooltip();
  }

  // -----------------------------------------------------------------------------
  // [SECTION] The picture
  // -----------------------------------------------------------------------------

  bool label_fits(const ImVec4& box, const view::Rect& area) const {
    if (box.x < area.x + 2 || box.z > area.right() - 2 || box.y < area.y + 2 ||
        box.w > area.bottom() - 2)
      return false;
    const float gap =
        ImGui::GetFontSize() * 0.3f;  // so that two words side by side do not read as one
    for (const ImVec4& other : placed_labels_)
      if (box.x < other.z + gap && other.x < box.z + gap && box.y < other.w && other.y < box.w)
        return false;
    return true;
  }

  // Writes `text` beside a point (right, left, above, below, then the diagonals) where it fits;
  // when `must`, at the first spot inside the area even if it overlaps. Returns whether it did.
  bool place_label(ImDrawList* list, const view::Rect& area, ImVec2 p, float radius,
                   const char* text, bool must, bool highlighted, ImU32 colour,
                   ImU32 background = 0) {
    const ImVec2 size = ImGui::CalcTextSize(text);
    const float side = radius + 3, up = size.y * 0.5f;
    const ImVec2 spots[8] = {ImVec2(p.x + side, p.y - up),
                             ImVec2(p.x - side - size.x, p.y - up),
                             ImVec2(p.x - size.x * 0.5f, p.y - radius - size.y),
                             ImVec2(p.x - size.x * 0.5f, p.y + radius),
                             ImVec2(p.x + side, p.y - radius - size.y),
                             ImVec2(p.x + side, p.y + radius),
                             ImVec2(p.x - side - size.x, p.y - radius - size.y),
                             ImVec2(p.x - side - size.x, p.y + radius)};
    int chosen = -1, first_inside = -1;
    for (int k = 0; k < 8 && chosen < 0; ++k) {
      const ImVec4 box(spots[k].x, spots[k].y, spots[k].x + size.x, spots[k].y + size.y);
      if (first_inside < 0 && box.x >= area.x && box.z <= area.right() && box.y >= area.y &&
          box.w <= area.bottom())
        first_inside = k;
      if (label_fits(box, area)) chosen = k;
    }
    if (chosen < 0 && must) chosen = first_inside >= 0 ? first_inside : 0;
    if (chosen < 0) return false;
    const ImVec2 s = spots[chosen];
    const ImVec4 box(s.x, s.y, s.x + size.x, s.y + size.y);
    if (highlighted && background != 0)
      list->AddRectFilled(ImVec2(box.x - 2, box.y), ImVec2(box.z + 2, box.w), background,
                          ImGui::GetFontSize() * 0.2f);
    list->AddText(s, colour, text);
    placed_labels_.push_back(box);
    return true;
  }

  void draw_picture(const AppState& state, const view::Rect& area, const HeadResult& h, int head,
                    int query, bool masked) {
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const auto& keys = state.pipeline().keys().tokens;
    const float font = ImGui::GetFontSize();
    const int n_key = static_cast<int>(h.V.rows());
    if (area.w < font * 4 || area.h < font * 3) return;

    list->AddRect(ImVec2(area.x, area.y), ImVec2(area.right(), area.bottom()),
                  with_alpha(colours.text_dim, 0.35f), font * 0.2f);
    // Axis captions: the values' dimensions (counted from 1), or in words the two directions
    // along which they differ most (principal components, said so in the tooltip), each with its
    // share of the spread; shorter when the picture is narrow.
    char x_caption[48], y_caption[48];
    const float caption_room = area.w - font * 0.6f;
    switch (map_.kind) {
      case view::ProjectionKind::Raw1D:
        std::snprintf(x_caption, sizeof x_caption, "v[1]");
        y_caption[0] = '\0';
        break;
      case view::ProjectionKind::Raw2D:
        std::snprintf(x_caption, sizeof x_caption, "v[1]");
        std::snprintf(y_caption, sizeof y_caption, "v[2]");
        break;
      case view::ProjectionKind::Pca: {
        const int first = static_cast<int>(std::lround(map_.explained[0] * 100)),
                  second = static_cast<int>(std::lround(map_.explained[1] * 100));
        // The words before the shares: "widest spread" says more than "44%".
        std::snprintf(x_caption, sizeof x_caption, "widest spread of the values: %d%%", first);
        if (ImGui::CalcTextSize(x_caption).x > caption_room)
          std::snprintf(x_caption, sizeof x_caption, "widest spread: %d%%", first);
        if (ImGui::CalcTextSize(x_caption).x > caption_room)
          std::snprintf(x_caption, sizeof x_caption, "widest spread");
        if (ImGui::CalcTextSize(x_caption).x > caption_room)
          std::snprintf(x_caption, sizeof x_caption, "widest");
        std::snprintf(y_caption, sizeof y_caption, "next widest, across it: %d%%", second);
        if (ImGui::CalcTextSize(y_caption).x > caption_room)
          std::snprintf(y_caption, sizeof y_caption, "next widest: %d%%", second);
        if (ImGui::CalcTextSize(y_caption).x > caption_room)
          std::snprintf(y_caption, sizeof y_caption, "next widest");
        if (ImGui::CalcTextSize(y_caption).x > caption_room)
          std::snprintf(y_caption, sizeof y_caption, "next");
        break;
      }
    }
    if (!projection_ok_) {  // no captions either: they would name directions there are none of
      const char* note = "the values are not finite: no picture";
      for (const char* shorter : {"values not finite: no picture", "not finite"})
        if (ImGui::CalcTextSize(note).x > area.w - font * 0.6f) note = shorter;
      centred_text(list, area.x, area.w, area.y, area.h, colours.text_dim, note);
      return;
    }
    // Every value the same (or a single key): no direction to show.
    const bool all_equal = map_.explained[0] + map_.explained[1] <= 0.0;
    if (all_equal) {
      std::snprintf(
          x_caption, sizeof x_caption, "%s",
          n_key == 1 ? "one key: the output is its value" : "every value vector is the same");
      y_caption[0] = '\0';
    }
    const float pad = font * 0.3f;
    const ImVec2 x_size = ImGui::CalcTextSize(x_caption), y_size = ImGui::CalcTextSize(y_caption);
    const ImVec2 x_at(area.right() - x_size.x - pad, area.bottom() - font - pad),
        y_at(area.x + pad, area.y + pad);
    list->AddText(x_at, colours.text_dim, x_caption);
    list->AddText(y_at, colours.text_dim, y_caption);
    const ImVec4 captions[2] = {ImVec4(x_at.x, x_at.y, x_at.x + x_size.x, x_at.y + x_size.y),
                                ImVec4(y_at.x, y_at.y, y_at.x + y_size.x, y_at.y + y_size.y)};
    const view::Rect inner{area.x + font * 0.5f, area.y + font * 1.2f, area.w - font * 1.0f,
                           area.h - font * 2.4f};
    const view::Viewport2D viewport =
        view::fit_to_rect(projected_, &output_point_, inner, font * 0.9f);
    const auto screen = [&](float x, float y) {
      const auto p = viewport.to_screen(x, y);
      return ImVec2(p[0], p[1]);
    };
    const ImVec2 out = screen(output_point_[0], output_point_[1]);
    const float threshold = state.ui.arrow_threshold;
    list->PushClipRect(ImVec2(area.x, area.y), ImVec2(area.right(), area.bottom()), true);
    // The lines and points go into an image drawn on the CPU, one pixel per framebuffer pixel
    // (more when a picture is exported at a larger scale).
    const ImGuiIO& io = ImGui::GetIO();
    const float pixel_scale = io.DisplayFramebufferScale.x / std::max(io.FontGlobalScale, 0.01f);
    const ImVec2 canvas_origin(std::floor(area.x), std::floor(area.y));
    canvas_.begin(static_cast<int>(std::ceil((area.right() - canvas_origin.x) * pixel_scale)),
                  static_cast<int>(std::ceil((area.bottom() - canvas_origin.y) * pixel_scale)));
    const auto canvas_x = [&](float x) { return (x - canvas_origin.x) * pixel_scale; };
    const auto canvas_y = [&](float y) { return (y - canvas_origin.y) * pixel_scale; };
    // Lines from the output to each value, as strong as its weight.
    for (int j = 0; j < n_key; ++j) {
      const float alpha = weight_of(h.weights, query, j);
      if (alpha < threshold || alpha <= 0) continue;
      const ImVec2 p = screen(projected_(j, 0), projected_(j, 1));
      canvas_.line(canvas_x(out.x), canvas_y(out.y), canvas_x(p.x), canvas_y(p.y),
                   (1.0f + alpha * font * 0.2f) * pixel_scale,
                   to_rgba8(head_colour(state.ui.theme, head, 0.2f + 0.8f * alpha)));
    }
    // The values: weak ones first, so the strong ones are on top.
    int hovered_point = -1;
    float hovered_distance = font * 0.6f;
    for (int rank = n_key - 1; rank >= 0; --rank) {
      const int j = by_weight_[static_cast<std::size_t>(rank)];
      const float alpha = weight_of(h.weights, query, j);
      const ImVec2 p = screen(projected_(j, 0), projected_(j, 1));
      const float radius = font * (0.14f + 0.36f * std::sqrt(alpha));
      const float x = canvas_x(p.x), y = canvas_y(p.y);
      canvas_.disc(x, y, radius * pixel_scale,
                   to_rgba8(head_colour(state.ui.theme, head, 0.25f + 0.75f * alpha)));
      // The outlines lie just inside their radius, as ImGui draws a circle's.
      canvas_.ring(x, y, (radius - 0.5f) * pixel_scale, pixel_scale,
                   to_rgba8(with_alpha(colours.text, 0.25f + 0.5f * alpha)));
      if (state.highlights_key(j))
        canvas_.ring(x, y, (radius + font * 0.2f - 0.5f) * pixel_scale,
                     std::max(2.0f, font * 0.12f) * pixel_scale, to_rgba8(colours.highlight));
      const float distance = std::hypot(io.MousePos.x - p.x, io.MousePos.y - p.y);
      if (distance < std::max(hovered_distance, radius + 2.0f))
        hovered_point = j, hovered_distance = distance;
    }
    if (canvas_.end())
      canvas_texture_.upload_when_drawn(canvas_);  // drawn meanwhile on another thread
    canvas_texture_.draw(
        list, canvas_origin,
        ImVec2(canvas_origin.x + static_cast<float>(canvas_.width()) / pixel_scale,
               canvas_origin.y + static_cast<float>(canvas_.height()) / pixel_scale));
    // The output: a star at the weighted average.
    const float star = font * 0.55f;
    add_star(list, out, star, masked ? colours.text_dim : colours.selection,
             palette(state.ui.theme).panel_background, 1.5f);

    // Labels, each where it overlaps neither a point, the star, a caption nor an earlier label:
    // the strong values (α >= 0.1) and the highlighted one first, then the output's (the legend
    // in the corner names the star when there is no room by it), then the other values.
    placed_labels_.clear();
    labelled_keys_.clear();
    placed_labels_.push_back(ImVec4(out.x - star, out.y - star, out.x + star, out.y + star));
    for (int j = 0; j < n_key; ++j) {
      const ImVec2 p = screen(projected_(j, 0), projected_(j, 1));
      const float radius = font * (0.14f + 0.36f * std::sqrt(weight_of(h.weights, query, j)));
      placed_labels_.push_back(ImVec4(p.x - radius, p.y - radius, p.x + radius, p.y + radius));
    }
    for (const ImVec4& caption : captions) placed_labels_.push_back(caption);
    const int label_limit = n_key <= 24 ? n_key : 10;
    int labelled = 0;
    for (int pass = 0; pass < 3; ++pass) {
      if (pass == 1) {
        if (place_label(list, area, out, star, "output", false, false,
                        masked ? colours.text_dim : colours.selection))
          continue;
        // No room by the star: a legend in the top right corner, when the caption leaves room.
        const char* legend = "output";
        const ImVec2 size = ImGui::CalcTextSize(legend);
        const ImVec2 at(area.right() - size.x - font * 0.3f, area.y + font * 0.3f);
        const ImVec4 box(at.x - font * 1.0f, at.y, at.x + size.x, at.y + size.y);
        if (label_fits(box, area)) {
          add_star(list, ImVec2(at.x - font * 0.55f, at.y + size.y * 0.5f), font * 0.38f,
                   masked ? colours.text_dim : colours.selection, colours.panel_background, 1.0f);
          list->AddText(at, colours.text_dim, legend);
          placed_labels_.push_back(box);
        }
        continue;
      }
      for (int rank = 0; rank < n_key; ++rank) {
        const int j = by_weight_[static_cast<std::size_t>(rank)];
        const bool highlighted = state.highlights_key(j);
        const float alpha = weight_of(h.weights, query, j);
        const bool important = highlighted || alpha >= 0.1f;  // labelled first
        if (important != (pass == 0)) continue;
        const bool must =
            highlighted || rank == 0;  // labelled even over another (the strongest key)
        if (labelled >= label_limit && !highlighted) continue;
        // The same word at the same place (a repeated token has the same value): one label.
        const std::string& name = keys[static_cast<std::size_t>(j)].text;
        bool repeated = false;
        for (int other : labelled_keys_)
          if (keys[static_cast<std::size_t>(other)].text == name &&
              std::abs(projected_(other, 0) - projected_(j, 0)) +
                      std::abs(projected_(other, 1) - projected_(j, 1)) <=
                  1e-6f * (1.0f + std::abs(projected_(j, 0)) + std::abs(projected_(j, 1))))
            repeated = true;
        if (repeated && !highlighted) continue;
        const ImVec2 p = screen(projected_(j, 0), projected_(j, 1));
        const float radius = font * (0.14f + 0.36f * std::sqrt(alpha));
        if (place_label(list, area, p, radius, state.frame.visual_text(name), must, highlighted,
                        important ? colours.text : colours.text_dim,
                        highlighted ? colours.chip_hover : 0)) {
          labelled_keys_.push_back(j);
          ++labelled;
        }
      }
    }
    list->PopClipRect();

    // Hover.
    if (!ImGui::IsWindowHovered() || !area.contains(io.MousePos.x, io.MousePos.y)) return;
    if (std::hypot(io.MousePos.x - out.x, io.MousePos.y - out.y) < star + 2.0f) {
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(masked ? "output = 0: this query attends to no key"
                                    : "output = \xce\xa3 \xce\xb1\xc2\xb7v: it sits at the "
                                      "\xce\xb1-weighted average of the value points");
      ImGui::EndTooltip();
    } else if (hovered_point >= 0) {
      state.frame.hovered_next = {Side::Key, hovered_point};
      draw_row_tooltip(state, h, query, hovered_point);
    } else if (map_.kind == view::ProjectionKind::Pca) {
      ImGui::SetTooltip(
          "Each dot is a key's value vector (d_v = %d numbers), drawn flat: across, the\n"
          "direction in which the values differ most; up, the next (at right angles to it).\n"
          "Together the two show %d%% of how the values differ (principal components 1 and 2).",
          static_cast<int>(map_.dims),
          static_cast<int>(std::lround((map_.explained[0] + map_.explained[1]) * 100)));
    }
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Output, OutputPanel);

}  // namespace attnviz::app
