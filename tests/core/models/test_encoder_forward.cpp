// An encoder (BERT's architecture) in the fast forward pass against the plain reference
// (ReferenceForward::encode), on random models built here: every intermediate with and without
// the MLM head and with token types; attention both ways; what a change computes again; the
// checks that refuse a malformed encoder.
#include "core/models/reference_forward.hpp"
#include "core/models/transformer_forward.hpp"
#include "tests/support/forward_compare.hpp"
#include "tests/support/test_models.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace attnviz {
namespace {

using testing::compare;
using testing::seeded_tokens;

// Types as BERT's sentence pairs give them: 0 up to `first_b`, then 1.
std::vector<int> pair_types(int count, int first_b) {
  std::vector<int> types(static_cast<std::size_t>(count), 0);
  for (int i = first_b; i < count; ++i) types[static_cast<std::size_t>(i)] = 1;
  return types;
}

}  // namespace

TEST_CASE("an encoder's fast pass equals the plain reference, every intermediate") {
  for (const bool head : {true, false}) {
    CAPTURE(head);
    const Transformer model = testing::random_bert(21, head);
    const std::vector<int> tokens = seeded_tokens(29, model.config().vocab_size, 5);
    const std::vector<int> types = pair_types(29, 17);
    TransformerForward fast(model);
    REQUIRE(fast.run(tokens, types).is_ok());
    ReferenceForward reference(model);
    REQUIRE(reference.encode(tokens, types).is_ok());
    CHECK(compare(fast, reference) < 1e-4);
    CHECK(model.predicts_tokens() == head);
    if (!head) {  // no head: the final rows are the last layer's output, the logits zeros
      CHECK(fast.final_normalized().row(3)[2] == fast.layer(2).residual_out.row(3)[2]);
      const RowVector logits = fast.logits(0);
      CHECK(logits.cwiseAbs().maxCoeff() == 0.0f);
    }
  }
}

TEST_CASE("an encoder attends both ways: every row covers every key and sums to 1") {
  const Transformer model = testing::random_bert(3);
  const std::vector<int> tokens = seeded_tokens(12, model.config().vocab_size, 9);
  TransformerForward fast(model);
  REQUIRE(fast.run(tokens).is_ok());
  for (int l = 0; l < model.config().n_layers; ++l)
    for (int h = 0; h < model.config().n_heads; ++h)
      for (int i = 0; i < fast.size(); ++i) {
        const std::span<const float> row = fast.attention_row(l, h, i);
        REQUIRE(row.size() == tokens.size());
        CHECK(std::accumulate(row.begin(), row.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-5));
        CHECK(row.back() > 0.0f);  // the first query sees the last key
      }
  const Matrix scaled = fast.scaled_scores(1, 2);
  for (int i = 0; i < fast.size(); ++i)
    for (int t = 0; t < fast.size(); ++t) CHECK(std::isfinite(scaled(i, t)));
  // Token types matter: the same ids as a pair give other numbers.
  TransformerForward paired(model);
  REQUIRE(paired.run(tokens, pair_types(12, 6)).is_ok());
  CHECK(paired.layer(0).normalized.row(8)[0] != fast.layer(0).normalized.row(8)[0]);
  CHECK(paired.layer(0).normalized.row(2)[0] == fast.layer(0).normalized.row(2)[0]);
}

TEST_CASE("an encoder computes every position again when any token changes") {
  const Transformer model = testing::random_bert(4);
  std::vector<int> tokens = seeded_tokens(15, model.config().vocab_size, 2);
  TransformerForward fast(model);
  REQUIRE(fast.run(tokens).is_ok());
  REQUIRE(fast.run(tokens).is_ok());  // nothing changed: nothing computed
  CHECK(fast.last_work().first_position == 15);
  tokens[14] = (tokens[14] + 1) % model.config().vocab_size;  // the last token: all positions
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_position == 0);
  ReferenceForward reference(model);
  REQUIRE(reference.encode(tokens, {}).is_ok());
  CHECK(compare(fast, reference) < 1e-4);
  tokens.push_back(1);  // a token added at the end changes what the others see
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_position == 0);
  REQUIRE(fast.run(tokens, pair_types(16, 10)).is_ok());  // types alone
  CHECK(fast.last_work().first_position == 0);
  ReferenceForward typed(model);
  REQUIRE(typed.encode(tokens, pair_types(16, 10)).is_ok());
  CHECK(compare(fast, typed) < 1e-4);
}

