#include "core/models/head_roles.hpp"

#include "core/base/rng.hpp"
#include "core/models/transformer_forward.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz {

std::string_view to_string(HeadRole role) {
  switch (role) {
    case HeadRole::Induction:
      return "induction";
    case HeadRole::PreviousToken:
      return "previous-token";
    case HeadRole::NextToken:
      return "next-token";
    case HeadRole::FirstToken:
      return "first-token";
    case HeadRole::SpecialToken:
      return "special-token";
    case HeadRole::Self:
      return "self";
    case HeadRole::Broad:
      return "broad";
    case HeadRole::Positional:
      return "positional";
    case HeadRole::Alignment:
      return "alignment";
    case HeadRole::Mixed:
      break;
  }
  return "mixed";
}

float role_threshold(HeadRole role) {
  switch (role) {
    case HeadRole::Induction:
      return 0.3f;
    case HeadRole::PreviousToken:
      return 0.4f;
    case HeadRole::NextToken:
      return 0.4f;
    case HeadRole::FirstToken:
      return 0.5f;
    case HeadRole::SpecialToken:
      return 0.5f;
    case HeadRole::Self:
      return 0.5f;
    case HeadRole::Broad:
      return 0.8f;
    case HeadRole::Positional:
      return 0.9f;
    case HeadRole::Alignment:
      return 0.5f;
    case HeadRole::Mixed:
      break;
  }
  return 1.0f;
}

namespace {

std::vector<int> random_tokens(const HeadRoleProbe& probe, int vocab, std::uint64_t stream,
                               int count) {
  const auto range = static_cast<std::uint64_t>(std::max(vocab - probe.first_random_token, 1));
  std::vector<int> tokens;
  tokens.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    tokens.push_back(
        probe.first_random_token +
        static_cast<int>(
            rng::combine(rng::combine(probe.seed, stream), static_cast<std::uint64_t>(i)) % range));
  return tokens;
}

}  // namespace

namespace {

// The scores a text measures (previous, next, first, special, self, broad), from `row(i)`: the
// weights query i gives the keys it sees. One code for the probe and for the text on screen.
struct TextScores {
  float previous = 0, next = 0, first = 0, special = 0, self = 0, broad = 0;
};
template <typename RowOf>
TextScores text_scores(int n, const RowOf& row_of, const std::vector<bool>& special_tokens) {
  double previous = 0.0, next = 0.0, first = 0.0, special = 0.0, self = 0.0, entropy = 0.0;
  for (int i = 1; i < n; ++i) {
    const std::span<const float> row = row_of(i);  // the keys i sees
    previous += row[static_cast<std::size_t>(i - 1)];
    if (i + 1 < static_cast<int>(row.size())) next += row[static_cast<std::size_t>(i + 1)];
    first += row[0];
    self += row[static_cast<std::size_t>(i)];
    for (std::size_t t = 0; t < row.size() && t < special_tokens.size(); ++t)
      if (special_tokens[t]) special += row[t];
    double row_entropy = 0.0;
    for (const float a : row)
      if (a > 0.0f) row_entropy -= a * std::log(double{a});
    entropy += row_entropy / std::log(static_cast<double>(row.size()));
  }
  const auto mean = [n](double sum) { return static_cast<float>(sum / (n - 1)); };
  TextScores scores;
  scores.previous = mean(previous);
  // Next: over queries 1 .. n − 2 (in an encoder; a decoder's rows have no key after i).
  scores.next = n > 2 ? static_cast<float>(next / (n - 2)) : 0.0f;
  scores.first = mean(first);
  scores.special = mean(special);
  scores.self = mean(self);
  scores.broad = mean(entropy);
  return scores;
}

}  // namespace

