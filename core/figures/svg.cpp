#include "core/figures/svg.hpp"

#include "core/figures/figure_layout.hpp"
#include "core/figures/format.hpp"
#include "core/figures/head_colours.hpp"
#include "core/text/utf8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz::view {
namespace {

// -----------------------------------------------------------------------------
// Text and numbers
// -----------------------------------------------------------------------------

// A coordinate or length: at most two decimals, trailing zeros dropped; never "nan".
std::string num(double value) {
  if (!std::isfinite(value)) return "0";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string out = buffer;
  while (!out.empty() && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  if (out == "-0") out = "0";
  return out;
}

std::string hex(Rgba8 c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", c.r, c.g, c.b);
  return buffer;
}

// α for a data attribute: three decimals, "overflow" when not finite (never "nan").
std::string alpha_text(float value) {
  return format_number(value, 3);
}

bool is_wide(char32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
         (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F000 && c <= 0x1FAFF) || c >= 0x20000;
}

bool is_zero_width(char32_t c) {
  return (c >= 0x0300 && c <= 0x036F) || c == 0x200B || c == 0x200C || c == 0x200D ||
         (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x1F3FB && c <= 0x1F3FF);
}

// The width of a text in a sans-serif font, estimated without the font: 0.6 em for most
// characters, 1 em for ideographs and emoji, 0 for combining marks.
float text_width(std::string_view text, float font) {
  float em = 0;
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 1;
    const char32_t c = decode_utf8(text, offset, length);
    offset += length;
    em += is_zero_width(c) ? 0.0f : (is_wide(c) ? 1.0f : 0.6f);
  }
  return em * font;
}

// The text, shortened with "…" (whole code points) so that it is at most max_width wide.
std::string fit_text(const std::string& text, float max_width, float font) {
  if (text_width(text, font) <= max_width) return text;
  std::size_t count = utf8_length(text);
  while (count > 0) {
    --count;
    std::string shorter = std::string(utf8_prefix(text, count)) + "\xe2\x80\xa6";
    if (text_width(shorter, font) <= max_width || count == 0) return shorter;
  }
  return "\xe2\x80\xa6";
}

const std::string& label_at(const std::vector<std::string>& labels, int index,
                            std::string& fallback) {
  if (index >= 0 && static_cast<std::size_t>(index) < labels.size())
    return labels[static_cast<std::size_t>(index)];
  fallback = "#" + std::to_string(index);
  return fallback;
}

// -----------------------------------------------------------------------------
// The document
// -----------------------------------------------------------------------------

struct Colours {
  Rgba8 background, text, text_dim, grid;
};

Colours colours_for(bool dark) {
  if (dark) return {{28, 28, 33, 255}, {235, 235, 240, 255}, {150, 150, 160, 255}, {0, 0, 0, 140}};
  return {{255, 255, 255, 255}, {25, 25, 30, 255}, {110, 110, 120, 255}, {255, 255, 255, 160}};
}

float font_of(const SvgOptions& options) {
  return std::isfinite(options.font_size) ? std::clamp(options.font_size, 4.0f, 200.0f) : 14.0f;
}

void open_document(std::string& out, double width, double height, float font,
                   const SvgOptions& options, const Colours& colours) {
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(width) +
         "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
         "\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" font-size=\"" + num(font) +
         "\">\n";
  if (!options.title.empty()) out += "<title>" + xml_escape(options.title) + "</title>\n";
  out += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" +
         num(height) + "\" fill=\"" + hex(colours.background) + "\"/>\n";
}

void add_text(std::string& out, double x, double y, const std::string& text, Rgba8 colour,
              const char* anchor = nullptr, const std::string& attributes = {}) {
  out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" fill=\"" + hex(colour) + "\"";
  if (anchor) out += std::string(" text-anchor=\"") + anchor + "\"";
  if (!attributes.empty()) out += " " + attributes;
  out += ">" + xml_escape(text) + "</text>\n";
}

}  // namespace

// -----------------------------------------------------------------------------
// XML escaping
// -----------------------------------------------------------------------------

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    std::size_t length = 1;
    const char32_t c = decode_utf8(text, offset, length);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default: {
        const bool forbidden =
            (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xFFFE || c == 0xFFFF;
        if (forbidden || c == 0xFFFD)
          append_utf8(out, 0xFFFD);  // also invalid bytes (decoded as U+FFFD)
        else
          out.append(text.substr(offset, length));
      }
    }
    offset += length;
  }
  return out;
}

