#include "app/view/layout.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] What a panel needs
// -----------------------------------------------------------------------------

std::string_view to_string(Arrangement arrangement) {
  switch (arrangement) {
    case Arrangement::Dashboard:
      return "dashboard";
    case Arrangement::RightTabs:
      return "right-tabs";
    case Arrangement::TwoColumns:
      return "two-columns";
    case Arrangement::OneColumn:
      return "one-column";
    case Arrangement::AllTabs:
      return "all-tabs";
  }
  return "";
}

Size panel_needs(PanelId id, float font) {
  // In text sizes, read off screenshots at 1280x720 and text of 16 to 40 px: the widest row of
  // controls, and the title, the controls and about four rows of a sentence.
  switch (id) {
    case PanelId::Input:  // "[ 8 ] [-][+] d_model"; "hard (argmax)  causal mask"
      return {17 * font, 12 * font};
    case PanelId::Centre:  // the head's caption, the axes, the keys' names, a few rows of cells
      return {26 * font, 14 * font};
    case PanelId::Arrows:  // "(o) all heads  ( ) selected head", six lines of tokens
      return {16 * font, 10 * font};
    case PanelId::Output:  // "query [1: The v] head [1 v]", a few rows, the sum, the plot
      return {19 * font, 14 * font};
    case PanelId::Weights:  // the heads' list and one matrix with its dimensions' names
      return {30 * font, 8 * font};
    case PanelId::Lesson:
    case PanelId::Count:
      break;
  }
  return {};
}

namespace {

bool shown(const PanelVisibility& v, PanelId id) {
  return v[static_cast<std::size_t>(id)];
}

// A window of panels as tabs needs a row for the tabs.
float tab_row(float font) {
  return 2.0f * font;
}

Size window_needs(const std::vector<PanelId>& panels, float font) {
  Size needs;
  for (const PanelId id : panels) {
    const Size n = panel_needs(id, font);
    needs.w = std::max(needs.w, n.w);
    needs.h = std::max(needs.h, n.h);
  }
  if (panels.size() > 1) needs.h += tab_row(font);
  return needs;
}

// A column of the top band: windows stacked, with its share of the width.
struct Column {
  std::vector<std::vector<PanelId>> windows;
  float share = 0;
};

// The top band's columns for an arrangement, of the panels shown.
std::vector<Column> top_columns(Arrangement arrangement, const PanelVisibility& v) {
  const auto only_shown = [&](std::initializer_list<PanelId> ids) {
    std::vector<PanelId> out;
    for (const PanelId id : ids)
      if (shown(v, id)) out.push_back(id);
    return out;
  };
  std::vector<Column> columns;
  const auto add = [&](std::vector<std::vector<PanelId>> windows, float share) {
    Column column;
    for (auto& w : windows)
      if (!w.empty()) column.windows.push_back(std::move(w));
    column.share = share;
    if (!column.windows.empty()) columns.push_back(std::move(column));
  };
  switch (arrangement) {
    case Arrangement::Dashboard:
      add({only_shown({PanelId::Input})}, 0.25f);
      add({only_shown({PanelId::Centre})}, 0.42f);
      add({only_shown({PanelId::Arrows}), only_shown({PanelId::Output})}, 0.33f);
      break;
    case Arrangement::RightTabs:
      add({only_shown({PanelId::Input})}, 0.25f);
      add({only_shown({PanelId::Centre})}, 0.42f);
      add({only_shown({PanelId::Arrows, PanelId::Output})}, 0.33f);
      break;
    case Arrangement::TwoColumns:
      add({only_shown({PanelId::Input})}, 0.25f);
      add({only_shown({PanelId::Centre, PanelId::Arrows, PanelId::Output})}, 0.75f);
      break;
    case Arrangement::OneColumn:
    case Arrangement::AllTabs:
      add({only_shown({PanelId::Input, PanelId::Centre, PanelId::Arrows, PanelId::Output})}, 1.0f);
      break;
  }
  return columns;
}

// Widths in proportion to the columns' shares, each at least what it needs; none when the needs
// add up to more than `usable`.
std::optional<std::vector<float>> column_widths(const std::vector<float>& shares,
                                                const std::vector<float>& needs, float usable) {
  const std::size_t n = shares.size();
  if (std::accumulate(needs.begin(), needs.end(), 0.0f) > usable) return std::nullopt;
  std::vector<float> widths(n, 0.0f);
  std::vector<bool> fixed(n, false);
  // Columns under their need get it; the others share what is left; until none is under.
  for (std::size_t round = 0; round <= n; ++round) {
    float left = usable, share = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (fixed[i])
        left -= needs[i];
      else
        share += shares[i];
    bool changed = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (fixed[i]) {
        widths[i] = needs[i];
        continue;
      }
      widths[i] = share > 0 ? std::round(left * shares[i] / share) : 0.0f;
      if (widths[i] < needs[i]) fixed[i] = changed = true;
    }
    if (!changed) break;
  }
  return widths;
}

