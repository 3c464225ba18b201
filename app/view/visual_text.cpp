// Hebrew and Arabic as they are read (app/view/visual_text.hpp). Index:
//   [SECTION] Characters: direction, marks, digits
//   [SECTION] Arabic shaping
//   [SECTION] Reordering
//   [SECTION] Cache
#include "app/view/visual_text.hpp"

#include "core/text/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace attnviz::view {

namespace {

// -----------------------------------------------------------------------------
// [SECTION] Characters: direction, marks, digits
// -----------------------------------------------------------------------------

bool in(char32_t c, char32_t first, char32_t last) {
  return c >= first && c <= last;
}

bool is_hebrew(char32_t c) {
  return in(c, 0x0590, 0x05FF) || in(c, 0xFB1D, 0xFB4F);
}

bool is_arabic(char32_t c) {
  return in(c, 0x0600, 0x06FF) || in(c, 0x0750, 0x077F) || in(c, 0x08A0, 0x08FF) ||
         in(c, 0xFB50, 0xFDFF) || in(c, 0xFE70, 0xFEFF);
}

// Combining marks and joiners: drawn on (or between) the letter before them, never apart.
bool is_mark(char32_t c) {
  return in(c, 0x0300, 0x036F) || in(c, 0x0591, 0x05BD) || c == 0x05BF || in(c, 0x05C1, 0x05C2) ||
         in(c, 0x05C4, 0x05C5) || c == 0x05C7 || in(c, 0x0610, 0x061A) || in(c, 0x064B, 0x065F) ||
         c == 0x0670 || in(c, 0x06D6, 0x06DC) || in(c, 0x06DF, 0x06E4) || in(c, 0x06E7, 0x06E8) ||
         in(c, 0x06EA, 0x06ED) || in(c, 0x08D3, 0x08FF) || in(c, 0x200C, 0x200D) ||
         in(c, 0x20D0, 0x20FF) || in(c, 0xFE00, 0xFE0F) || in(c, 0xFE20, 0xFE2F);
}

bool is_arabic_indic_digit(char32_t c) {
  return in(c, 0x0660, 0x0669);
}
bool is_digit(char32_t c) {
  return in(c, U'0', U'9') || is_arabic_indic_digit(c) || in(c, 0x06F0, 0x06F9);
}
// Separators that stay inside a number when digits stand on both sides (3.14, 1,000, 12:30).
bool is_number_separator(char32_t c) {
  return c == U'.' || c == U',' || c == U':' || c == U'/' || c == 0x066B || c == 0x066C;
}

enum class Direction : std::uint8_t { Left, Right, Number, Neutral };

Direction direction_of(char32_t c) {
  if (is_digit(c)) return Direction::Number;
  if (is_hebrew(c) || is_arabic(c)) return Direction::Right;
  if (c < 0x80)
    return (in(c, U'a', U'z') || in(c, U'A', U'Z')) ? Direction::Left : Direction::Neutral;
  if (in(c, 0x80, 0xBF) || c == 0xD7 || c == 0xF7) return Direction::Neutral;  // Latin-1 signs, × ÷
  if (in(c, 0x2000, 0x2BFF) || in(c, 0x3000, 0x303F) || in(c, 0xFE10, 0xFE1F) || c == 0xFFFD)
    return Direction::Neutral;
  if (in(c, 0x1F000, 0x1FAFF)) return Direction::Neutral;  // emoji and other symbols
  return Direction::Left;                                  // letters of every other script
}

char32_t mirrored(char32_t c) {
  switch (c) {
    case U'(':
      return U')';
    case U')':
      return U'(';
    case U'[':
      return U']';
    case U']':
      return U'[';
    case U'{':
      return U'}';
    case U'}':
      return U'{';
    case U'<':
      return U'>';
    case U'>':
      return U'<';
    case 0x00AB:
      return 0x00BB;  // « »
    case 0x00BB:
      return 0x00AB;
    case 0x2039:
      return 0x203A;  // ‹ ›
    case 0x203A:
      return 0x2039;
    default:
      return c;
  }
}

// -----------------------------------------------------------------------------
// [SECTION] Arabic shaping
// -----------------------------------------------------------------------------
// Joining types (Unicode's ArabicShaping.txt): a dual-joining letter (D) joins the letters on
// both sides, a right-joining one (R) only the one before it, the tatweel and the zero-width
// joiner (C) cause joining on both sides, marks (T) are passed over, anything else (U) joins
// nothing. The presentation forms come in the order isolated, final, initial, medial.

enum class Joining : std::uint8_t { None, Right, Dual, Causing, Transparent };

struct ArabicLetter {
  char32_t first_form;  // the isolated form; the others follow
  std::uint8_t forms;   // 1 (hamza), 2 (right-joining), 4 (dual-joining)
};

// U+0621 to U+064A, in order (zeros: no presentation forms).
constexpr std::array<ArabicLetter, 0x064A - 0x0621 + 1> kBasicLetters = {{
    {0xFE80, 1}, {0xFE81, 2}, {0xFE83, 2}, {0xFE85, 2}, {0xFE87, 2}, {0xFE89, 4},
    {0xFE8D, 2},  // ء آ أ ؤ إ ئ ا
    {0xFE8F, 4}, {0xFE93, 2}, {0xFE95, 4}, {0xFE99, 4}, {0xFE9D, 4}, {0xFEA1, 4},
    {0xFEA5, 4},  // ب ة ت ث ج ح خ
    {0xFEA9, 2}, {0xFEAB, 2}, {0xFEAD, 2}, {0xFEAF, 2}, {0xFEB1, 4}, {0xFEB5, 4},
    {0xFEB9, 4},                                                      // د ذ ر ز س ش ص
    {0xFEBD, 4}, {0xFEC1, 4}, {0xFEC5, 4}, {0xFEC9, 4}, {0xFECD, 4},  // ض ط ظ ع غ
    {0, 0},      {0, 0},      {0, 0},      {0, 0},      {0, 0},      {0, 0},  // U+063B-0640
    {0xFED1, 4}, {0xFED5, 4}, {0xFED9, 4}, {0xFEDD, 4}, {0xFEE1, 4}, {0xFEE5, 4},
    {0xFEE9, 4},                            // ف ق ك ل م ن ه
    {0xFEED, 2}, {0xFEEF, 2}, {0xFEF1, 4},  // و ى ي
}};

// Persian and Urdu letters whose forms DejaVu Sans has (Arabic Presentation Forms-A).
struct ExtendedLetter {
  char32_t letter;
  ArabicLetter shape;
};
constexpr std::array<ExtendedLetter, 10> kExtendedLetters = {{
    {0x0679, {0xFB66, 4}},  // ٹ
    {0x067E, {0xFB56, 4}},  // پ
    {0x0686, {0xFB7A, 4}},  // چ
    {0x0688, {0xFB88, 2}},  // ڈ
    {0x0691, {0xFB8C, 2}},  // ڑ
    {0x0698, {0xFB8A, 2}},  // ژ
    {0x06A9, {0xFB8E, 4}},  // ک
    {0x06AF, {0xFB92, 4}},  // گ
    {0x06BA, {0xFB9E, 2}},  // ں
    {0x06CC, {0xFBFC, 4}},  // ی
}};

ArabicLetter arabic_letter(char32_t c) {
  if (in(c, 0x0621, 0x064A)) return kBasicLetters[c - 0x0621];
  for (const ExtendedLetter& extended : kExtendedLetters)
    if (extended.letter == c) return extended.shape;
  return {0, 0};
}

Joining joining_of(char32_t c) {
  if (c == 0x0640 || c == 0x200D) return Joining::Causing;  // tatweel, zero-width joiner
  if (c != 0x200C && is_mark(c)) return Joining::Transparent;
  switch (arabic_letter(c).forms) {
    case 4:
      return Joining::Dual;
    case 2:
      return Joining::Right;
    default:
      return Joining::None;
  }
}

// Lam followed by one of these alefs is one glyph: the ligature's isolated form.
char32_t lam_alef_ligature(char32_t alef) {
  switch (alef) {
    case 0x0622:
      return 0xFEF5;
    case 0x0623:
      return 0xFEF7;
    case 0x0625:
      return 0xFEF9;
    case 0x0627:
      return 0xFEFB;
    default:
      return 0;
  }
}

// Arabic letters in logical order -> their presentation forms (still in logical order).
void shape_arabic(std::vector<char32_t>& text) {
  const std::size_t n = text.size();
  std::vector<Joining> joining(n);
  for (std::size_t i = 0; i < n; ++i) joining[i] = joining_of(text[i]);
  const auto neighbour = [&](std::size_t i, int step) -> Joining {  // the nearest non-mark
    for (std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) + step;
         j >= 0 && j < static_cast<std::ptrdiff_t>(n); j += step)
      if (joining[static_cast<std::size_t>(j)] != Joining::Transparent)
        return joining[static_cast<std::size_t>(j)];
    return Joining::None;
  };
  std::vector<char32_t> shaped;
  shaped.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const char32_t c = text[i];
    const ArabicLetter letter = arabic_letter(c);
    if (letter.forms == 0) {
      shaped.push_back(c);
      continue;
    }
    const Joining before = neighbour(i, -1);
    const bool joins_before =
        letter.forms > 1 && (before == Joining::Dual || before == Joining::Causing);
    if (c == 0x0644 && i + 1 < n && lam_alef_ligature(text[i + 1]) != 0) {
      shaped.push_back(lam_alef_ligature(text[i + 1]) +
                       (joins_before ? 1 : 0));  // isolated or final
      ++i;                                       // the alef is in the ligature
      continue;
    }
    const Joining after = neighbour(i, +1);
    const bool joins_after =
        letter.forms == 4 &&
        (after == Joining::Dual || after == Joining::Right || after == Joining::Causing);
    const char32_t form = joins_before ? (joins_after ? 3 : 1) : (joins_after ? 2 : 0);
    shaped.push_back(letter.first_form + form);
  }
  text.swap(shaped);
}

