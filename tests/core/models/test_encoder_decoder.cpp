// Encoder–decoders in Hugging Face's layout (Marian; BART's positions and embedding norms): tiny
// models written here by the tests' own safetensors writer, read back value for value (Marian's
// sinusoids against the formula, the shared embedding, final_logits_bias); every kind of damaged
// config or file refused with a message naming the key or the tensor; the forward pass's cache
// (typing the target reuses the encoder and the cross-attention's keys and values; a new source
// recomputes all), cross-attention's rows, knock-outs and its refusals; the Marian tokenizer's
// refusals of bad files. The numbers themselves are checked against an independent PyTorch
// reference in tests/oracle/marian_oracle_test.py.
#include "core/models/encoder_decoder.hpp"
#include "core/models/hf_encoder_decoder.hpp"
#include "core/models/marian_tokenizer.hpp"
#include "core/models/model_files.hpp"
#include "core/models/reference_forward.hpp"
#include "tests/support/forward_compare.hpp"
#include "tests/support/model_folder.hpp"
#include "tests/support/safetensors_writer.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_encoder_decoder.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::has;
using testing::kD, testing::kHeads, testing::kLayers, testing::kVocab, testing::kPositions,
    testing::kFeedForward, testing::tiny_config, testing::tiny_tensors;
using testing::named;
using testing::safetensors_file;
using testing::TestTensor;
using testing::write_file;
using testing::write_model;

Transformer load(const fs::path& path) {
  return testing::loaded(load_hf_encoder_decoder(path.string()));
}

std::string load_error(const fs::path& path) {
  return testing::error_of(load_hf_encoder_decoder(path.string()));
}

}  // namespace

TEST_CASE("a tiny Marian is read back: two stacks, the shared embedding, sinusoids, the bias") {
  testing::TempDir dir;
  std::vector<TestTensor> tensors = tiny_tensors();
  const fs::path folder = write_model(dir, tiny_config(), tensors);
  const Result<ModelLocation> located = locate_model(folder.string());
  REQUIRE(located.ok());
  CHECK(located->format == ModelFormat::HuggingFaceEncoderDecoder);
  EncoderDecoderTokens tokens;
  Result<Transformer> loaded = load_hf_encoder_decoder(folder.string(), &tokens);
  REQUIRE_MESSAGE(loaded.ok(), loaded.error());
  const Transformer& decoder = *loaded;
  CHECK(tokens.decoder_start == kVocab - 1);
  CHECK(tokens.end == 0);
  REQUIRE(decoder.encoder() != nullptr);
  const Transformer& encoder = *decoder.encoder();
  const TransformerConfig& dc = decoder.config();
  const TransformerConfig& ec = encoder.config();
  CHECK(dc.cross_attention);
  CHECK(dc.causal());
  CHECK_FALSE(ec.causal());
  CHECK_FALSE(ec.cross_attention);
  CHECK(dc.feed_forward == FeedForwardKind::Silu);
  CHECK(dc.embedding_scale == doctest::Approx(std::sqrt(static_cast<float>(kD))));
  CHECK(dc.norm_after());
  CHECK(decoder.predicts_tokens());
  CHECK_FALSE(encoder.predicts_tokens());
  CHECK(decoder.format() == "Hugging Face Marian, safetensors F32");

  // One embedding, shared by both stacks and the unembedding.
  const TestTensor& shared = named(tensors, "model.shared.weight");
  CHECK(decoder.weights().token_embedding.data == encoder.weights().token_embedding.data);
  CHECK(decoder.weights().unembedding.data == decoder.weights().token_embedding.data);
  CHECK(decoder.weights().token_embedding.at(3, 5) == shared.values[3 * kD + 5]);
  CHECK(decoder.weights().unembedding_bias.data[7] ==
        named(tensors, "final_logits_bias").values[7]);
  // Marian's positions: sines in the first half of a row, cosines in the second.
  const MatrixView& positions = decoder.weights().position_embedding;
  REQUIRE(positions.rows == kPositions);
  for (int p : {0, 1, 5, kPositions - 1})
    for (int j = 0; j < kD / 2; ++j) {
      const double angle = p / std::pow(10000.0, 2.0 * j / kD);
      CHECK(positions.at(p, j) == doctest::Approx(std::sin(angle)).epsilon(1e-6));
      CHECK(positions.at(p, kD / 2 + j) == doctest::Approx(std::cos(angle)).epsilon(1e-6));
    }
  // nn.Linear's (out, in) read as (in, out): the cross-attention's W_Q of layer 1.
  const TestTensor& cross_q = named(tensors, "model.decoder.layers.1.encoder_attn.q_proj.weight");
  const MatrixView& view = decoder.weights().layers[1].cross_query;
  for (int o = 0; o < kD; ++o)
    for (int i = 0; i < kD; ++i) REQUIRE(view.at(i, o) == cross_q.values[o * kD + i]);
  // Parameters: each stack's own, the shared embedding once, the position table once a stack.
  const std::size_t per_layer_self = 4 * (kD * kD + kD) + 2 * kD;
  const std::size_t per_mlp = 2 * kD * kFeedForward + kFeedForward + kD + 2 * kD;
  const std::size_t expected = kVocab * kD + kVocab + 2 * kPositions * kD +
                               kLayers * (per_layer_self + per_mlp) +
                               kLayers * (2 * per_layer_self + per_mlp);
  CHECK(decoder.parameter_count() == expected);
}

