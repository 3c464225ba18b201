#include "core/models/hf_files.hpp"

#include "core/models/mapped_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz::hf {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {
constexpr std::size_t kMaxConfigBytes = 1 << 20;
}  // namespace

std::string shown(std::string text) {
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Result<Folder> locate_folder(const std::string& path, const std::string& kind) {
  std::error_code error;
  const fs::path given(path);
  Folder found;
  if (fs::is_directory(given, error)) {
    found.folder = given;
    found.weights = given / "model.safetensors";
  } else if (fs::is_regular_file(given, error)) {
    found.folder = given.parent_path().empty() ? fs::path(".") : given.parent_path();
    if (given.extension() == ".safetensors")
      found.weights = given;
    else if (given.filename() == "config.json")
      found.weights = found.folder / "model.safetensors";
    else
      return Status::error(path + ": not a " + kind +
                           " model (expected its folder, its model.safetensors or its "
                           "config.json)");
  } else {
    return Status::error(path + ": no such file or folder");
  }
  found.config = found.folder / "config.json";
  const std::string folder = found.folder.string();
  if (!fs::exists(found.config, error))
    return Status::error(folder + ": no config.json (a " + kind +
                         " model is a folder with config.json and model.safetensors)");
  if (!fs::exists(found.weights, error)) {
    if (fs::exists(found.folder / "model.safetensors.index.json", error))
      return Status::error(folder +
                           ": a sharded checkpoint (model.safetensors.index.json), which AttnViz "
                           "does not read: use a model saved as one model.safetensors");
    if (fs::exists(found.folder / "pytorch_model.bin", error))
      return Status::error(folder +
                           ": only pytorch_model.bin (PyTorch's pickle format, which AttnViz "
                           "does not read): download model.safetensors from the same page");
    return Status::error(folder + ": no model.safetensors");
  }
  return found;
}

Result<Config> Config::read(const fs::path& config_path) {
  Config config;
  config.path_ = config_path.string();
  Result<MappedFile> mapped = MappedFile::open(config.path_);
  if (!mapped) return mapped.status();
  if (mapped->size() > kMaxConfigBytes)
    return config.fail(std::to_string(mapped->size()) + " bytes, too large for a model's config (" +
                       std::to_string(kMaxConfigBytes) + " at most)");
  const auto* text = reinterpret_cast<const char*>(mapped->data());
  config.json_ = Json::parse(text, text + mapped->size(), nullptr, /*allow_exceptions=*/false);
  if (config.json_.is_discarded()) return config.fail("not valid JSON");
  if (!config.json_.is_object()) return config.fail("not a JSON object");
  return config;
}

Result<std::int64_t> Config::whole(const char* key, std::int64_t low, std::int64_t high) const {
  const Json& value = json_.at(key);
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
  if (!n) return fail(std::string(key) + ": " + shown(value.dump()) + " is not a whole number");
  if (*n < low || *n > high)
    return fail(std::string(key) + " = " + std::to_string(*n) + " (expected " +
                std::to_string(low) + " to " + std::to_string(high) + ")");
  return *n;
}

Status Config::required(const char* key, std::int64_t high, int& out) const {
  if (!json_.contains(key)) return fail(std::string(key) + ": missing");
  Result<std::int64_t> n = whole(key, 1, high);
  if (!n) return n.status();
  out = static_cast<int>(*n);
  return Status::success();
}

Status Config::model_type(const char* type, const std::string& reads) const {
  if (!json_.contains("model_type") ||
      (json_["model_type"].is_string() && json_["model_type"] == type))
    return Status::success();
  return fail("model_type: " + shown(json_["model_type"].dump()) + ", not \"" + type +
              "\" (AttnViz reads " + reads + ")");
}

Result<float> Config::epsilon(const char* key, float fallback) const {
  if (!json_.contains(key)) return fallback;
  const Json& eps = json_[key];
  if (!eps.is_number())
    return fail(std::string(key) + ": " + shown(eps.dump()) + " is not a number");
  const double value = eps.get<double>();
  if (!(value >= 1e-12 && value <= 0.1))
    return fail(std::string(key) + " = " + shown(eps.dump()) + " (expected 1e-12 to 0.1)");
  return static_cast<float>(value);
}

Result<std::optional<std::string>> Config::text(const char* key) const {
  if (!has(key)) return std::optional<std::string>();
  if (!json_[key].is_string()) return fail(std::string(key) + ": not text");
  return std::optional<std::string>(json_[key].get<std::string>());
}

Result<Files> open_files(const std::string& path, const std::string& kind) {
  Result<Folder> located = locate_folder(path, kind);
  if (!located) return located.status();
  Result<Config> config = Config::read(located->config);
  if (!config) return config.status();
  Result<SafetensorsFile> weights = SafetensorsFile::open(located->weights.string());
  if (!weights) return weights.status();
  return Files{std::move(*located), std::move(*config), std::move(*weights)};
}

Result<std::vector<std::string>> unused_tensors(
    const Files& files, const std::set<std::string>& used, const std::string& prefix,
    const std::vector<LayerNames>& stacks, const std::function<bool(const std::string&)>& quiet) {
  std::vector<std::string> warnings;
  for (const SafetensorsTensor& tensor : files.weights.tensors()) {
    if (used.contains(tensor.name)) continue;
    const std::string bare =
        tensor.name.rfind(prefix, 0) == 0 ? tensor.name.substr(prefix.size()) : tensor.name;
    for (const LayerNames& stack : stacks) {
      const std::int64_t layer = layer_of(bare, stack.prefix);
      if (layer >= stack.layers)
        return files.fail("tensor " + shown(tensor.name) + " belongs to layer " +
                          std::to_string(layer) + ", but " + files.config.path() + " says " +
                          stack.layers_key + " = " + std::to_string(stack.layers));
    }
    if (!quiet(bare))
      warnings.push_back(files.weights.path() + ": tensor " + shown(tensor.name) + " ignored");
  }
  return warnings;
}

Result<ReadTensors> read_tensors(const SafetensorsFile& file, const std::vector<Expected>& expected,
                                 const std::string& prefix, const std::string& config_path,
                                 Transformer& model, std::set<std::string>& names_used) {
  const std::string file_name = file.path();
  const auto fail = [&file_name](const std::string& why) {
    return Status::error(file_name + ": " + why);
  };
  // Every shape and dtype checked before any weight is read.
  std::vector<const SafetensorsTensor*> found;
  for (const Expected& want : expected) {
    const std::string name = prefix + want.name;
    const SafetensorsTensor* tensor = file.find(name);
    if (!tensor) {
      std::string why = "tensor " + name + " is missing";
      if (!prefix.empty() && file.find(want.name)) why += " (the file has it without the prefix)";
      return fail(why);
    }
    if (tensor->shape != want.shape)
      return fail("tensor " + name + ": shape " + tensor->shape_text() + ", but " + config_path +
                  " (" + want.keys + ") needs " + shape_text(want.shape));
    if (tensor->dtype != SafetensorsDtype::F32 && tensor->dtype != SafetensorsDtype::F16 &&
        tensor->dtype != SafetensorsDtype::BF16)
      return fail("tensor " + name + ": dtype " + dtype_name(tensor->dtype) +
                  " cannot be read as weights (AttnViz reads F32, F16 and BF16)");
    found.push_back(tensor);
    names_used.insert(name);
  }
  ReadTensors read;
  const auto allocate = [&model](std::size_t count) { return model.allocate(count); };
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
    read.values.push_back(data);
    read.dtypes.insert(tensor->dtype);
  }
  return read;
}