// The dashboard in one arrangement; none when a shown panel would get less than it needs.
std::optional<DashboardLayout> try_arrangement(Arrangement arrangement, Rect area,
                                               const PanelVisibility& v, float gap, float font) {
  DashboardLayout layout;
  layout.arrangement = arrangement;
  const auto place = [&](std::vector<PanelId> panels, Rect rect) {
    for (const PanelId id : panels) layout.panels[static_cast<std::size_t>(id)] = rect;
    layout.windows.push_back({rect, std::move(panels)});
  };
  if (arrangement == Arrangement::AllTabs) {
    std::vector<PanelId> all;
    for (const PanelId id :
         {PanelId::Input, PanelId::Weights, PanelId::Centre, PanelId::Arrows, PanelId::Output})
      if (shown(v, id)) all.push_back(id);
    if (all.empty()) return layout;
    const Size needs = window_needs(all, font);
    if (area.w < needs.w || area.h < needs.h) return std::nullopt;
    place(std::move(all), area);
    return layout;
  }

  const std::vector<Column> columns = top_columns(arrangement, v);
  float top_needs_h = 0;
  std::vector<float> shares, needs_w;
  for (const Column& column : columns) {
    float h = 0, w = 0;
    for (const auto& window : column.windows) {
      const Size n = window_needs(window, font);
      h += n.h + (h > 0 ? gap : 0.0f);
      w = std::max(w, n.w);
    }
    top_needs_h = std::max(top_needs_h, h);
    shares.push_back(column.share);
    needs_w.push_back(w);
  }

  // Rows: the top band and the weights band.
  Rect top = area;
  if (shown(v, PanelId::Weights)) {
    const Size needs = panel_needs(PanelId::Weights, font);
    float weights_h = area.h;
    if (!columns.empty()) {
      weights_h =
          std::min(std::max(std::round(area.h * 0.36f), needs.h), area.h - gap - top_needs_h);
      top.h = area.h - weights_h - gap;
    } else {
      top.h = 0;
    }
    if (weights_h < needs.h || area.w < needs.w) return std::nullopt;
    place({PanelId::Weights}, {area.x, area.bottom() - weights_h, area.w, weights_h});
  }
  if (columns.empty()) return layout;
  if (top.h < top_needs_h) return std::nullopt;

  const float usable = top.w - gap * static_cast<float>(columns.size() - 1);
  const std::optional<std::vector<float>> widths = column_widths(shares, needs_w, usable);
  if (!widths) return std::nullopt;
  float x = top.x;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    // The last column takes the rounding remainder.
    const float w = c + 1 == columns.size() ? top.right() - x : (*widths)[c];
    const auto& windows = columns[c].windows;
    if (windows.size() == 1) {
      place(windows[0], {x, top.y, w, top.h});
    } else {  // Arrows over Output: halves, each at least what it needs
      const float lower_needs = window_needs(windows[1], font).h;
      const float upper_h =
          std::max(window_needs(windows[0], font).h,
                   std::min(std::round((top.h - gap) * 0.5f), top.h - gap - lower_needs));
      place(windows[0], {x, top.y, w, upper_h});
      place(windows[1], {x, top.y + upper_h + gap, w, top.h - upper_h - gap});
    }
    x += w + gap;
  }
  return layout;
}

}  // namespace

