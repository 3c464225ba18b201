// The Arrows panel: queries (the target sentence) down the left, keys (the source sentence in
// cross attention, the same sentence again in self attention) down the right, and a line from
// each query to each key whose opacity and thickness grow with the weight α; one colour per
// head. Hovering a token isolates its lines, clicking a query selects it, and the selected
// query's lines are drawn strongest.
//
// Cost stays bounded at large sizes: lines with α below the threshold are skipped (at most
// 1/threshold per query and head, as each row of α sums to 1; the threshold is the view
// setting, 0.02, or twice an even share, 2/n_key, when that is lower: among 256 keys an even
// share is 0.004, and the keys a query favours are above 0.008, not 0.02), and past kDenseLines
// query-key pairs only the kTopKeys strongest keys of each query are drawn. The overview lines are
// collected once per result (a member buffer), not per frame.
#include "app/panels/panel.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/raster/canvas.hpp"
#include "app/render/image_texture.hpp"
#include "app/view/arrows_notes.hpp"
#include "app/view/follow_scroll.hpp"
#include "app/view/memo.hpp"
#include "core/figures/format.hpp"
#include "core/figures/head_colours.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

namespace attnviz::app {
namespace {

constexpr long kDenseLines = 4096;  // more query-key pairs than this: top keys only
constexpr int kTopKeys = 3;
// When dense, the selected or hovered token's lines: its strongest this many in each head.
constexpr int kTokenLines = 6;

// The `count` (at most kTokenLines) largest of alpha(0 .. n-1) at or above the threshold, largest
// first, by insertion into a tiny sorted array; returns how many.
template <class Alpha>
int strongest(int n, const Alpha& alpha, float threshold, int count,
              std::array<int, kTokenLines>& best) {
  std::array<float, kTokenLines> best_alpha{};
  int found = 0;
  // What a weight must reach to be considered: the threshold, then, once `count` are found, the
  // least of them. Most weights fall short of it, a branch the processor learns (against the
  // threshold alone, a row of near-even weights passed and failed at random: 2 ms a frame at 256
  // tokens and 12 heads, in mispredicted branches).
  float bar = threshold;
  for (int k = 0; k < n; ++k) {
    const float a = alpha(k);
    if (!(a >= bar && a > 0)) continue;
    if (found == count && a <= best_alpha[static_cast<std::size_t>(count - 1)]) continue;
    int at = std::min(found, count - 1);
    for (; at > 0 && best_alpha[static_cast<std::size_t>(at - 1)] < a; --at) {
      best_alpha[static_cast<std::size_t>(at)] = best_alpha[static_cast<std::size_t>(at - 1)];
      best[static_cast<std::size_t>(at)] = best[static_cast<std::size_t>(at - 1)];
    }
    best_alpha[static_cast<std::size_t>(at)] = a;
    best[static_cast<std::size_t>(at)] = k;
    found = std::min(found + 1, count);
    if (found == count) bar = std::max(threshold, best_alpha[static_cast<std::size_t>(count - 1)]);
  }
  return found;
}
// Lines cost fill rate (a software renderer draws ~10-20k curves a second): whatever N and the
// head count, the overview draws at most this many, the strongest.
constexpr std::size_t kMaxOverviewLines = 160;
constexpr int kCurvedLineLimit = 1500;  // more lines than this are drawn straight

struct Line {
  int head, query, key;
  float alpha;
};

class ArrowsPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    // A model of many layers opens on the selected head (its heads' lines would hide one
    // another); a run of one layer on all of them. Either can be chosen after.
    if (const bool many = state.pipeline().layer_count() > 1; many != many_layers_) {
      many_layers_ = many;
      all_heads_ = !many;
    }
    draw_full_attention_note(state, "arrows.full_attention_note");
    const AttentionResult& r = state.result();
    const int n_query = static_cast<int>(r.n_query), n_key = static_cast<int>(r.n_key);
    const int heads = static_cast<int>(r.heads.size());
    const int head_selected = state.selection.head;
    const bool dense = static_cast<long>(n_query) * n_key > kDenseLines;
    draw_controls(state, context, heads, head_selected, dense);
    collect_overview(state, dense);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImVec2 available = ImGui::GetContentRegionAvail();
    if (available.x < ImGui::GetFontSize() * 4) return draw_no_room_note();
    // Lower than a heading and a few tokens (large text in a small panel): the panel scrolls
    // down to them.
    available.y = std::max(available.y, ImGui::GetFontSize() * 5.0f);
    draw_view(state, context, {origin.x, origin.y, available.x, available.y}, head_selected);
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(available);
  }