// -----------------------------------------------------------------------------
// Heatmap
// -----------------------------------------------------------------------------

std::string heatmap_svg(const Matrix& weights, const std::vector<std::string>& query_labels,
                        const std::vector<std::string>& key_labels, ColormapId colormap,
                        const SvgOptions& options) {
  const float font = font_of(options);
  const Colours colours = colours_for(options.dark);
  const int rows = static_cast<int>(weights.rows()), cols = static_cast<int>(weights.cols());
  const int decimals = std::clamp(options.value_decimals, 0, 6);
  std::string fallback;

  // The same geometry as the app's view, in an area large enough for cells of the chosen size.
  const float cell =
      options.cell_size > 0 && std::isfinite(options.cell_size)
          ? std::min(options.cell_size, 4096.0f)
          : std::clamp(std::floor(900.0f / static_cast<float>(std::max({rows, cols, 1}))), 2.0f,
                       56.0f);
  const float label_limit = font * 10.0f;  // as the app: labels never take more than 10 em
  HeatmapStyle style;
  style.line_height = font;
  style.max_cell_w = style.max_cell_h = cell;
  style.value_text_width = text_width(format_number(0.0f, decimals), font);
  style.row_label_width = style.column_label_width = 0;
  for (int i = 0; i < rows; ++i)
    style.row_label_width =
        std::max(style.row_label_width, text_width(label_at(query_labels, i, fallback), font));
  for (int j = 0; j < cols; ++j)
    style.column_label_width =
        std::max(style.column_label_width, text_width(label_at(key_labels, j, fallback), font));
  style.row_label_width = std::min(style.row_label_width, label_limit);
  style.column_label_width = std::min(style.column_label_width, label_limit);
  const float margin = font, header = font * 2.2f;
  const Rect area{margin, margin + header, 1e6f, 1e6f};
  const HeatmapGeometry g = layout_heatmap(area, rows, cols, style);

  // The header: the title on the left, the colour scale 0..1 on the right.
  const float bar_w = font * 8.0f;
  const float title_w =
      options.title.empty() ? 0.0f : text_width(options.title, font) + font * 1.5f;
  const float grid_right = rows > 0 && cols > 0 ? g.grid.right() : margin;
  const float grid_bottom = rows > 0 && cols > 0 ? g.grid.bottom() : margin + header;
  const double width =
      std::max(grid_right + margin, margin + title_w + font * 1.2f + bar_w + font * 2.5f + margin);
  const double height = grid_bottom + margin;

  std::string out;
  out.reserve(2048 + static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * 160);
  open_document(out, width, height, font, options, colours);
  out += "<defs><linearGradient id=\"colour-scale\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">";
  for (int s = 0; s <= 16; ++s) {
    const float t = static_cast<float>(s) / 16.0f;
    out += "<stop offset=\"" + num(t) + "\" stop-color=\"" + hex(sample(colormap, t)) + "\"/>";
  }
  out += "</linearGradient></defs>\n";
  const double baseline = margin + font * 0.9;
  if (!options.title.empty())
    add_text(out, margin, baseline, options.title, colours.text, nullptr, "class=\"title\"");
  const double bar_x = width - margin - font * 2.2 - bar_w;  // room for "1" or "0.04"
  add_text(out, bar_x - font * 0.3, baseline, "0", colours.text_dim, "end");
  out += "<rect class=\"colour-scale\" x=\"" + num(bar_x) + "\" y=\"" + num(margin + font * 0.15) +
         "\" width=\"" + num(bar_w) + "\" height=\"" + num(font * 0.8) +
         "\" fill=\"url(#colour-scale)\"/>\n";
  const float top =
      options.scale_top > 0 && std::isfinite(options.scale_top) ? options.scale_top : 1.0f;
  add_text(out, bar_x + bar_w + font * 0.3, baseline,
           top == 1.0f ? std::string("1") : format_number(top, 2), colours.text_dim);
  if (rows == 0 || cols == 0) {
    out += "</svg>\n";
    return out;
  }

  // 1. The cells.
  out += "<g class=\"cells\" shape-rendering=\"crispEdges\">\n";
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const Rect c = g.cell(i, j);
      const float w = weights(i, j);
      out += "<rect class=\"cell\" x=\"" + num(c.x) + "\" y=\"" + num(c.y) + "\" width=\"" +
             num(c.w) + "\" height=\"" + num(c.h) + "\" fill=\"" + hex(sample(colormap, w / top)) +
             "\" data-query=\"" + std::to_string(i) + "\" data-key=\"" + std::to_string(j) +
             "\" data-alpha=\"" + alpha_text(w) + "\"/>\n";
    }
  out += "</g>\n";
  // 2. Grid lines between cells when cells are big enough to separate.
  if (g.cell_w >= 8.0f) {
    out += "<g class=\"grid\" stroke=\"" + hex(colours.grid) + "\" stroke-opacity=\"" +
           num(colours.grid.a / 255.0) + "\" stroke-width=\"1\">\n";
    for (int j = 1; j < cols; ++j) {
      const double x = g.grid.x + g.cell_w * static_cast<float>(j);
      out += "<line x1=\"" + num(x) + "\" y1=\"" + num(g.grid.y) + "\" x2=\"" + num(x) +
             "\" y2=\"" + num(g.grid.bottom()) + "\"/>\n";
    }
    for (int i = 1; i < rows; ++i) {
      const double y = g.grid.y + g.cell_h * static_cast<float>(i);
      out += "<line x1=\"" + num(g.grid.x) + "\" y1=\"" + num(y) + "\" x2=\"" +
             num(g.grid.right()) + "\" y2=\"" + num(y) + "\"/>\n";
    }
    out += "</g>\n";
  }
  // 3. Numbers in the cells, black or white, whichever reads better on the cell.
  if (options.show_values && g.show_values) {
    out += "<g class=\"values\" text-anchor=\"middle\">\n";
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const Rect c = g.cell(i, j);
        const float w = weights(i, j);
        add_text(out, c.x + c.w * 0.5, c.y + c.h * 0.5 + font * 0.35, format_number(w, decimals),
                 text_colour_on(sample(colormap, w / top)));
      }
    out += "</g>\n";
  }
  // 4. Labels: queries down the left, keys across the top (rotated when they do not fit).
  out += "<g class=\"query-labels\" text-anchor=\"end\">\n";
  for (int i : visible_labels(rows, g.cell_h, font)) {
    const std::string text = fit_text(label_at(query_labels, i, fallback), g.row_labels.w, font);
    add_text(out, g.row_labels.right(),
             g.grid.y + g.cell_h * (static_cast<float>(i) + 0.5f) + font * 0.35f, text,
             colours.text, nullptr,
             "class=\"query-label\" data-query=\"" + std::to_string(i) + "\"");
  }
  out += "</g>\n";
  out += std::string("<g class=\"key-labels\" text-anchor=\"") +
         (g.vertical_column_labels ? "start" : "middle") + "\">\n";
  for (int j :
       visible_labels(cols, g.cell_w, g.vertical_column_labels ? font : style.column_label_width)) {
    const std::string& label = label_at(key_labels, j, fallback);
    const double centre = g.grid.x + g.cell_w * (static_cast<float>(j) + 0.5f);
    const std::string data = "class=\"key-label\" data-key=\"" + std::to_string(j) + "\"";
    if (g.vertical_column_labels) {
      // Reading upwards, starting just above the grid.
      const double x = centre + font * 0.35, y = g.column_labels.bottom();
      add_text(out, x, y, fit_text(label, g.column_labels.h, font), colours.text, nullptr,
               data + " transform=\"rotate(-90 " + num(x) + " " + num(y) + ")\"");
    } else {
      add_text(out, centre, g.column_labels.bottom() - font * 0.25,
               fit_text(label, label_limit, font), colours.text, nullptr, data);
    }
  }
  out += "</g>\n</svg>\n";
  return out;
}

