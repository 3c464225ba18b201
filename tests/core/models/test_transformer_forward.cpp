// The fast forward pass (transformer_forward.hpp) against the plain reference
// (reference_forward.hpp), on a random GPT-2-architecture model built here and on stories260K:
// every intermediate, every layer; its key/value cache and partial recomputes against a full
// run; interventions and weight edits.
#include "core/base/rng.hpp"
#include "core/models/llama2c.hpp"
#include "core/models/reference_forward.hpp"
#include "core/models/transformer_forward.hpp"
#include "tests/support/forward_compare.hpp"
#include "tests/support/test_models.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using testing::compare;
using testing::seeded_tokens;

void run_reference(ReferenceForward& reference, const std::vector<int>& tokens) {
  for (const int token : tokens) REQUIRE(reference.step(token).ok());
}

// Layers below `layer` of two runs are bit for bit the same.
bool same_bits(const RowMatrix& a, const RowMatrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.row(0), b.row(0),
                     sizeof(float) * static_cast<std::size_t>(a.rows()) *
                         static_cast<std::size_t>(a.cols())) == 0;
}

}  // namespace

TEST_CASE("the fast forward pass equals the plain reference, every intermediate of every layer") {
  SUBCASE("a random GPT-2 (LayerNorm, biases, learned positions, GELU; c_attn split by stride)") {
    const Transformer model = testing::random_gpt2(7);
    const std::vector<int> tokens = seeded_tokens(33, model.config().vocab_size, 11);
    TransformerForward fast(model);
    REQUIRE(fast.run(tokens).is_ok());
    ReferenceForward reference(model);
    run_reference(reference, tokens);
    CHECK(compare(fast, reference) < 1e-4);
    // The scores the softmax took: q · k / √d_head, masked above the diagonal.
    const Matrix scaled = fast.scaled_scores(1, 2);  // (n_query, n_key)
    const int d_head = model.config().d_head;
    for (int i = 0; i < fast.size(); ++i)
      for (int t = 0; t < fast.size(); ++t) {
        if (t > i) {
          CHECK(std::isinf(scaled(i, t)));
          continue;
        }
        double dot = 0.0;
        for (int j = 0; j < d_head; ++j)
          dot += double{reference.row(i, 1).queries[static_cast<std::size_t>(2 * d_head + j)]} *
                 reference.row(t, 1).keys[static_cast<std::size_t>(2 * d_head + j)];
        CHECK(scaled(i, t) ==
              doctest::Approx(dot / std::sqrt(static_cast<double>(d_head))).epsilon(1e-4));
      }
  }
  SUBCASE("stories260K (RMSNorm, RoPE, grouped-query attention, SwiGLU)") {
    const Transformer model = testing::stories260k();
    const std::vector<int> tokens = seeded_tokens(70, model.config().vocab_size, 12);
    TransformerForward fast(model);
    REQUIRE(fast.run(tokens).is_ok());
    ReferenceForward reference(model);
    run_reference(reference, tokens);
    CHECK(compare(fast, reference) < 1e-4);
  }
}