 private:
  bool all_heads_ = true;
  bool many_layers_ = false;            // what all_heads_ was last set for
  view::FollowedToken followed_query_;  // what the tokens last scrolled to show
  std::vector<Line> overview_;          // the lines drawn when nothing is isolated (capacity kept)
  // What it was collected from: the result's version, the threshold, whether dense, the heads
  // it holds (-1 all, else the selected one).
  view::Memo<std::uint64_t, float, bool, int> overview_of_;
  bool overview_capped_ = false;  // more lines than kMaxOverviewLines were above the threshold
  view::Canvas canvas_;           // the lines, drawn on the CPU when they change
  render::ImageTexture canvas_texture_;  // ... and shown as one textured quad

  // [SECTION] Lines

  // The weight below which no line is drawn (see the top of this file).
  static float line_threshold(const AppState& state) {
    const Eigen::Index keys = std::max<Eigen::Index>(1, state.result().n_key);
    return std::min(state.ui.arrow_threshold, 2.0f / static_cast<float>(keys));
  }

  // Every line above the threshold in the heads shown, or each query's kTopKeys strongest (above
  // the threshold) when dense; recomputed only when the result, the threshold or the heads shown
  // change. (Of every head, the strongest kMaxOverviewLines could all be another head's, and the
  // head shown drew none of its lines.)
  void collect_overview(const AppState& state, bool dense) {
    const AttentionResult& r = state.result();
    const float threshold = line_threshold(state);
    const int heads_shown = all_heads_ ? -1 : state.selection.head;
    if (!overview_of_.changed(r.version, threshold, dense, heads_shown)) return;
    overview_.clear();
    for (int h = 0; h < static_cast<int>(r.heads.size()); ++h) {
      if (!head_shown(h, state.selection.head)) continue;
      const Matrix& w = r.heads[static_cast<std::size_t>(h)].weights;
      for (int i = 0; i < static_cast<int>(w.rows()); ++i) {
        if (!dense) {
          for (int j = 0; j < static_cast<int>(w.cols()); ++j)
            if (w(i, j) >= threshold && w(i, j) > 0) overview_.push_back({h, i, j, w(i, j)});
          continue;
        }
        // The kTopKeys largest of the row.
        std::array<int, kTokenLines> best;
        const int count = strongest(
            static_cast<int>(w.cols()), [&](int j) { return w(i, j); }, threshold, kTopKeys, best);
        for (int k = 0; k < count; ++k)
          overview_.push_back(
              {h, i, best[static_cast<std::size_t>(k)], w(i, best[static_cast<std::size_t>(k)])});
      }
    }
    overview_capped_ = overview_.size() > kMaxOverviewLines;
    if (overview_capped_) {
      std::nth_element(overview_.begin(), overview_.begin() + kMaxOverviewLines, overview_.end(),
                       [](const Line& a, const Line& b) { return a.alpha > b.alpha; });
      overview_.resize(kMaxOverviewLines);
    }
  }

  // [SECTION] Controls: which heads, the head legend, notes

