// Training's backward pass for encoder–decoders (Marian's layout and BART's): the fast pass
// (training_pass.hpp) against its plain reference (reference_training.hpp), tensor by tensor,
// encoder and decoder, tied and untied; both against central differences of the loss; the loss
// against the engine's own forward pass over a tiny model read by the real loader; Marian's
// constants (its sinusoid positions, final_logits_bias) left without a gradient; and the
// refusals. PyTorch's autograd checks the gradient independently in
// tests/oracle/gradient_oracle_test.py.
#include "core/base/rng.hpp"
#include "core/models/encoder_decoder.hpp"
#include "core/models/hf_encoder_decoder.hpp"
#include "core/training/optimizer.hpp"
#include "core/training/parameters.hpp"
#include "core/training/reference_training.hpp"
#include "core/training/training_pass.hpp"
#include "tests/support/model_folder.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_encoder_decoder.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attnviz {
namespace {

// A tiny encoder–decoder read by the loader (its configurations and constants), and a buffer
// of weights in training's table.
struct EncoderDecoder {
  Transformer loaded;
  ParameterTable table;
  std::vector<float> values;
  const TransformerConfig& encoder_config() const { return loaded.encoder()->config(); }
  const TransformerConfig& decoder_config() const { return loaded.config(); }
  EncoderDecoderWeights weights() const {
    return encoder_decoder_weights_of(encoder_config(), decoder_config(), table, values.data(),
                                      loaded.weights());
  }
};

// With `random_seed` 0 the loaded model's own weights; otherwise every weight random at a scale
// that makes every part matter (gains 1 ± 0.3, biases ± 0.2, matrices ± 0.5).
EncoderDecoder tiny_model(bool bart, bool tied, std::uint64_t random_seed) {
  testing::TempDir dir;
  std::vector<testing::TestTensor> tensors = testing::tiny_tensors(bart);
  if (!tied) {  // lm_head.weight saved apart, different from the embedding
    testing::TestTensor head = tensors.front();
    head.name = "lm_head.weight";
    for (float& v : head.values) v = -v;
    tensors.push_back(head);
  }
  EncoderDecoder m;
  m.loaded = testing::loaded(load_hf_encoder_decoder(
      testing::write_model(dir, testing::tiny_config(bart), tensors).string()));
  Result<ParameterTable> table =
      encoder_decoder_parameter_table(m.encoder_config(), m.decoder_config(), tied);
  REQUIRE_MESSAGE(table.ok(), table.error());
  m.table = std::move(*table);
  m.values.resize(m.table.size());
  const EncoderDecoderWeights views = m.weights();
  copy_weights(m.loaded.encoder()->weights(), views.encoder, m.values.data());
  copy_weights(m.loaded.weights(), views.decoder, m.values.data());
  if (random_seed == 0) return m;
  for (const ParameterTensor& tensor : m.table.tensors()) {
    const std::uint64_t stream = rng::combine(random_seed, rng::hash(tensor.name));
    const bool gain = tensor.name.find("norm") != std::string::npos &&
                      tensor.name.find(".weight") != std::string::npos;
    for (std::size_t i = 0; i < tensor.count(); ++i) {
      const float r = rng::value(stream, i);
      m.values[tensor.offset + i] = gain ? 1.0f + 0.3f * r : tensor.decays() ? 0.5f * r : 0.2f * r;
    }
  }
  return m;
}

// Two texts: each a source of 5 tokens and a decoder input of 6 (the start token, 13, first),
// the targets the next tokens (the last position of the second predicts nothing).
TrainingBatch batch() {
  TrainingBatch b;
  b.texts = 2;
  b.length = 6;
  b.tokens = {13, 3, 1, 4, 1, 5, 13, 9, 2, 6, 5, 3};
  b.targets = {3, 1, 4, 1, 5, 0, 9, 2, 6, 5, 3, -1};
  b.source_length = 5;
  b.source_tokens = {2, 7, 1, 8, 0, 2, 8, 1, 8, 0};
  return b;
}

struct Layout {
  bool bart;
  bool tied;
  const char* name;
};
constexpr Layout kLayouts[] = {{false, true, "Marian, tied"},
                               {false, false, "Marian, lm_head apart"},
                               {true, true, "BART, tied"},
                               {true, false, "BART, lm_head apart"}};

}  // namespace

