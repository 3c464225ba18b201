#include "core/models/hf_gpt2.hpp"

#include "core/models/hf_files.hpp"
#include "core/models/safetensors.hpp"

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace attnviz {
namespace {

using hf::shown;

constexpr std::int64_t kMaxEmbd = hf::kMaxWidth;
constexpr std::int64_t kMaxInner = hf::kMaxFeedForward;
using hf::kMaxLayers;
using hf::kMaxPositions;
using hf::kMaxVocab;

struct Gpt2Config {
  int n_embd = 0, n_layer = 0, n_head = 0, n_positions = 0, vocab_size = 0, n_inner = 0;
  float layer_norm_epsilon = 1e-5f;
  std::string positions_key = "n_positions";  // or "n_ctx", whichever the file gave
  bool n_inner_given = false;
};

// config.json, checked: every key this loader reads has the right type and a sane value.
Result<Gpt2Config> read_config(const hf::Config& config) {
  const nlohmann::json& json = config.json();
  Gpt2Config c;
  if (Status s = config.model_type("gpt2", "GPT-2 models in the Hugging Face layout"); !s) return s;
  if (Status s = config.required("n_embd", kMaxEmbd, c.n_embd); !s) return s;
  if (Status s = config.required("n_layer", kMaxLayers, c.n_layer); !s) return s;
  if (Status s = config.required("n_head", c.n_embd, c.n_head); !s) return s;
  if (Status s = config.required("vocab_size", kMaxVocab, c.vocab_size); !s) return s;
  if (c.n_embd % c.n_head != 0)
    return config.fail("n_embd = " + std::to_string(c.n_embd) +
                       " is not divisible by n_head = " + std::to_string(c.n_head));
  // n_positions is the size of wpe; n_ctx its old name (GPT-2's own config has both, equal).
  for (const char* key : {"n_ctx", "n_positions"}) {
    if (!json.contains(key)) continue;
    Result<std::int64_t> n = config.whole(key, 1, kMaxPositions);
    if (!n) return n.status();
    c.n_positions = static_cast<int>(*n);
    c.positions_key = key;
  }
  if (c.n_positions == 0) return config.fail("n_positions: missing (and no n_ctx)");
  c.n_inner = 4 * c.n_embd;
  if (config.has("n_inner")) {
    Result<std::int64_t> n = config.whole("n_inner", 1, kMaxInner);
    if (!n) return n.status();
    c.n_inner = static_cast<int>(*n);
    c.n_inner_given = true;
  }
  Result<float> epsilon = config.epsilon("layer_norm_epsilon", 1e-5f);
  if (!epsilon) return epsilon.status();
  c.layer_norm_epsilon = *epsilon;
  Result<std::optional<std::string>> activation = config.text("activation_function");
  if (!activation) return activation.status();
  // Both are GELU's tanh approximation, which the engine computes.
  if (*activation && **activation != "gelu_new" && **activation != "gelu_pytorch_tanh")
    return config.fail("activation_function \"" + shown(**activation) +
                       "\" is not supported (AttnViz computes GELU's tanh approximation: "
                       "gelu_new or gelu_pytorch_tanh)");
  // Options of Hugging Face's GPT2Config that change the math: refused unless at their default.
  const struct {
    const char* key;
    bool supported;
  } options[] = {{"scale_attn_weights", true},
                 {"scale_attn_by_inverse_layer_idx", false},
                 {"add_cross_attention", false}};
  for (const auto& option : options) {
    if (!json.contains(option.key)) continue;
    const nlohmann::json& value = json[option.key];
    if (!value.is_boolean()) return config.fail(std::string(option.key) + ": not true or false");
    if (value.get<bool>() != option.supported)
      return config.fail(std::string(option.key) + " = " + value.dump() +
                         " is not supported (only " + (option.supported ? "true" : "false") + ")");
  }
  return c;
}

}  // namespace

Result<Transformer> load_hf_gpt2(const std::string& path) {
  Result<hf::Files> opened = hf::open_files(path, "Hugging Face GPT-2");
  if (!opened) return opened.status();
  Result<Gpt2Config> read = read_config(opened->config);
  if (!read) return read.status();
  const Gpt2Config& c = *read;
  const SafetensorsFile& file = opened->weights;
  const std::string config_name = opened->config.path();
  const auto fail = [&opened](const std::string& why) { return opened->fail(why); };

  // Names saved from GPT2LMHeadModel carry "transformer."; from GPT2Model they do not.
  const std::string prefix = file.find("transformer.wte.weight") ? "transformer." : "";

  // Every tensor the model needs, with its shape as config.json says.
  const std::int64_t d = c.n_embd, V = c.vocab_size, P = c.n_positions, F = c.n_inner;
  const std::string embd = "n_embd = " + std::to_string(d);
  const std::string inner =
      embd + (c.n_inner_given ? ", n_inner = " + std::to_string(F) : ", n_inner = 4 · n_embd");
  std::vector<hf::Expected> expected;
  expected.push_back({"wte.weight", {V, d}, "vocab_size = " + std::to_string(V) + ", " + embd});
  expected.push_back(
      {"wpe.weight", {P, d}, c.positions_key + " = " + std::to_string(P) + ", " + embd});
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    expected.push_back({h + "ln_1.weight", {d}, embd});
    expected.push_back({h + "ln_1.bias", {d}, embd});
    expected.push_back({h + "attn.c_attn.weight", {d, 3 * d}, embd});
    expected.push_back({h + "attn.c_attn.bias", {3 * d}, embd});
    expected.push_back({h + "attn.c_proj.weight", {d, d}, embd});
    expected.push_back({h + "attn.c_proj.bias", {d}, embd});
    expected.push_back({h + "ln_2.weight", {d}, embd});
    expected.push_back({h + "ln_2.bias", {d}, embd});
    expected.push_back({h + "mlp.c_fc.weight", {d, F}, inner});
    expected.push_back({h + "mlp.c_fc.bias", {F}, inner});
    expected.push_back({h + "mlp.c_proj.weight", {F, d}, inner});
    expected.push_back({h + "mlp.c_proj.bias", {d}, embd});
  }
  expected.push_back({"ln_f.weight", {d}, embd});
  expected.push_back({"ln_f.bias", {d}, embd});
  const SafetensorsTensor* lm_head = file.find("lm_head.weight");
  if (lm_head)
    expected.push_back(
        {"lm_head.weight", {V, d}, "vocab_size = " + std::to_string(V) + ", " + embd});
  if (file.find("lm_head.bias"))
    return fail("tensor lm_head.bias: GPT-2's output head has no bias, and AttnViz adds none");

  // The lm_head is named without the prefix: read apart.
  std::set<std::string> used;
  hf::Expected head_expected;
  if (lm_head) {
    head_expected = expected.back();
    expected.pop_back();
  }
  Transformer model;
  Result<hf::ReadTensors> read_values =
      hf::read_tensors(file, expected, prefix, config_name, model, used);
  if (!read_values) return read_values.status();
  if (lm_head) {
    Result<hf::ReadTensors> head =
        hf::read_tensors(file, {head_expected}, "", config_name, model, used);
    if (!head) return head.status();
    read_values->values.push_back(head->values[0]);
    read_values->dtypes.insert(head->dtypes.begin(), head->dtypes.end());
  }
  const std::vector<const float*>& values = read_values->values;
  // Tensors the config does not account for: of a layer past n_layer, an error (the config and
  // the file disagree); the attention's mask buffers, ignored; anything else, a warning.
  Result<std::vector<std::string>> warnings = hf::unused_tensors(
      *opened, used, prefix, {{"h.", c.n_layer, "n_layer"}}, [](const std::string& bare) {
        return hf::layer_of(bare, "h.") >= 0 &&
               (bare.ends_with(".attn.bias") || bare.ends_with(".attn.masked_bias"));
      });
  if (!warnings) return warnings.status();

  TransformerConfig config = hf::learned_positions_config(
      "gpt2", {c.n_embd, c.n_layer, c.n_head, c.n_inner, c.vocab_size, c.n_positions,
               c.layer_norm_epsilon, FeedForwardKind::GeluTanh});

  const int n = c.n_embd, ff = c.n_inner;
  std::size_t next = 0;  // walks `values` in the order of `expected`
  const auto vector = [&](int size) { return VectorView{values[next++], size}; };
  const auto matrix = [&](int rows, int cols) {
    return MatrixView{values[next++], rows, cols, cols};
  };
  TransformerWeights weights;
  weights.token_embedding = matrix(c.vocab_size, n);      // (vocab_size, d_model)
  weights.position_embedding = matrix(c.n_positions, n);  // (context, d_model)
  for (int l = 0; l < c.n_layer; ++l) {
    TransformerLayer layer;
    layer.attention_norm_weight = vector(n);
    layer.attention_norm_bias = vector(n);
    // c_attn (d_model, 3 · d_model): columns [query | key | value], each (d_model, d_model)
    // with the whole row's stride.
    const float* c_attn = values[next++];
    layer.query = MatrixView{c_attn, n, n, 3 * n};
    layer.key = MatrixView{c_attn + n, n, n, 3 * n};
    layer.value = MatrixView{c_attn + 2 * n, n, n, 3 * n};
    const float* c_attn_bias = values[next++];  // (3 · d_model)
    layer.query_bias = VectorView{c_attn_bias, n};
    layer.key_bias = VectorView{c_attn_bias + n, n};
    layer.value_bias = VectorView{c_attn_bias + 2 * n, n};
    layer.output = matrix(n, n);  // (n_heads · d_head, d_model)
    layer.output_bias = vector(n);
    layer.mlp_norm_weight = vector(n);
    layer.mlp_norm_bias = vector(n);
    layer.up = matrix(n, ff);  // (d_model, d_ff)
    layer.up_bias = vector(ff);
    layer.down = matrix(ff, n);  // (d_ff, d_model)
    layer.down_bias = vector(n);
    weights.layers.push_back(layer);
  }
  weights.final_norm_weight = vector(n);
  weights.final_norm_bias = vector(n);
  weights.unembedding = weights.token_embedding;  // tied
  if (lm_head) {
    const float* head = values[next++];
    const std::size_t count = static_cast<std::size_t>(c.vocab_size) * static_cast<std::size_t>(n);
    if (std::memcmp(head, weights.token_embedding.data, count * sizeof(float)) != 0)
      weights.unembedding = MatrixView{head, c.vocab_size, n, n};  // untied: its own
  }

  const std::string format = hf::format_name("Hugging Face GPT-2", read_values->dtypes);
  model.keep_file(std::move(opened->weights).release());
  Status checked = model.set_weights(std::move(config), std::move(weights),
                                     opened->where.folder.string(), format);
  if (!checked) return checked;
  return Result<Transformer>(std::move(model), std::move(*warnings));
}

}  // namespace attnviz
