#include "core/figures/svg.hpp"

#include "core/document/scenario.hpp"
#include "core/figures/colormap.hpp"
#include "core/pipeline/pipeline.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace attnviz::view {
namespace {

// -----------------------------------------------------------------------------
// A minimal XML reader: enough to tell a well-formed document from a broken one and to read
// elements back. Tags must balance, attribute values must be quoted, names must not repeat in
// a tag, '<' and a bare '&' never appear in text or values, and there is exactly one root.
// -----------------------------------------------------------------------------
struct Element {
  std::string name;
  std::map<std::string, std::string> attributes;  // unescaped values
  std::string text;                               // unescaped direct text
  bool has(const char* attribute) const { return attributes.contains(attribute); }
  std::string get(const char* attribute) const {
    const auto it = attributes.find(attribute);
    return it == attributes.end() ? std::string() : it->second;
  }
  bool has_class(const char* css_class) const { return get("class") == css_class; }
};

struct XmlDocument {
  std::vector<Element> elements;  // in document order
  std::string error;              // empty when well-formed
  bool ok() const { return error.empty(); }
  std::vector<const Element*> with_class(const char* css_class, const char* name = nullptr) const {
    std::vector<const Element*> out;
    for (const Element& e : elements)
      if (e.has_class(css_class) && (!name || e.name == name)) out.push_back(&e);
    return out;
  }
};

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
         c == '.' || static_cast<unsigned char>(c) >= 0x80;
}

// Unescapes text; false on a bare '&', an unknown entity or a '<'.
bool unescape(const std::string& in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '<') return false;
    if (in[i] != '&') {
      out += in[i];
      continue;
    }
    const std::size_t end = in.find(';', i);
    if (end == std::string::npos) return false;
    const std::string entity = in.substr(i + 1, end - i - 1);
    if (entity == "amp")
      out += '&';
    else if (entity == "lt")
      out += '<';
    else if (entity == "gt")
      out += '>';
    else if (entity == "quot")
      out += '"';
    else if (entity == "apos")
      out += '\'';
    else
      return false;  // (numeric references are not written by svg.cpp)
    i = end;
  }
  return true;
}

