// The built-in teaching lexicon: a few hundred common English words whose embedding vectors
// have readable feature dimensions (person, food, company, place, action, ...), so that lessons
// give meaningful attention. The words live in lexicon_words.inc.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

// Feature dimensions in order of importance: a d_model smaller than kFeatureCount keeps the
// first d_model of them.
inline constexpr std::size_t kFeatureCount = 12;
inline constexpr std::array<std::string_view, kFeatureCount> kFeatureNames = {
    "person",   "food",   "company", "place",    "action", "quality",
    "function", "animal", "time",    "positive", "plural", "thing"};

using FeatureVector = std::array<float, kFeatureCount>;

struct LexiconEntry {
  std::string_view word;
  FeatureVector features{};
};

class Lexicon {
 public:
  // The lexicon built into the binary (parsed once, immutable).
  static const Lexicon& builtin();

  // Looks a lower-cased key up; nullptr when the word is not in the lexicon.
  const LexiconEntry* find(std::string_view key) const;
  const std::vector<LexiconEntry>& entries() const { return entries_; }
  // Problems found while parsing the table (a test asserts there are none).
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  Lexicon();
  std::vector<LexiconEntry> entries_;  // sorted by word
  std::vector<std::string> errors_;
};

}  // namespace attnviz
