// BERT in Hugging Face's layout (config.json + model.safetensors + vocab.txt): tiny models
// written here by the tests' own safetensors writer, in both layouts (BertModel; BertForMaskedLM
// with "bert." and the MLM head), read back value for value (nn.Linear's (out, in) weights
// transposed); every kind of damaged file or config refused with a message naming the file and
// the tensor or key; the folder told from a GPT-2 one by its config.
#include "core/models/hf_bert.hpp"
#include "core/models/model.hpp"
#include "core/models/model_files.hpp"
#include "tests/support/model_folder.hpp"
#include "tests/support/safetensors_writer.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tiny_bert.hpp"

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
using testing::Layout;
using testing::named;
using testing::safetensors_file;
using testing::TestTensor;
using testing::write_file;
using Shape = testing::TinyBertShape;
using testing::tiny_bert_config;
using testing::tiny_bert_tensors;

// The folder DIR/bert (or DIR/name) with config.json and model.safetensors.
fs::path write_bert(const testing::TempDir& dir, const Json& config,
                    const std::vector<TestTensor>& tensors, const std::string& name = "bert") {
  return testing::write_model(dir, config, tensors, name);
}

Transformer load(const fs::path& path, std::vector<std::string>* warnings = nullptr) {
  Result<Transformer> model = load_hf_bert(path.string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  if (warnings) *warnings = model.warnings;
  return std::move(*model);
}

std::string load_error(const fs::path& path) {
  return testing::error_of(load_hf_bert(path.string()));
}

// A Linear's (out, in) values, as the engine's (in, out) view must hold them.
void check_transposed(const MatrixView& view, const std::vector<float>& values, int out, int in) {
  REQUIRE(view.rows == in);
  REQUIRE(view.cols == out);
  for (int o = 0; o < out; ++o)
    for (int i = 0; i < in; ++i)
      REQUIRE(view.at(i, o) == values.at(static_cast<std::size_t>(o * in + i)));
}

}  // namespace

TEST_CASE("a tiny BERT in both layouts and three dtypes is read back exactly, Linear transposed") {
  const Shape s;
  testing::TempDir dir;
  for (const Layout layout : {Layout::Model, Layout::MaskedLm})
    for (const char* dtype : {"F32", "F16", "BF16"})
      for (const bool old_names : {false, true}) {
        CAPTURE(dtype);
        CAPTURE(old_names);
        const std::vector<TestTensor> tensors = tiny_bert_tensors(s, layout, dtype, old_names);
        std::vector<std::string> warnings;
        const Transformer model = load(write_bert(dir, tiny_bert_config(s), tensors), &warnings);
        CHECK(warnings.empty());  // the pooler and position_ids pass quietly
        const TransformerConfig& c = model.config();
        CHECK(c.architecture == "bert");
        CHECK_FALSE(c.causal());
        CHECK(c.norm_after());
        CHECK(c.token_types == 2);
        CHECK(c.feed_forward == FeedForwardKind::GeluErf);
        CHECK(c.norm_epsilon == 1e-12f);
        CHECK(c.context == 10);
        const TransformerWeights& w = model.weights();
        const std::string p = layout == Layout::MaskedLm ? "bert." : "";
        std::vector<TestTensor> copy = tensors;
        CHECK(w.token_type_embedding.at(1, 3) ==
              named(copy, p + "embeddings.token_type_embeddings.weight").values[8 + 3]);
        const std::string at = p + "encoder.layer.1.";
        check_transposed(w.layers[1].key, named(copy, at + "attention.self.key.weight").values, 8,
                         8);
        check_transposed(w.layers[1].up, named(copy, at + "intermediate.dense.weight").values, 16,
                         8);
        check_transposed(w.layers[1].down, named(copy, at + "output.dense.weight").values, 8, 16);
        CHECK(w.layers[0].value_bias.data[5] ==
              named(copy, p + "encoder.layer.0.attention.self.value.bias").values[5]);
        const std::string norm = old_names ? ".gamma" : ".weight";
        CHECK(w.layers[0].mlp_norm_weight.data[2] ==
              named(copy, p + "encoder.layer.0.output.LayerNorm" + norm).values[2]);
        CHECK(model.predicts_tokens() == (layout == Layout::MaskedLm));
        if (layout == Layout::MaskedLm) {
          check_transposed(w.head_transform,
                           named(copy, "cls.predictions.transform.dense.weight").values, 8, 8);
          CHECK(w.unembedding.data == w.token_embedding.data);  // tied
          CHECK(w.unembedding_bias.data[11] == named(copy, "cls.predictions.bias").values[11]);
          CHECK(has(model.format(), "with its MLM head"));
        } else {
          CHECK(has(model.format(), "no MLM head"));
        }
        CHECK(has(model.format(), dtype));
      }
}

