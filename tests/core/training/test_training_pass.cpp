// Training's backward pass (core/training/training_pass.hpp) against its plain reference
// (reference_training.hpp), gradient by gradient, with and without the MLP, tied and untied, in
// GPT-2's layout, in Llama's (RMSNorm, RoPE, SwiGLU, grouped-query attention) and in BERT's
// (attention both ways, norms after, token types, GELU with erf, the MLM head);
// both against finite differences of the loss; and the forward part against the engine's own
// forward pass (transformer_forward.hpp), which the app draws from. PyTorch's autograd checks
// both independently in tests/oracle/gradient_oracle_test.py.
#include "core/base/rng.hpp"
#include "core/models/blas.hpp"
#include "core/models/transformer_forward.hpp"
#include "core/training/optimizer.hpp"
#include "core/training/parameters.hpp"
#include "core/training/reference_training.hpp"
#include "core/training/training_pass.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

namespace attnviz {
namespace {

struct RandomModel {
  TransformerConfig config;
  ParameterTable table;
  std::vector<float> values;
  TransformerWeights weights() const { return weights_of(config, table, values.data()); }
};

enum class Family { Gpt2, Llama, Bert };

// A small Llama: RMSNorm, RoPE, SwiGLU, 4 query heads reading 2 key/value heads of d_head 4.
TransformerConfig small_llama() {
  TransformerConfig c;
  c.architecture = "llama";
  c.vocab_size = 11;
  c.context = 9;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_model = 16;
  c.d_head = 4;
  c.d_ff = 20;
  c.norm = NormKind::RMSNorm;
  c.positions = PositionKind::Rotary;
  c.feed_forward = FeedForwardKind::SwiGLU;
  return c;
}

// A small BERT: attention both ways, LayerNorm after each sublayer and of the embeddings, two
// token types, GELU with erf, the MLM head.
TransformerConfig small_bert() {
  TransformerConfig c;
  c.architecture = "bert";
  c.vocab_size = 11;
  c.context = 9;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.d_model = 8;
  c.d_head = 4;
  c.d_ff = 20;
  c.norm = NormKind::LayerNorm;
  c.norm_epsilon = 1e-12f;
  c.positions = PositionKind::Learned;
  c.feed_forward = FeedForwardKind::GeluErf;
  c.direction = AttentionDirection::BothWays;
  c.norm_placement = NormPlacement::After;
  c.token_types = 2;
  return c;
}

TransformerConfig config_of(Family family) {
  if (family == Family::Llama) return small_llama();
  if (family == Family::Bert) return small_bert();
  return gpt2_config(11, 9, 2, 2, 8);
}

// A small model with every weight random at a scale that makes every part matter (gains
// 1 ± 0.3, biases ± 0.2, matrices ± 0.5): a wrong term in any gradient shows.
RandomModel random_model(std::uint64_t seed, bool tied, bool attention_only = false,
                         Family family = Family::Gpt2) {
  RandomModel m;
  m.config = config_of(family);
  Result<ParameterTable> table = parameter_table_of(m.config, tied);
  REQUIRE(table.ok());
  m.table = std::move(*table);
  m.values.resize(m.table.size());
  for (const ParameterTensor& tensor : m.table.tensors()) {
    const std::uint64_t stream = rng::combine(seed, rng::hash(tensor.name));
    const bool gain = (tensor.name.find("ln_") != std::string::npos ||
                       tensor.name.find("norm") != std::string::npos ||
                       tensor.name.find("LayerNorm") != std::string::npos) &&
                      tensor.name.find(".weight") != std::string::npos;
    const bool mlp = is_mlp_tensor(tensor) || tensor.name.find("feed_forward") != std::string::npos;
    for (std::size_t i = 0; i < tensor.count(); ++i) {
      const float r = rng::value(stream, i);
      float& v = m.values[tensor.offset + i];
      v = gain ? 1.0f + 0.3f * r : tensor.decays() ? 0.5f * r : 0.2f * r;
      if (attention_only && mlp && !gain) v = 0.0f;
    }
  }
  return m;
}

// Runs the calling test case once for each family (doctest's subcases).
Family each_family() {
  Family family = Family::Gpt2;
  SUBCASE("GPT-2") {
    family = Family::Gpt2;
  }
  SUBCASE("Llama") {
    family = Family::Llama;
  }
  SUBCASE("BERT") {
    family = Family::Bert;
  }
  return family;
}

// Two texts of 7 tokens; for BERT with sentence A and B (token types 0 and 1).
TrainingBatch test_batch(Family family = Family::Gpt2) {
  TrainingBatch batch;
  batch.texts = 2;
  batch.length = 7;
  batch.tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7};
  batch.targets = {1, 4, 1, 5, 9, 2, -1, -1, 3, 5, 10, 9, 7, 0};
  if (family == Family::Bert) batch.token_types = {0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1};
  return batch;
}

// The largest difference between two gradients over one tensor, relative to its largest entry,
// or to a hundredth of the largest entry of all when that is larger: a tensor whose gradient is 0
// in exact arithmetic holds round-off alone (a key bias of its own, BERT's: a softmax does not
// change when every score of its row moves by the same q · b_K).
struct Compared {
  std::string worst;
  double largest_difference = 0.0;
};
Compared compare_gradients(const ParameterTable& table, const std::vector<float>& a,
                           const std::vector<float>& b) {
  Compared out;
  double overall = 0.0;
  for (const float value : b) overall = std::max(overall, static_cast<double>(std::fabs(value)));
  for (const ParameterTensor& tensor : table.tensors()) {
    double scale = std::max(1e-6, 1e-2 * overall), difference = 0.0;
    for (std::size_t i = tensor.offset; i < tensor.offset + tensor.count(); ++i) {
      scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
      difference = std::max(difference, static_cast<double>(std::fabs(a[i] - b[i])));
    }
    if (difference / scale > out.largest_difference) {
      out.largest_difference = difference / scale;
      out.worst = tensor.name;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("training's fast backward pass gives its plain reference's gradient, every tensor") {
  for (const auto& [tied, attention_only, family] :
       {std::tuple{true, false, Family::Gpt2}, std::tuple{true, true, Family::Gpt2},
        std::tuple{false, false, Family::Gpt2}, std::tuple{false, true, Family::Gpt2},
        std::tuple{true, false, Family::Llama}, std::tuple{false, false, Family::Llama},
        std::tuple{true, false, Family::Bert}, std::tuple{false, false, Family::Bert}}) {
    {
      // CAPTURE's lambda cannot name a structured binding (clang 14): copies.
      const bool tied_head = tied, only_attention = attention_only;
      const int family_number = static_cast<int>(family);
      CAPTURE(tied_head);
      CAPTURE(only_attention);
      CAPTURE(family_number);
      const RandomModel m = random_model(5, tied, attention_only, family);
      std::vector<float> fast(m.table.size(), 0.0f), plain(m.table.size(), 0.0f);
      Result<TrainingPass> pass = TrainingPass::make(m.config, attention_only);
      REQUIRE(pass.ok());
      Result<float> fast_loss =
          pass->loss_and_gradient(m.weights(), m.values.data(), fast.data(), test_batch(family));
      Result<float> plain_loss = reference_loss_and_gradient(
          m.config, m.weights(), m.values.data(), plain.data(), test_batch(family), attention_only);
      REQUIRE(fast_loss.ok());
      REQUIRE(plain_loss.ok());
      CHECK(*fast_loss == doctest::Approx(*plain_loss).epsilon(1e-5));
      const Compared c = compare_gradients(m.table, fast, plain);
      MESSAGE("largest relative difference " << c.largest_difference << " (" << c.worst << ")");
      CHECK(c.largest_difference < 1e-4);
      // Every tensor the model uses has a gradient (an attention-only model's MLP has none).
      for (const ParameterTensor& tensor : m.table.tensors()) {
        CAPTURE(tensor.name);
        const double norm = gradient_norm(plain.data() + tensor.offset, tensor.count());
        if (tensor.name.ends_with("key.bias")) continue;  // 0 in exact arithmetic (above)
        if (attention_only && is_mlp_tensor(tensor))      // GPT-2's names
          CHECK(norm == 0.0);
        else
          CHECK(norm > 0.0);
      }
    }
  }
}

TEST_CASE("training's products past blas's threshold give the plain reference's gradient too") {
  // Width 128, 512 hidden units, 600 tokens, 128 rows: the MLP's products and the logits' (8 to 10
  // million multiply-adds) go through blas::gemm (OpenBLAS where it is installed), the others
  // through Eigen.
  TransformerConfig c = gpt2_config(600, 64, 1, 4, 128);
  Result<ParameterTable> table = gpt2_parameter_table(c);
  REQUIRE(table.ok());
  std::vector<float> values(table->size());
  initialize_gpt2(c, *table, 4, false, values.data(), {0.2f, 0.2f, 0.2f});
  TrainingBatch batch;
  batch.texts = 2;
  batch.length = 64;
  for (int i = 0; i < 128; ++i) {
    batch.tokens.push_back((i * 37 + 11) % 600);
    batch.targets.push_back(i % 64 == 63 ? -1 : (i * 53 + 5) % 600);
  }
  const TransformerWeights weights = gpt2_weights_of(c, *table, values.data());
  std::vector<float> fast(table->size(), 0.0f), plain(table->size(), 0.0f);
  Result<TrainingPass> pass = TrainingPass::make(c);
  REQUIRE(pass.ok());
  Result<float> fast_loss = pass->loss_and_gradient(weights, values.data(), fast.data(), batch);
  Result<float> plain_loss =
      reference_loss_and_gradient(c, weights, values.data(), plain.data(), batch);
  REQUIRE(fast_loss.ok());
  REQUIRE(plain_loss.ok());
  CHECK(*fast_loss == doctest::Approx(*plain_loss).epsilon(1e-5));
  const Compared compared = compare_gradients(*table, fast, plain);
  MESSAGE("products by " << blas::backend() << "; largest relative difference "
                         << compared.largest_difference << " (" << compared.worst << ")");
  CHECK(compared.largest_difference < 1e-3);
}

TEST_CASE("training's gradient is the loss's slope: central differences on every tensor") {
  const Family family = each_family();
  const RandomModel m = random_model(9, true, false, family);
  std::vector<float> gradient(m.table.size(), 0.0f);
  Result<TrainingPass> pass = TrainingPass::make(m.config);
  REQUIRE(pass.ok());
  REQUIRE(pass->loss_and_gradient(m.weights(), m.values.data(), gradient.data(), test_batch(family))
              .ok());
  RandomModel nudged = m;
  double worst = 0.0;
  for (const ParameterTensor& tensor : m.table.tensors()) {
    // Three entries of each tensor: its largest gradient, its first, and one in the middle.
    std::size_t largest = tensor.offset;
    for (std::size_t i = tensor.offset; i < tensor.offset + tensor.count(); ++i)
      if (std::fabs(gradient[i]) > std::fabs(gradient[largest])) largest = i;
    for (const std::size_t i : {largest, tensor.offset, tensor.offset + tensor.count() / 2}) {
      const float h = 1e-2f;
      const auto loss_at = [&](float value) {
        nudged.values[i] = value;
        Result<float> loss = pass->loss(nudged.weights(), test_batch(family));
        REQUIRE(loss.ok());
        return static_cast<double>(*loss);
      };
      const double slope = (loss_at(m.values[i] + h) - loss_at(m.values[i] - h)) / (2.0 * h);
      nudged.values[i] = m.values[i];
      const double difference = std::fabs(slope - gradient[i]);
      worst = std::max(worst, difference);
      CAPTURE(tensor.name);
      CHECK(difference < 2e-3 + 0.02 * std::fabs(slope));
    }
  }
  MESSAGE("largest difference from the central differences: " << worst);
}

TEST_CASE("a tied embedding's gradient is the sum of its two uses") {
  const Family family = each_family();
  const RandomModel tied = random_model(3, true, false, family);
  RandomModel untied = random_model(3, false, false, family);
  const char* embedding_name = family == Family::Gpt2    ? "wte.weight"
                               : family == Family::Llama ? "tok_embeddings.weight"
                                                         : "bert.embeddings.word_embeddings.weight";
  const char* head_name = family == Family::Gpt2    ? "lm_head.weight"
                          : family == Family::Llama ? "output.weight"
                                                    : "cls.predictions.decoder.weight";
  // The untied model: the same weights, lm_head a copy of wte.
  for (const ParameterTensor& tensor : tied.table.tensors())
    std::copy_n(tied.values.begin() + static_cast<std::ptrdiff_t>(tensor.offset), tensor.count(),
                untied.values.begin() +
                    static_cast<std::ptrdiff_t>(untied.table.find(tensor.name)->offset));
  const ParameterTensor& wte = *untied.table.find(embedding_name);
  const ParameterTensor& head = *untied.table.find(head_name);
  std::copy_n(untied.values.begin() + static_cast<std::ptrdiff_t>(wte.offset), wte.count(),
              untied.values.begin() + static_cast<std::ptrdiff_t>(head.offset));
  std::vector<float> g_tied(tied.table.size(), 0.0f), g_untied(untied.table.size(), 0.0f);
  REQUIRE(
      TrainingPass::make(tied.config)
          ->loss_and_gradient(tied.weights(), tied.values.data(), g_tied.data(), test_batch(family))
          .ok());
  REQUIRE(TrainingPass::make(untied.config)
              ->loss_and_gradient(untied.weights(), untied.values.data(), g_untied.data(),
                                  test_batch(family))
              .ok());
  double worst = 0.0;
  for (std::size_t i = 0; i < wte.count(); ++i) {
    const float sum = g_untied[wte.offset + i] + g_untied[head.offset + i];
    worst = std::max(worst, static_cast<double>(std::fabs(sum - g_tied[wte.offset + i])));
  }
  MESSAGE("largest difference: " << worst);
  CHECK(worst < 1e-6);
  CHECK(gradient_norm(g_untied.data() + head.offset, head.count()) > 0.0);
}

TEST_CASE("training's forward pass gives the engine's logits: its loss from the app's numbers") {
  const Family family = each_family();
  const RandomModel m = random_model(12, true, false, family);
  // The same weights as a Transformer the engine's forward pass reads.
  Transformer model;
  float* values = model.allocate(m.values.size());
  std::copy(m.values.begin(), m.values.end(), values);
  REQUIRE(
      model.set_weights(m.config, weights_of(m.config, m.table, values), "test", "test").is_ok());
  const std::vector<int> tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5};
  TransformerForward forward(model);
  REQUIRE(forward.run(tokens).is_ok());
  double loss = 0.0;
  for (int i = 0; i + 1 < static_cast<int>(tokens.size()); ++i) {
    const RowVector logits = forward.logits(i);
    const float largest = logits.maxCoeff();
    double sum = 0.0;
    for (int t = 0; t < logits.size(); ++t)
      sum += std::exp(static_cast<double>(logits[t] - largest));
    loss += std::log(sum) -
            static_cast<double>(logits[tokens[static_cast<std::size_t>(i) + 1]] - largest);
  }
  loss /= static_cast<double>(tokens.size() - 1);
  Result<TrainingPass> pass = TrainingPass::make(m.config);
  Result<float> trained = pass->loss(m.weights(), next_token_batch(tokens));
  REQUIRE(trained.ok());
  MESSAGE("loss: engine " << loss << ", training " << *trained);
  CHECK(*trained == doctest::Approx(loss).epsilon(1e-5));
  // And the attention it keeps is the engine's.
  const int n = static_cast<int>(tokens.size());
  double worst = 0.0;
  for (int l = 0; l < m.config.n_layers; ++l)
    for (int h = 0; h < m.config.n_heads; ++h) {
      const Matrix engine = forward.attention(l, h);
      const float* mine = pass->attention(0, l, h);
      for (int i = 0; i < n; ++i)
        for (int t = 0; t < n; ++t)
          worst = std::max(worst, static_cast<double>(std::fabs(engine(i, t) - mine[i * n + t])));
    }
  CHECK(worst < 1e-5);
}

TEST_CASE("a batch the model cannot read is refused, and nothing is added to the gradient") {
  const RandomModel m = random_model(1, true);
  Result<TrainingPass> pass = TrainingPass::make(m.config);
  std::vector<float> gradient(m.table.size(), 0.0f);
  TrainingBatch bad = test_batch();
  bad.tokens[3] = 11;  // the vocabulary is 11
  Result<float> loss = pass->loss_and_gradient(m.weights(), m.values.data(), gradient.data(), bad);
  REQUIRE_FALSE(loss.ok());
  CHECK(loss.error().find("outside the vocabulary") != std::string::npos);
  CHECK(gradient_norm(gradient.data(), gradient.size()) == 0.0);
  TrainingBatch long_batch = next_token_batch(std::vector<int>(10, 1));  // the context is 9
  CHECK(pass->loss(m.weights(), long_batch).error().find("longer than the model's context") !=
        std::string::npos);
  CHECK(pass->loss(m.weights(), next_token_batch({4})).error().find("nothing to predict") !=
        std::string::npos);
  TrainingBatch typed = test_batch(Family::Bert);
  CHECK(pass->loss(m.weights(), typed).error().find("has no token types") != std::string::npos);
  typed.token_types[2] = 2;
  CHECK(TrainingPass::make(small_bert())
            ->loss(random_model(1, true, false, Family::Bert).weights(), typed)
            .error()
            .find("token type 2") != std::string::npos);
  // An encoder–decoder's cross-attention: its backward pass is not built.
  TransformerConfig decoder = m.config;
  decoder.cross_attention = true;
  CHECK(TrainingPass::make(decoder).error().find("cross-attention") != std::string::npos);
  CHECK(TrainingPass::make(small_bert(), true).error().find("attention-only") != std::string::npos);
  TransformerConfig odd_groups = small_llama();
  odd_groups.n_kv_heads = 3;  // 4 query heads do not fall into 3 groups
  CHECK_FALSE(TrainingPass::make(odd_groups).ok());
}

}  // namespace attnviz