// -----------------------------------------------------------------------------
// Arrows
// -----------------------------------------------------------------------------

std::vector<SvgArrow> select_arrows(const AttentionResult& result, int head, float threshold,
                                    std::size_t max_arrows, std::size_t* total) {
  std::vector<SvgArrow> out;
  const int heads = static_cast<int>(result.heads.size());
  for (int h = 0; h < heads; ++h) {
    if (head != kSvgAllHeads && head != h) continue;
    const Matrix& w = result.heads[static_cast<std::size_t>(h)].weights;
    for (int i = 0; i < static_cast<int>(w.rows()); ++i)
      for (int j = 0; j < static_cast<int>(w.cols()); ++j)
        if (w(i, j) >= threshold && w(i, j) > 0) out.push_back({h, i, j, w(i, j)});
  }
  if (total) *total = out.size();
  if (out.size() > max_arrows) {
    // The strongest; stable, so equal weights keep the earlier (head, query, key).
    std::stable_sort(out.begin(), out.end(),
                     [](const SvgArrow& a, const SvgArrow& b) { return a.alpha > b.alpha; });
    out.resize(max_arrows);
    std::sort(out.begin(), out.end(), [](const SvgArrow& a, const SvgArrow& b) {
      return a.head != b.head ? a.head < b.head
                              : (a.query != b.query ? a.query < b.query : a.key < b.key);
    });
  }
  return out;
}

