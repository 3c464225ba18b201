// What the readers of Hugging Face's model folders share (hf_gpt2.hpp, hf_bert.hpp):
//   - where the files are: a folder with config.json and model.safetensors, or either file
//     (the folder it is in); sharded checkpoints and pytorch_model.bin refused with a message
//     saying what to download instead;
//   - config.json read with checks: a size cap, valid JSON, an object; whole numbers in a range
//     (a float with no fraction counts; past int64 is as large as int64 goes), a norm's epsilon
//     in [1e-12, 0.1]; every error names the file and the key;
//   - the tensors a config says a file must hold: each found (with a prefix, or without it),
//     its shape checked against the config (an error names the tensor, its shape and the keys
//     that disagree), its dtype F32, F16 or BF16, read as floats, and every value finite.
#pragma once

#include "core/base/status.hpp"
#include "core/models/safetensors.hpp"
#include "core/models/transformer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attnviz::hf {

// Sizes past these are no model this app can show (and a config claiming them is broken): the
// model's width, its layers, its positions, its vocabulary, its MLP's width.
inline constexpr std::int64_t kMaxWidth = 1 << 16;
inline constexpr std::int64_t kMaxLayers = 1024;
inline constexpr std::int64_t kMaxPositions = 1 << 20;
inline constexpr std::int64_t kMaxVocab = 1 << 22;
inline constexpr std::int64_t kMaxFeedForward = 4 * kMaxWidth;

// A JSON value or a name from a file as a message shows it: at most 80 characters.
std::string shown(std::string text);
// "[768, 2304]"
std::string shape_text(const std::vector<std::int64_t>& shape);

struct Folder {
  std::filesystem::path folder, config, weights;
};
// The folder `path` names (the folder, its model.safetensors or its config.json), with both
// files there. `kind` names the format in messages ("Hugging Face GPT-2").
Result<Folder> locate_folder(const std::string& path, const std::string& kind);

// config.json, parsed and checked key by key.
class Config {
 public:
  static Result<Config> read(const std::filesystem::path& path);

  const nlohmann::json& json() const { return json_; }
  bool has(const char* key) const { return json_.contains(key) && !json_[key].is_null(); }
  // The whole number at `key`, in [low, high]; an error naming the key otherwise.
  Result<std::int64_t> whole(const char* key, std::int64_t low, std::int64_t high) const;
  // The same for a key that must be there, as an int, into `out`.
  Status required(const char* key, std::int64_t high, int& out) const;
  // The key "model_type", when there, must be `type` ("gpt2"); `reads` says what AttnViz reads.
  Status model_type(const char* type, const std::string& reads) const;
  // A norm's epsilon at `key`, or `fallback` when the key is missing.
  Result<float> epsilon(const char* key, float fallback) const;
  // The text at `key`, or nullopt when missing; an error when it is not text.
  Result<std::optional<std::string>> text(const char* key) const;
  // An error naming the file: "PATH: why".
  Status fail(const std::string& why) const { return Status::error(path_ + ": " + why); }
  const std::string& path() const { return path_; }

 private:
  nlohmann::json json_;
  std::string path_;
};

// A model folder's two files, opened: config.json parsed (its keys not yet checked) and
// model.safetensors checked (safetensors.hpp). `kind` names the format in messages.
struct Files {
  Folder where;
  Config config;
  SafetensorsFile weights;
  // "WEIGHTS: why", naming model.safetensors.
  Status fail(const std::string& why) const { return Status::error(weights.path() + ": " + why); }
};
Result<Files> open_files(const std::string& path, const std::string& kind);

// A stack of layers as its tensors are named: "h." 0 .. layers − 1, as config.json's
// `layers_key` says ("n_layer").
struct LayerNames {
  std::string prefix;
  int layers = 0;
  std::string layers_key;
};
// The tensors of the file that `used` does not hold, each a warning ("FILE: tensor NAME
// ignored") unless `quiet(name without the prefix)`; an error when one belongs to a layer
// past a stack's count (an encoder–decoder has two stacks).
Result<std::vector<std::string>> unused_tensors(
    const Files& files, const std::set<std::string>& used, const std::string& prefix,
    const std::vector<LayerNames>& stacks, const std::function<bool(const std::string&)>& quiet);

// One tensor a config says the file holds.
struct Expected {
  std::string name;  // without the file's prefix
  std::vector<std::int64_t> shape;
  std::string keys;  // the config's keys that give the shape: "n_embd = 8, n_inner = 32"
};

// The tensors of `expected`, read as floats in their order (F16, BF16 converted into buffers of
// `model`), each named `prefix` + name: checked (shape, dtype, every value finite) before any
// is used. `names_used` gets the full names read.
struct ReadTensors {
  std::vector<const float*> values;  // in the order of `expected`
  std::set<SafetensorsDtype> dtypes;
};
Result<ReadTensors> read_tensors(const SafetensorsFile& file, const std::vector<Expected>& expected,
                                 const std::string& prefix, const std::string& config_path,
                                 Transformer& model, std::set<std::string>& names_used);

// nn.Linear's (out, in) `weight` copied into a buffer of `model` as (in, out), the engine's
// convention (y = x · W + b).
MatrixView transposed(Transformer& model, const float* weight, int out, int in);

// "Hugging Face GPT-2, safetensors F16 and F32"
std::string format_name(const std::string& kind, const std::set<SafetensorsDtype>& dtypes);

// The whole number a tensor's name holds after `before` ("h.", "encoder.layer."), and -1 when
// it does not start so or the number is not followed by '.'.
std::int64_t layer_of(const std::string& name, const std::string& before);

// The shape both Hugging Face readers describe: learned positions, LayerNorm, every head with its
// own keys and values (d_head = d_model / heads), a feed-forward of `d_ff` with `activation`.
struct Shape {
  int d_model = 0, layers = 0, heads = 0, d_ff = 0, vocab = 0, context = 0;
  float norm_epsilon = 1e-5f;
  FeedForwardKind activation = FeedForwardKind::GeluTanh;
};
TransformerConfig learned_positions_config(std::string architecture, const Shape& shape);

}  // namespace attnviz::hf