std::optional<float> role_score_on_text(HeadRole role, MatrixView weights,
                                        std::span<const int> tokens,
                                        const std::vector<bool>& special, bool causal) {
  const int n = static_cast<int>(tokens.size());
  if (n < 2 || weights.empty() || weights.rows != n || weights.cols != n) return std::nullopt;
  if (!special.empty() && special.size() != tokens.size()) return std::nullopt;
  std::vector<float> row_buffer(static_cast<std::size_t>(n));
  // Row i as the keys it sees: a decoder's 0 .. i, an encoder's all.
  const auto row_of = [&](int i) {
    const int seen = causal ? i + 1 : n;
    for (int j = 0; j < seen; ++j) row_buffer[static_cast<std::size_t>(j)] = weights.at(i, j);
    return std::span<const float>(row_buffer.data(), static_cast<std::size_t>(seen));
  };
  switch (role) {
    case HeadRole::Induction: {
      double copied = 0.0;
      int counted = 0;
      for (int i = 1; i < n; ++i)
        for (int j = i - 1; j >= 0; --j)
          if (tokens[static_cast<std::size_t>(j)] == tokens[static_cast<std::size_t>(i)]) {
            copied += weights.at(i, j + 1);  // the token after its last earlier occurrence
            ++counted;
            break;
          }
      if (counted == 0) return std::nullopt;
      return static_cast<float>(copied / counted);
    }
    case HeadRole::Positional:
    case HeadRole::Alignment:
    case HeadRole::Mixed:
      return std::nullopt;
    default:
      break;
  }
  const TextScores scores = text_scores(n, row_of, special);
  switch (role) {
    case HeadRole::PreviousToken:
      return scores.previous;
    case HeadRole::NextToken:
      return scores.next;
    case HeadRole::FirstToken:
      return scores.first;
    case HeadRole::SpecialToken:
      return scores.special;
    case HeadRole::Self:
      return scores.self;
    case HeadRole::Broad:
      return scores.broad;
    default:
      return std::nullopt;
  }
}

Result<std::vector<HeadScores>> detect_head_roles(const Transformer& model,
                                                  const HeadRoleProbe& probe) {
  const TransformerConfig& c = model.config();
  const int m = probe.random_length;
  if (probe.text.size() < 2)
    return Status::error("the head detectors need a text of 2 tokens or more");
  if (m < 2 || 2 * m > c.context)
    return Status::error("the random texts (2 × " + std::to_string(m) +
                         " tokens) must fit the model's context of " + std::to_string(c.context));
  if (probe.first_random_token < 0 || probe.first_random_token >= c.vocab_size)
    return Status::error("the random tokens start past the vocabulary");

  if (!probe.special.empty() && probe.special.size() != probe.text.size())
    return Status::error("the probe's special tokens are not one per token of its text");
  TransformerForward text(model);
  if (Status ran = text.run(probe.text, probe.text_types); !ran) return ran;
  std::vector<int> repeated = random_tokens(probe, c.vocab_size, 1, m);
  repeated.insert(repeated.end(), repeated.begin(), repeated.end());
  TransformerForward induction(model);
  if (Status ran = induction.run(repeated); !ran) return ran;
  TransformerForward other(model);
  if (Status ran = other.run(random_tokens(probe, c.vocab_size, 2, 2 * m)); !ran) return ran;

  std::vector<HeadScores> heads;
  const int n = text.size();
  const bool first_is_special = !probe.special.empty() && probe.special[0];
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      HeadScores s;
      s.layer = l;
      s.head = h;
      const TextScores on_text = text_scores(
          n, [&](int i) { return text.attention_row(l, h, i); }, probe.special);
      double copied = 0.0;
      for (int i = m; i < 2 * m; ++i)
        copied += induction.attention_row(l, h, i)[static_cast<std::size_t>(i - m + 1)];
      double distance = 0.0;
      for (int i = 1; i < 2 * m; ++i) {
        const std::span<const float> a = induction.attention_row(l, h, i);
        const std::span<const float> b = other.attention_row(l, h, i);
        double row_distance = 0.0;
        for (std::size_t t = 0; t < a.size(); ++t) row_distance += std::fabs(a[t] - b[t]);
        distance += row_distance / 2.0;
      }
      s.scores[static_cast<std::size_t>(HeadRole::Induction)] = static_cast<float>(copied / m);
      s.scores[static_cast<std::size_t>(HeadRole::PreviousToken)] = on_text.previous;
      s.scores[static_cast<std::size_t>(HeadRole::NextToken)] = on_text.next;
      s.scores[static_cast<std::size_t>(HeadRole::FirstToken)] = on_text.first;
      s.scores[static_cast<std::size_t>(HeadRole::SpecialToken)] = on_text.special;
      s.scores[static_cast<std::size_t>(HeadRole::Self)] = on_text.self;
      s.scores[static_cast<std::size_t>(HeadRole::Positional)] =
          static_cast<float>(1.0 - distance / (2 * m - 1));
      s.scores[static_cast<std::size_t>(HeadRole::Broad)] = on_text.broad;
      for (int r = 0; r < kHeadRoleScores; ++r) {
        const auto role = static_cast<HeadRole>(r);
        // When the first token is special (BERT's [CLS]), a head on it is named for what it is:
        // a special-token head (its score counts the first token too), not a first-token one.
        if (role == HeadRole::FirstToken && first_is_special) continue;
        if (s.score(role) >= role_threshold(role)) {
          s.role = role;
          break;
        }
      }
      heads.push_back(s);
    }
  return heads;
}

}  // namespace attnviz