MatrixView transposed(Transformer& model, const float* weight, int out, int in) {
  float* copy = model.allocate(static_cast<std::size_t>(out) * static_cast<std::size_t>(in));
  for (int o = 0; o < out; ++o)
    for (int i = 0; i < in; ++i)
      copy[static_cast<std::ptrdiff_t>(i) * out + o] =
          weight[static_cast<std::ptrdiff_t>(o) * in + i];
  return MatrixView{copy, in, out, out};
}

std::string format_name(const std::string& kind, const std::set<SafetensorsDtype>& dtypes) {
  // "F16", "F16 and F32", "F16, BF16 and F32"
  std::string format = kind + ", safetensors ";
  std::size_t written = 0;
  for (const SafetensorsDtype dtype : dtypes) {
    if (written > 0) format += written + 1 == dtypes.size() ? " and " : ", ";
    format += dtype_name(dtype);
    ++written;
  }
  return format;
}

TransformerConfig learned_positions_config(std::string architecture, const Shape& shape) {
  TransformerConfig config;
  config.architecture = std::move(architecture);
  config.d_model = shape.d_model;
  config.n_layers = shape.layers;
  config.n_heads = shape.heads;
  config.n_kv_heads = shape.heads;
  config.d_head = shape.d_model / shape.heads;
  config.d_ff = shape.d_ff;
  config.vocab_size = shape.vocab;
  config.context = shape.context;
  config.norm = NormKind::LayerNorm;
  config.norm_epsilon = shape.norm_epsilon;
  config.positions = PositionKind::Learned;
  config.feed_forward = shape.activation;
  return config;
}

std::int64_t layer_of(const std::string& name, const std::string& before) {
  if (name.rfind(before, 0) != 0) return -1;
  std::int64_t layer = 0;
  std::size_t i = before.size();
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i < before.size() + 10; ++i)
    layer = layer * 10 + (name[i] - '0');
  if (i == before.size() || i >= name.size() || name[i] != '.') return -1;
  return layer;
}

}  // namespace attnviz::hf