std::string arrows_svg(const AttentionResult& result, const std::vector<std::string>& query_labels,
                       const std::vector<std::string>& key_labels, int head, float threshold,
                       const SvgOptions& options) {
  const float font = font_of(options);
  const Colours colours = colours_for(options.dark);
  const int n_query = static_cast<int>(result.n_query), n_key = static_cast<int>(result.n_key);
  const int heads = static_cast<int>(result.heads.size());
  const bool all_heads = head == kSvgAllHeads;
  const int heads_drawn = all_heads ? heads : (head >= 0 && head < heads ? 1 : 0);
  std::string fallback;

  // Sizes: one token every 1.9 em down the taller column; labels at most 9 em; the columns as far
  // apart as is comfortable to follow.
  float widest = 0;
  for (int i = 0; i < n_query; ++i)
    widest = std::max(widest, text_width(label_at(query_labels, i, fallback), font));
  for (int j = 0; j < n_key; ++j)
    widest = std::max(widest, text_width(label_at(key_labels, j, fallback), font));
  const float label_width = std::clamp(widest + font * 0.5f, font * 1.5f, font * 9.0f);
  const float step = font * 1.9f;
  const float column_h = step * static_cast<float>(std::max({n_query, n_key, 1}));
  const float between = std::clamp(column_h * 0.8f, font * 14.0f, font * 32.0f);
  const float margin = font;
  const float title_h = options.title.empty() ? 0.0f : font * 2.0f;
  const float legend_h = font * 1.8f, headings_h = font * 1.6f;
  const Rect area{margin, margin + title_h + legend_h + headings_h,
                  2.0f * label_width + 16.0f + between, column_h};
  const ArrowsGeometry g = layout_arrows(area, n_query, n_key, label_width);

  std::size_t total = 0;
  std::vector<SvgArrow> arrows = select_arrows(result, head, threshold, options.max_arrows, &total);

  // The legend: one swatch and number per head drawn; then a note when lines were left out.
  std::vector<int> legend_heads;
  for (int h = 0; h < heads; ++h)
    if (all_heads || h == head) legend_heads.push_back(h);
  std::string note;
  if (total > arrows.size())
    note = "strongest " + std::to_string(arrows.size()) + " of " + std::to_string(total) + " lines";
  float legend_w = 0;
  for (int h : legend_heads)
    legend_w +=
        font * 1.2f + text_width("head " + std::to_string(shown_number(h)), font) + font * 0.8f;
  if (!note.empty()) legend_w += text_width(note, font) + font;
  const double width = std::max(
      {static_cast<double>(area.right() + margin), static_cast<double>(margin * 2 + legend_w),
       static_cast<double>(margin * 2 +
                           (options.title.empty() ? 0.0f : text_width(options.title, font))),
       static_cast<double>(g.right_x + text_width(options.key_heading, font) + margin)});
  const double height = area.bottom() + margin;

  std::string out;
  out.reserve(2048 + arrows.size() * 220 + static_cast<std::size_t>(n_query + n_key) * 120);
  open_document(out, width, height, font, options, colours);
  double y = margin;
  if (!options.title.empty()) {
    add_text(out, margin, y + font * 0.9, options.title, colours.text, nullptr, "class=\"title\"");
    y += title_h;
  }
  double x = margin;
  for (int h : legend_heads) {
    out += "<rect class=\"legend\" data-head=\"" + std::to_string(h) + "\" x=\"" + num(x) +
           "\" y=\"" + num(y + font * 0.1) + "\" width=\"" + num(font * 0.8) + "\" height=\"" +
           num(font * 0.8) + "\" rx=\"" + num(font * 0.15) + "\" fill=\"" +
           hex(head_colour(h, options.dark)) + "\"/>\n";
    const std::string label = "head " + std::to_string(shown_number(h));  // data-head: from 0
    add_text(out, x + font * 1.1, y + font * 0.85, label, colours.text);
    x += font * 1.2f + text_width(label, font) + font * 0.8f;
  }
  if (!note.empty())
    add_text(out, x + font * 0.2, y + font * 0.85, note, colours.text_dim, nullptr,
             "class=\"note\"");
  y += legend_h;
  add_text(out, g.left_x, y + font * 0.9, options.query_heading, colours.text_dim, "end",
           "class=\"heading\"");
  add_text(out, g.right_x, y + font * 0.9, options.key_heading, colours.text_dim, nullptr,
           "class=\"heading\"");

  // The lines: width and opacity grow with α as in the app; with several heads each head's lines
  // are offset a little so that they do not hide one another. Weaker lines first, so the
  // strongest are on top.
  const float spread = all_heads && heads > 1
                           ? std::min(std::min(g.left_step, g.right_step) * 0.45f, font * 0.5f)
                           : 0.0f;
  const auto offset = [&](int h) {
    return spread > 0 ? (static_cast<float>(h) / static_cast<float>(heads - 1) - 0.5f) * spread
                      : 0.0f;
  };
  const float strength =
      std::clamp(std::sqrt(2.0f / static_cast<float>(std::max(heads_drawn, 1))), 0.55f, 1.0f);
  std::vector<std::size_t> order(arrows.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return arrows[a].alpha < arrows[b].alpha; });
  out += "<g class=\"arrows\" fill=\"none\" stroke-linecap=\"round\">\n";
  for (std::size_t k : order) {
    const SvgArrow& l = arrows[k];
    const float a = std::clamp(l.alpha, 0.0f, 1.0f);
    const double x0 = g.left_x, y0 = g.left_y(l.query) + offset(l.head);
    const double x3 = g.right_x, y3 = g.right_y(l.key) + offset(l.head);
    const double dx = (x3 - x0) * 0.42;
    out += "<path class=\"arrow\" data-head=\"" + std::to_string(l.head) + "\" data-query=\"" +
           std::to_string(l.query) + "\" data-key=\"" + std::to_string(l.key) + "\" data-alpha=\"" +
           alpha_text(l.alpha) + "\" d=\"M" + num(x0) + " " + num(y0) + " C" + num(x0 + dx) + " " +
           num(y0) + " " + num(x3 - dx) + " " + num(y3) + " " + num(x3) + " " + num(y3) +
           "\" stroke=\"" + hex(head_colour(l.head, options.dark)) + "\" stroke-opacity=\"" +
           num(std::round((0.12f + 0.88f * a) * strength * 100.0f) / 100.0f) +
           "\" stroke-width=\"" + num(0.8f + a * font * 0.3f) + "\"/>\n";
  }
  out += "</g>\n";
  if (arrows.empty() && n_query > 0 && n_key > 0) {
    char text[64];
    std::snprintf(text, sizeof text, "every \xce\xb1 < %s", format_number(threshold, 2).c_str());
    add_text(out, (g.left_x + g.right_x) * 0.5, area.y + area.h * 0.5, text, colours.text_dim,
             "middle", "class=\"note\"");
  }

  // The tokens: a dot and a label on each side.
  const float dot = std::clamp(std::min(g.left_step, g.right_step) * 0.22f, 1.0f, font * 0.22f);
  out += "<g class=\"tokens\">\n";
  for (int i = 0; i < n_query; ++i)
    out += "<circle cx=\"" + num(g.left_x) + "\" cy=\"" + num(g.left_y(i)) + "\" r=\"" + num(dot) +
           "\" fill=\"" + hex(colours.text_dim) + "\"/>\n";
  for (int j = 0; j < n_key; ++j)
    out += "<circle cx=\"" + num(g.right_x) + "\" cy=\"" + num(g.right_y(j)) + "\" r=\"" +
           num(dot) + "\" fill=\"" + hex(colours.text_dim) + "\"/>\n";
  const float gap = font * 0.4f, extent = font * 1.05f;
  for (int i : visible_labels(n_query, g.left_step, extent))
    add_text(out, g.left_x - gap, g.left_y(i) + font * 0.35f,
             fit_text(label_at(query_labels, i, fallback), label_width - font * 0.5f, font),
             colours.text, "end", "class=\"query-label\" data-query=\"" + std::to_string(i) + "\"");
  for (int j : visible_labels(n_key, g.right_step, extent))
    add_text(out, g.right_x + gap, g.right_y(j) + font * 0.35f,
             fit_text(label_at(key_labels, j, fallback), label_width - font * 0.5f, font),
             colours.text, nullptr, "class=\"key-label\" data-key=\"" + std::to_string(j) + "\"");
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace attnviz::view