XmlDocument parse_xml(const std::string& text) {
  XmlDocument doc;
  std::vector<std::size_t> open;  // indices into doc.elements
  int roots = 0;
  std::size_t i = 0;
  const auto fail = [&](const std::string& why) {
    doc.error = why + " at byte " + std::to_string(i);
    return doc;
  };
  while (i < text.size()) {
    if (text[i] != '<') {
      const std::size_t next = text.find('<', i);
      const std::string raw =
          text.substr(i, next == std::string::npos ? std::string::npos : next - i);
      std::string plain;
      if (!unescape(raw, plain)) return fail("bad text");
      if (open.empty()) {
        if (raw.find_first_not_of(" \t\r\n") != std::string::npos)
          return fail("text outside the root");
      } else {
        doc.elements[open.back()].text += plain;
      }
      if (next == std::string::npos) break;
      i = next;
      continue;
    }
    if (text.compare(i, 5, "<?xml") == 0) {
      if (i != 0) return fail("XML declaration not at the start");
      const std::size_t end = text.find("?>", i);
      if (end == std::string::npos) return fail("unterminated declaration");
      i = end + 2;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      const std::size_t end = text.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    if (text.compare(i, 2, "</") == 0) {
      std::size_t j = i + 2;
      while (j < text.size() && is_name_char(text[j])) ++j;
      const std::string name = text.substr(i + 2, j - i - 2);
      while (j < text.size() && text[j] == ' ') ++j;
      if (j >= text.size() || text[j] != '>') return fail("bad end tag");
      if (open.empty() || doc.elements[open.back()].name != name)
        return fail("unbalanced </" + name + ">");
      open.pop_back();
      i = j + 1;
      continue;
    }
    // A start tag.
    std::size_t j = i + 1;
    while (j < text.size() && is_name_char(text[j])) ++j;
    Element element;
    element.name = text.substr(i + 1, j - i - 1);
    if (element.name.empty()) return fail("empty tag name");
    bool self_closing = false;
    for (;;) {
      const std::size_t before = j;
      while (j < text.size() && (text[j] == ' ' || text[j] == '\n' || text[j] == '\t')) ++j;
      if (j >= text.size()) return fail("unterminated tag");
      if (text[j] == '>') {
        ++j;
        break;
      }
      if (text.compare(j, 2, "/>") == 0) {
        self_closing = true;
        j += 2;
        break;
      }
      if (j == before) return fail("no space before an attribute");
      const std::size_t name_start = j;
      while (j < text.size() && is_name_char(text[j])) ++j;
      const std::string attribute = text.substr(name_start, j - name_start);
      if (attribute.empty() || j + 1 >= text.size() || text[j] != '=') return fail("bad attribute");
      const char quote = text[j + 1];
      if (quote != '"' && quote != '\'') return fail("unquoted attribute " + attribute);
      const std::size_t value_end = text.find(quote, j + 2);
      if (value_end == std::string::npos) return fail("unterminated attribute " + attribute);
      std::string value;
      if (!unescape(text.substr(j + 2, value_end - j - 2), value))
        return fail("bad attribute value " + attribute);
      if (!element.attributes.emplace(attribute, value).second)
        return fail("repeated attribute " + attribute);
      j = value_end + 1;
    }
    if (open.empty()) {
      if (++roots > 1) return fail("more than one root");
    }
    doc.elements.push_back(std::move(element));
    if (!self_closing) open.push_back(doc.elements.size() - 1);
    i = j;
  }
  if (!open.empty()) {
    i = text.size();
    return fail("unclosed <" + doc.elements[open.back()].name + ">");
  }
  if (roots != 1) return fail("no root");
  return doc;
}

std::string hex(Rgba8 c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", c.r, c.g, c.b);
  return buffer;
}

// The built-in scenario, computed ("i like to eat apple", two heads).
struct Builtin {
  Pipeline pipeline;
  std::vector<std::string> queries, keys;
  Builtin() {
    Result<Scenario> load = parse_scenario(builtin_scenario_json());
    REQUIRE(load.ok());
    REQUIRE(pipeline.run(*load));
    for (const Token& t : pipeline.target().tokens) queries.push_back(t.text);
    for (const Token& t : pipeline.keys().tokens) keys.push_back(t.text);
  }
  const AttentionResult& result() const { return pipeline.result(); }
};

Matrix sample_weights() {
  Matrix m(3, 4);
  m << 0.1f, 0.2f, 0.3f, 0.4f,  //
      1.0f, 0.0f, 0.0f, 0.0f,   //
      0.25f, 0.25f, 0.49f, 0.01f;
  return m;
}

const std::vector<std::string> kQueries = {"a", "b", "c"};
const std::vector<std::string> kKeys = {"w", "x", "y", "z"};

}  // namespace

// -----------------------------------------------------------------------------
// The reader itself
// -----------------------------------------------------------------------------
TEST_CASE("the test XML reader rejects broken documents") {
  CHECK(parse_xml("<svg><g></g></svg>").ok());
  CHECK(parse_xml("<svg a=\"1\" b='2'/>").ok());
  CHECK_FALSE(parse_xml("<svg><g></svg>").ok());
  CHECK_FALSE(parse_xml("<svg a=1/>").ok());
  CHECK_FALSE(parse_xml("<svg a=\"1\" a=\"2\"/>").ok());
  CHECK_FALSE(parse_xml("<svg><text>a & b</text></svg>").ok());
  CHECK_FALSE(parse_xml("<svg><text>a < b</text></svg>").ok());
  CHECK_FALSE(parse_xml("<svg/><svg/>").ok());
  CHECK_FALSE(parse_xml("<svg t=\"<\"/>").ok());
}

