#include "core/text/embedding.hpp"

#include "core/base/rng.hpp"
#include "core/text/lexicon.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz {

std::string_view to_string(EmbeddingSource source) {
  switch (source) {
    case EmbeddingSource::Override:
      return "override";
    case EmbeddingSource::Lexicon:
      return "lexicon";
    case EmbeddingSource::Hashed:
      return "hashed";
  }
  return "?";
}

EmbeddingSource default_embedding(std::string_view key, int d_model, float* out) {
  const std::uint64_t stream = rng::hash(key);
  const auto hashed = [&](int dimension) {
    return rng::value(stream, static_cast<std::uint64_t>(dimension));
  };
  if (const LexiconEntry* entry = Lexicon::builtin().find(key)) {
    for (int d = 0; d < d_model; ++d)
      out[d] = d < static_cast<int>(kFeatureCount) ? entry->features[static_cast<std::size_t>(d)]
                                                   : 0.1f * hashed(d);
    return EmbeddingSource::Lexicon;
  }
  for (int d = 0; d < d_model; ++d) out[d] = 0.5f * hashed(d);
  return EmbeddingSource::Hashed;
}

void embed_tokens(const std::vector<Token>& tokens, int d_model,
                  const EmbeddingOverrides& overrides, Positional positional, Matrix& X,
                  std::vector<EmbeddingSource>* sources) {
  const auto n_tokens = static_cast<Eigen::Index>(tokens.size());
  X.resize(n_tokens, d_model);
  if (sources) sources->resize(tokens.size());
  for (Eigen::Index row = 0; row < n_tokens; ++row) {
    const Token& token = tokens[static_cast<std::size_t>(row)];
    float* out = X.row(row).data();
    EmbeddingSource source = default_embedding(token.key, d_model, out);
    auto found = overrides.find(token.text);
    if (found == overrides.end()) found = overrides.find(token.key);
    if (found != overrides.end()) {
      const auto count =
          std::min<std::size_t>(found->second.size(), static_cast<std::size_t>(d_model));
      std::copy_n(found->second.begin(), count, out);
      source = EmbeddingSource::Override;
    }
    if (sources) (*sources)[static_cast<std::size_t>(row)] = source;
  }
  if (positional == Positional::Sinusoidal) add_sinusoidal_positions(X);
}

void add_sinusoidal_positions(Matrix& X) {
  const auto d_model = static_cast<double>(X.cols());
  for (Eigen::Index pos = 0; pos < X.rows(); ++pos) {
    for (Eigen::Index i = 0; 2 * i < X.cols(); ++i) {
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * i) / d_model);
      X(pos, 2 * i) += static_cast<float>(std::sin(angle));
      if (2 * i + 1 < X.cols()) X(pos, 2 * i + 1) += static_cast<float>(std::cos(angle));
    }
  }
}

std::string random_features_note(const std::vector<Token>& tokens,
                                 const std::vector<EmbeddingSource>& sources) {
  std::vector<std::string> hashed;  // the words, once each, in order
  std::size_t words = 0, hashed_words = 0;
  for (std::size_t i = 0; i < tokens.size() && i < sources.size(); ++i) {
    if (tokens[i].kind != TokenKind::Word) continue;
    ++words;
    if (sources[i] != EmbeddingSource::Hashed) continue;
    ++hashed_words;
    if (std::find(hashed.begin(), hashed.end(), tokens[i].key) == hashed.end())
      hashed.push_back(tokens[i].key);
  }
  if (hashed.empty()) return "";
  if (hashed_words == words)
    return "None of these words is in the teaching lexicon: they have random features, so "
           "attention to them means nothing yet.";
  constexpr std::size_t kNamed = 4;
  std::string named;
  const std::size_t shown = std::min(hashed.size(), kNamed);
  for (std::size_t i = 0; i < shown; ++i) {
    named += (i == 0 ? "" : i + 1 == shown && hashed.size() <= kNamed ? " and " : ", ");
    named += "\"" + hashed[i] + "\"";
  }
  if (hashed.size() > kNamed) named += " and " + std::to_string(hashed.size() - kNamed) + " more";
  const bool one = hashed.size() == 1;
  return named + (one ? " is" : " are") +
         " not in the teaching lexicon: " + (one ? "it has" : "they have") +
         " random features, so attention to " + (one ? "it" : "them") + " means nothing yet.";
}

}  // namespace attnviz