TEST_CASE("a tiny BART: learned positions from row 2, embedding norms, GELU, no scale") {
  testing::TempDir dir;
  std::vector<TestTensor> tensors = tiny_tensors(true, "BF16");
  const Transformer decoder = load(write_model(dir, tiny_config(true), tensors, "bart"));
  const TransformerConfig& c = decoder.config();
  CHECK(c.architecture == "bart");
  CHECK(c.position_offset == 2);
  CHECK(c.embedding_scale == 1.0f);
  CHECK(c.feed_forward == FeedForwardKind::GeluErf);
  CHECK_FALSE(decoder.weights().embedding_norm_weight.empty());
  CHECK_FALSE(decoder.encoder()->weights().embedding_norm_weight.empty());
  CHECK(decoder.weights().position_embedding.rows == kPositions + 2);
  CHECK(decoder.weights().position_embedding.at(2, 1) ==
        named(tensors, "model.decoder.embed_positions.weight").values[2 * kD + 1]);
}

TEST_CASE("Marian's and BART's fast pass equals the plain reference, cross-attention and all") {
  testing::TempDir dir;
  for (const bool bart : {false, true}) {
    CAPTURE(bart);
    const Transformer model =
        load(write_model(dir, tiny_config(bart), tiny_tensors(bart), bart ? "bart" : "marian"));
    const std::vector<int> source = {3, 7, 2, 9, 11, 0}, target = {kVocab - 1, 4, 5, 8, 1};
    for (const bool knocked_out : {false, true}) {
      CAPTURE(knocked_out);
      EncoderDecoderForward fast(model);
      ReferenceForward encoder(*model.encoder()), decoder(model);
      HeadIntervention uniform, zero;
      uniform.pattern = HeadIntervention::Pattern::Uniform;
      zero.output_scale = 0.0f;
      if (knocked_out) {
        REQUIRE(fast.encoder().set_intervention(1, 0, zero).is_ok());
        REQUIRE(fast.decoder().set_cross_intervention(0, 1, uniform).is_ok());
        REQUIRE(fast.decoder().set_cross_intervention(1, 1, zero).is_ok());
        encoder.set_intervention(1, 0, zero);
        decoder.set_cross_intervention(0, 1, uniform);
        decoder.set_cross_intervention(1, 1, zero);
      }
      REQUIRE(fast.run(source, target).is_ok());
      REQUIRE(encoder.encode(source, {}).is_ok());
      CHECK(testing::compare(fast.encoder(), encoder) < 1e-5);
      std::vector<std::vector<float>> memory;
      for (int i = 0; i < static_cast<int>(source.size()); ++i)
        memory.push_back(encoder.final_normalized(i));
      decoder.set_memory(std::move(memory));
      for (const int token : target) REQUIRE(decoder.step(token).ok());
      CHECK(testing::compare(fast.decoder(), decoder) < 1e-5);
    }
  }
}