// -----------------------------------------------------------------------------
// Heatmap
// -----------------------------------------------------------------------------
TEST_CASE("the heatmap SVG is well-formed XML with an svg root") {
  const std::string svg =
      heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, {});
  const XmlDocument doc = parse_xml(svg);
  REQUIRE_MESSAGE(doc.ok(), doc.error);
  CHECK(doc.elements.front().name == "svg");
  CHECK(doc.elements.front().get("xmlns") == "http://www.w3.org/2000/svg");
}

TEST_CASE("the heatmap has one cell rect per query and key") {
  const XmlDocument doc =
      parse_xml(heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, {}));
  REQUIRE(doc.ok());
  const auto cells = doc.with_class("cell", "rect");
  CHECK(cells.size() == 12);
  std::set<std::pair<std::string, std::string>> pairs;
  for (const Element* cell : cells) pairs.insert({cell->get("data-query"), cell->get("data-key")});
  CHECK(pairs.size() == 12);
  CHECK(pairs.count({"2", "3"}) == 1);
}

TEST_CASE("each cell is filled with the colormap colour of its weight") {
  const Matrix weights = sample_weights();
  for (ColormapId id : {ColormapId::Sequential, ColormapId::ColorBlindSafe}) {
    CAPTURE(to_string(id));
    const XmlDocument doc = parse_xml(heatmap_svg(weights, kQueries, kKeys, id, {}));
    REQUIRE(doc.ok());
    for (const Element* cell : doc.with_class("cell", "rect")) {
      const int i = std::stoi(cell->get("data-query")), j = std::stoi(cell->get("data-key"));
      CAPTURE(i);
      CAPTURE(j);
      CHECK(cell->get("fill") == hex(sample(id, weights(i, j))));
    }
  }
}

TEST_CASE("with a scale up to the largest weight each cell is coloured by its share of it") {
  Matrix weights = sample_weights();
  weights.row(1) << 0.4f, 0.3f, 0.2f, 0.1f;  // no weight of 1: the largest is 0.49
  SvgOptions options;
  options.scale_top = weights.maxCoeff();
  const XmlDocument doc =
      parse_xml(heatmap_svg(weights, kQueries, kKeys, ColormapId::Sequential, options));
  REQUIRE(doc.ok());
  for (const Element* cell : doc.with_class("cell", "rect")) {
    const int i = std::stoi(cell->get("data-query")), j = std::stoi(cell->get("data-key"));
    CAPTURE(i);
    CAPTURE(j);
    CHECK(cell->get("fill") ==
          hex(sample(ColormapId::Sequential, weights(i, j) / options.scale_top)));
  }
}

TEST_CASE("each cell carries its weight to three decimals") {
  const XmlDocument doc =
      parse_xml(heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, {}));
  REQUIRE(doc.ok());
  for (const Element* cell : doc.with_class("cell", "rect"))
    if (cell->get("data-query") == "2" && cell->get("data-key") == "2")
      CHECK(cell->get("data-alpha") == "0.490");
}

TEST_CASE("the weights are printed in big cells and not in small ones") {
  SvgOptions big;
  big.cell_size = 60;
  const XmlDocument with =
      parse_xml(heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, big));
  REQUIRE(with.ok());
  int numbers = 0;
  for (const Element& e : with.elements)
    if (e.name == "text" && e.text == "0.49") ++numbers;
  CHECK(numbers == 1);

  SvgOptions small = big;
  small.cell_size = 12;
  const std::string tiny =
      heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, small);
  CHECK(tiny.find(">0.49<") == std::string::npos);
  SvgOptions off = big;
  off.show_values = false;
  const std::string hidden =
      heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, off);
  CHECK(hidden.find(">0.49<") == std::string::npos);
}

TEST_CASE("the heatmap labels both axes with the tokens") {
  const XmlDocument doc =
      parse_xml(heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, {}));
  REQUIRE(doc.ok());
  const auto rows = doc.with_class("query-label"), columns = doc.with_class("key-label");
  REQUIRE(rows.size() == 3);
  REQUIRE(columns.size() == 4);
  CHECK(rows[1]->text == "b");
  CHECK(columns[3]->text == "z");
}

