#include "core/text/lexicon.hpp"

#include "core/base/float_text.hpp"
#include "core/base/status.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace attnviz {
namespace {

struct LexiconSource {
  std::string_view word;
  std::string_view features;
};

inline constexpr LexiconSource kLexiconSource[] = {
#include "lexicon_words.inc"
};

// Parses "food:1 company:0.8" into a feature vector; an error says which feature is wrong.
Status parse_features(std::string_view spec, FeatureVector& features) {
  features.fill(0.0f);
  std::array<bool, kFeatureCount> seen{};
  std::size_t position = 0;
  while (position < spec.size()) {
    if (spec[position] == ' ') {
      ++position;
      continue;
    }
    const std::size_t end = std::min(spec.find(' ', position), spec.size());
    const std::string_view pair = spec.substr(position, end - position);
    position = end;
    const std::size_t colon = pair.find(':');
    if (colon == std::string_view::npos)
      return Status::error("'" + std::string(pair) + "' has no ':'");
    const std::string_view name = pair.substr(0, colon);
    const std::string_view number = pair.substr(colon + 1);
    const auto found = std::find(kFeatureNames.begin(), kFeatureNames.end(), name);
    if (found == kFeatureNames.end())
      return Status::error("unknown feature '" + std::string(name) + "'");
    const auto index = static_cast<std::size_t>(found - kFeatureNames.begin());
    if (seen[index]) return Status::error("feature '" + std::string(name) + "' given twice");
    seen[index] = true;
    float value = 0.0f;
    const auto [ptr, ec] = parse_number(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || ptr != number.data() + number.size() || value < -1.0f || value > 1.0f)
      return Status::error("feature '" + std::string(name) + "' has a bad value '" +
                           std::string(number) + "'");
    features[index] = value;
  }
  return Status::success();
}

}  // namespace

Lexicon::Lexicon() {
  entries_.reserve(std::size(kLexiconSource));
  for (const LexiconSource& source : kLexiconSource) {
    LexiconEntry entry{source.word, {}};
    if (Status status = parse_features(source.features, entry.features); !status) {
      errors_.push_back(std::string(source.word) + ": " + status.message());
      continue;
    }
    entries_.push_back(entry);
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const LexiconEntry& a, const LexiconEntry& b) { return a.word < b.word; });
  for (std::size_t i = 1; i < entries_.size(); ++i)
    if (entries_[i].word == entries_[i - 1].word)
      errors_.push_back(std::string(entries_[i].word) + ": listed twice");
}

const Lexicon& Lexicon::builtin() {
  static const Lexicon lexicon;  // immutable data, built on first use (thread-safe)
  return lexicon;
}

const LexiconEntry* Lexicon::find(std::string_view key) const {
  const auto it = std::lower_bound(
      entries_.begin(), entries_.end(), key,
      [](const LexiconEntry& entry, std::string_view word) { return entry.word < word; });
  return it != entries_.end() && it->word == key ? &*it : nullptr;
}

}  // namespace attnviz
