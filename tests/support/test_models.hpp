// Models for the tests: stories260K as shipped, and GPT-2-architecture models built in memory
// from seeded random weights (core/base/rng.hpp): the same seed, the same model, everywhere.
#pragma once

#include "core/base/rng.hpp"
#include "core/models/llama2c.hpp"
#include "core/models/transformer.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>

namespace attnviz::testing {

// assets/models/stories260K/stories260K.bin, made a Transformer.
inline Transformer stories260k() {
  Result<Transformer> model = load_llama2c(
      (std::filesystem::path(ATTNVIZ_SOURCE_DIR) / "assets/models/stories260K/stories260K.bin")
          .string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  return std::move(*model);
}

// What random_transformer builds besides GPT-2's architecture.
enum class RandomKind { Gpt2, BertWithHead, BertWithoutHead };

// A GPT-2-architecture model with seeded random weights of a sensible scale; or BERT's (attention
// both ways, LayerNorm after each sublayer and after the embeddings, two token types, GELU with
// erf, the MLM head or none).
inline Transformer random_transformer(RandomKind kind, std::uint64_t seed, int d_model,
                                      int n_layers, int n_heads, int vocab, int context) {
  Transformer model;
  std::uint64_t stream = 0;
  const auto fill = [&](int count, float scale, float offset) {
    float* values = model.allocate(static_cast<std::size_t>(count));
    const std::uint64_t key = rng::combine(seed, ++stream);
    for (int i = 0; i < count; ++i)
      values[i] = offset + scale * rng::value(key, static_cast<std::uint64_t>(i));
    return values;
  };
  const auto matrix = [&](int rows, int cols, float scale) {
    return MatrixView{fill(rows * cols, scale, 0.0f), rows, cols, cols};
  };
  const auto vector = [&](int size, float scale, float offset) {
    return VectorView{fill(size, scale, offset), size};
  };
  TransformerConfig c;
  c.architecture = "gpt2";
  c.d_model = d_model;
  c.n_layers = n_layers;
  c.n_heads = n_heads;
  c.n_kv_heads = n_heads;
  c.d_head = d_model / n_heads;
  c.d_ff = 4 * d_model;
  c.vocab_size = vocab;
  c.context = context;
  const bool bert = kind != RandomKind::Gpt2;
  if (bert) {
    c.architecture = "bert";
    c.direction = AttentionDirection::BothWays;
    c.norm_placement = NormPlacement::After;
    c.feed_forward = FeedForwardKind::GeluErf;
    c.norm_epsilon = 1e-12f;
    c.token_types = 2;
  }
  TransformerWeights w;
  w.token_embedding = matrix(vocab, d_model, 1.0f);
  w.position_embedding = matrix(context, d_model, 0.5f);
  if (bert) {
    w.token_type_embedding = matrix(2, d_model, 0.5f);
    w.embedding_norm_weight = vector(d_model, 0.2f, 1.0f);
    w.embedding_norm_bias = vector(d_model, 0.1f, 0.0f);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_model));
  for (int l = 0; l < n_layers; ++l) {
    TransformerLayer layer;
    layer.attention_norm_weight = vector(d_model, 0.2f, 1.0f);
    layer.attention_norm_bias = vector(d_model, 0.1f, 0.0f);
    // c_attn as GPT-2 stores it: one (d, 3d) matrix, split into three views with stride 3d.
    const MatrixView qkv = matrix(d_model, 3 * d_model, 2.0f * scale);
    layer.query = MatrixView{qkv.data, d_model, d_model, 3 * d_model};
    layer.key = MatrixView{qkv.data + d_model, d_model, d_model, 3 * d_model};
    layer.value = MatrixView{qkv.data + 2 * d_model, d_model, d_model, 3 * d_model};
    layer.query_bias = vector(d_model, 0.1f, 0.0f);
    layer.key_bias = vector(d_model, 0.1f, 0.0f);
    layer.value_bias = vector(d_model, 0.1f, 0.0f);
    layer.output = matrix(d_model, d_model, scale);
    layer.output_bias = vector(d_model, 0.1f, 0.0f);
    layer.mlp_norm_weight = vector(d_model, 0.2f, 1.0f);
    layer.mlp_norm_bias = vector(d_model, 0.1f, 0.0f);
    layer.up = matrix(d_model, 4 * d_model, scale);
    layer.up_bias = vector(4 * d_model, 0.1f, 0.0f);
    layer.down = matrix(4 * d_model, d_model, 0.5f * scale);
    layer.down_bias = vector(d_model, 0.1f, 0.0f);
    w.layers.push_back(layer);
  }
  if (kind != RandomKind::BertWithoutHead) {
    if (bert) {  // BERT's MLM head: a dense layer, GELU, LayerNorm, the tied decoder + a bias
      w.head_transform = matrix(d_model, d_model, scale);
      w.head_transform_bias = vector(d_model, 0.1f, 0.0f);
      w.unembedding_bias = vector(vocab, 0.1f, 0.0f);
    }
    w.final_norm_weight = vector(d_model, 0.2f, 1.0f);
    w.final_norm_bias = vector(d_model, 0.1f, 0.0f);
    w.unembedding = w.token_embedding;  // tied, as GPT-2 and BERT
  }
  const Status set =
      model.set_weights(c, w, bert ? "random BERT" : "random GPT-2", "built by the test");
  REQUIRE_MESSAGE(set.is_ok(), set.message());
  return model;
}

inline Transformer random_gpt2(std::uint64_t seed, int d_model = 24, int n_layers = 3,
                               int n_heads = 4, int vocab = 50, int context = 40) {
  return random_transformer(RandomKind::Gpt2, seed, d_model, n_layers, n_heads, vocab, context);
}

inline Transformer random_bert(std::uint64_t seed, bool with_head = true, int d_model = 24,
                               int n_layers = 3, int n_heads = 4, int vocab = 50,
                               int context = 40) {
  return random_transformer(with_head ? RandomKind::BertWithHead : RandomKind::BertWithoutHead,
                            seed, d_model, n_layers, n_heads, vocab, context);
}

}  // namespace attnviz::testing