TEST_CASE("a Marian config or file that cannot be read is refused, naming the key or tensor") {
  testing::TempDir dir;
  int n = 0;
  const auto refused = [&](const Json& config, const std::vector<TestTensor>& tensors) {
    return load_error(write_model(dir, config, tensors, "bad" + std::to_string(n++)));
  };
  const std::vector<TestTensor> good = tiny_tensors();
  Json config = tiny_config();
  config.erase("d_model");
  CHECK(has(refused(config, good), "d_model"));
  config = tiny_config();
  config["normalize_before"] = true;
  CHECK(has(refused(config, good), "normalize_before = true is not supported"));
  config = tiny_config();
  config["share_encoder_decoder_embeddings"] = false;
  CHECK(has(refused(config, good), "share_encoder_decoder_embeddings = false"));
  config = tiny_config();
  config["decoder_vocab_size"] = kVocab + 1;
  CHECK(has(refused(config, good), "decoder_vocab_size"));
  config = tiny_config();
  config["activation_function"] = "tanh";
  CHECK(has(refused(config, good), "activation_function \"tanh\""));
  config = tiny_config();
  config["encoder_attention_heads"] = 3;
  CHECK(has(refused(config, good), "not divisible by encoder_attention_heads"));
  config = tiny_config();
  config["decoder_start_token_id"] = kVocab;
  CHECK(has(refused(config, good), "decoder_start_token_id"));
  config = tiny_config();
  config["model_type"] = "t5";
  CHECK(has(refused(config, good), "\"marian\" and \"bart\""));

  std::vector<TestTensor> missing = good;
  std::erase_if(missing, [](const TestTensor& t) {
    return t.name == "model.decoder.layers.1.encoder_attn.v_proj.bias";
  });
  CHECK(has(refused(tiny_config(), missing), "model.decoder.layers.1.encoder_attn.v_proj.bias"));
  std::vector<TestTensor> misshapen = good;
  named(misshapen, "model.encoder.layers.0.fc1.weight").shape = {kFeedForward, kD + 1};
  named(misshapen, "model.encoder.layers.0.fc1.weight").values.resize(kFeedForward * (kD + 1));
  CHECK(has(refused(tiny_config(), misshapen), "encoder_ffn_dim"));
  std::vector<TestTensor> not_finite = good;
  named(not_finite, "model.decoder.layers.0.fc2.bias").values[2] =
      std::numeric_limits<float>::quiet_NaN();
  CHECK(has(refused(tiny_config(), not_finite), "NaN"));
  std::vector<TestTensor> extra_layer = good;
  extra_layer.push_back(TestTensor("model.decoder.layers.2.fc1.bias", {kFeedForward},
                                   std::vector<float>(kFeedForward, 0.0f)));
  CHECK(has(refused(tiny_config(), extra_layer), "decoder_layers = 2"));
  std::vector<TestTensor> other_embedding = good;
  TestTensor copy = named(other_embedding, "model.shared.weight");
  copy.name = "model.encoder.embed_tokens.weight";
  copy.values[0] += 0.5f;
  other_embedding.push_back(copy);
  CHECK(has(refused(tiny_config(), other_embedding), "differs from model.shared.weight"));
  // A copy equal to the shared embedding is passed over; so are Marian's stored sinusoids.
  std::vector<TestTensor> copies = good;
  TestTensor same = named(copies, "model.shared.weight");
  same.name = "model.decoder.embed_tokens.weight";
  copies.push_back(same);
  copies.push_back(TestTensor("model.encoder.embed_positions.weight", {kPositions, kD},
                              std::vector<float>(kPositions * kD, 0.0f)));
  Result<Transformer> read =
      load_hf_encoder_decoder(write_model(dir, tiny_config(), copies, "copies").string());
  REQUIRE_MESSAGE(read.ok(), read.error());
  CHECK(read.warnings.empty());
}