TEST_CASE("a tiny BERT: the decoder's weight tied or its own, its bias the same as the head's") {
  const Shape s;
  testing::TempDir dir;
  std::vector<TestTensor> tensors = tiny_bert_tensors(s, Layout::MaskedLm);
  TestTensor decoder = named(tensors, "bert.embeddings.word_embeddings.weight");
  decoder.name = "cls.predictions.decoder.weight";
  TestTensor decoder_bias = named(tensors, "cls.predictions.bias");
  decoder_bias.name = "cls.predictions.decoder.bias";
  tensors.push_back(decoder);
  tensors.push_back(decoder_bias);
  {
    const Transformer tied = load(write_bert(dir, tiny_bert_config(s), tensors));
    CHECK(tied.weights().unembedding.data == tied.weights().token_embedding.data);
  }
  named(tensors, "cls.predictions.decoder.weight").values[4] = 0.25f + 1.0f / 64;
  {
    const Transformer untied = load(write_bert(dir, tiny_bert_config(s), tensors));
    CHECK(untied.weights().unembedding.data != untied.weights().token_embedding.data);
    CHECK(untied.weights().unembedding.at(0, 4) == 0.25f + 1.0f / 64);
  }
  named(tensors, "cls.predictions.decoder.bias").values[1] = 0.5f;
  CHECK(has(load_error(write_bert(dir, tiny_bert_config(s), tensors)),
            "cls.predictions.decoder.bias differs from cls.predictions.bias"));
}

TEST_CASE("a BERT folder with a damaged model.safetensors names the file and the tensor") {
  const Shape s;
  testing::TempDir dir;
  const std::vector<TestTensor> good = tiny_bert_tensors(s, Layout::MaskedLm);
  const auto error_with = [&](const std::function<void(std::vector<TestTensor>&)>& edit) {
    std::vector<TestTensor> tensors = good;
    edit(tensors);
    std::string error = load_error(write_bert(dir, tiny_bert_config(s), tensors));
    CHECK(has(error, (dir.path / "bert" / "model.safetensors").string()));
    return error;
  };
  const std::string config_path = (dir.path / "bert" / "config.json").string();
  CHECK(has(error_with([](auto& t) {
              t.erase(t.begin() + (&named(t, "bert.encoder.layer.1.output.dense.bias") - t.data()));
            }),
            "tensor bert.encoder.layer.1.output.dense.bias is missing"));
  CHECK(has(error_with([](auto& t) {
              named(t, "bert.encoder.layer.0.intermediate.dense.weight").shape = {8, 16};
            }),
            "tensor bert.encoder.layer.0.intermediate.dense.weight: shape [8, 16], but " +
                config_path + " (hidden_size = 8, intermediate_size = 16) needs [16, 8]"));
  CHECK(has(error_with([](auto& t) {
              named(t, "bert.encoder.layer.1.attention.self.query.weight").values[9] =
                  std::nanf("");
            }),
            "tensor bert.encoder.layer.1.attention.self.query.weight: element 9 (row 1, column 1) "
            "is NaN"));
  CHECK(has(error_with([](auto& t) {
              for (TestTensor& x : t)
                if (x.dtype == "F32") x.dtype = "BF16";
              named(t, "cls.predictions.bias").values[3] = std::numeric_limits<float>::infinity();
            }),
            "tensor cls.predictions.bias: element 3 is infinite"));
  CHECK(has(error_with([](auto& t) {
              t.erase(t.begin() + (&named(t, "cls.predictions.transform.dense.bias") - t.data()));
            }),
            "tensor cls.predictions.transform.dense.bias is missing"));
  CHECK(has(error_with([](auto& t) { named(t, "bert.embeddings.LayerNorm.bias").dtype = "I32"; }),
            "dtype I32 cannot be read as weights"));
  CHECK(has(error_with([](auto& t) {
              TestTensor stray = named(t, "bert.encoder.layer.1.output.dense.bias");
              stray.name = "bert.encoder.layer.2.output.dense.bias";
              t.push_back(stray);
            }),
            "belongs to layer 2, but " + config_path + " says num_hidden_layers = 2"));
  // The head's decoder without the rest of the head.
  {
    std::vector<TestTensor> model_only = tiny_bert_tensors(s, Layout::Model);
    TestTensor decoder = named(model_only, "embeddings.word_embeddings.weight");
    decoder.name = "cls.predictions.decoder.weight";
    model_only.push_back(decoder);
    CHECK(has(load_error(write_bert(dir, tiny_bert_config(s), model_only)),
              "the MLM head's decoder without the rest of the head"));
  }
  // A stray tensor is a warning, not an error.
  {
    std::vector<TestTensor> tensors = good;
    TestTensor stray = named(tensors, "cls.predictions.bias");
    stray.name = "cls.something.else";
    tensors.push_back(stray);
    std::vector<std::string> warnings;
    load(write_bert(dir, tiny_bert_config(s), tensors), &warnings);
    REQUIRE(warnings.size() == 1);
    CHECK(has(warnings[0], "tensor cls.something.else ignored"));
  }
}