TEST_CASE("key labels too wide for a cell are rotated") {
  const std::vector<std::string> long_keys = {"extraordinarily", "uncharacteristic", "w", "x"};
  SvgOptions options;
  options.cell_size = 30;
  const XmlDocument doc = parse_xml(
      heatmap_svg(sample_weights(), kQueries, long_keys, ColormapId::Sequential, options));
  REQUIRE(doc.ok());
  const auto columns = doc.with_class("key-label");
  REQUIRE(!columns.empty());
  for (const Element* label : columns) CHECK(label->get("transform").find("rotate(-90") == 0);
  // Short keys in big cells stay horizontal.
  const XmlDocument flat =
      parse_xml(heatmap_svg(sample_weights(), kQueries, kKeys, ColormapId::Sequential, {}));
  for (const Element* label : flat.with_class("key-label")) CHECK_FALSE(label->has("transform"));
}

TEST_CASE("labels and the title are escaped and read back unchanged") {
  const std::string nasty = "<b&\"x\">";
  const std::string apostrophe = "it's";
  SvgOptions options;
  options.title = "A & B <title>";
  const std::string svg = heatmap_svg(sample_weights(), {nasty, apostrophe, "c"},
                                      {"w", nasty, "y", "z"}, ColormapId::Sequential, options);
  CHECK(svg.find(nasty) == std::string::npos);
  CHECK(svg.find("&lt;b&amp;&quot;x&quot;&gt;") != std::string::npos);
  const XmlDocument doc = parse_xml(svg);
  REQUIRE_MESSAGE(doc.ok(), doc.error);
  CHECK(doc.with_class("query-label")[0]->text == nasty);
  CHECK(doc.with_class("query-label")[1]->text == apostrophe);
  CHECK(doc.with_class("key-label")[1]->text == nasty);
  CHECK(doc.with_class("title")[0]->text == options.title);
}

TEST_CASE("UTF-8 labels are kept as they are") {
  const std::string cafe = "caf\xc3\xa9", kanji = "\xe6\x97\xa5\xe6\x9c\xac",
                    emoji = "\xf0\x9f\x8d\x8e";
  const XmlDocument doc = parse_xml(
      heatmap_svg(sample_weights(), {cafe, kanji, emoji}, kKeys, ColormapId::Sequential, {}));
  REQUIRE(doc.ok());
  const auto rows = doc.with_class("query-label");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]->text == cafe);
  CHECK(rows[1]->text == kanji);
  CHECK(rows[2]->text == emoji);
}

TEST_CASE("invalid UTF-8 and control characters become replacement characters") {
  CHECK(xml_escape("a\x01z") == "a\xef\xbf\xbdz");
  CHECK(xml_escape("a\xff") == "a\xef\xbf\xbd");
  CHECK(xml_escape("tab\there") == "tab\there");
  CHECK(xml_escape("'") == "&apos;");
  const std::string svg =
      heatmap_svg(sample_weights(), {"\x02", "\xc3", "ok"}, kKeys, ColormapId::Sequential, {});
  CHECK(parse_xml(svg).ok());
}

TEST_CASE("non-finite weights never print nan") {
  Matrix weights(2, 3);
  const float inf = std::numeric_limits<float>::infinity();
  weights << std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.5f, 0.25f, 0.25f;
  SvgOptions options;
  options.cell_size = 80;
  options.font_size = std::numeric_limits<float>::quiet_NaN();
  const std::string svg =
      heatmap_svg(weights, {"p", "q"}, {"r", "s", "t"}, ColormapId::Sequential, options);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("\"inf") == std::string::npos);
  const XmlDocument doc = parse_xml(svg);
  REQUIRE(doc.ok());
  CHECK(doc.with_class("cell", "rect").size() == 6);
  for (const Element* cell : doc.with_class("cell", "rect"))
    if (cell->get("data-query") == "0" && cell->get("data-key") == "0") {
      CHECK(cell->get("fill") == hex(sample(ColormapId::Sequential, 0.0f)));
      CHECK(cell->get("data-alpha") == "overflow");
    }
}