TEST_CASE("an encoder's interventions: from their layer up, and as the reference has them") {
  const Transformer model = testing::random_bert(8);
  const std::vector<int> tokens = seeded_tokens(10, model.config().vocab_size, 4);
  TransformerForward fast(model);
  REQUIRE(fast.run(tokens).is_ok());
  const float before = fast.logits(4)[7];
  HeadIntervention knocked_out;
  knocked_out.output_scale = 0.0f;
  REQUIRE(fast.set_intervention(1, 2, knocked_out).is_ok());
  HeadIntervention previous;
  previous.pattern = HeadIntervention::Pattern::PreviousToken;
  REQUIRE(fast.set_intervention(2, 0, previous).is_ok());
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_layer_redone == 1);
  CHECK(fast.logits(4)[7] != before);
  ReferenceForward reference(model);
  reference.set_intervention(1, 2, knocked_out);
  reference.set_intervention(2, 0, previous);
  REQUIRE(reference.encode(tokens, {}).is_ok());
  CHECK(compare(fast, reference) < 1e-4);
  // The previous-token pattern: all the weight on key i − 1 (key 0 for the first query).
  CHECK(fast.attention_row(2, 0, 5)[4] == 1.0f);
  CHECK(fast.attention_row(2, 0, 0)[0] == 1.0f);
}

TEST_CASE("an encoder refuses types it does not have, and the reference each its own kind") {
  const Transformer model = testing::random_bert(5);
  TransformerForward fast(model);
  CHECK(fast.run(std::vector<int>{1, 2, 3}, std::vector<int>{0, 2, 0}).message().find("type 2") !=
        std::string::npos);
  CHECK(fast.run(std::vector<int>{1, 2, 3}, std::vector<int>{0, 1}).message().find("3 tokens") !=
        std::string::npos);
  CHECK(fast.run(std::vector<int>{1, 2, 3}, std::vector<int>{0, -1, 0}).message().find("type -1") !=
        std::string::npos);
  ReferenceForward reference(model);
  CHECK_FALSE(reference.step(1).ok());
  const Transformer decoder = testing::random_gpt2(5);
  ReferenceForward decoder_reference(decoder);
  CHECK_FALSE(decoder_reference.encode({1, 2}, {}).is_ok());
  TransformerForward decoder_pass(decoder);
  CHECK_FALSE(decoder_pass.run(std::vector<int>{1, 2}, std::vector<int>{0, 1}).is_ok());
}

TEST_CASE("a Transformer refuses an encoder whose views disagree with its configuration") {
  const Transformer good = testing::random_bert(6);
  const auto error_with =
      [&](const std::function<void(TransformerConfig&, TransformerWeights&)>& edit) {
        TransformerConfig c = good.config();
        TransformerWeights w = good.weights();
        edit(c, w);
        Transformer model;
        const Status set = model.set_weights(c, w, "test", "test");
        REQUIRE_FALSE(set.is_ok());
        return set.message();
      };
  CHECK(error_with([](auto&, auto& w) { w.token_type_embedding = {}; }).find("token type") !=
        std::string::npos);
  CHECK(error_with([](auto&, auto& w) {
          w.embedding_norm_weight = {};
        }).find("embedding norm weight: missing") != std::string::npos);
  CHECK(error_with([](auto&, auto& w) { w.head_transform = {}; }).find("head transform") !=
        std::string::npos);
  CHECK(error_with([](auto&, auto& w) { w.unembedding_bias.size = 3; }).find("unembedding bias") !=
        std::string::npos);
  CHECK(error_with([](auto& c, auto&) {
          c.norm = NormKind::RMSNorm;
        }).find("must be a LayerNorm") != std::string::npos);
  CHECK(error_with([](auto& c, auto&) { c.token_types = 3; }).find("token type embedding") !=
        std::string::npos);
}

}  // namespace attnviz
