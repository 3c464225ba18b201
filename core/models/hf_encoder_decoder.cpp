#include "core/models/hf_encoder_decoder.hpp"

#include "core/models/hf_files.hpp"
#include "core/models/safetensors.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace attnviz {
namespace {

using hf::shown;
using hf::transposed;

constexpr std::int64_t kMaxHidden = hf::kMaxWidth;
constexpr std::int64_t kMaxPositions = 1 << 16;  // sinusoid tables are computed: kept smaller
using hf::kMaxFeedForward;
using hf::kMaxLayers;
using hf::kMaxVocab;
constexpr int kBartPositionOffset = 2;  // BartLearnedPositionalEmbedding's rows 0 and 1 unused

struct StackConfig {
  int layers = 0, heads = 0, d_ff = 0;
};

struct EncoderDecoderConfig {
  bool bart = false;  // else Marian
  int d_model = 0, vocab = 0, positions = 0;
  StackConfig encoder, decoder;
  bool scale_embedding = false;
  FeedForwardKind activation = FeedForwardKind::Silu;
  EncoderDecoderTokens tokens;
};

Result<EncoderDecoderConfig> read_config(const hf::Config& config) {
  const nlohmann::json& json = config.json();
  EncoderDecoderConfig c;
  Result<std::optional<std::string>> type = config.text("model_type");
  if (!type) return type.status();
  if (!*type || (**type != "marian" && **type != "bart"))
    return config.fail("model_type " + (*type ? "\"" + shown(**type) + "\"" : "missing") +
                       ": AttnViz reads the encoder–decoders \"marian\" and \"bart\"");
  c.bart = **type == "bart";
  if (Status s = config.required("d_model", kMaxHidden, c.d_model); !s) return s;
  if (Status s = config.required("vocab_size", kMaxVocab, c.vocab); !s) return s;
  if (Status s = config.required("max_position_embeddings", kMaxPositions, c.positions); !s)
    return s;
  const auto stack = [&](const char* layers, const char* heads, const char* ffn,
                         StackConfig& out) -> Status {
    if (Status s = config.required(layers, kMaxLayers, out.layers); !s) return s;
    if (Status s = config.required(heads, c.d_model, out.heads); !s) return s;
    if (Status s = config.required(ffn, kMaxFeedForward, out.d_ff); !s) return s;
    if (c.d_model % out.heads != 0)
      return config.fail("d_model = " + std::to_string(c.d_model) + " is not divisible by " +
                         heads + " = " + std::to_string(out.heads));
    return Status::success();
  };
  if (Status s = stack("encoder_layers", "encoder_attention_heads", "encoder_ffn_dim", c.encoder);
      !s)
    return s;
  if (Status s = stack("decoder_layers", "decoder_attention_heads", "decoder_ffn_dim", c.decoder);
      !s)
    return s;
  // A true or false at `key`, or `fallback` when missing.
  const auto flag = [&](const char* key, bool fallback) -> Result<bool> {
    if (!config.has(key)) return fallback;
    if (!json[key].is_boolean()) return config.fail(std::string(key) + ": not true or false");
    return json[key].get<bool>();
  };
  Result<bool> scale = flag("scale_embedding", false);
  if (!scale) return scale.status();
  c.scale_embedding = *scale;
  for (const char* key : {"normalize_before", "add_final_layer_norm"}) {
    Result<bool> set = flag(key, false);
    if (!set) return set.status();
    if (*set)
      return config.fail(std::string(key) +
                         " = true is not supported (AttnViz reads Marian and BART with a norm "
                         "after each sublayer and none at the end)");
  }
  Result<bool> shared = flag("share_encoder_decoder_embeddings", true);
  if (!shared) return shared.status();
  if (!*shared)
    return config.fail(
        "share_encoder_decoder_embeddings = false is not supported (one vocabulary for source "
        "and target, as the opus-mt models have)");
  if (config.has("decoder_vocab_size")) {
    Result<std::int64_t> n = config.whole("decoder_vocab_size", 1, kMaxVocab);
    if (!n) return n.status();
    if (*n != c.vocab)
      return config.fail("decoder_vocab_size = " + std::to_string(*n) +
                         " differs from vocab_size = " + std::to_string(c.vocab) +
                         " (AttnViz reads one shared vocabulary)");
  }
  Result<std::optional<std::string>> activation = config.text("activation_function");
  if (!activation) return activation.status();
  c.activation = c.bart ? FeedForwardKind::GeluErf : FeedForwardKind::Silu;
  if (*activation) {
    const std::string& name = **activation;
    if (name == "swish" || name == "silu")
      c.activation = FeedForwardKind::Silu;
    else if (name == "gelu")
      c.activation = FeedForwardKind::GeluErf;
    else if (name == "gelu_new" || name == "gelu_pytorch_tanh")
      c.activation = FeedForwardKind::GeluTanh;
    else
      return config.fail("activation_function \"" + shown(name) +
                         "\" is not supported (AttnViz computes swish/silu and gelu)");
  }
  const auto token = [&](const char* key, int& out) -> Status {
    if (!config.has(key)) return Status::success();
    Result<std::int64_t> id = config.whole(key, 0, c.vocab - 1);
    if (!id) return id.status();
    out = static_cast<int>(*id);
    return Status::success();
  };
  for (auto [key, out] :
       {std::pair{"decoder_start_token_id", &c.tokens.decoder_start},
        std::pair{"eos_token_id", &c.tokens.end}, std::pair{"pad_token_id", &c.tokens.pad}})
    if (Status s = token(key, *out); !s) return s;
  if (c.tokens.decoder_start < 0)
    return config.fail("decoder_start_token_id: missing (the token a translation starts with)");
  return c;
}

// Marian's fixed positions (MarianSinusoidalPositionalEmbedding): row p holds
// sin(p / 10000^(2j/d)) at column j < d/2 and cos(p / 10000^(2j/d)) at column d/2 + j (an odd d:
// the sines take the extra column).
MatrixView sinusoids(Transformer& model, int positions, int d) {
  float* table = model.allocate(static_cast<std::size_t>(positions) * static_cast<std::size_t>(d));
  const int sines = (d + 1) / 2;
  for (int p = 0; p < positions; ++p) {
    float* row = table + static_cast<std::ptrdiff_t>(p) * d;
    for (int j = 0; j < d; ++j) {
      const int pair = j < sines ? j : j - sines;  // the frequency's index
      const double angle = p / std::pow(10000.0, 2.0 * pair / d);
      row[j] = static_cast<float>(j < sines ? std::sin(angle) : std::cos(angle));
    }
  }
  return MatrixView{table, positions, d, d};
}

// The names of one attention block's four linears, in the order the reader walks them.
constexpr const char* kProjections[] = {"q_proj", "k_proj", "v_proj", "out_proj"};

}  // namespace