TEST_CASE("typing the target reuses the encoder and the cross keys, a new source recomputes") {
  testing::TempDir dir;
  const Transformer model = load(write_model(dir, tiny_config(), tiny_tensors()));
  EncoderDecoderForward forward(model);
  const std::vector<int> source = {3, 7, 2, 9, 0};
  std::vector<int> target = {kVocab - 1, 4, 5};
  REQUIRE(forward.run(source, target).is_ok());
  const TransformerForward& decoder = forward.decoder();
  CHECK(decoder.source_size() == 5);
  // Every cross-attention row is a distribution over the five source tokens.
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) {
      const Matrix weights = decoder.cross_attention(l, h);  // (n_target, n_source)
      REQUIRE(weights.rows() == 3);
      REQUIRE(weights.cols() == 5);
      for (int i = 0; i < 3; ++i) CHECK(weights.row(i).sum() == doctest::Approx(1.0f));
    }
  const RowVector logits_before = decoder.last_logits();
  const std::vector<float> keys_before(decoder.layer(1).cross_keys.row(0),
                                       decoder.layer(1).cross_keys.row(0) + 5 * kD);

  // One more target token: the decoder computes it alone, the encoder nothing.
  target.push_back(6);
  REQUIRE(forward.run(source, target).is_ok());
  CHECK(decoder.last_work().first_position == 3);
  CHECK(decoder.last_work().first_layer_redone == kLayers);
  CHECK(forward.encoder().last_work().first_position == 5);  // nothing changed
  CHECK(std::equal(keys_before.begin(), keys_before.end(), decoder.layer(1).cross_keys.row(0)));
  // ... and its first three positions are what a fresh run gives.
  EncoderDecoderForward fresh(model);
  REQUIRE(fresh.run(source, target).is_ok());
  for (int i = 0; i < 4; ++i)
    CHECK((decoder.final_normalized().matrix().row(i) -
           fresh.decoder().final_normalized().matrix().row(i))
              .cwiseAbs()
              .maxCoeff() < 1e-6f);

  // Another source: everything again, and the cross keys change.
  std::vector<int> other = source;
  other[1] = 8;
  REQUIRE(forward.run(other, target).is_ok());
  CHECK(decoder.last_work().first_layer_redone == 0);
  CHECK_FALSE(
      std::equal(keys_before.begin(), keys_before.end(), decoder.layer(1).cross_keys.row(0)));
  target.pop_back();
  REQUIRE(forward.run(source, target).is_ok());
  CHECK((decoder.last_logits() - logits_before).cwiseAbs().maxCoeff() < 1e-6f);
}