TEST_CASE("an encoder–decoder's fast backward pass gives its plain reference's gradient") {
  for (const Layout& layout : kLayouts) {
    CAPTURE(layout.name);
    const EncoderDecoder m = tiny_model(layout.bart, layout.tied, 5);
    const EncoderDecoderWeights w = m.weights();
    Result<TrainingPass> pass =
        TrainingPass::make_encoder_decoder(m.encoder_config(), m.decoder_config());
    REQUIRE_MESSAGE(pass.ok(), pass.error());
    std::vector<float> fast(m.table.size(), 0.0f), plain(m.table.size(), 0.0f);
    const Result<float> fast_loss = pass->loss_and_gradient(w.decoder, w.encoder, m.values.data(),
                                                            m.values.size(), fast.data(), batch());
    const Result<float> plain_loss = reference_encoder_decoder_loss_and_gradient(
        m.encoder_config(), w.encoder, m.decoder_config(), w.decoder, m.values.data(),
        m.values.size(), plain.data(), batch());
    REQUIRE_MESSAGE(fast_loss.ok(), fast_loss.error());
    REQUIRE_MESSAGE(plain_loss.ok(), plain_loss.error());
    CHECK(*fast_loss == doctest::Approx(*plain_loss).epsilon(1e-5));
    // Relative to the tensor's largest entry, or a hundredth of the largest of all: a key's bias
    // has a gradient of 0 in exact arithmetic (a softmax does not change when every score of its
    // row moves by the same q · b_K), which leaves round-off alone.
    double overall = 0.0, worst = 0.0;
    for (const float value : plain)
      overall = std::max(overall, static_cast<double>(std::fabs(value)));
    std::string worst_name;
    for (const ParameterTensor& tensor : m.table.tensors()) {
      double scale = 1e-2 * overall, difference = 0.0;
      for (std::size_t i = tensor.offset; i < tensor.offset + tensor.count(); ++i) {
        scale = std::max(scale, static_cast<double>(std::fabs(plain[i])));
        difference = std::max(difference, static_cast<double>(std::fabs(fast[i] - plain[i])));
      }
      // Every tensor is used: the encoder's too (its gradient comes through the memory).
      CAPTURE(tensor.name);
      if (tensor.name.find("k_proj.bias") == std::string::npos)
        CHECK(gradient_norm(plain.data() + tensor.offset, tensor.count()) > 1e-6 * overall);
      if (difference / scale > worst) {
        worst = difference / scale;
        worst_name = tensor.name;
      }
    }
    MESSAGE(std::string(layout.name)
            << ": largest relative difference " << worst << " (" << worst_name << ")");
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("an encoder–decoder's gradient is the loss's slope: central differences") {
  for (const Layout& layout : {kLayouts[0], kLayouts[3]}) {
    CAPTURE(layout.name);
    const EncoderDecoder m = tiny_model(layout.bart, layout.tied, 9);
    Result<TrainingPass> pass =
        TrainingPass::make_encoder_decoder(m.encoder_config(), m.decoder_config());
    REQUIRE(pass.ok());
    std::vector<float> gradient(m.table.size(), 0.0f);
    const EncoderDecoderWeights w = m.weights();
    REQUIRE(pass->loss_and_gradient(w.decoder, w.encoder, m.values.data(), m.values.size(),
                                    gradient.data(), batch())
                .ok());
    EncoderDecoder nudged = tiny_model(layout.bart, layout.tied, 9);
    double worst = 0.0;
    for (const ParameterTensor& tensor : m.table.tensors()) {
      std::size_t largest = tensor.offset;
      for (std::size_t i = tensor.offset; i < tensor.offset + tensor.count(); ++i)
        if (std::fabs(gradient[i]) > std::fabs(gradient[largest])) largest = i;
      for (const std::size_t i : {largest, tensor.offset + tensor.count() / 2}) {
        const float h = 1e-2f;
        const auto loss_at = [&](float value) {
          nudged.values[i] = value;
          const EncoderDecoderWeights v = nudged.weights();
          Result<float> loss = pass->loss(v.decoder, v.encoder, batch());
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
    MESSAGE(std::string(layout.name)
            << ": largest difference from the central differences " << worst);
  }
}

TEST_CASE("an encoder–decoder's training loss is the engine's, from the loaded model's logits") {
  for (const bool bart : {false, true}) {
    CAPTURE(bart);
    const EncoderDecoder m = tiny_model(bart, true, 0);  // the loaded model's own weights
    const TrainingBatch one = [] {
      TrainingBatch b = batch();
      b.texts = 1;
      b.tokens.resize(6);
      b.targets.resize(6);
      b.source_tokens.resize(5);
      return b;
    }();
    EncoderDecoderForward forward(m.loaded);
    REQUIRE(forward.run(one.source_tokens, one.tokens).is_ok());
    double loss = 0.0;
    for (int i = 0; i < one.length; ++i) {
      const RowVector logits = forward.decoder().logits(i);
      const float largest = logits.maxCoeff();
      double sum = 0.0;
      for (int t = 0; t < logits.size(); ++t)
        sum += std::exp(static_cast<double>(logits[t] - largest));
      loss += std::log(sum) -
              static_cast<double>(logits[one.targets[static_cast<std::size_t>(i)]] - largest);
    }
    loss /= one.length;
    Result<TrainingPass> pass =
        TrainingPass::make_encoder_decoder(m.encoder_config(), m.decoder_config());
    const EncoderDecoderWeights w = m.weights();
    const Result<float> trained = pass->loss(w.decoder, w.encoder, one);
    REQUIRE(trained.ok());
    MESSAGE((bart ? "BART" : "Marian") << ": loss engine " << loss << ", training " << *trained);
    CHECK(*trained == doctest::Approx(loss).epsilon(1e-5));
  }
}

TEST_CASE(
    "Marian's constants are not weights: its positions and final_logits_bias get no "
    "gradient") {
  const EncoderDecoder m = tiny_model(false, true, 3);
  CHECK(m.table.find("model.encoder.embed_positions.weight") == nullptr);
  CHECK(m.table.find("final_logits_bias") == nullptr);
  const EncoderDecoderWeights w = m.weights();
  // The views read the loaded model's constants, outside the buffer of weights.
  CHECK(w.decoder.position_embedding.data == m.loaded.weights().position_embedding.data);
  CHECK(w.decoder.unembedding_bias.data == m.loaded.weights().unembedding_bias.data);
  const std::vector<float> positions(
      w.decoder.position_embedding.data,
      w.decoder.position_embedding.data +
          static_cast<std::size_t>(w.decoder.position_embedding.rows) *
              w.decoder.position_embedding.cols);
  // The gradient buffer has the table's size and no more: a write for a constant would land
  // past it (the sanitizers' build sees that), and the constants stay as they were.
  std::vector<float> gradient(m.table.size(), 0.0f);
  Result<TrainingPass> pass =
      TrainingPass::make_encoder_decoder(m.encoder_config(), m.decoder_config());
  REQUIRE(pass->loss_and_gradient(w.decoder, w.encoder, m.values.data(), m.values.size(),
                                  gradient.data(), batch())
              .ok());
  CHECK(std::equal(positions.begin(), positions.end(), w.decoder.position_embedding.data));
  CHECK(gradient_norm(gradient.data(), gradient.size()) > 0.0);
}

TEST_CASE("an encoder–decoder's pass refuses what it cannot train, and a batch without a source") {
  const EncoderDecoder m = tiny_model(false, true, 1);
  const TransformerConfig &encoder = m.encoder_config(), &decoder = m.decoder_config();
  CHECK(TrainingPass::make(decoder).error().find("make_encoder_decoder") != std::string::npos);
  CHECK(TrainingPass::make_encoder_decoder(decoder, decoder).error().find("an encoder") !=
        std::string::npos);
  TransformerConfig norm_before = decoder;
  norm_before.norm_placement = NormPlacement::Before;
  CHECK(TrainingPass::make_encoder_decoder(encoder, norm_before).error().find("norms after") !=
        std::string::npos);
  Result<TrainingPass> pass = TrainingPass::make_encoder_decoder(encoder, decoder);
  REQUIRE(pass.ok());
  const EncoderDecoderWeights w = m.weights();
  std::vector<float> gradient(m.table.size(), 0.0f);
  TrainingBatch no_source = batch();
  no_source.source_length = 0;
  no_source.source_tokens.clear();
  CHECK(pass->loss_and_gradient(w.decoder, w.encoder, m.values.data(), m.values.size(),
                                gradient.data(), no_source)
            .error()
            .find("needs a source") != std::string::npos);
  TrainingBatch bad_source = batch();
  bad_source.source_tokens[3] = testing::kVocab;
  CHECK(pass->loss(w.decoder, w.encoder, bad_source).error().find("source token id") !=
        std::string::npos);
  TrainingBatch long_source = batch();
  long_source.source_length = testing::kPositions + 1;
  long_source.source_tokens.assign(2 * (testing::kPositions + 1), 1);
  CHECK(pass->loss(w.decoder, w.encoder, long_source).error().find("longer than the model's") !=
        std::string::npos);
  CHECK(gradient_norm(gradient.data(), gradient.size()) == 0.0);
  // Without the encoder's weights, and a source given to a model that reads none.
  CHECK(pass->loss(w.decoder, batch()).error().find("encoder's weights") != std::string::npos);
  Result<TrainingPass> encoder_pass = TrainingPass::make(encoder);
  REQUIRE(encoder_pass.ok());
  TrainingBatch encoder_batch = batch();
  CHECK(encoder_pass->loss(w.encoder, encoder_batch).error().find("reads no source") !=
        std::string::npos);
  // A table for a decoder without cross-attention, or stacks of two widths.
  CHECK_FALSE(encoder_decoder_parameter_table(encoder, encoder).ok());
  TransformerConfig wider = decoder;
  wider.d_model = 16;
  wider.d_head = 8;
  CHECK_FALSE(encoder_decoder_parameter_table(encoder, wider).ok());
}

}  // namespace attnviz
