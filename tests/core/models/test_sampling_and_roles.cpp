// The next token (temperature, top-k, top-p, seeded sampling, generation) against values worked
// out by hand, and the head detectors on heads whose role is known: a head made uniform by hand
// in a random model, and stories260K's previous-token heads (measured independently:
// ../shared/models/README.md lists layer 1 head 3 at 0.60, no sink, no induction head).
#include "core/base/rng.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/llama2c.hpp"
#include "core/models/model.hpp"
#include "core/models/reference_forward.hpp"
#include "core/models/sampling.hpp"
#include "core/models/transformer_forward.hpp"

#include "tests/support/test_models.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;

std::vector<float> probabilities(const std::vector<float>& logits, float temperature, int top_k = 0,
                                 float top_p = 1.0f) {
  const SamplingSettings settings{temperature, top_k, top_p};
  REQUIRE(check(settings).is_ok());
  return next_token_probabilities(logits, settings);
}

}  // namespace

TEST_CASE("next-token probabilities: temperature, top-k and top-p as worked out by hand") {
  // exp of these logits: 1, 2, 4 (sum 7).
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(4.0f)};
  const auto near = [](const std::vector<float>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
  };
  near(probabilities(logits, 1.0f), {1.0 / 7, 2.0 / 7, 4.0 / 7});
  // T = 2: exp(logit / 2) = 1, √2, 2.
  const double sum = 3.0 + std::sqrt(2.0);
  near(probabilities(logits, 2.0f), {1.0 / sum, std::sqrt(2.0) / sum, 2.0 / sum});
  near(probabilities(logits, 0.0f), {0.0, 0.0, 1.0});                   // greedy
  near(probabilities(logits, 1.0f, 2), {0.0, 1.0 / 3, 2.0 / 3});        // top-k 2
  near(probabilities(logits, 1.0f, 0, 0.5f), {0.0, 0.0, 1.0});          // 4/7 reaches 0.5
  near(probabilities(logits, 1.0f, 0, 0.6f), {0.0, 1.0 / 3, 2.0 / 3});  // 4/7 does not reach 0.6
  near(probabilities(logits, 1.0f, 1, 1.0f), {0.0, 0.0, 1.0});
  // Ties: the lower id first.
  const std::vector<Candidate> top = top_candidates(std::vector<float>{0.25f, 0.5f, 0.25f}, 2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].token == 1);
  CHECK(top[1].token == 0);

  CHECK(check({-1.0f, 0, 1.0f}).message() ==
        "temperature: expected a number of 0 or more (0 picks the most likely)");
  CHECK_FALSE(check({std::nanf(""), 0, 1.0f}).is_ok());
  CHECK_FALSE(check({INFINITY, 0, 1.0f}).is_ok());
  CHECK(check({1.0f, -3, 1.0f}).message() == "top-k: expected 0 (every token) or more");
  CHECK(check({1.0f, 0, 0.0f}).message() == "top-p: expected a number above 0 and at most 1");
  CHECK_FALSE(check({1.0f, 0, 1.5f}).is_ok());
}

TEST_CASE("seeded sampling: the same seed, the same tokens, frequencies follow the probabilities") {
  const std::vector<float> p = {0.2f, 0.0f, 0.3f, 0.5f};
  std::vector<int> counts(4, 0);
  constexpr int kDraws = 20000;
  for (int draw = 0; draw < kDraws; ++draw) {
    const int token = sample(p, 42, static_cast<std::uint64_t>(draw));
    CHECK(token == sample(p, 42, static_cast<std::uint64_t>(draw)));
    ++counts[static_cast<std::size_t>(token)];
  }
  CHECK(counts[1] == 0);
  CHECK(counts[0] / double{kDraws} == doctest::Approx(0.2).epsilon(0.05));
  CHECK(counts[2] / double{kDraws} == doctest::Approx(0.3).epsilon(0.05));
  CHECK(counts[3] / double{kDraws} == doctest::Approx(0.5).epsilon(0.05));
  bool differs = false;  // another seed, other draws
  for (int draw = 0; draw < 50; ++draw) differs |= sample(p, 42, draw) != sample(p, 43, draw);
  CHECK(differs);
}