  void draw_controls(const AppState& state, PanelContext& context, int heads, int head_selected,
                     bool dense) {
    const Palette& colours = palette(state.ui.theme);
    int mode = all_heads_ ? 0 : 1;
    if (heads > 1) {
      ImGui::RadioButton("all heads", &mode, 0);
      ImGui::SameLine();
      ImGui::RadioButton("selected head", &mode, 1);
      all_heads_ = mode == 0;
    }
    // A legend: one swatch per head, a click selects the head.
    const float font = ImGui::GetFontSize();
    const float swatch = font * 0.8f;
    ImDrawList* list = ImGui::GetWindowDrawList();
    // With the head numbers when they fit on the line, else swatches only (numbers in tooltips).
    char label[16];
    float numbered_width = 0;
    for (int h = 0; h < heads; ++h) {
      std::snprintf(label, sizeof label, "%d", view::shown_number(h));
      numbered_width += swatch + font * 0.55f + ImGui::CalcTextSize(label).x;
    }
    const bool numbered = heads == 1 || fits_after_last_item(numbered_width, font * 0.8f);
    for (int h = 0; h < heads; ++h) {
      std::snprintf(label, sizeof label, "%d", view::shown_number(h));
      const float width = numbered ? swatch + font * 0.2f + ImGui::CalcTextSize(label).x : swatch;
      if (h > 0 || heads > 1) {
        const float spacing = h == 0 ? font * 0.8f : (numbered ? font * 0.35f : font * 0.3f);
        if (fits_after_last_item(width, spacing)) ImGui::SameLine(0, spacing);
      }
      ImGui::PushID(h);
      ImGui::InvisibleButton("head", ImVec2(width, ImGui::GetFrameHeight()));
      const bool hovered = ImGui::IsItemHovered();
      if (ImGui::IsItemClicked()) context.selection.head = h;
      if (hovered) ImGui::SetTooltip("head %d: click to select it", view::shown_number(h));
      ImGui::PopID();
      const ImVec2 p0 = ImGui::GetItemRectMin();
      const float y = p0.y + (ImGui::GetFrameHeight() - swatch) * 0.5f;
      const bool shown = all_heads_ || h == head_selected;
      list->AddRectFilled(ImVec2(p0.x, y), ImVec2(p0.x + swatch, y + swatch),
                          head_colour(state.ui.theme, h, shown ? 1.0f : 0.25f), font * 0.15f);
      if (h == head_selected)
        list->AddRect(ImVec2(p0.x - 2, y - 2), ImVec2(p0.x + swatch + 2, y + swatch + 2),
                      colours.selection, font * 0.15f, 0, 2.0f);
      if (numbered)
        list->AddText(
            ImVec2(p0.x + swatch + font * 0.2f, p0.y + (ImGui::GetFrameHeight() - font) * 0.5f),
            h == head_selected ? colours.text : colours.text_dim, label);
    }
    if (dense || overview_capped_) {
      char note[96];
      if (overview_capped_)
        std::snprintf(note, sizeof note, "strongest %zu lines", kMaxOverviewLines);
      else
        std::snprintf(note, sizeof note, "top %d keys per query", kTopKeys);
      if (fits_after_last_item(ImGui::CalcTextSize(note).x, font)) ImGui::SameLine(0, font);
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("%s", note);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Too many query-key pairs to draw every line: only the strongest are drawn.\n"
            "Hover a token to see all of its lines above \xce\xb1 = %s.",
            view::format_significant(line_threshold(state)).c_str());
    }
  }

  // [SECTION] The two columns and the lines

  struct Frame {
    view::ArrowsGeometry g;
    float label_width = 0, font = 0, head_spread = 0;
    float label_size = 0;  // the tokens' names: the font size (never under font - 2)
    view::Rect visible;    // where the tokens are seen (the area, or the scrolled window's)
    int heads = 0;
    bool curved = true;
    ImVec2 canvas_origin;      // the lines' image covers the area from here
    float pixel_scale = 1.0f;  // image pixels per layout unit
  };

  float line_y(const Frame& f, bool left, int index, int head) const {
    const float y = left ? f.g.left_y(index) : f.g.right_y(index);
    if (!all_heads_ || f.heads <= 1) return y;
    return y + (static_cast<float>(head) / static_cast<float>(f.heads - 1) - 0.5f) * f.head_spread;
  }

  void draw_line(const AppState& state, const Frame& f, const Line& l, float strength,
                 float extra_thickness) {
    const float a = std::clamp(l.alpha, 0.0f, 1.0f);
    const float opacity = (0.12f + 0.88f * a) * strength;
    const float thickness =
        0.8f + a * f.font * (extra_thickness > 0 ? 0.3f : 0.2f) + extra_thickness;
    view::Rgba8 colour = view::head_colour(l.head, state.ui.theme == Theme::Dark);
    colour.a = static_cast<std::uint8_t>(std::clamp(opacity, 0.0f, 1.0f) * 255.0f + 0.5f);
    // In the canvas's pixels.
    const float s = f.pixel_scale;
    const float p0[2] = {(f.g.left_x - f.canvas_origin.x) * s,
                         (line_y(f, true, l.query, l.head) - f.canvas_origin.y) * s};
    const float p3[2] = {(f.g.right_x - f.canvas_origin.x) * s,
                         (line_y(f, false, l.key, l.head) - f.canvas_origin.y) * s};
    // The many faint overview lines are straight; the few emphasised lines of a selected or
    // hovered token are curves.
    if (!f.curved || extra_thickness <= 0.0f) {
      canvas_.line(p0[0], p0[1], p3[0], p3[1], thickness * s, colour);
      return;
    }
    const float dx = (p3[0] - p0[0]) * 0.42f;
    const float p1[2] = {p0[0] + dx, p0[1]}, p2[2] = {p3[0] - dx, p3[1]};
    // A segment every ~24 pixels keeps the curve smooth at any size or export scale.
    const int segments = std::clamp(
        static_cast<int>((std::abs(p3[0] - p0[0]) + std::abs(p3[1] - p0[1])) / 24.0f), 6, 48);
    canvas_.curve(p0, p1, p2, p3, thickness * s, colour, segments);
  }

  bool head_shown(int head, int head_selected) const { return all_heads_ || head == head_selected; }

  void draw_view(const AppState& state, PanelContext& context, const view::Rect& whole,
                 int head_selected) {
    const AttentionResult& r = state.result();
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    const int n_query = static_cast<int>(r.n_query), n_key = static_cast<int>(r.n_key);
    const int heads = static_cast<int>(r.heads.size());
    const float threshold = line_threshold(state);

    Frame f;
    f.font = ImGui::GetFontSize();
    f.heads = heads;
    view::Rect area{whole.x, whole.y + f.font * 1.3f, whole.w, whole.h - f.font * 1.3f};
    if (area.h < f.font) return;

    for (const Token& t : queries)
      f.label_width =
          std::max(f.label_width, ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
    for (const Token& t : keys)
      f.label_width =
          std::max(f.label_width, ImGui::CalcTextSize(state.frame.visual_text(t.text)).x);
    f.label_width = std::clamp(f.label_width + f.font * 0.5f, f.font * 1.5f,
                               std::min(f.font * 9.0f, area.w * 0.28f));
    // In a wide, low panel very long flat lines are hard to follow: keep the columns at most
    // about twice as far apart as the area is high, centred.
    const float widest = 2.0f * f.label_width + std::max(area.h * 2.2f, f.font * 18.0f);
    if (area.w > widest) {
      area.x += std::floor((area.w - widest) * 0.5f);
      area.w = widest;
    }
    // Tokens a line apart at least, so that every name is written at the text size: a longer
    // sentence scrolls (a child window, its scroll bar taking from the width).
    f.g = view::layout_arrows(area, n_query, n_key, f.label_width, f.font);
    if (f.g.scrolls) {
      area.w -= ImGui::GetStyle().ScrollbarSize;
      f.g = view::layout_arrows(area, n_query, n_key, f.label_width, f.font);
    }
    f.visible = area;
    // Column headings.
    const char* query_heading = "queries";
    const char* key_heading = state.pipeline().cross() ? "keys (source)" : "keys (same sentence)";
    const ModelSpec* spec = state.document.scenario().model();
    if (spec && state.pipeline().current().can(Capability::SourceAndTarget)) {
      query_heading =
          spec->part == ModelPart::Encoder ? "queries (source)" : "queries (translation)";
      key_heading = spec->part == ModelPart::Cross  ? "keys (source)"
                    : spec->part == ModelPart::Main ? "keys (translation)"
                                                    : "keys (source)";
    } else if (spec && state.pipeline().cross()) {  // a pair filter: the keys are one sentence's
      query_heading = pair_filter_from(spec->pair_filter) == 0 ? "queries (A)" : "queries (B)";
      key_heading =
          pair_filter_to(spec->pair_filter) == 0 ? "keys (sentence A)" : "keys (sentence B)";
    }
    list->AddText(
        ImVec2(std::max(area.x, f.g.left_x - ImGui::CalcTextSize(query_heading).x), whole.y),
        colours.text_dim, query_heading);
    list->AddText(
        ImVec2(std::min(f.g.right_x, area.right() - ImGui::CalcTextSize(key_heading).x), whole.y),
        colours.text_dim, key_heading);
    const bool scrolling = f.g.scrolls;
    if (scrolling) {
      ImGui::SetCursorScreenPos(ImVec2(area.x, area.y));
      ImGui::SetNextWindowContentSize(ImVec2(0.0f, f.g.content_h));
      ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
      ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
      ImGui::BeginChild("##arrows_tokens", ImVec2(area.w + ImGui::GetStyle().ScrollbarSize, area.h),
                        false, ImGuiWindowFlags_None);
      ImGui::PopStyleColor();
      ImGui::PopStyleVar();
      list = ImGui::GetWindowDrawList();
      // Laid out in the scrolled content: everything below moves with the scroll.
      const ImVec2 content = ImGui::GetCursorScreenPos();
      f.g = view::layout_arrows({content.x, content.y, area.w, area.h}, n_query, n_key,
                                f.label_width, f.font);
      // The selected query kept in sight when it changes (view/follow_scroll.hpp).
      const int query = state.selection.query;
      if (followed_query_.changed_to(query) && query >= 0 && query < n_query) {
        const float y = f.g.left_y(query) - content.y;  // in the content, from its top
        ImGui::SetScrollY(view::scroll_to_show(ImGui::GetScrollY(), y - f.g.left_step * 0.5f,
                                               y + f.g.left_step * 0.5f, area.h, f.g.content_h,
                                               f.g.left_step));
      }
    }
    const float step = std::min(f.g.left_step > 0 ? f.g.left_step : f.font,
                                f.g.right_step > 0 ? f.g.right_step : f.font);
    f.label_size = row_label_size(step);
    f.head_spread = std::min(std::min(f.g.left_step, f.g.right_step) * 0.45f, f.font * 0.5f);

    // What is isolated: the token hovered in any view (in the previous frame).
    const TokenRef hovered = state.frame.hovered;
    const bool isolate_query =
        hovered.valid() && hovered.side == Side::Query && hovered.index < n_query;
    const bool isolate_key = hovered.valid() && hovered.side == Side::Key && hovered.index < n_key;
    const int selected = state.selection.query;

    // Token dots.
    const float dot =
        std::clamp(std::min(f.g.left_step, f.g.right_step) * 0.22f, 1.0f, f.font * 0.22f);
    // The lines go into an image drawn on the CPU (see view/canvas.hpp), one pixel per
    // framebuffer pixel (more when a picture is exported at a larger scale).
    const ImGuiIO& io = ImGui::GetIO();
    f.pixel_scale = io.DisplayFramebufferScale.x / std::max(io.FontGlobalScale, 0.01f);
    const view::Rect& seen = f.visible;
    f.canvas_origin = ImVec2(std::floor(seen.x), std::floor(seen.y));
    canvas_.begin(static_cast<int>(std::ceil(seen.w * f.pixel_scale)),
                  static_cast<int>(std::ceil(seen.h * f.pixel_scale)));
    list->PushClipRect(ImVec2(seen.x, seen.y), ImVec2(seen.right(), seen.bottom()), true);
    int drawn = 0;  // a hovered token's lines, for the choice of curves
    // A token's lines in a head: all those above the threshold, or when dense its kTokenLines
    // strongest (a row or column of 256 weights has up to 128 above 2/n).
    const bool dense = static_cast<long>(n_query) * n_key > kDenseLines;
    std::array<int, kTokenLines> best;
    const auto token_lines = [&](const Matrix& w, int h, bool query_side, int index, auto&& use) {
      const int n = query_side ? n_key : n_query;
      const auto alpha = [&](int k) { return query_side ? w(index, k) : w(k, index); };
      const auto line = [&](int k) {
        return query_side ? Line{h, index, k, w(index, k)} : Line{h, k, index, w(k, index)};
      };
      if (dense) {
        const int count = strongest(n, alpha, threshold, kTokenLines, best);
        for (int k = 0; k < count; ++k) use(line(best[static_cast<std::size_t>(k)]));
      } else {
        for (int k = 0; k < n; ++k)
          if (alpha(k) >= threshold && alpha(k) > 0) use(line(k));
      }
    };
    if (isolate_query || isolate_key) {
      // Every line of the hovered token above the threshold (never more than 1/threshold per
      // query and head, or n_query per key and head; its strongest when dense).
      const int index = hovered.index;
      for (int h = 0; h < heads; ++h)
        if (head_shown(h, head_selected))
          token_lines(r.heads[static_cast<std::size_t>(h)].weights, h, isolate_query, index,
                      [&](const Line&) { ++drawn; });
      f.curved = drawn <= kCurvedLineLimit;
      for (int h = 0; h < heads; ++h)
        if (head_shown(h, head_selected))
          token_lines(r.heads[static_cast<std::size_t>(h)].weights, h, isolate_query, index,
                      [&](const Line& l) { draw_line(state, f, l, 1.0f, 0.6f); });
    } else {
      // The overview, dimmed, then the selected query's lines on top.
      int shown = 0;
      for (const Line& l : overview_)
        if (head_shown(l.head, head_selected) && l.query != selected) ++shown;
      f.curved = shown <= kCurvedLineLimit;
      // Dimmed, more so when there are many or when many heads overlap; a dark background
      // needs a little more.
      const int heads_drawn = all_heads_ ? heads : 1;
      const float dim = (shown > 400 ? 0.3f : 0.38f) *
                        (state.ui.theme == Theme::Dark ? 1.35f : 1.0f) *
                        std::clamp(3.0f / static_cast<float>(heads_drawn), 0.45f, 1.0f);
      // Draw the selected head last, so its lines are on top.
      for (int pass = 0; pass < 2; ++pass)
        for (const Line& l : overview_) {
          if (!head_shown(l.head, head_selected) || l.query == selected) continue;
          if ((l.head == head_selected) != (pass == 1)) continue;
          draw_line(state, f, l, dim, 0.0f);
        }
      f.curved = true;
      const float strong =
          std::clamp(std::sqrt(2.0f / static_cast<float>(heads_drawn)), 0.55f, 1.0f);
      for (int h = 0; h < heads; ++h)
        if (head_shown(h, head_selected))
          token_lines(r.heads[static_cast<std::size_t>(h)].weights, h, true, selected,
                      [&](const Line& l) { draw_line(state, f, l, strong, 0.8f); });
    }
    if (canvas_.end())
      canvas_texture_.upload_when_drawn(canvas_);  // drawn meanwhile on another thread
    canvas_texture_.draw(
        list, f.canvas_origin,
        ImVec2(f.canvas_origin.x + static_cast<float>(canvas_.width()) / f.pixel_scale,
               f.canvas_origin.y + static_cast<float>(canvas_.height()) / f.pixel_scale));
    // The dots on both sides (skipped when the tokens are packed tighter than a pixel or two).
    // Only those in sight (a long sentence scrolls).
    const auto in_sight = [&](float y) { return y >= seen.y - dot && y <= seen.bottom() + dot; };
    if (f.g.left_step >= 2.5f)
      for (int i = 0; i < n_query; ++i) {
        if (!in_sight(f.g.left_y(i))) continue;
        list->AddCircleFilled(ImVec2(f.g.left_x, f.g.left_y(i)), dot,
                              i == selected ? colours.selection : colours.text_dim);
      }
    else
      list->AddCircleFilled(ImVec2(f.g.left_x, f.g.left_y(selected)), std::max(dot, 2.5f),
                            colours.selection);
    if (f.g.right_step >= 2.5f)
      for (int j = 0; j < n_key; ++j)
        if (in_sight(f.g.right_y(j)))
          list->AddCircleFilled(ImVec2(f.g.right_x, f.g.right_y(j)), dot, colours.text_dim);
    list->PopClipRect();
    // A selected query that may attend to no key in any head shown says so by its dot.
    bool selected_masked = true;
    for (int h = 0; h < heads; ++h) {
      const RowFlags& rows = r.heads[static_cast<std::size_t>(h)].fully_masked_rows;
      if (head_shown(h, head_selected) && !(rows.size() > selected && rows(selected)))
        selected_masked = false;
    }
    const bool overview = !isolate_query && !isolate_key;
    if (selected_masked && overview)
      list->AddText(ImVec2(f.g.left_x + f.font * 0.5f, f.g.left_y(selected) - f.font * 0.5f),
                    colours.highlight, "attends to no key (all masked)");
    // Between the columns, when no line is drawn: why, for what is looked at (view/arrows_notes).
    view::ArrowsScope scope;
    scope.focus = isolate_query ? view::ArrowsFocus::Query
                                : (isolate_key ? view::ArrowsFocus::Key : view::ArrowsFocus::None);
    scope.index = hovered.index;
    if (!overview)
      scope.name = state.frame.visual_text(
          (isolate_query ? queries : keys)[static_cast<std::size_t>(hovered.index)].text);
    for (int h = 0; h < heads; ++h)
      if (head_shown(h, head_selected)) scope.heads.push_back(h);
    scope.all_heads = static_cast<int>(scope.heads.size()) == heads;
    scope.threshold = threshold;
    const view::ArrowsNote note =
        selected_masked && overview ? view::ArrowsNote{} : view::arrows_empty_note(r, scope);
    if (!note.empty()) {
      const char* text =
          ImGui::CalcTextSize(note.full.c_str()).x > f.g.right_x - f.g.left_x - f.font
              ? note.brief.c_str()
              : note.full.c_str();
      const ImVec2 size = ImGui::CalcTextSize(text);
      const float middle = (f.g.left_x + f.g.right_x) * 0.5f;
      const ImVec2 p(middle - size.x * 0.5f, seen.y + (seen.h - size.y) * 0.5f);
      list->AddRectFilled(ImVec2(p.x - f.font * 0.3f, p.y),
                          ImVec2(p.x + size.x + f.font * 0.3f, p.y + size.y),
                          colours.panel_background, f.font * 0.2f);
      list->AddText(p, colours.text_dim, text);
    }

    draw_labels(state, context, f, selected);
    handle_mouse(state, context, f, head_selected);
    if (scrolling) ImGui::EndChild();
  }

  // [SECTION] Labels and the mouse

  void draw_label(ImDrawList* list, const AppState& state, PanelContext& context, const Frame& f,
                  const std::string& name, float y, bool left, bool highlighted,
                  bool selected) const {
    const Palette& colours = palette(state.ui.theme);
    const bool bold = selected && context.bold_font;
    if (bold) ImGui::PushFont(context.bold_font);
    const float gap = f.font * 0.4f;
    const float clip_x0 = left ? f.g.area.x : f.g.right_x + gap * 0.5f;
    const float clip_x1 = left ? f.g.left_x - gap * 0.5f : f.g.area.right();
    // "…" when it is too long (fit_label measures at the font's size: widths scale with the size)
    const float scale = f.label_size / ImGui::GetFontSize();
    const std::string shown =
        fit_label(state.frame.visual_text, name, (clip_x1 - clip_x0 - gap * 0.5f) / scale);
    const char* text = shown.c_str();
    const ImVec2 size = ImGui::GetFont()->CalcTextSizeA(f.label_size, FLT_MAX, 0, text);
    const float x = left ? f.g.left_x - gap - size.x : f.g.right_x + gap;
    list->PushClipRect(ImVec2(clip_x0, f.g.area.y - f.font),
                       ImVec2(clip_x1, f.g.area.bottom() + f.font), true);
    const ImVec2 p(x, y - size.y * 0.5f);
    if (highlighted) {
      const ImVec2 pad(f.font * 0.25f, f.font * 0.05f);
      list->AddRectFilled(ImVec2(p.x - pad.x, p.y - pad.y),
                          ImVec2(p.x + size.x + pad.x, p.y + size.y + pad.y), colours.chip_hover,
                          f.font * 0.25f);
    }
    list->AddText(ImGui::GetFont(), f.label_size, p, selected ? colours.selection : colours.text,
                  text);
    list->PopClipRect();
    if (bold) ImGui::PopFont();
  }

  void draw_labels(const AppState& state, PanelContext& context, const Frame& f, int selected) {
    ImDrawList* list = ImGui::GetWindowDrawList();
    const auto& queries = state.pipeline().target().tokens;
    const auto& keys = state.pipeline().keys().tokens;
    // Every name (the tokens are a line apart at least); those scrolled out of sight are written
    // when scrolled to.
    const float low = f.visible.y - f.font, high = f.visible.bottom() + f.font;
    int labelled = 0;
    for (int i = 0; i < f.g.left_count; ++i) {
      ++labelled;
      if (f.g.left_y(i) < low || f.g.left_y(i) > high) continue;
      draw_label(list, state, context, f, queries[static_cast<std::size_t>(i)].text, f.g.left_y(i),
                 true, state.highlights_query(i), i == selected);
    }
    for (int j = 0; j < f.g.right_count; ++j) {
      ++labelled;
      if (f.g.right_y(j) < low || f.g.right_y(j) > high) continue;
      draw_label(list, state, context, f, keys[static_cast<std::size_t>(j)].text, f.g.right_y(j),
                 false, state.highlights_key(j), false);
    }
    state.frame.layout.labels_of(view::ViewId::Arrows)
        .add(f.g.left_count + f.g.right_count, labelled, f.label_size, f.g.scrolls);
  }

  void handle_mouse(const AppState& state, PanelContext& context, const Frame& f,
                    int head_selected) {
    if (!ImGui::IsWindowHovered()) return;
    const ImGuiIO& io = ImGui::GetIO();
    // The label column plus the dot.
    const auto hit = f.g.hit(io.MousePos.x, io.MousePos.y, f.label_width + f.font * 0.3f);
    if (!hit) return;
    const bool left = (*hit)[0] == 0;
    const int index = (*hit)[1];
    state.frame.hovered_next = {left ? Side::Query : Side::Key, index};
    if (left && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) context.selection.query = index;
    draw_tooltip(state, left, index, head_selected);
  }

  // The hovered token's strongest connections in the selected head.
  void draw_tooltip(const AppState& state, bool query, int index, int head_selected) const {
    const AttentionResult& r = state.result();
    const HeadResult& head = r.heads[static_cast<std::size_t>(head_selected)];
    const auto& own = query ? state.pipeline().target().tokens : state.pipeline().keys().tokens;
    const auto& other = query ? state.pipeline().keys().tokens : state.pipeline().target().tokens;
    ImGui::BeginTooltip();
    ImGui::Text("%s %d: \"%s\"", query ? "query" : "key", view::shown_number(index),
                state.frame.visual_text(own[static_cast<std::size_t>(index)].text));
    const int shown_head = view::shown_number(head_selected);
    const std::vector<view::Connection> strongest = view::strongest_connections(
        head.weights, query ? view::ArrowsFocus::Query : view::ArrowsFocus::Key, index, 3);
    if (query && head.fully_masked_rows.size() > index && head.fully_masked_rows(index)) {
      ImGui::TextUnformatted("this query can attend to no key (every key is masked)");
    } else if (strongest.empty()) {
      ImGui::TextDisabled("no query attends to it in head %d", shown_head);
    } else {
      ImGui::TextDisabled(query ? "strongest keys, head %d:" : "queries attending most, head %d:",
                          shown_head);
      for (const view::Connection& c : strongest)
        ImGui::Text("  %s  \xce\xb1 = %s",
                    state.frame.visual_text(other[static_cast<std::size_t>(c.index)].text),
                    view::format_significant(c.alpha, 2).c_str());
    }
    if (query) ImGui::TextDisabled("click to select this query");
    ImGui::EndTooltip();
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Arrows, ArrowsPanel);

}  // namespace attnviz::app