TEST_CASE("long texts: the queries go in blocks of 128, each against the keys it can see") {
  // 290 positions: blocks of 128, 128 and 34 queries; then 90 typed after 200 (blocks that
  // start past the first key), and a head's pattern replaced, scaled or computed in each.
  const Transformer model = testing::random_gpt2(9, 24, 2, 4, 50, 300);
  const std::vector<int> tokens = seeded_tokens(290, model.config().vocab_size, 14);
  ReferenceForward reference(model);
  run_reference(reference, tokens);
  TransformerForward whole(model);
  REQUIRE(whole.run(tokens).is_ok());
  CHECK(compare(whole, reference) < 1e-4);
  TransformerForward typed(model);
  REQUIRE(typed.run(std::span(tokens).first(200)).is_ok());
  REQUIRE(typed.run(tokens).is_ok());
  CHECK(typed.last_work().first_position == 200);
  CHECK(compare(typed, reference) < 1e-4);

  HeadIntervention uniform, previous, scaled;
  uniform.pattern = HeadIntervention::Pattern::Uniform;
  previous.pattern = HeadIntervention::Pattern::PreviousToken;
  scaled.output_scale = 0.5f;
  REQUIRE(whole.set_intervention(0, 1, uniform).is_ok());
  REQUIRE(whole.set_intervention(1, 2, previous).is_ok());
  REQUIRE(whole.set_intervention(1, 3, scaled).is_ok());
  REQUIRE(whole.run(tokens).is_ok());
  ReferenceForward intervened(model);
  intervened.set_intervention(0, 1, uniform);
  intervened.set_intervention(1, 2, previous);
  intervened.set_intervention(1, 3, scaled);
  run_reference(intervened, tokens);
  CHECK(compare(whole, intervened) < 1e-4);
  for (const int i : {0, 127, 128, 200, 289}) {
    CHECK(whole.attention_row(0, 1, i)[0] == doctest::Approx(1.0 / (i + 1)));
    CHECK(whole.attention_row(1, 2, i)[static_cast<std::size_t>(std::max(i - 1, 0))] == 1.0f);
  }
}

TEST_CASE("the cache: typing at the end computes only the new positions, and equals a full run") {
  const Transformer model = testing::random_gpt2(8);
  const std::vector<int> tokens = seeded_tokens(30, model.config().vocab_size, 13);
  TransformerForward whole(model);
  REQUIRE(whole.run(tokens).is_ok());
  TransformerForward typed(model);
  for (int n = 1; n <= 30; n += 7) {
    REQUIRE(typed.run(std::span(tokens).first(static_cast<std::size_t>(n))).is_ok());
    CHECK(typed.last_work().first_position == (n == 1 ? 0 : n - 7));
  }
  REQUIRE(typed.run(tokens).is_ok());
  CHECK(typed.last_work().first_position == 29);
  ReferenceForward reference(model);
  run_reference(reference, tokens);
  CHECK(compare(typed, reference) < 1e-4);
  for (int l = 0; l < model.config().n_layers; ++l)
    for (int h = 0; h < model.config().n_heads; ++h)
      CHECK((typed.attention(l, h) - whole.attention(l, h)).cwiseAbs().maxCoeff() < 1e-6f);
  CHECK((typed.last_logits() - whole.last_logits()).cwiseAbs().maxCoeff() < 1e-4f);

  // An edit in the middle recomputes from there; a shorter text drops the end.
  std::vector<int> edited = tokens;
  edited[12] = (edited[12] + 1) % model.config().vocab_size;
  REQUIRE(typed.run(edited).is_ok());
  CHECK(typed.last_work().first_position == 12);
  REQUIRE(typed.run(std::span(edited).first(5)).is_ok());
  CHECK(typed.size() == 5);
  CHECK(typed.attention(0, 0).rows() == 5);
  TransformerForward fresh(model);
  REQUIRE(fresh.run(std::span(edited).first(5)).is_ok());
  CHECK((typed.last_logits() - fresh.last_logits()).cwiseAbs().maxCoeff() < 1e-4f);
}