TEST_CASE("generation: greedy continues as the reference's argmax, seeded runs repeat") {
  const Transformer model = testing::stories260k();
  TransformerForward forward(model);
  const std::vector<int> prompt = {1};  // BOS
  REQUIRE(forward.run(prompt).is_ok());
  Result<std::vector<int>> greedy = generate(forward, 30, SamplingSettings{0.0f, 0, 1.0f}, 7);
  REQUIRE(greedy.ok());
  REQUIRE(greedy->size() == 30);
  ReferenceForward reference(model);
  int token = 1;
  for (const int generated : *greedy) {
    Result<std::vector<float>> logits = reference.step(token);
    REQUIRE(logits.ok());
    CHECK(generated == argmax(*logits));
    token = generated;
  }
  const auto sampled = [&](std::uint64_t seed) {
    TransformerForward f(model);
    REQUIRE(f.run(prompt).is_ok());
    Result<std::vector<int>> tokens = generate(f, 20, SamplingSettings{1.0f, 40, 0.9f}, seed);
    REQUIRE(tokens.ok());
    return *tokens;
  };
  CHECK(sampled(5) == sampled(5));
  CHECK(sampled(5) != sampled(6));
  TransformerForward empty(model);
  CHECK(generate(empty, 3, SamplingSettings{}, 1).error() ==
        "generation needs a prompt of at least one token");
  CHECK_FALSE(generate(forward, 3, SamplingSettings{-2.0f, 0, 1.0f}, 1).ok());
}

TEST_CASE(
    "head detectors: a head made uniform by hand is broad, stories260K's previous-token "
    "heads are found") {
  Transformer model = testing::stories260k();
  // A TinyStories-like text, in stories260K's own vocabulary (ids from its tokenizer would do as
  // well; these are the model's own greedy tokens, which it reads as natural text).
  TransformerForward forward(model);
  const std::vector<int> bos = {1};
  REQUIRE(forward.run(bos).is_ok());
  Result<std::vector<int>> story = generate(forward, 60, SamplingSettings{0.0f, 0, 1.0f}, 1);
  REQUIRE(story.ok());
  HeadRoleProbe probe;
  probe.text = forward.tokens();
  probe.first_random_token = 3;  // not <unk>, BOS or EOS
  Result<std::vector<HeadScores>> roles = detect_head_roles(model, probe);
  REQUIRE_MESSAGE(roles.ok(), roles.error());
  REQUIRE(roles->size() == 40);
  const HeadScores& l1h3 = (*roles)[1 * 8 + 3];
  MESSAGE("layer 1 head 3: previous-token " << l1h3.score(HeadRole::PreviousToken));
  CHECK(l1h3.score(HeadRole::PreviousToken) >= 0.5f);
  CHECK(l1h3.role == HeadRole::PreviousToken);
  float largest_induction = 0.0f, largest_first = 0.0f;
  for (const HeadScores& s : *roles) {
    largest_induction = std::max(largest_induction, s.score(HeadRole::Induction));
    largest_first = std::max(largest_first, s.score(HeadRole::FirstToken));
    for (const float score : s.scores) {
      CHECK(score >= -1e-6f);
      CHECK(score <= 1.0f + 1e-6f);
    }
  }
  CHECK(largest_induction < 0.15f);
  CHECK(largest_first < 0.3f);  // no sink: BOS, at key 0, takes at most a sixth here

  // Layer 0, head 0 (and 1: they share key/value head 0): keys made 0, every score alike, so
  // attention is uniform whatever the text: broad (entropy at its largest) and positional.
  for (int row = 0; row < model.config().d_model; ++row)
    for (int col = 0; col < model.config().d_head; ++col)
      REQUIRE(model.set_head_weight(0, 0, HeadMatrix::Key, row, col, 0.0f).is_ok());
  roles = detect_head_roles(model, probe);
  REQUIRE(roles.ok());
  for (const int head : {0, 1}) {
    const HeadScores& uniform = (*roles)[static_cast<std::size_t>(head)];
    CHECK(uniform.score(HeadRole::Broad) == doctest::Approx(1.0).epsilon(1e-4));
    CHECK(uniform.score(HeadRole::Positional) == doctest::Approx(1.0).epsilon(1e-4));
    CHECK(uniform.role == HeadRole::Broad);
  }

  probe.text = {5};
  CHECK(detect_head_roles(model, probe).error() ==
        "the head detectors need a text of 2 tokens or more");
  probe.text = {5, 6};
  probe.random_length = 300;
  CHECK(detect_head_roles(model, probe).error() ==
        "the random texts (2 × 300 tokens) must fit the model's context of 512");
}