TEST_CASE("a BERT config.json with absurd or unsupported values is refused, naming the key") {
  const Shape s;
  testing::TempDir dir;
  const std::vector<TestTensor> tensors = tiny_bert_tensors(s, Layout::MaskedLm);
  const auto error_with = [&](const std::function<void(Json&)>& edit) {
    Json config = tiny_bert_config(s);
    edit(config);
    std::string error = load_error(write_bert(dir, config, tensors));
    CHECK(has(error, "bert"));
    return error;
  };
  CHECK(has(error_with([](Json& c) { c.erase("hidden_size"); }), "hidden_size: missing"));
  CHECK(has(error_with([](Json& c) { c["num_attention_heads"] = 3; }),
            "hidden_size = 8 is not divisible by num_attention_heads = 3"));
  CHECK(has(error_with([](Json& c) { c["num_hidden_layers"] = 1e9; }),
            "num_hidden_layers = 1000000000 (expected 1 to 1024)"));
  CHECK(has(error_with([](Json& c) { c["intermediate_size"] = "wide"; }),
            "intermediate_size: \"wide\" is not a whole number"));
  CHECK(has(error_with([](Json& c) { c["type_vocab_size"] = 0; }), "type_vocab_size = 0"));
  CHECK(has(error_with([](Json& c) { c["type_vocab_size"] = 3; }),
            "(type_vocab_size = 3, hidden_size = 8) needs [3, 8]"));
  CHECK(has(error_with([](Json& c) { c["layer_norm_eps"] = -1; }),
            "layer_norm_eps = -1 (expected 1e-12 to 0.1)"));
  CHECK(has(error_with([](Json& c) { c["hidden_act"] = "relu"; }),
            "hidden_act \"relu\" is not supported"));
  CHECK(has(error_with([](Json& c) { c["position_embedding_type"] = "relative_key"; }),
            "position_embedding_type \"relative_key\" is not supported"));
  CHECK(has(error_with([](Json& c) { c["is_decoder"] = true; }),
            "is_decoder = true is not supported"));
  CHECK(has(error_with([](Json& c) { c["add_cross_attention"] = 1; }),
            "add_cross_attention: not true or false"));
  CHECK(has(error_with([](Json& c) { c["model_type"] = "roberta"; }),
            "model_type: \"roberta\", not \"bert\""));
  // The tanh forms of GELU are read as such.
  Json tanh = tiny_bert_config(s);
  tanh["hidden_act"] = "gelu_new";
  CHECK(load(write_bert(dir, tanh, tensors)).config().feed_forward == FeedForwardKind::GeluTanh);
}

TEST_CASE("a BERT folder is told from a GPT-2 one by its config, and opens with its vocabulary") {
  const Shape s;
  testing::TempDir dir;
  const fs::path folder =
      write_bert(dir, tiny_bert_config(s), tiny_bert_tensors(s, Layout::MaskedLm));
  Result<ModelLocation> located = locate_model(folder.string());
  REQUIRE(located.ok());
  CHECK(located->format == ModelFormat::HuggingFaceBert);
  Json no_type = tiny_bert_config(s);
  no_type.erase("model_type");  // architectures alone say BERT
  const fs::path other = write_bert(dir, no_type, tiny_bert_tensors(s, Layout::Model), "other");
  REQUIRE(locate_model((other / "model.safetensors").string()).ok());
  CHECK(locate_model((other / "model.safetensors").string())->format ==
        ModelFormat::HuggingFaceBert);
  CHECK(load_model(other.string()).ok());

  // The vocabulary: [PAD] [UNK] [CLS] [SEP] [MASK] and seven words (12, the model's size).
  write_file(folder / "vocab.txt",
             "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\n.\n##s\n"
             "dog\nplay\n");
  Result<Model> model = open_model(folder.string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  Result<std::vector<ModelToken>> tokens = read_text(*model, "The cats sat.", "the [MASK]");
  REQUIRE(tokens.ok());
  std::vector<int> ids;
  for (const ModelToken& t : *tokens) ids.push_back(t.id);
  CHECK(ids == std::vector<int>{2, 5, 6, 9, 7, 8, 3, 5, 4, 3});
  CHECK(token_types(*tokens) == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 1});
  CHECK((*tokens)[3].shown == "##s");
  CHECK((*tokens)[3].byte_begin == 4);  // "cats": both pieces the word's bytes
  CHECK((*tokens)[8].special);
  CHECK(model->tokenizer.mask_token() == 4);
  CHECK(model->tokenizer.start_token() == -1);
  CHECK(model->tokenizer.text_of(6, 9) == "s");
  CHECK(model->tokenizer.text_of(5, 6) == " cat");
  CHECK(has(model->tokenizer.description(), "BERT WordPiece: 12 tokens, lower case"));
  // A decoder's tokenizer reads no pair.
  CHECK_FALSE(model->tokenizer.reads_pairs() == false);
  write_file(folder / "vocab.txt",
             "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\n.\n##s\n"
             "dog\nplay\nextra\n");
  Result<Model> too_big = open_model(folder.string());
  REQUIRE_FALSE(too_big.ok());
  CHECK(has(too_big.error(), "vocab.txt has 13 tokens, the model only 12"));
}

}  // namespace attnviz
