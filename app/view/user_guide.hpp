// The user guide (docs/user-guide.md, compiled in) as the Help window shows it: its sections, each
// a list of blocks of plain text. Markdown is read only as far as the guide uses it: headings,
// paragraphs, bullets, tables (one block per row), fenced code, and inline links, bold, italics
// and code, which become their text. No ImGui here: the Help window draws what this returns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnviz::view {

struct GuideBlock {
  enum class Kind { Paragraph, Bullet, Row, Code };
  Kind kind = Kind::Paragraph;
  std::string text;  // a row's cells joined: "Input: the scenario's title ..."
  int indent = 0;    // a bullet's nesting, from 0
};

struct GuideSection {
  std::string title;  // "Real trained models"
  int level = 2;      // 1 for the guide's title, 2 for "##", 3 for "###"
  std::vector<GuideBlock> blocks;
};

// Markdown's inline marks taken out: "[formats.md](formats.md#x)" reads "formats.md", "**Input**"
// "Input", "`--lesson`" "--lesson"; "![picture](x.png)" is dropped.
std::string plain_inline(std::string_view text);

// The sections of `markdown`, in order; text before the first heading is a section without title.
std::vector<GuideSection> parse_guide(std::string_view markdown);

// docs/user-guide.md as it was when the app was built.
std::string_view user_guide_markdown();

}  // namespace attnviz::view
