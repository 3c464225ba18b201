#include "app/view/user_guide.hpp"

#include <cctype>

namespace attnviz::view {
namespace {

std::string_view trimmed(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
    line.remove_suffix(1);
  return line;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A table's separator row: "|---|:---:|".
bool is_table_rule(std::string_view line) {
  if (line.empty() || line.front() != '|') return false;
  for (const char c : line)
    if (c != '|' && c != '-' && c != ':' && c != ' ') return false;
  return true;
}

// "| **Input** | the title ... |" -> "Input: the title ..."; cells after the second joined by " ·
// ".
std::string table_row(std::string_view line) {
  std::vector<std::string> cells;
  line = trimmed(line);
  if (!line.empty() && line.front() == '|') line.remove_prefix(1);
  if (!line.empty() && line.back() == '|') line.remove_suffix(1);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    // A "\|" inside a cell is a bar of its text.
    if (i < line.size() && !(line[i] == '|' && (i == 0 || line[i - 1] != '\\'))) continue;
    cells.push_back(plain_inline(trimmed(line.substr(start, i - start))));
    start = i + 1;
  }
  std::string text;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].empty()) continue;
    if (!text.empty()) text += i == 1 ? ": " : " \xc2\xb7 ";
    text += cells[i];
  }
  return text;
}

}  // namespace

std::string plain_inline(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    // ![alt](target): a picture, which the window does not show.
    if (c == '!' && i + 1 < text.size() && text[i + 1] == '[') {
      const std::size_t close = text.find("](", i);
      const std::size_t end = close == std::string_view::npos ? close : text.find(')', close);
      if (end != std::string_view::npos) {
        i = end + 1;
        continue;
      }
    }
    // [text](target): the text.
    if (c == '[') {
      const std::size_t close = text.find("](", i);
      const std::size_t end = close == std::string_view::npos ? close : text.find(')', close);
      if (end != std::string_view::npos && text.find('\n', i) > end) {
        out += plain_inline(text.substr(i + 1, close - i - 1));
        i = end + 1;
        continue;
      }
    }
    if (c == '\\' && i + 1 < text.size() && std::ispunct(static_cast<unsigned char>(text[i + 1]))) {
      out += text[i + 1];
      i += 2;
      continue;
    }
    if (c == '`') {  // code: its text as it is
      const std::size_t end = text.find('`', i + 1);
      if (end != std::string_view::npos) {
        out.append(text.substr(i + 1, end - i - 1));
        i = end + 1;
        continue;
      }
    }
    if (c == '*' && i + 1 < text.size() && text[i + 1] == '*') {  // bold
      i += 2;
      continue;
    }
    // *italics* (a star that opens or closes a word; "2 * 3" keeps its star).
    if (c == '*' && ((i + 1 < text.size() && text[i + 1] != ' ' &&
                      (i == 0 || text[i - 1] == ' ' || text[i - 1] == '(')) ||
                     (i > 0 && text[i - 1] != ' '))) {
      ++i;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::vector<GuideSection> parse_guide(std::string_view markdown) {
  std::vector<GuideSection> sections;
  sections.emplace_back();
  sections.back().level = 0;
  std::string paragraph;
  GuideBlock::Kind paragraph_kind = GuideBlock::Kind::Paragraph;
  int paragraph_indent = 0;
  bool in_code = false;
  std::string code;
  const auto flush = [&] {
    if (!paragraph.empty())
      sections.back().blocks.push_back({paragraph_kind, plain_inline(paragraph), paragraph_indent});
    paragraph.clear();
    paragraph_kind = GuideBlock::Kind::Paragraph;
    paragraph_indent = 0;
  };
  std::size_t position = 0;
  while (position <= markdown.size()) {
    std::size_t end = markdown.find('\n', position);
    if (end == std::string_view::npos) end = markdown.size();
    const std::string_view raw = markdown.substr(position, end - position);
    position = end + 1;
    const std::string_view line = trimmed(raw);
    if (starts_with(line, "```")) {
      if (in_code) {
        if (!code.empty() && code.back() == '\n') code.pop_back();
        sections.back().blocks.push_back({GuideBlock::Kind::Code, code, 0});
        code.clear();
      } else {
        flush();
      }
      in_code = !in_code;
      continue;
    }
    if (in_code) {
      code.append(raw);
      code += '\n';
      continue;
    }
    if (line.empty()) {
      flush();
      continue;
    }
    if (line.front() == '#') {
      flush();
      std::size_t level = 0;
      while (level < line.size() && line[level] == '#') ++level;
      GuideSection section;
      section.level = static_cast<int>(level);
      section.title = plain_inline(trimmed(line.substr(level)));
      sections.push_back(std::move(section));
      continue;
    }
    if (line.front() == '|') {
      flush();
      if (!is_table_rule(line))
        sections.back().blocks.push_back({GuideBlock::Kind::Row, table_row(line), 0});
      continue;
    }
    const bool bullet = starts_with(line, "- ") || starts_with(line, "* ");
    std::size_t digits = 0;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    const bool numbered = digits > 0 && line.substr(digits, 2) == ". ";
    if (bullet || numbered) {
      flush();
      paragraph_kind = GuideBlock::Kind::Bullet;
      paragraph_indent = static_cast<int>(raw.find_first_not_of(" \t") / 2);
      paragraph = bullet ? std::string(line.substr(2)) : std::string(line);
      continue;
    }
    if (!paragraph.empty()) paragraph += ' ';
    paragraph.append(line);
  }
  flush();
  if (sections.front().blocks.empty()) sections.erase(sections.begin());
  return sections;
}

}  // namespace attnviz::view
