#include "core/models/hf_bert.hpp"

#include "core/models/hf_files.hpp"
#include "core/models/safetensors.hpp"

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace attnviz {
namespace {

using hf::shown;
using hf::transposed;

constexpr std::int64_t kMaxHidden = hf::kMaxWidth;
constexpr std::int64_t kMaxIntermediate = hf::kMaxFeedForward;
constexpr std::int64_t kMaxTypes = 1024;
using hf::kMaxLayers;
using hf::kMaxPositions;
using hf::kMaxVocab;

struct BertConfig {
  int hidden = 0, layers = 0, heads = 0, intermediate = 0, vocab = 0, positions = 0, types = 2;
  float epsilon = 1e-12f;
  FeedForwardKind activation = FeedForwardKind::GeluErf;
};

Result<BertConfig> read_config(const hf::Config& config) {
  const nlohmann::json& json = config.json();
  BertConfig c;
  if (Status s = config.model_type("bert", "BERT models in the Hugging Face layout"); !s) return s;
  if (Status s = config.required("hidden_size", kMaxHidden, c.hidden); !s) return s;
  if (Status s = config.required("num_hidden_layers", kMaxLayers, c.layers); !s) return s;
  if (Status s = config.required("num_attention_heads", c.hidden, c.heads); !s) return s;
  if (Status s = config.required("intermediate_size", kMaxIntermediate, c.intermediate); !s)
    return s;
  if (Status s = config.required("vocab_size", kMaxVocab, c.vocab); !s) return s;
  if (Status s = config.required("max_position_embeddings", kMaxPositions, c.positions); !s)
    return s;
  if (c.hidden % c.heads != 0)
    return config.fail("hidden_size = " + std::to_string(c.hidden) +
                       " is not divisible by num_attention_heads = " + std::to_string(c.heads));
  if (config.has("type_vocab_size")) {
    Result<std::int64_t> n = config.whole("type_vocab_size", 1, kMaxTypes);
    if (!n) return n.status();
    c.types = static_cast<int>(*n);
  }
  Result<float> epsilon = config.epsilon("layer_norm_eps", 1e-12f);
  if (!epsilon) return epsilon.status();
  c.epsilon = *epsilon;
  Result<std::optional<std::string>> activation = config.text("hidden_act");
  if (!activation) return activation.status();
  if (*activation) {
    if (**activation == "gelu_new" || **activation == "gelu_pytorch_tanh")
      c.activation = FeedForwardKind::GeluTanh;
    else if (**activation != "gelu")
      return config.fail("hidden_act \"" + shown(**activation) +
                         "\" is not supported (AttnViz computes GELU: gelu, gelu_new or "
                         "gelu_pytorch_tanh)");
  }
  Result<std::optional<std::string>> positions = config.text("position_embedding_type");
  if (!positions) return positions.status();
  if (*positions && **positions != "absolute")
    return config.fail("position_embedding_type \"" + shown(**positions) +
                       "\" is not supported (only \"absolute\": learned positions)");
  for (const char* key : {"is_decoder", "add_cross_attention"}) {
    if (!config.has(key)) continue;
    if (!json[key].is_boolean()) return config.fail(std::string(key) + ": not true or false");
    if (json[key].get<bool>())
      return config.fail(std::string(key) +
                         " = true is not supported (AttnViz reads BERT as an encoder)");
  }
  return c;
}

}  // namespace

Result<Transformer> load_hf_bert(const std::string& path) {
  Result<hf::Files> opened = hf::open_files(path, "Hugging Face BERT");
  if (!opened) return opened.status();
  Result<BertConfig> read = read_config(opened->config);
  if (!read) return read.status();
  const BertConfig& c = *read;
  const SafetensorsFile& file = opened->weights;
  const std::string config_name = opened->config.path();
  const auto fail = [&opened](const std::string& why) { return opened->fail(why); };

  // BertForMaskedLM's files put "bert." before the encoder's names; BertModel's do not.
  const std::string prefix = file.find("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  // A LayerNorm's parameters: .weight and .bias, or, in older checkpoints, .gamma and .beta.
  const auto norm = [&file](const std::string& full_prefix, const std::string& name) {
    const bool old =
        !file.find(full_prefix + name + ".weight") && file.find(full_prefix + name + ".gamma");
    return std::pair{name + (old ? ".gamma" : ".weight"), name + (old ? ".beta" : ".bias")};
  };

  const std::int64_t d = c.hidden, V = c.vocab, P = c.positions, T = c.types, F = c.intermediate;
  const std::string hidden = "hidden_size = " + std::to_string(d);
  const std::string inner = hidden + ", intermediate_size = " + std::to_string(F);
  std::vector<hf::Expected> encoder;
  const auto add_norm = [&](std::vector<hf::Expected>& list, const std::string& full_prefix,
                            const std::string& name) {
    const auto [weight, bias] = norm(full_prefix, name);
    list.push_back({weight, {d}, hidden});
    list.push_back({bias, {d}, hidden});
  };
  const auto add_linear = [](std::vector<hf::Expected>& list, const std::string& name,
                             std::int64_t out, std::int64_t in, const std::string& keys) {
    list.push_back({name + ".weight", {out, in}, keys});
    list.push_back({name + ".bias", {out}, keys});
  };
  encoder.push_back({"embeddings.word_embeddings.weight",
                     {V, d},
                     "vocab_size = " + std::to_string(V) + ", " + hidden});
  encoder.push_back({"embeddings.position_embeddings.weight",
                     {P, d},
                     "max_position_embeddings = " + std::to_string(P) + ", " + hidden});
  encoder.push_back({"embeddings.token_type_embeddings.weight",
                     {T, d},
                     "type_vocab_size = " + std::to_string(T) + ", " + hidden});
  add_norm(encoder, prefix, "embeddings.LayerNorm");
  for (int l = 0; l < c.layers; ++l) {
    const std::string at = "encoder.layer." + std::to_string(l) + ".";
    for (const char* part : {"query", "key", "value"})
      add_linear(encoder, at + "attention.self." + part, d, d, hidden);
    add_linear(encoder, at + "attention.output.dense", d, d, hidden);
    add_norm(encoder, prefix, at + "attention.output.LayerNorm");
    add_linear(encoder, at + "intermediate.dense", F, d, inner);
    add_linear(encoder, at + "output.dense", d, F, inner);
    add_norm(encoder, prefix, at + "output.LayerNorm");
  }
  // The MLM head: all of it or none.
  const bool has_head = file.find("cls.predictions.bias") != nullptr ||
                        file.find("cls.predictions.transform.dense.weight") != nullptr;
  std::vector<hf::Expected> head;
  const SafetensorsTensor* decoder = file.find("cls.predictions.decoder.weight");
  const SafetensorsTensor* decoder_bias = file.find("cls.predictions.decoder.bias");
  if (has_head) {
    add_linear(head, "cls.predictions.transform.dense", d, d, hidden);
    add_norm(head, "", "cls.predictions.transform.LayerNorm");
    head.push_back({"cls.predictions.bias", {V}, "vocab_size = " + std::to_string(V)});
    if (decoder)
      head.push_back({"cls.predictions.decoder.weight",
                      {V, d},
                      "vocab_size = " + std::to_string(V) + ", " + hidden});
    if (decoder_bias)
      head.push_back({"cls.predictions.decoder.bias", {V}, "vocab_size = " + std::to_string(V)});
  } else if (decoder || decoder_bias) {
    return fail(
        "the MLM head's decoder without the rest of the head (cls.predictions.bias, "
        "cls.predictions.transform.*)");
  }

  Transformer model;
  std::set<std::string> used;
  Result<hf::ReadTensors> encoder_values =
      hf::read_tensors(file, encoder, prefix, config_name, model, used);
  if (!encoder_values) return encoder_values.status();
  Result<hf::ReadTensors> head_values = hf::ReadTensors{};
  if (has_head) head_values = hf::read_tensors(file, head, "", config_name, model, used);
  if (!head_values) return head_values.status();

  // Tensors not accounted for: of a layer past num_hidden_layers, an error; the pooler, the
  // next-sentence head and the position_ids buffer, passed over; anything else, a warning.
  Result<std::vector<std::string>> warnings = hf::unused_tensors(
      *opened, used, prefix, {{"encoder.layer.", c.layers, "num_hidden_layers"}},
      [](const std::string& bare) {
        return bare.rfind("pooler.", 0) == 0 || bare.rfind("cls.seq_relationship.", 0) == 0 ||
               bare == "embeddings.position_ids";
      });
  if (!warnings) return warnings.status();

  TransformerConfig config = hf::learned_positions_config(
      "bert",
      {c.hidden, c.layers, c.heads, c.intermediate, c.vocab, c.positions, c.epsilon, c.activation});
  config.direction = AttentionDirection::BothWays;
  config.norm_placement = NormPlacement::After;
  config.token_types = c.types;

  const int n = c.hidden, ff = c.intermediate;
  const std::vector<const float*>& values = encoder_values->values;
  std::size_t next = 0;  // walks `values` in the order of `encoder`
  const auto vector = [&](int size) { return VectorView{values[next++], size}; };
  const auto matrix = [&](int rows, int cols) {
    return MatrixView{values[next++], rows, cols, cols};
  };
  // A Linear's weight (out, in) as (in, out), then its bias.
  const auto linear = [&](int out, int in, MatrixView& weight, VectorView& bias) {
    weight = transposed(model, values[next++], out, in);
    bias = vector(out);
  };
  TransformerWeights weights;
  weights.token_embedding = matrix(c.vocab, n);         // (vocab_size, d_model)
  weights.position_embedding = matrix(c.positions, n);  // (context, d_model)
  weights.token_type_embedding = matrix(c.types, n);    // (token_types, d_model)
  weights.embedding_norm_weight = vector(n);
  weights.embedding_norm_bias = vector(n);
  for (int l = 0; l < c.layers; ++l) {
    TransformerLayer layer;
    linear(n, n, layer.query, layer.query_bias);    // (d_model, d_model)
    linear(n, n, layer.key, layer.key_bias);        // (d_model, d_model)
    linear(n, n, layer.value, layer.value_bias);    // (d_model, d_model)
    linear(n, n, layer.output, layer.output_bias);  // (n_heads · d_head, d_model)
    layer.attention_norm_weight = vector(n);        // after attention
    layer.attention_norm_bias = vector(n);
    linear(ff, n, layer.up, layer.up_bias);      // (d_model, d_ff)
    linear(n, ff, layer.down, layer.down_bias);  // (d_ff, d_model)
    layer.mlp_norm_weight = vector(n);           // after the MLP
    layer.mlp_norm_bias = vector(n);
    weights.layers.push_back(layer);
  }
  if (has_head) {
    const std::vector<const float*>& head_tensors = head_values->values;
    weights.head_transform = transposed(model, head_tensors[0], n, n);  // (d_model, d_model)
    weights.head_transform_bias = VectorView{head_tensors[1], n};
    weights.final_norm_weight = VectorView{head_tensors[2], n};
    weights.final_norm_bias = VectorView{head_tensors[3], n};
    weights.unembedding_bias = VectorView{head_tensors[4], c.vocab};
    weights.unembedding = weights.token_embedding;  // tied
    const std::size_t vocab = static_cast<std::size_t>(c.vocab);
    std::size_t index = 5;
    if (decoder) {
      const float* decoder_weight = head_tensors[index++];
      if (std::memcmp(decoder_weight, weights.token_embedding.data,
                      vocab * static_cast<std::size_t>(n) * sizeof(float)) != 0)
        weights.unembedding = MatrixView{decoder_weight, c.vocab, n, n};  // untied: its own
    }
    if (decoder_bias &&
        std::memcmp(head_tensors[index], head_tensors[4], vocab * sizeof(float)) != 0)
      return fail(
          "tensor cls.predictions.decoder.bias differs from cls.predictions.bias (BERT "
          "ties them: one bias)");
  }

  const std::string format = hf::format_name(
      has_head ? "Hugging Face BERT with its MLM head" : "Hugging Face BERT (no MLM head)", [&] {
        std::set<SafetensorsDtype> all = encoder_values->dtypes;
        all.insert(head_values->dtypes.begin(), head_values->dtypes.end());
        return all;
      }());
  model.keep_file(std::move(opened->weights).release());
  Status checked = model.set_weights(std::move(config), std::move(weights),
                                     opened->where.folder.string(), format);
  if (!checked) return checked;
  return Result<Transformer>(std::move(model), std::move(*warnings));
}

}  // namespace attnviz
