#include "core/base/rng.hpp"
#include "core/text/embedding.hpp"
#include "core/text/lexicon.hpp"

#include <doctest/doctest.h>

#include <cmath>

namespace attnviz {
namespace {

RowVector embedding_of(std::string_view key, int d_model) {
  RowVector row(d_model);
  default_embedding(key, d_model, row.data());
  return row;
}

Matrix embed(std::string_view sentence, int d_model, const EmbeddingOverrides& overrides = {},
             Positional positional = Positional::None) {
  Matrix X;
  embed_tokens(tokenize(sentence, 256).tokens, d_model, overrides, positional, X);
  return X;
}

}  // namespace

TEST_CASE("FNV-1a matches the published test vectors (determinism across machines)") {
  // rng::hash is mix(FNV-1a); undo nothing, but check FNV-1a's own vectors via the pieces.
  constexpr auto fnv1a = [](std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h;
  };
  CHECK(fnv1a("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a("foobar") == 0x85944171f73967e8ull);
  CHECK(rng::hash("a") == rng::mix(0xaf63dc4c8601ec8cull));
}

TEST_CASE("SplitMix64 matches its reference output") {
  // The first output of SplitMix64 seeded with 0 (Vigna's reference implementation).
  CHECK(rng::mix(0) == 0xe220a8397b1dcdafull);
}

TEST_CASE("uniform_symmetric covers -1 up to but not including 1") {
  CHECK(rng::uniform_symmetric(0) == -1.0f);
  CHECK(rng::uniform_symmetric(~0ull) < 1.0f);
  CHECK(rng::uniform_symmetric(~0ull) > 0.9999f);
}

TEST_CASE("the same unknown word gets the same vector every time") {
  CHECK(embedding_of("zorblax", 16) == embedding_of("zorblax", 16));
}

TEST_CASE("different unknown words get different vectors") {
  CHECK(embedding_of("zorblax", 16) != embedding_of("quimble", 16));
}

TEST_CASE("an unknown word's vector for a smaller d_model is a prefix of the larger one") {
  CHECK(embedding_of("zorblax", 8) == embedding_of("zorblax", 32).head(8));
}

TEST_CASE("unknown words' values lie between -0.5 and 0.5") {
  const RowVector v = embedding_of("zorblax", 512);
  CHECK(v.minCoeff() >= -0.5f);
  CHECK(v.maxCoeff() < 0.5f);
}

TEST_CASE("the built-in lexicon parses without errors and has a few hundred words") {
  const Lexicon& lexicon = Lexicon::builtin();
  for (const std::string& error : lexicon.errors()) FAIL_CHECK(error);
  CHECK(lexicon.entries().size() >= 300);
}

TEST_CASE("lexicon words carry their features in the named dimensions") {
  // assets: "apple" is food 1 and company 0.8; "jane" is a person.
  const RowVector apple = embedding_of("apple", 12);
  CHECK(apple[1] == doctest::Approx(1.0));  // food
  CHECK(apple[2] == doctest::Approx(0.8));  // company
  CHECK(apple[0] == doctest::Approx(0.0));  // person
  CHECK(embedding_of("jane", 12)[0] == doctest::Approx(1.0));
  CHECK(kFeatureNames[1] == "food");
}

TEST_CASE("lexicon words past the features get small hashed values") {
  const RowVector apple = embedding_of("apple", 20);
  CHECK(apple.tail(8).cwiseAbs().maxCoeff() <= 0.1f);
  CHECK(apple.tail(8).cwiseAbs().maxCoeff() > 0.0f);
}

TEST_CASE("lookup is case-insensitive: Apple and apple share a vector") {
  const Matrix X = embed("Apple apple", 8);
  CHECK(X.row(0) == X.row(1));
}

TEST_CASE("an override matches the exact text before the lower-cased key") {
  const EmbeddingOverrides overrides = {{"Apple", {9, 9}}, {"apple", {1, 1}}};
  const Matrix X = embed("Apple apple APPLE", 2, overrides);
  CHECK(X.row(0) == RowVector::Constant(2, 9.0f));
  CHECK(X.row(1) == RowVector::Constant(2, 1.0f));
  CHECK(X.row(2) == RowVector::Constant(2, 1.0f));
}

TEST_CASE("sources say where each row came from") {
  Matrix X;
  std::vector<EmbeddingSource> sources;
  embed_tokens(tokenize("apple zorblax mine", 256).tokens, 4, {{"mine", {0, 0, 0, 0}}},
               Positional::None, X, &sources);
  CHECK(sources == std::vector<EmbeddingSource>{EmbeddingSource::Lexicon, EmbeddingSource::Hashed,
                                                EmbeddingSource::Override});
}

TEST_CASE("sinusoidal positions follow the paper's formula") {
  const int d_model = 6;
  Matrix X = Matrix::Zero(3, d_model);
  add_sinusoidal_positions(X);
  for (int pos = 0; pos < 3; ++pos)
    for (int i = 0; i < d_model / 2; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / d_model);
      CHECK(X(pos, 2 * i) == doctest::Approx(std::sin(angle)).epsilon(1e-6));
      CHECK(X(pos, 2 * i + 1) == doctest::Approx(std::cos(angle)).epsilon(1e-6));
    }
}

TEST_CASE("positional encoding with an odd d_model fills the last sine column") {
  Matrix X = Matrix::Zero(2, 3);
  add_sinusoidal_positions(X);
  CHECK(X(1, 2) == doctest::Approx(std::sin(1.0 / std::pow(10000.0, 2.0 / 3.0))));
}

TEST_CASE("positional encoding is added to the embeddings") {
  const Matrix plain = embed("apple apple", 4);
  const Matrix positioned = embed("apple apple", 4, {}, Positional::Sinusoidal);
  CHECK(positioned.row(0) == (plain.row(0) + RowVector{{0.0f, 1.0f, 0.0f, 1.0f}}));
  CHECK(positioned.row(1) != positioned.row(0));
}

// The note under a sentence whose words have no features: the words' sources as embed_tokens
// reports them.
namespace {
std::string note_on(std::string_view sentence, const EmbeddingOverrides& overrides = {}) {
  const std::vector<Token> tokens = tokenize(sentence, 256).tokens;
  Matrix X;
  std::vector<EmbeddingSource> sources;
  embed_tokens(tokens, 8, overrides, Positional::None, X, &sources);
  return random_features_note(tokens, sources);
}
}  // namespace

TEST_CASE("a sentence whose words the lexicon does not know is said to have random features") {
  // "the cat eats" is in the lexicon; "le chat mange" is not (the one-layer toy's French source).
  CHECK(note_on("the cat eats.").empty());
  CHECK(note_on("le chat mange.").find("None of these words is in the teaching lexicon") == 0);
  CHECK(note_on("the chat eats.") ==
        "\"chat\" is not in the teaching lexicon: it has random features, so attention to it "
        "means nothing yet.");
  CHECK(note_on("the chat mange le chat qzx wug eats")
            .find("\"chat\", \"mange\", \"le\", \"qzx\" and 1 more are not in the teaching "
                  "lexicon: they have random features") == 0);
  // A word given its embedding in the scenario has features; punctuation does not count.
  CHECK(note_on("the chat eats.", {{"chat", {1, 0, 0}}}).empty());
  CHECK(note_on("").empty());
}

}  // namespace attnviz