TEST_CASE(
    "interventions: ablating, scaling and replacing a head's pattern match the reference, "
    "layers below are not computed again") {
  const Transformer model = testing::random_gpt2(9);
  const std::vector<int> tokens = seeded_tokens(25, model.config().vocab_size, 14);
  TransformerForward fast(model);
  REQUIRE(fast.run(tokens).is_ok());
  const TransformerForward before = [&] {
    TransformerForward copy(model);
    REQUIRE(copy.run(tokens).is_ok());
    return copy;
  }();

  HeadIntervention ablate;
  ablate.output_scale = 0.0f;
  HeadIntervention scale;
  scale.output_scale = 2.5f;
  HeadIntervention uniform;
  uniform.pattern = HeadIntervention::Pattern::Uniform;
  HeadIntervention previous;
  previous.pattern = HeadIntervention::Pattern::PreviousToken;
  REQUIRE(fast.set_intervention(1, 2, ablate).is_ok());
  REQUIRE(fast.set_intervention(2, 0, scale).is_ok());
  REQUIRE(fast.set_intervention(2, 1, uniform).is_ok());
  REQUIRE(fast.set_intervention(2, 3, previous).is_ok());
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_layer_redone == 1);
  ReferenceForward reference(model);
  reference.set_intervention(1, 2, ablate);
  reference.set_intervention(2, 0, scale);
  reference.set_intervention(2, 1, uniform);
  reference.set_intervention(2, 3, previous);
  run_reference(reference, tokens);
  CHECK(compare(fast, reference) < 1e-4);

  // The ablated head adds nothing; the patterns are what they say.
  const int d_head = model.config().d_head;
  for (int i = 0; i < fast.size(); ++i) {
    for (int j = 0; j < d_head; ++j)
      CHECK(fast.layer(1).head_outputs.row(i)[2 * d_head + j] == 0.0f);
    CHECK(fast.attention_row(2, 1, i)[0] == doctest::Approx(1.0 / (i + 1)));
    CHECK(fast.attention_row(2, 3, i)[static_cast<std::size_t>(std::max(i - 1, 0))] == 1.0f);
  }
  // Layer 0 was not touched: bit for bit as before; layer 1 changed.
  CHECK(same_bits(fast.layer(0).residual_out, before.layer(0).residual_out));
  CHECK_FALSE(same_bits(fast.layer(1).residual_out, before.layer(1).residual_out));

  // Only the last layer changed: only it is computed again.
  REQUIRE(fast.set_intervention(2, 3, HeadIntervention{}).is_ok());
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_layer_redone == 2);
  // Nothing changed: nothing computed.
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_layer_redone == 3);
  CHECK(fast.last_work().first_position == 25);
  // A head the model does not have, a scale that is no number: refused, nothing changed.
  CHECK(fast.set_intervention(3, 0, ablate).message() ==
        "layer 3, head 0: the model has 3 layers of 4 heads (counted from 0)");
  CHECK_FALSE(fast.set_intervention(0, 4, ablate).is_ok());
  CHECK_FALSE(fast.set_intervention(0, -1, ablate).is_ok());
  HeadIntervention not_a_number;
  not_a_number.output_scale = std::nanf("");
  CHECK(fast.set_intervention(0, 0, not_a_number).message() ==
        "a head's scale must be a finite number");
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_layer_redone == 3);
  // Cleared: the model's own numbers again.
  fast.clear_interventions();
  REQUIRE(fast.run(tokens).is_ok());
  CHECK((fast.last_logits() - before.last_logits()).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE(
    "a weight edit changes its layer and above, the file's weights stay, and reset restores") {
  Transformer model = testing::stories260k();
  const std::vector<int> tokens = seeded_tokens(20, model.config().vocab_size, 15);
  TransformerForward fast(model);
  REQUIRE(fast.run(tokens).is_ok());
  const RowVector logits_before = fast.last_logits();
  const RowMatrix layer1_before = fast.layer(1).residual_out;
  const float* file_query = model.weights().layers[3].query.data;

  // Key head 1 of layer 3 is shared by query heads 2 and 3 (8 query heads over 4 key heads).
  const float old_value = model.head_weight(3, 2, HeadMatrix::Key, 5, 1);
  REQUIRE(model.set_head_weight(3, 2, HeadMatrix::Key, 5, 1, old_value + 3.0f).is_ok());
  CHECK(model.head_weight(3, 3, HeadMatrix::Key, 5, 1) == old_value + 3.0f);
  CHECK(model.edited());
  REQUIRE(model.set_head_weight(3, 0, HeadMatrix::Query, 0, 0, 2.0f).is_ok());
  CHECK(model.weights().layers[3].query.data != file_query);  // copied out, not written
  fast.weights_changed(3);
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_layer_redone == 3);
  CHECK(same_bits(fast.layer(1).residual_out, layer1_before));
  CHECK((fast.last_logits() - logits_before).cwiseAbs().maxCoeff() > 1e-4f);
  ReferenceForward reference(model);
  run_reference(reference, tokens);
  CHECK(compare(fast, reference) < 1e-4);

  CHECK(model.set_head_weight(3, 8, HeadMatrix::Query, 0, 0, 1.0f).message() ==
        "head 8 is not one of the layer's 8");
  CHECK(model.set_head_weight(5, 0, HeadMatrix::Query, 0, 0, 1.0f).message() ==
        "layer 5 is not one of the model's 5");
  CHECK(model.set_head_weight(0, 0, HeadMatrix::Output, 8, 0, 1.0f).message() ==
        "(8, 0) is outside the head's 8 × 64 matrix");
  CHECK(model.set_head_weight(0, 0, HeadMatrix::Value, 0, 0, std::nanf("")).message() ==
        "a weight must be a finite number");

  model.reset_weights();
  CHECK_FALSE(model.edited());
  CHECK(model.weights().layers[3].query.data == file_query);
  fast.weights_changed(0);
  REQUIRE(fast.run(tokens).is_ok());
  CHECK((fast.last_logits() - logits_before).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE(
    "a token's embedding edited: every position computed again, the tied unembedding "
    "follows, the file's weights stay, reset restores") {
  Transformer model = testing::random_gpt2(12);
  const std::vector<int> tokens = {4, 9, 4, 17, 30, 4, 2};
  TransformerForward fast(model);
  REQUIRE(fast.run(tokens).is_ok());
  const RowVector logits_before = fast.last_logits();
  const float* on_disk = model.weights_on_disk().token_embedding.data;
  REQUIRE(model.weights().unembedding.data == on_disk);  // tied

  const float old_value = model.weights().token_embedding.at(4, 3);
  REQUIRE(model.set_token_embedding(4, 3, old_value + 2.0f).is_ok());
  CHECK(model.weights().token_embedding.data != on_disk);  // copied out, not written
  CHECK(model.weights_on_disk().token_embedding.at(4, 3) == old_value);
  CHECK(model.weights().token_embedding.at(4, 3) == old_value + 2.0f);
  CHECK(model.weights().unembedding.data == model.weights().token_embedding.data);  // still tied
  fast.embeddings_changed();
  REQUIRE(fast.run(tokens).is_ok());
  CHECK(fast.last_work().first_position == 0);
  CHECK(fast.last_work().first_layer_redone == 0);
  CHECK((fast.last_logits() - logits_before).cwiseAbs().maxCoeff() > 1e-4f);
  ReferenceForward reference(model);
  run_reference(reference, tokens);
  CHECK(compare(fast, reference) < 1e-4);

  CHECK(model.set_token_embedding(50, 0, 1.0f).message() ==
        "token 50 is not in the vocabulary of 50");
  CHECK(model.set_token_embedding(0, 24, 1.0f).message() ==
        "dimension 24 is not one of the 24 of an embedding");
  CHECK(model.set_token_embedding(0, 0, INFINITY).message() == "a weight must be a finite number");

  model.reset_weights();
  CHECK(model.weights().token_embedding.data == on_disk);
  CHECK(model.weights().unembedding.data == on_disk);
  fast.embeddings_changed();
  REQUIRE(fast.run(tokens).is_ok());
  CHECK((fast.last_logits() - logits_before).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE("a Transformer refuses views that disagree with its configuration") {
  Transformer model = testing::random_gpt2(10);
  TransformerConfig config = model.config();
  TransformerWeights weights = model.weights();
  Transformer other;
  weights.layers[1].key.cols = 23;
  CHECK(other.set_weights(config, weights, "m", "f").message() ==
        "m: layer 1: W_K: shape (24, 23), expected (24, 24)");
  weights = model.weights();
  weights.layers[2].mlp_norm_bias = VectorView{};
  CHECK(other.set_weights(config, weights, "m", "f").message() ==
        "m: layer 2: MLP norm bias: missing");
  weights = model.weights();
  config.n_kv_heads = 3;
  CHECK(other.set_weights(config, weights, "m", "f").message() ==
        "m: 4 query heads do not share 3 key/value heads evenly");
}

}  // namespace attnviz