TEST_CASE("cross-attention heads are knocked out or made uniform, nonsense is refused") {
  testing::TempDir dir;
  const Transformer model = load(write_model(dir, tiny_config(), tiny_tensors()));
  EncoderDecoderForward forward(model);
  const std::vector<int> source = {3, 7, 2, 0}, target = {kVocab - 1, 4};
  REQUIRE(forward.run(source, target).is_ok());
  const RowVector plain = forward.decoder().last_logits();
  HeadIntervention uniform;
  uniform.pattern = HeadIntervention::Pattern::Uniform;
  REQUIRE(forward.decoder().set_cross_intervention(1, 0, uniform).is_ok());
  REQUIRE(forward.run(source, target).is_ok());
  CHECK(forward.decoder().last_work().first_layer_redone == 1);
  for (const float w : forward.decoder().cross_attention_row(1, 0, 1))
    CHECK(w == doctest::Approx(0.25f));
  CHECK((forward.decoder().last_logits() - plain).cwiseAbs().maxCoeff() > 1e-4f);
  HeadIntervention knocked_out;
  knocked_out.output_scale = 0.0f;
  REQUIRE(forward.decoder().set_cross_intervention(0, 1, knocked_out).is_ok());
  REQUIRE(forward.run(source, target).is_ok());
  CHECK(forward.decoder()
            .layer(0)
            .cross_head_outputs.matrix()
            .middleCols(kD / kHeads, kD / kHeads)
            .cwiseAbs()
            .maxCoeff() == 0.0f);
  forward.decoder().clear_interventions();
  REQUIRE(forward.run(source, target).is_ok());
  CHECK((forward.decoder().last_logits() - plain).cwiseAbs().maxCoeff() < 1e-6f);

  HeadIntervention previous;
  previous.pattern = HeadIntervention::Pattern::PreviousToken;
  CHECK(has(forward.decoder().set_cross_intervention(0, 0, previous).message(), "previous token"));
  CHECK_FALSE(forward.decoder().set_cross_intervention(kLayers, 0, knocked_out).is_ok());
  CHECK(has(forward.encoder().set_cross_intervention(0, 0, knocked_out).message(),
            "no cross-attention"));
  // The decoder alone, with no encoder output: refused; an empty source or target too.
  TransformerForward alone(model);
  CHECK(has(alone.run(target).message(), "encoder's output"));
  CHECK_FALSE(forward.run({}, target).is_ok());
  CHECK_FALSE(forward.run(source, {}).is_ok());
  const std::vector<int> outside = {kVocab};
  CHECK(has(forward.run(outside, target).message(), "outside the vocabulary"));
}

TEST_CASE("greedy translation stops at </s> or the limit, and leaves the pass on its tokens") {
  testing::TempDir dir;
  const Transformer model = load(write_model(dir, tiny_config(), tiny_tensors()));
  EncoderDecoderForward forward(model);
  const std::vector<int> source = {3, 7, 2, 0};
  Result<std::vector<int>> translation = greedy_translation(forward, source, kVocab - 1, 0, 6);
  REQUIRE(translation.ok());
  REQUIRE(!translation->empty());
  CHECK(translation->front() == kVocab - 1);
  CHECK(translation->size() <= 7);
  CHECK(forward.decoder().tokens() == *translation);
  for (std::size_t i = 1; i < translation->size(); ++i) CHECK((*translation)[i] != 0);
  // Each token is the argmax after the ones before it.
  for (std::size_t i = 1; i < translation->size(); ++i) {
    EncoderDecoderForward check(model);
    const std::vector<int> prefix(translation->begin(), translation->begin() + i);
    REQUIRE(check.run(source, prefix).is_ok());
    const RowVector logits = check.decoder().last_logits();
    Eigen::Index best = 0;
    logits.maxCoeff(&best);
    CHECK(best == (*translation)[i]);
  }
}