// -----------------------------------------------------------------------------
// [SECTION] Reordering
// -----------------------------------------------------------------------------

// A letter with the marks after it: [begin, end) of the code points, moved as one.
struct Cluster {
  std::size_t begin = 0, end = 0;
  Direction direction = Direction::Neutral;
  int level = 0;
};

std::vector<Cluster> clusters_of(const std::vector<char32_t>& text) {
  std::vector<Cluster> clusters;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_mark(text[i]) && !clusters.empty()) {
      clusters.back().end = i + 1;
      continue;
    }
    clusters.push_back({i, i + 1, direction_of(text[i]), 0});
  }
  // A separator between two digits is part of the number.
  for (std::size_t k = 1; k + 1 < clusters.size(); ++k)
    if (clusters[k].direction == Direction::Neutral && clusters[k].end - clusters[k].begin == 1 &&
        is_number_separator(text[clusters[k].begin]) &&
        clusters[k - 1].direction == Direction::Number &&
        clusters[k + 1].direction == Direction::Number)
      clusters[k].direction = Direction::Number;
  return clusters;
}

// Gives each cluster its embedding level (0 or 2: left to right; 1: right to left).
void resolve_levels(const std::vector<char32_t>& text, std::vector<Cluster>& clusters) {
  int line_level = 0;  // P2, P3: the first strong letter's direction
  for (const Cluster& cluster : clusters)
    if (cluster.direction == Direction::Left || cluster.direction == Direction::Right) {
      line_level = cluster.direction == Direction::Right ? 1 : 0;
      break;
    }
  // What each cluster counts as for the spaces and punctuation beside it: a number counts as
  // right to left (W2, N1) unless it follows a left-to-right letter and is in European digits (W7).
  std::vector<Direction> strong(clusters.size(), Direction::Neutral);
  Direction last_letter = line_level == 1 ? Direction::Right : Direction::Left;
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    const Direction d = clusters[k].direction;
    if (d == Direction::Left || d == Direction::Right) {
      last_letter = d;
      strong[k] = d;
    } else if (d == Direction::Number) {
      const bool european = !is_arabic_indic_digit(text[clusters[k].begin]);
      strong[k] = (last_letter == Direction::Left && european) ? Direction::Left : Direction::Right;
    }
  }
  const Direction line_direction = line_level == 1 ? Direction::Right : Direction::Left;
  for (std::size_t k = 0; k < clusters.size();) {  // N1, N2: runs of neutrals
    if (strong[k] != Direction::Neutral) {
      ++k;
      continue;
    }
    std::size_t end = k;
    while (end < clusters.size() && strong[end] == Direction::Neutral) ++end;
    const Direction before = k == 0 ? line_direction : strong[k - 1];
    const Direction after = end == clusters.size() ? line_direction : strong[end];
    const Direction resolved = before == after ? before : line_direction;
    for (std::size_t j = k; j < end; ++j) strong[j] = resolved;
    k = end;
  }
  for (std::size_t k = 0; k < clusters.size(); ++k) {  // I1, I2
    const bool number = clusters[k].direction == Direction::Number;
    if (line_level == 0)
      clusters[k].level = strong[k] == Direction::Left ? 0 : (number ? 2 : 1);
    else
      clusters[k].level = (strong[k] == Direction::Left || number) ? 2 : 1;
  }
}

