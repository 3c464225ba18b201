#include "core/models/hf_gpt2.hpp"

#include "core/models/mapped_file.hpp"
#include "core/models/safetensors.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Sizes past these are no model this app can show (and a config claiming them is broken).
constexpr std::int64_t kMaxEmbd = 1 << 16;
constexpr std::int64_t kMaxLayers = 1024;
constexpr std::int64_t kMaxPositions = 1 << 20;
constexpr std::int64_t kMaxVocab = 1 << 22;
constexpr std::int64_t kMaxInner = 4 * kMaxEmbd;
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// A JSON value or a name from a file as a message shows it: at most 80 characters.
std::string shown(std::string text) {
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

struct Gpt2Config {
  int n_embd = 0, n_layer = 0, n_head = 0, n_positions = 0, vocab_size = 0, n_inner = 0;
  float layer_norm_epsilon = 1e-5f;
  std::string positions_key = "n_positions";  // or "n_ctx", whichever the file gave
  bool n_inner_given = false;
};

// config.json, checked: every key this loader reads has the right type and a sane value.
Result<Gpt2Config> read_config(const fs::path& config_path) {
  const std::string path = config_path.string();
  const auto fail = [&path](const std::string& why) { return Status::error(path + ": " + why); };
  Result<MappedFile> mapped = MappedFile::open(path);
  if (!mapped) return mapped.status();
  if (mapped->size() > kMaxConfigBytes)
    return fail(std::to_string(mapped->size()) + " bytes, too large for a model's config (" +
                std::to_string(kMaxConfigBytes) + " at most)");
  const auto* text = reinterpret_cast<const char*>(mapped->data());
  const Json config = Json::parse(text, text + mapped->size(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return fail("not valid JSON");
  if (!config.is_object()) return fail("not a JSON object");

  // An integer key in [low, high]; nullopt after setting `problem` when it is not.
  std::string problem;
  const auto whole = [&](const char* key, std::int64_t low,
                         std::int64_t high) -> std::optional<std::int64_t> {
    const Json& value = config.at(key);
    std::optional<std::int64_t> n;
    if (value.is_number_unsigned())  // past int64's range: as large as int64 goes
      n = static_cast<std::int64_t>(std::min<std::uint64_t>(
          value.get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()));
    else if (value.is_number_integer())
      n = value.get<std::int64_t>();
    else if (value.is_number_float() && std::isfinite(value.get<double>()) &&
             std::floor(value.get<double>()) == value.get<double>() &&
             std::fabs(value.get<double>()) < 1e15)
      n = static_cast<std::int64_t>(value.get<double>());
    if (!n) {
      problem = std::string(key) + ": " + shown(value.dump()) + " is not a whole number";
      return std::nullopt;
    }
    if (*n < low || *n > high) {
      problem = std::string(key) + " = " + std::to_string(*n) + " (expected " +
                std::to_string(low) + " to " + std::to_string(high) + ")";
      return std::nullopt;
    }
    return n;
  };
  const auto required = [&](const char* key, std::int64_t high, int& out) -> bool {
    if (!config.contains(key)) {
      problem = std::string(key) + ": missing";
      return false;
    }
    const std::optional<std::int64_t> n = whole(key, 1, high);
    if (n) out = static_cast<int>(*n);
    return n.has_value();
  };
  Gpt2Config c;
  if (config.contains("model_type") &&
      !(config["model_type"].is_string() && config["model_type"] == "gpt2"))
    return fail("model_type: " + shown(config["model_type"].dump()) +
                ", not \"gpt2\" (AttnViz reads GPT-2 models in the Hugging Face layout)");
  if (!required("n_embd", kMaxEmbd, c.n_embd) || !required("n_layer", kMaxLayers, c.n_layer) ||
      !required("n_head", c.n_embd, c.n_head) || !required("vocab_size", kMaxVocab, c.vocab_size))
    return fail(problem);
  if (c.n_embd % c.n_head != 0)
    return fail("n_embd = " + std::to_string(c.n_embd) +
                " is not divisible by n_head = " + std::to_string(c.n_head));
  // n_positions is the size of wpe; n_ctx its old name (GPT-2's own config has both, equal).
  for (const char* key : {"n_ctx", "n_positions"}) {
    if (!config.contains(key)) continue;
    const std::optional<std::int64_t> n = whole(key, 1, kMaxPositions);
    if (!n) return fail(problem);
    c.n_positions = static_cast<int>(*n);
    c.positions_key = key;
  }
  if (c.n_positions == 0) return fail("n_positions: missing (and no n_ctx)");
  c.n_inner = 4 * c.n_embd;
  if (config.contains("n_inner") && !config["n_inner"].is_null()) {
    const std::optional<std::int64_t> n = whole("n_inner", 1, kMaxInner);
    if (!n) return fail(problem);
    c.n_inner = static_cast<int>(*n);
    c.n_inner_given = true;
  }
  if (config.contains("layer_norm_epsilon")) {
    const Json& eps = config["layer_norm_epsilon"];
    if (!eps.is_number())
      return fail("layer_norm_epsilon: " + shown(eps.dump()) + " is not a number");
    const double value = eps.get<double>();
    if (!(value >= 1e-12 && value <= 0.1))
      return fail("layer_norm_epsilon = " + shown(eps.dump()) + " (expected 1e-12 to 0.1)");
    c.layer_norm_epsilon = static_cast<float>(value);
  }
  if (config.contains("activation_function")) {
    const Json& activation = config["activation_function"];
    if (!activation.is_string()) return fail("activation_function: not text");
    const std::string name = activation.get<std::string>();
    // Both are GELU's tanh approximation, which the engine computes.
    if (name != "gelu_new" && name != "gelu_pytorch_tanh")
      return fail("activation_function \"" + shown(name) +
                  "\" is not supported (AttnViz computes GELU's tanh approximation: gelu_new or "
                  "gelu_pytorch_tanh)");
  }
  // Options of Hugging Face's GPT2Config that change the math: refused unless at their default.
  const struct {
    const char* key;
    bool supported;
  } options[] = {{"scale_attn_weights", true},
                 {"scale_attn_by_inverse_layer_idx", false},
                 {"add_cross_attention", false}};
  for (const auto& option : options) {
    if (!config.contains(option.key)) continue;
    const Json& value = config[option.key];
    if (!value.is_boolean()) return fail(std::string(option.key) + ": not true or false");
    if (value.get<bool>() != option.supported)
      return fail(std::string(option.key) + " = " + value.dump() + " is not supported (only " +
                  (option.supported ? "true" : "false") + ")");
  }
  return c;
}

// What one tensor must be, and which keys of config.json say so.
struct Expected {
  std::string name;  // without the "transformer." prefix
  std::vector<std::int64_t> shape;
  std::string keys;  // "n_embd = 8, n_inner = 32"
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The layer index of "h.{i}.…", or -1 for any other name.
std::int64_t layer_of(const std::string& name) {
  if (name.rfind("h.", 0) != 0) return -1;
  std::int64_t layer = 0;
  std::size_t i = 2;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i < 12; ++i)
    layer = layer * 10 + (name[i] - '0');
  if (i == 2 || i >= name.size() || name[i] != '.') return -1;
  return layer;
}

}  // namespace

Result<Transformer> load_hf_gpt2(const std::string& path) {
  std::error_code error;
  const fs::path given(path);
  fs::path folder, weights_path;
  if (fs::is_directory(given, error)) {
    folder = given;
    weights_path = folder / "model.safetensors";
  } else if (fs::is_regular_file(given, error)) {
    folder = given.parent_path().empty() ? fs::path(".") : given.parent_path();
    if (given.extension() == ".safetensors")
      weights_path = given;
    else if (given.filename() == "config.json")
      weights_path = folder / "model.safetensors";
    else
      return Status::error(path +
                           ": not a Hugging Face GPT-2 model (expected its folder, its "
                           "model.safetensors or its config.json)");
  } else {
    return Status::error(path + ": no such file or folder");
  }
  const fs::path config_path = folder / "config.json";
  if (!fs::exists(config_path, error))
    return Status::error(folder.string() +
                         ": no config.json (a Hugging Face GPT-2 model is a folder with "
                         "config.json and model.safetensors)");
  if (!fs::exists(weights_path, error)) {
    if (fs::exists(folder / "model.safetensors.index.json", error))
      return Status::error(folder.string() +
                           ": a sharded checkpoint (model.safetensors.index.json), which AttnViz "
                           "does not read: use a model saved as one model.safetensors");
    if (fs::exists(folder / "pytorch_model.bin", error))
      return Status::error(folder.string() +
                           ": only pytorch_model.bin (PyTorch's pickle format, which AttnViz "
                           "does not read): download model.safetensors from the same page");
    return Status::error(folder.string() + ": no model.safetensors");
  }

  Result<Gpt2Config> read = read_config(config_path);
  if (!read) return read.status();
  const Gpt2Config& c = *read;
  Result<SafetensorsFile> opened = SafetensorsFile::open(weights_path.string());
  if (!opened) return opened.status();
  const SafetensorsFile& file = *opened;
  const std::string file_name = file.path();
  const std::string config_name = config_path.string();
  const auto fail = [&file_name](const std::string& why) {
    return Status::error(file_name + ": " + why);
  };

  // Names saved from GPT2LMHeadModel carry "transformer."; from GPT2Model they do not.
  const std::string prefix = file.find("transformer.wte.weight") ? "transformer." : "";

  // Every tensor the model needs, with its shape as config.json says.
  const std::int64_t d = c.n_embd, V = c.vocab_size, P = c.n_positions, F = c.n_inner;
  const std::string embd = "n_embd = " + std::to_string(d);
  const std::string inner =
      embd + (c.n_inner_given ? ", n_inner = " + std::to_string(F) : ", n_inner = 4 · n_embd");
  std::vector<Expected> expected;
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

  // Every shape and dtype checked before any weight is read.
  std::vector<const SafetensorsTensor*> found;
  std::set<std::string> used;
  for (const Expected& want : expected) {
    const std::string name = want.name == "lm_head.weight" ? want.name : prefix + want.name;
    const SafetensorsTensor* tensor = file.find(name);
    if (!tensor) {
      std::string why = "tensor " + name + " is missing";
      if (!prefix.empty() && file.find(want.name)) why += " (the file has it without the prefix)";
      return fail(why);
    }
    if (tensor->shape != want.shape)
      return fail("tensor " + name + ": shape " + tensor->shape_text() + ", but " + config_name +
                  " (" + want.keys + ") needs " + shape_text(want.shape));
    if (tensor->dtype != SafetensorsDtype::F32 && tensor->dtype != SafetensorsDtype::F16 &&
        tensor->dtype != SafetensorsDtype::BF16)
      return fail("tensor " + name + ": dtype " + dtype_name(tensor->dtype) +
                  " cannot be read as weights (AttnViz reads F32, F16 and BF16)");
    found.push_back(tensor);
    used.insert(name);
  }
  // Tensors the config does not account for: of a layer past n_layer, an error (the config and
  // the file disagree); the attention's mask buffers, ignored; anything else, a warning.
  std::vector<std::string> warnings;
  for (const SafetensorsTensor& tensor : file.tensors()) {
    if (used.contains(tensor.name)) continue;
    const std::string bare =
        tensor.name.rfind(prefix, 0) == 0 ? tensor.name.substr(prefix.size()) : tensor.name;
    const std::int64_t layer = layer_of(bare);
    if (layer >= c.n_layer)
      return fail("tensor " + shown(tensor.name) + " belongs to layer " + std::to_string(layer) +
                  ", but " + config_name + " says n_layer = " + std::to_string(c.n_layer));
    const bool mask_buffer =
        layer >= 0 && (bare.ends_with(".attn.bias") || bare.ends_with(".attn.masked_bias"));
    if (!mask_buffer) warnings.push_back(file_name + ": tensor " + shown(tensor.name) + " ignored");
  }

  Transformer model;
  const auto allocate = [&model](std::size_t count) { return model.allocate(count); };
  std::vector<const float*> values;  // in the order of `expected`
  std::set<SafetensorsDtype> dtypes;
  for (const SafetensorsTensor* tensor : found) {
    Result<const float*> floats = file.floats(*tensor, allocate);
    if (!floats) return floats.status();
    const float* data = *floats;
    for (std::int64_t i = 0; i < tensor->elements; ++i)
      if (!std::isfinite(data[i])) {
        std::string where = "element " + std::to_string(i);
        if (tensor->shape.size() == 2)
          where += " (row " + std::to_string(i / tensor->shape[1]) + ", column " +
                   std::to_string(i % tensor->shape[1]) + ")";
        return fail("tensor " + tensor->name + ": " + where + " is " +
                    (std::isnan(data[i]) ? "NaN" : "infinite") +
                    "; every weight must be a finite number");
      }
    values.push_back(data);
    dtypes.insert(tensor->dtype);
  }

  TransformerConfig config;
  config.architecture = "gpt2";
  config.d_model = c.n_embd;
  config.n_layers = c.n_layer;
  config.n_heads = c.n_head;
  config.n_kv_heads = c.n_head;
  config.d_head = c.n_embd / c.n_head;
  config.d_ff = c.n_inner;
  config.vocab_size = c.vocab_size;
  config.context = c.n_positions;
  config.norm = NormKind::LayerNorm;
  config.norm_epsilon = c.layer_norm_epsilon;
  config.positions = PositionKind::Learned;
  config.feed_forward = FeedForwardKind::GeluTanh;

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

  // "F16", "F16 and F32", "F16, BF16 and F32"
  std::string format = "Hugging Face GPT-2, safetensors ";
  std::size_t written = 0;
  for (const SafetensorsDtype dtype : dtypes) {
    if (written > 0) format += written + 1 == dtypes.size() ? " and " : ", ";
    format += dtype_name(dtype);
    ++written;
  }
  model.keep_file(std::move(*opened).release());
  Status checked =
      model.set_weights(std::move(config), std::move(weights), folder.string(), format);
  if (!checked) return checked;
  return Result<Transformer>(std::move(model), std::move(warnings));
}

}  // namespace attnviz