TEST_CASE("an empty matrix gives a valid document without cells") {
  const XmlDocument doc = parse_xml(heatmap_svg(Matrix(0, 0), {}, {}, ColormapId::Sequential, {}));
  REQUIRE(doc.ok());
  CHECK(doc.with_class("cell").empty());
}

// -----------------------------------------------------------------------------
// Arrows
// -----------------------------------------------------------------------------
TEST_CASE("the arrows SVG is well-formed XML") {
  const Builtin b;
  const XmlDocument doc =
      parse_xml(arrows_svg(b.result(), b.queries, b.keys, kSvgAllHeads, 0.02f, {}));
  REQUIRE_MESSAGE(doc.ok(), doc.error);
  CHECK(doc.elements.front().name == "svg");
}

TEST_CASE("one arrow is drawn per pair at or above the threshold in every head") {
  const Builtin b;
  for (float threshold : {0.0f, 0.02f, 0.1f, 0.3f}) {
    CAPTURE(threshold);
    std::set<std::tuple<int, int, int>> expected;
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
          const float a = b.result().heads[static_cast<std::size_t>(h)].weights(i, j);
          if (a >= threshold && a > 0) expected.insert({h, i, j});
        }
    const XmlDocument doc =
        parse_xml(arrows_svg(b.result(), b.queries, b.keys, kSvgAllHeads, threshold, {}));
    REQUIRE(doc.ok());
    std::set<std::tuple<int, int, int>> drawn;
    for (const Element* arrow : doc.with_class("arrow"))
      drawn.insert({std::stoi(arrow->get("data-head")), std::stoi(arrow->get("data-query")),
                    std::stoi(arrow->get("data-key"))});
    CHECK(doc.with_class("arrow").size() == expected.size());
    CHECK(drawn == expected);
  }
}

TEST_CASE("one head draws only that head's arrows in its colour") {
  const Builtin b;
  const XmlDocument all =
      parse_xml(arrows_svg(b.result(), b.queries, b.keys, kSvgAllHeads, 0.1f, {}));
  const XmlDocument one = parse_xml(arrows_svg(b.result(), b.queries, b.keys, 1, 0.1f, {}));
  REQUIRE(one.ok());
  std::size_t in_head_1 = 0;
  std::string colour;
  for (const Element* arrow : all.with_class("arrow"))
    if (arrow->get("data-head") == "1") ++in_head_1, colour = arrow->get("stroke");
  CHECK(one.with_class("arrow").size() == in_head_1);
  for (const Element* arrow : one.with_class("arrow")) {
    CHECK(arrow->get("data-head") == "1");
    CHECK(arrow->get("stroke") == colour);
  }
  CHECK(one.with_class("legend").size() == 1);
}

// The legend names heads as the app does, from 1 (core/figures/format.hpp: shown_number); the
// data-head attributes keep the engine's index, from 0, as the files do.
TEST_CASE("the arrows' legend counts heads from 1") {
  const Builtin b;
  const XmlDocument one = parse_xml(arrows_svg(b.result(), b.queries, b.keys, 1, 0.1f, {}));
  REQUIRE(one.ok());
  REQUIRE(one.with_class("legend").size() == 1);
  CHECK(one.with_class("legend")[0]->get("data-head") == "1");
  std::vector<std::string> texts;
  for (const Element& e : one.elements)
    if (e.name == "text") texts.push_back(e.text);
  CHECK(std::find(texts.begin(), texts.end(), "head 2") != texts.end());
  CHECK(std::find(texts.begin(), texts.end(), "head 1") == texts.end());
}

TEST_CASE("stronger arrows are wider and more opaque") {
  const Builtin b;
  const XmlDocument doc = parse_xml(arrows_svg(b.result(), b.queries, b.keys, 0, 0.0f, {}));
  REQUIRE(doc.ok());
  const auto arrows = doc.with_class("arrow");
  REQUIRE(arrows.size() > 2);
  for (const Element* p : arrows)
    for (const Element* q : arrows)
      if (std::stof(p->get("data-alpha")) > std::stof(q->get("data-alpha")) + 0.01f) {
        CHECK(std::stof(p->get("stroke-width")) > std::stof(q->get("stroke-width")));
        CHECK(std::stof(p->get("stroke-opacity")) >= std::stof(q->get("stroke-opacity")));
      }
}

