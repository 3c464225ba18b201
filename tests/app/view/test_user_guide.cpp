// The user guide as the Help window shows it: Markdown read as far as the guide uses it, and the
// guide itself, compiled in, read whole with no Markdown left in its text.
#include "app/view/user_guide.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz::view {

TEST_CASE(
    "inline Markdown becomes its text: links, bold, italics, code, escapes, and pictures go") {
  CHECK(plain_inline("see [formats.md](formats.md#model-files) for **the** files") ==
        "see formats.md for the files");
  CHECK(plain_inline("*Models ▸ Open a model…* takes `--lesson 12`") ==
        "Models ▸ Open a model… takes --lesson 12");
  CHECK(plain_inline("2 * 3 and a\\|b") == "2 * 3 and a|b");
  CHECK(plain_inline("![the app](pictures/app.png)A picture") == "A picture");
}

TEST_CASE("the guide's sections: headings, paragraphs, bullets, table rows and code") {
  const std::string markdown =
      "# Title\n"
      "Intro line one\nline two.\n\n"
      "## Panels\n"
      "| Panel | What it shows |\n"
      "|---|---|\n"
      "| **Input** | the sentence |\n"
      "\n"
      "- a bullet\n  that goes on\n"
      "  - a nested one\n"
      "1. a numbered one\n"
      "```\n"
      "make run\n"
      "  make test\n"
      "```\n"
      "### Presenter mode\n"
      "Text.\n";
  const std::vector<GuideSection> sections = parse_guide(markdown);
  REQUIRE(sections.size() == 3);
  CHECK(sections[0].title == "Title");
  CHECK(sections[0].level == 1);
  REQUIRE(sections[0].blocks.size() == 1);
  CHECK(sections[0].blocks[0].text == "Intro line one line two.");
  const GuideSection& panels = sections[1];
  CHECK(panels.title == "Panels");
  REQUIRE(panels.blocks.size() == 6);
  CHECK(panels.blocks[0].kind == GuideBlock::Kind::Row);
  CHECK(panels.blocks[0].text == "Panel: What it shows");
  CHECK(panels.blocks[1].text == "Input: the sentence");  // the rule row left out
  CHECK(panels.blocks[2].kind == GuideBlock::Kind::Bullet);
  CHECK(panels.blocks[2].text == "a bullet that goes on");
  CHECK(panels.blocks[3].indent == 1);
  CHECK(panels.blocks[4].text == "1. a numbered one");
  CHECK(panels.blocks[5].kind == GuideBlock::Kind::Code);
  CHECK(panels.blocks[5].text == "make run\n  make test");
  CHECK(sections[2].level == 3);
}

TEST_CASE("the compiled-in user guide reads whole, with no Markdown left in its text") {
  const std::vector<GuideSection> sections = parse_guide(user_guide_markdown());
  REQUIRE(sections.size() >= 8);
  bool models = false, lessons = false;
  std::size_t blocks = 0;
  for (const GuideSection& section : sections) {
    models |= section.title == "Real trained models";
    lessons |= section.title == "Lessons";
    blocks += section.blocks.size();
    for (const GuideBlock& block : section.blocks) {
      if (block.kind == GuideBlock::Kind::Code) continue;
      INFO(section.title << ": " << block.text);
      CHECK(block.text.find("](") == std::string::npos);
      CHECK(block.text.find("**") == std::string::npos);
      CHECK(block.text.find('`') == std::string::npos);
    }
  }
  CHECK(models);
  CHECK(lessons);
  CHECK(blocks > 50);
}

}  // namespace attnviz::view