TEST_CASE(
    "the greedy search (blocked rows read only when one could win, the last translation as "
    "a draft) gives the plain steps' tokens") {
  testing::TempDir dir;
  std::vector<TestTensor> tensors = tiny_tensors();
  // Rows 1 to 6 blocked by their bias (as marian-web-es's source pieces): read only when the
  // bound says they could win.
  std::vector<float>& bias = named(tensors, "final_logits_bias").values;
  for (int v = 1; v <= 6; ++v) bias[static_cast<std::size_t>(v)] = -100.0f;
  const std::vector<std::vector<int>> sources = {{3, 7, 2, 0}, {9, 8, 0}, {12, 11, 10, 9, 8, 0}};
  {
    const Transformer model = load(write_model(dir, tiny_config(), tensors));
    for (const std::vector<int>& source : sources) {
      EncoderDecoderForward fast(model), plain(model);
      const auto screened = greedy_translation(fast, source, kVocab - 1, 0, 8);
      const auto every_row = greedy_translation_reference(plain, source, kVocab - 1, 0, 8);
      REQUIRE(screened.ok());
      REQUIRE(every_row.ok());
      CHECK(*screened == *every_row);
      for (std::size_t i = 1; i < screened->size(); ++i) {
        CHECK((*screened)[i] > 6);  // no blocked row could win here
      }
    }
    // One pass through every source in turn, each translation a draft for the next (whatever the
    // limit), twice over: the plain steps' tokens each time, and the pass left on them.
    EncoderDecoderForward drafted(model), plain(model);
    for (int round = 0; round < 2; ++round)
      for (const std::vector<int>& source : sources)
        for (const int limit : {8, 2, 5}) {
          const auto got = greedy_translation(drafted, source, kVocab - 1, 0, limit);
          const auto want = greedy_translation_reference(plain, source, kVocab - 1, 0, limit);
          REQUIRE(got.ok());
          REQUIRE(want.ok());
          CHECK(*got == *want);
          CHECK(drafted.decoder().tokens() == *got);
        }
  }
  // Two blocked rows made so large (±1000 times a row) that one of them beats the bias of −100
  // on every step: the search must read it, and does.
  std::vector<float>& shared = named(tensors, "model.shared.weight").values;
  for (int k = 0; k < kD; ++k) {
    const float e = static_cast<float>(k % 3) - 1.0f + 0.25f;
    shared[static_cast<std::size_t>(5 * kD + k)] = 1000.0f * e;
    shared[static_cast<std::size_t>(6 * kD + k)] = -1000.0f * e;
  }
  const Transformer model = load(write_model(dir, tiny_config(), tensors));
  const std::vector<int> source = {9, 8, 0};  // neither 5 nor 6 read as input
  EncoderDecoderForward fast(model), plain(model);
  const auto every_row = greedy_translation_reference(plain, source, kVocab - 1, 0, 1);
  const auto screened = greedy_translation(fast, source, kVocab - 1, 0, 1);
  REQUIRE(every_row.ok());
  REQUIRE(screened.ok());
  REQUIRE(every_row->size() == 2);
  CHECK(((*every_row)[1] == 5 || (*every_row)[1] == 6));
  CHECK(*screened == *every_row);
}

TEST_CASE("the Marian tokenizer refuses missing and damaged files with their names") {
  testing::TempDir dir;
  const fs::path folder = dir.path / "tok";
  fs::create_directories(folder);
  CHECK(has(MarianTokenizer::load_folder(folder.string()).error(), "no source.spm"));
  write_file(folder / "source.spm", "not a model");
  write_file(folder / "target.spm", "not a model");
  write_file(folder / "vocab.json", R"({"</s>": 0, "<unk>": 1, "▁a": 2})");
  const std::string garbage = MarianTokenizer::load_folder(folder.string()).error();
  CHECK(has(garbage, "source.spm"));
  CHECK(has(garbage, "SentencePiece"));
  write_file(folder / "vocab.json", R"({"</s>": 0, "▁a": 1})");
  CHECK(has(MarianTokenizer::load_folder(folder.string()).error(), "no <unk>"));
  write_file(folder / "vocab.json", R"({"</s>": 0, "<unk>": 1, "▁a": 1})");
  CHECK(has(MarianTokenizer::load_folder(folder.string()).error(), "both have the id 1"));
  write_file(folder / "vocab.json", R"({"</s>": 0, "<unk>": 1, "▁a": 7})");
  CHECK(has(MarianTokenizer::load_folder(folder.string()).error(), "outside 0 ... 2"));
  write_file(folder / "vocab.json", R"([[[[[[]]]]]])");
  CHECK(has(MarianTokenizer::load_folder(folder.string()).error(), "vocab.json"));
  write_file(folder / "vocab.json", "{\"</s>\": 0, \"<unk>\": 1, \"\xff\": 2}");
  CHECK(has(MarianTokenizer::load_folder(folder.string()).error(), "vocab.json"));
  write_file(folder / "vocab.json", R"({"</s>": 0, "<unk>": 1})");
  CHECK(has(MarianTokenizer::load_folder(folder.string(), 5).error(), "pad token"));
}

}  // namespace attnviz