TEST_CASE(
    "gpt2-kjv-tiny, trained here, has the heads its training was for: a previous-token "
    "head (≥ 0.5 on held-out text) and an induction head (≥ 0.3)") {
  Result<Model> model =
      open_model((fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/gpt2-kjv-tiny").string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  // Held-out text: every 20th chapter from the 11th was left out of training (PROVENANCE.md);
  // Genesis 31:1-2.
  Result<std::vector<ModelToken>> text = model->tokenizer.tokenize(
      "And he heard the words of Laban's sons, saying, Jacob hath taken away all that was our "
      "father's; and of that which was our father's hath he gotten all this glory.\nAnd Jacob "
      "beheld the countenance of Laban, and, behold, it was not toward him as before.");
  REQUIRE(text.ok());
  HeadRoleProbe probe;
  for (const ModelToken& token : *text) probe.text.push_back(token.id);
  probe.random_length = 48;
  Result<std::vector<HeadScores>> roles = detect_head_roles(model->transformer, probe);
  REQUIRE_MESSAGE(roles.ok(), roles.error());
  float best_previous = 0.0f, best_induction = 0.0f;
  for (const HeadScores& s : *roles) {
    best_previous = std::max(best_previous, s.score(HeadRole::PreviousToken));
    best_induction = std::max(best_induction, s.score(HeadRole::Induction));
  }
  const HeadScores& previous = (*roles)[0 * 4 + 2];   // layer 0, head 2 (train.log)
  const HeadScores& induction = (*roles)[1 * 4 + 1];  // layer 1, head 1
  MESSAGE("layer 0 head 2: previous-token " << previous.score(HeadRole::PreviousToken)
                                            << "; layer 1 head 1: induction "
                                            << induction.score(HeadRole::Induction));
  CHECK(previous.score(HeadRole::PreviousToken) >= 0.5f);
  CHECK(previous.role == HeadRole::PreviousToken);
  CHECK(induction.score(HeadRole::Induction) >= 0.3f);
  CHECK(induction.role == HeadRole::Induction);
  CHECK(best_previous == previous.score(HeadRole::PreviousToken));
  CHECK(best_induction == induction.score(HeadRole::Induction));
  // Layer 0 has no induction head: it cannot, without a previous-token head before it.
  for (int head = 0; head < 4; ++head)
    CHECK((*roles)[static_cast<std::size_t>(head)].score(HeadRole::Induction) < 0.1f);
}

TEST_CASE("a head's score on the text on screen: worked out by hand, and the probe's own numbers") {
  // A causal 4-token text "a b a b" (ids 5 7 5 7); row i's weights on keys 0..i.
  const std::vector<float> weights = {1.0f, 0,    0,    0,      //
                                      0.5f, 0.5f, 0,    0,      //
                                      0.1f, 0.8f, 0.1f, 0,      //
                                      0.2f, 0.1f, 0.6f, 0.1f};  // (n_query, n_key)
  const MatrixView view{weights.data(), 4, 4, 4};
  const std::vector<int> tokens = {5, 7, 5, 7};
  // Induction: query 2 ("a", last seen at 0) onto key 1; query 3 ("b", at 1) onto key 2.
  CHECK(*role_score_on_text(HeadRole::Induction, view, tokens, {}, true) ==
        doctest::Approx((0.8 + 0.6) / 2));
  // Previous token: queries 1..3 onto key i − 1.
  CHECK(*role_score_on_text(HeadRole::PreviousToken, view, tokens, {}, true) ==
        doctest::Approx((0.5 + 0.8 + 0.6) / 3));
  CHECK(*role_score_on_text(HeadRole::FirstToken, view, tokens, {}, true) ==
        doctest::Approx((0.5 + 0.1 + 0.2) / 3));
  // A text that repeats nothing cannot measure induction; no text measures positional.
  CHECK_FALSE(
      role_score_on_text(HeadRole::Induction, view, std::vector<int>{1, 2, 3, 4}, {}, true));
  CHECK_FALSE(role_score_on_text(HeadRole::Positional, view, tokens, {}, true));
  CHECK_FALSE(role_score_on_text(HeadRole::PreviousToken, view, std::vector<int>{1, 2}, {}, true));

  // On a real model's probe text, the same numbers as detect_head_roles (the app's badge and
  // attnviz-cli model heads print both).
  Result<Model> model =
      open_model((fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/gpt2-kjv-tiny").string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  Result<std::vector<ModelToken>> text =
      model->tokenizer.tokenize("And God said, Let there be light: and there was light.");
  REQUIRE(text.ok());
  HeadRoleProbe probe;
  for (const ModelToken& token : *text) probe.text.push_back(token.id);
  Result<std::vector<HeadScores>> roles = detect_head_roles(model->transformer, probe);
  REQUIRE(roles.ok());
  TransformerForward forward(model->transformer);
  REQUIRE(forward.run(probe.text));
  const int n = static_cast<int>(probe.text.size());
  for (const HeadScores& scores : *roles) {
    std::vector<float> matrix(static_cast<std::size_t>(n * n), 0.0f);  // (n_query, n_key)
    for (int i = 0; i < n; ++i) {
      const std::span<const float> row = forward.attention_row(scores.layer, scores.head, i);
      std::copy(row.begin(), row.end(), matrix.begin() + i * n);
    }
    const MatrixView head_weights{matrix.data(), n, n, n};
    for (const HeadRole role :
         {HeadRole::PreviousToken, HeadRole::FirstToken, HeadRole::Self, HeadRole::Broad})
      CHECK(*role_score_on_text(role, head_weights, probe.text, {}, true) == scores.score(role));
  }
}

}  // namespace attnviz