// L2: from the highest level down to 1, reverses every run of clusters at that level or higher.
void reorder(std::vector<Cluster>& clusters) {
  int highest = 0;
  for (const Cluster& cluster : clusters) highest = std::max(highest, cluster.level);
  for (int level = highest; level >= 1; --level)
    for (std::size_t k = 0; k < clusters.size();) {
      if (clusters[k].level < level) {
        ++k;
        continue;
      }
      std::size_t end = k;
      while (end < clusters.size() && clusters[end].level >= level) ++end;
      std::reverse(clusters.begin() + static_cast<std::ptrdiff_t>(k),
                   clusters.begin() + static_cast<std::ptrdiff_t>(end));
      k = end;
    }
}

}  // namespace

bool may_need_visual_order(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0xD6 && byte <= 0xDF) return true;  // U+0580 to U+07FF: Hebrew, Arabic, Syriac, ...
    if (i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (byte == 0xE0 && (next == 0xA2 || next == 0xA3))
        return true;  // U+0880 to U+08FF: Arabic Extended-A
      if (byte == 0xEF && next >= 0xAC && next <= 0xBB)
        return true;  // U+FB00 to U+FEFF: presentation forms
    }
  }
  return false;
}

std::string visual_order(std::string_view logical) {
  if (!may_need_visual_order(logical)) return std::string(logical);
  std::vector<char32_t> text;
  text.reserve(logical.size());
  for (std::size_t offset = 0; offset < logical.size();) {
    std::size_t length = 0;
    text.push_back(decode_utf8(logical, offset, length));
    offset += length;
  }
  if (std::none_of(text.begin(), text.end(),
                   [](char32_t c) { return is_hebrew(c) || is_arabic(c); }))
    return std::string(logical);
  shape_arabic(text);
  std::vector<Cluster> clusters = clusters_of(text);
  resolve_levels(text, clusters);
  reorder(clusters);
  std::string visual;
  visual.reserve(logical.size() + 8);
  for (const Cluster& cluster : clusters) {
    if (cluster.level % 2 == 0) {
      for (std::size_t i = cluster.begin; i < cluster.end; ++i) append_utf8(visual, text[i]);
      continue;
    }
    // Right to left: the marks first, then their letter. A font draws a Hebrew or Arabic mark
    // (zero advance) to the right of where it stands, over the glyph drawn next: its letter, in
    // an order drawn left to right (a Latin mark, drawn after its letter, reaches back over it).
    for (std::size_t i = cluster.begin + 1; i < cluster.end; ++i) append_utf8(visual, text[i]);
    append_utf8(visual, mirrored(text[cluster.begin]));
  }
  return visual;
}

// -----------------------------------------------------------------------------
// [SECTION] Cache
// -----------------------------------------------------------------------------

std::string without_id_marks(std::string label) {
  for (std::size_t at = label.find("##"); at != std::string::npos; at = label.find("##", at + 4))
    label.insert(at + 1, kZeroWidthSpace);
  return label;
}

const char* VisualText::operator()(const std::string& logical) const {
  const bool id_mark = logical.find("##") != std::string::npos;  // BERT's "##ing"
  if (!id_mark && !may_need_visual_order(logical) && !TextEscapes::may_need_stand_ins(logical))
    return logical.c_str();
  auto found = shown_.find(logical);
  if (found == shown_.end())
    found = shown_.emplace(logical, without_id_marks(escapes_.escape(visual_order(logical)))).first;
  return found->second.c_str();
}

void VisualText::new_frame() {
  if (shown_.size() > kMaxKept) shown_.clear();
}

}  // namespace attnviz::view