const DashboardWindow* DashboardLayout::window_of(PanelId id) const {
  for (const DashboardWindow& window : windows)
    if (std::find(window.panels.begin(), window.panels.end(), id) != window.panels.end())
      return &window;
  return nullptr;
}

// -----------------------------------------------------------------------------
// [SECTION] Dashboard
// -----------------------------------------------------------------------------

DashboardLayout layout_dashboard(Rect area, const PanelVisibility& v, float gap,
                                 float lesson_height, float font) {
  Rect lesson;
  if (shown(v, PanelId::Lesson)) {
    // At most half the room: a long step's text scrolls in its band.
    const float h = std::min(lesson_height, std::round(area.h * 0.5f));
    lesson = {area.x, area.y, area.w, h};
    area.y += h + gap;
    area.h = std::max(0.0f, area.h - h - gap);
  }
  std::optional<DashboardLayout> layout;
  for (const Arrangement arrangement :
       {Arrangement::Dashboard, Arrangement::RightTabs, Arrangement::TwoColumns,
        Arrangement::OneColumn, Arrangement::AllTabs}) {
    layout = try_arrangement(arrangement, area, v, gap, font);
    if (layout) break;
  }
  if (!layout)  // too small for any: one window of tabs all the same (its panels scroll)
    layout = try_arrangement(Arrangement::AllTabs, area, v, gap, 0.0f);
  if (!lesson.empty()) {
    layout->panels[static_cast<std::size_t>(PanelId::Lesson)] = lesson;
    layout->windows.insert(layout->windows.begin(), {lesson, {PanelId::Lesson}});
  }
  return *layout;
}

PresenterLayout layout_presenter(Rect area, float gap, float lesson_height, float sentence_height,
                                 float lesson_share) {
  PresenterLayout layout;
  const auto take = [&](float height) {
    const float h = std::min(height, area.h);
    const Rect band{area.x, area.y, area.w, h};
    area.y += h + gap;
    area.h = std::max(0.0f, area.h - h - gap);
    return band;
  };
  if (lesson_height > 0)
    layout.lesson = take(std::min(lesson_height, std::round(area.h * lesson_share)));
  if (sentence_height > 0) layout.sentence = take(sentence_height);
  layout.view = area;
  return layout;
}

float suited_font_size(float height) {
  return std::clamp(std::round(height / 45.0f), 13.0f, 44.0f);
}

float suited_presenter_font_size(float height) {
  return std::min(64.0f, 2.0f * std::round(suited_font_size(height) * 0.75f));
}

float largest_usable_font_size(float window_width, float window_height) {
  // Every panel as a tab of one window: the widest and the tallest panel's needs, and the tabs'
  // row; under a menu bar and over a status bar, each at most a line and a half of text, and the
  // gaps. Needs grow in proportion to the text size.
  float w = 0, h = 0;
  for (const PanelId id :
       {PanelId::Input, PanelId::Weights, PanelId::Centre, PanelId::Arrows, PanelId::Output}) {
    const Size unit = panel_needs(id, 1.0f);
    w = std::max(w, unit.w);
    h = std::max(h, unit.h);
  }
  h += tab_row(1.0f) + 2 * 1.5f;
  const float gaps = 8;
  return std::floor(std::min((window_width - gaps) / w, (window_height - gaps) / h));
}

}  // namespace attnviz::view