Result<Transformer> load_hf_encoder_decoder(const std::string& path, EncoderDecoderTokens* tokens) {
  Result<hf::Files> opened = hf::open_files(path, "Hugging Face Marian or BART");
  if (!opened) return opened.status();
  Result<EncoderDecoderConfig> read = read_config(opened->config);
  if (!read) return read.status();
  const EncoderDecoderConfig& c = *read;
  const SafetensorsFile& file = opened->weights;
  const std::string config_name = opened->config.path();
  const auto fail = [&opened](const std::string& why) { return opened->fail(why); };

  const std::int64_t d = c.d_model, V = c.vocab;
  const std::string hidden = "d_model = " + std::to_string(d);
  const std::string vocab = "vocab_size = " + std::to_string(V);
  std::vector<hf::Expected> expected;  // after "model."
  const auto add_norm = [&](const std::string& name) {
    expected.push_back({name + ".weight", {d}, hidden});
    expected.push_back({name + ".bias", {d}, hidden});
  };
  const auto add_linear = [&](const std::string& name, std::int64_t out, std::int64_t in,
                              const std::string& keys) {
    expected.push_back({name + ".weight", {out, in}, keys});
    expected.push_back({name + ".bias", {out}, keys});
  };
  expected.push_back({"shared.weight", {V, d}, vocab + ", " + hidden});
  for (const char* side : {"encoder", "decoder"}) {
    const std::string at = std::string(side) + ".";
    const bool decoder = at == "decoder.";
    const StackConfig& stack = decoder ? c.decoder : c.encoder;
    const std::string ffn = hidden + ", " + side + "_ffn_dim = " + std::to_string(stack.d_ff);
    if (c.bart) {
      expected.push_back(
          {at + "embed_positions.weight",
           {c.positions + kBartPositionOffset, d},
           "max_position_embeddings = " + std::to_string(c.positions) + " + 2, " + hidden});
      add_norm(at + "layernorm_embedding");
    }
    for (int l = 0; l < stack.layers; ++l) {
      const std::string layer = at + "layers." + std::to_string(l) + ".";
      for (const char* projection : kProjections)
        add_linear(layer + "self_attn." + projection, d, d, hidden);
      add_norm(layer + "self_attn_layer_norm");
      if (decoder) {
        for (const char* projection : kProjections)
          add_linear(layer + "encoder_attn." + projection, d, d, hidden);
        add_norm(layer + "encoder_attn_layer_norm");
      }
      add_linear(layer + "fc1", stack.d_ff, d, ffn);
      add_linear(layer + "fc2", d, stack.d_ff, ffn);
      add_norm(layer + "final_layer_norm");
    }
  }
  std::vector<hf::Expected> top;  // no prefix
  const SafetensorsTensor* logits_bias = file.find("final_logits_bias");
  const SafetensorsTensor* lm_head = file.find("lm_head.weight");
  if (logits_bias) top.push_back({"final_logits_bias", {1, V}, vocab});
  if (lm_head) top.push_back({"lm_head.weight", {V, d}, vocab + ", " + hidden});

  Transformer decoder_model;  // owns every buffer, and the file: the encoder views them
  std::set<std::string> used;
  Result<hf::ReadTensors> values =
      hf::read_tensors(file, expected, "model.", config_name, decoder_model, used);
  if (!values) return values.status();
  Result<hf::ReadTensors> top_values =
      hf::read_tensors(file, top, "", config_name, decoder_model, used);
  if (!top_values) return top_values.status();

  // Copies of the shared embedding: passed over when equal to it.
  const float* shared = values->values[0];
  const std::size_t shared_bytes =
      static_cast<std::size_t>(V) * static_cast<std::size_t>(d) * sizeof(float);
  for (const char* copy :
       {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"}) {
    const SafetensorsTensor* tensor = file.find(copy);
    if (!tensor) continue;
    std::set<std::string> copy_used;
    Result<hf::ReadTensors> copied = hf::read_tensors(file, {{copy, {V, d}, vocab + ", " + hidden}},
                                                      "", config_name, decoder_model, copy_used);
    if (!copied) return copied.status();
    if (std::memcmp(copied->values[0], shared, shared_bytes) != 0)
      return fail(std::string("tensor ") + copy +
                  " differs from model.shared.weight (AttnViz reads one embedding shared by "
                  "both stacks)");
    used.insert(copy);
  }
  const bool marian = !c.bart;
  Result<std::vector<std::string>> warnings =
      hf::unused_tensors(*opened, used, "model.",
                         {{"encoder.layers.", c.encoder.layers, "encoder_layers"},
                          {"decoder.layers.", c.decoder.layers, "decoder_layers"}},
                         [marian](const std::string& bare) {
                           return marian && (bare == "encoder.embed_positions.weight" ||
                                             bare == "decoder.embed_positions.weight");
                         });
  if (!warnings) return warnings.status();

  const int n = c.d_model;
  std::size_t next = 1;  // walks values in the order of `expected`, after shared.weight
  const auto vector = [&](int size) { return VectorView{values->values[next++], size}; };
  const auto matrix = [&](int rows, int cols) {
    return MatrixView{values->values[next++], rows, cols, cols};
  };
  // A Linear's weight (out, in) as (in, out), then its bias.
  const auto linear = [&](int out, int in, MatrixView& weight, VectorView& bias) {
    weight = transposed(decoder_model, values->values[next++], out, in);
    bias = vector(out);
  };
  const MatrixView marian_positions =
      marian ? sinusoids(decoder_model, c.positions, n) : MatrixView{};
  const std::string format =
      hf::format_name(c.bart ? "Hugging Face BART" : "Hugging Face Marian", [&] {
        std::set<SafetensorsDtype> all = values->dtypes;
        all.insert(top_values->dtypes.begin(), top_values->dtypes.end());
        return all;
      }());

  Transformer encoder_model;
  for (const bool decoder : {false, true}) {
    const StackConfig& stack = decoder ? c.decoder : c.encoder;
    TransformerConfig config = hf::learned_positions_config(
        c.bart ? "bart" : "marian",
        {n, stack.layers, stack.heads, stack.d_ff, c.vocab, c.positions, 1e-5f, c.activation});
    config.direction = decoder ? AttentionDirection::Causal : AttentionDirection::BothWays;
    config.norm_placement = NormPlacement::After;
    config.embedding_scale = c.scale_embedding ? std::sqrt(static_cast<float>(n)) : 1.0f;
    config.position_offset = c.bart ? kBartPositionOffset : 0;
    config.cross_attention = decoder;
    TransformerWeights weights;
    weights.token_embedding = MatrixView{shared, c.vocab, n, n};  // (vocab_size, d_model)
    if (c.bart) {
      weights.position_embedding = matrix(c.positions + kBartPositionOffset, n);
      weights.embedding_norm_weight = vector(n);
      weights.embedding_norm_bias = vector(n);
    } else {
      weights.position_embedding = marian_positions;  // (context, d_model)
    }
    for (int l = 0; l < stack.layers; ++l) {
      TransformerLayer layer;
      linear(n, n, layer.query, layer.query_bias);    // (d_model, d_model)
      linear(n, n, layer.key, layer.key_bias);        // (d_model, d_model)
      linear(n, n, layer.value, layer.value_bias);    // (d_model, d_model)
      linear(n, n, layer.output, layer.output_bias);  // (n_heads · d_head, d_model)
      layer.attention_norm_weight = vector(n);        // after self-attention
      layer.attention_norm_bias = vector(n);
      if (decoder) {
        linear(n, n, layer.cross_query, layer.cross_query_bias);    // (d_model, d_model)
        linear(n, n, layer.cross_key, layer.cross_key_bias);        // (d_model, d_model)
        linear(n, n, layer.cross_value, layer.cross_value_bias);    // (d_model, d_model)
        linear(n, n, layer.cross_output, layer.cross_output_bias);  // (n_heads · d_head, d_model)
        layer.cross_norm_weight = vector(n);                        // after cross-attention
        layer.cross_norm_bias = vector(n);
      }
      linear(stack.d_ff, n, layer.up, layer.up_bias);      // (d_model, d_ff)
      linear(n, stack.d_ff, layer.down, layer.down_bias);  // (d_ff, d_model)
      layer.mlp_norm_weight = vector(n);                   // after the MLP
      layer.mlp_norm_bias = vector(n);
      weights.layers.push_back(layer);
    }
    if (!decoder) {
      Status checked = encoder_model.set_weights(std::move(config), std::move(weights),
                                                 opened->where.folder.string(), format);
      if (!checked) return checked;
      continue;
    }
    // The decoder's output: the shared embedding (or lm_head) and final_logits_bias.
    std::size_t top_next = 0;
    if (logits_bias) {
      weights.unembedding_bias = VectorView{top_values->values[top_next++], c.vocab};
    } else {
      float* zeros = decoder_model.allocate(static_cast<std::size_t>(c.vocab));
      weights.unembedding_bias = VectorView{zeros, c.vocab};
    }
    weights.unembedding = weights.token_embedding;  // tied
    if (lm_head) {
      const float* head = top_values->values[top_next++];
      if (std::memcmp(head, shared, shared_bytes) != 0)
        weights.unembedding = MatrixView{head, c.vocab, n, n};  // untied: its own
    }
    decoder_model.keep_file(std::move(opened->weights).release());
    Status checked = decoder_model.set_weights(std::move(config), std::move(weights),
                                               opened->where.folder.string(), format);
    if (!checked) return checked;
  }
  decoder_model.set_encoder(std::move(encoder_model));
  if (tokens) *tokens = c.tokens;
  return Result<Transformer>(std::move(decoder_model), std::move(*warnings));
}

}  // namespace attnviz