TEST_CASE("past the cap only the strongest arrows are drawn") {
  const Builtin b;
  std::vector<float> all;
  for (const HeadResult& head : b.result().heads)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) all.push_back(head.weights(i, j));
  std::sort(all.begin(), all.end(), std::greater<>());
  SvgOptions options;
  options.max_arrows = 6;
  std::size_t total = 0;
  const auto selected = select_arrows(b.result(), kSvgAllHeads, 0.0f, 6, &total);
  CHECK(total == 50);
  REQUIRE(selected.size() == 6);
  for (const SvgArrow& a : selected) CHECK(a.alpha >= all[5]);
  const XmlDocument doc =
      parse_xml(arrows_svg(b.result(), b.queries, b.keys, kSvgAllHeads, 0.0f, options));
  REQUIRE(doc.ok());
  CHECK(doc.with_class("arrow").size() == 6);
  REQUIRE(doc.with_class("note").size() == 1);
  CHECK(doc.with_class("note")[0]->text == "strongest 6 of 50 lines");
}

TEST_CASE("arrows label the queries and the keys") {
  const Builtin b;
  const XmlDocument doc =
      parse_xml(arrows_svg(b.result(), b.queries, b.keys, kSvgAllHeads, 0.02f, {}));
  REQUIRE(doc.ok());
  const auto queries = doc.with_class("query-label"), keys = doc.with_class("key-label");
  REQUIRE(queries.size() == 5);
  REQUIRE(keys.size() == 5);
  CHECK(queries[4]->text == "apple");
  CHECK(keys[3]->text == "eat");
}

TEST_CASE("arrow labels are escaped") {
  const Builtin b;
  const std::string nasty = "<b&\"x\">";
  std::vector<std::string> queries = b.queries;
  queries[2] = nasty;
  const std::string svg = arrows_svg(b.result(), queries, b.keys, kSvgAllHeads, 0.02f, {});
  CHECK(svg.find(nasty) == std::string::npos);
  const XmlDocument doc = parse_xml(svg);
  REQUIRE(doc.ok());
  CHECK(doc.with_class("query-label")[2]->text == nasty);
}

TEST_CASE("weights all below the threshold draw no arrow and say so") {
  const Builtin b;
  const XmlDocument doc =
      parse_xml(arrows_svg(b.result(), b.queries, b.keys, kSvgAllHeads, 0.99f, {}));
  REQUIRE(doc.ok());
  CHECK(doc.with_class("arrow").empty());
  REQUIRE(doc.with_class("note").size() == 1);
  CHECK(doc.with_class("note")[0]->text.find("0.99") != std::string::npos);
}

TEST_CASE("non-finite arrow weights never print nan") {
  AttentionResult result;
  result.n_query = 2;
  result.n_key = 2;
  result.heads.resize(2);
  const float inf = std::numeric_limits<float>::infinity();
  result.heads[0].weights.resize(2, 2);
  result.heads[0].weights << std::numeric_limits<float>::quiet_NaN(), 1.0f, 0.5f, 0.5f;
  result.heads[1].weights.resize(2, 2);
  result.heads[1].weights << inf, 0.0f, -inf, 1.0f;
  const std::string svg = arrows_svg(result, {"p", "q"}, {"r", "s"}, kSvgAllHeads, 0.02f, {});
  CHECK(svg.find("nan") == std::string::npos);
  const XmlDocument doc = parse_xml(svg);
  REQUIRE(doc.ok());
  // NaN is never at or above a threshold; +inf is (and is written "overflow"), -inf is not.
  CHECK(doc.with_class("arrow").size() == 5);
  int overflow = 0;
  for (const Element* arrow : doc.with_class("arrow"))
    overflow += arrow->get("data-alpha") == "overflow";
  CHECK(overflow == 1);
}

}  // namespace attnviz::view
