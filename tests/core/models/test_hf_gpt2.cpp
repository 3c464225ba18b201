// GPT-2 in Hugging Face's layout (config.json + model.safetensors) and safetensors files: tiny
// models written here, byte by byte, by a writer that shares no code with the reader (F32, F16,
// BF16; names with and without "transformer."), read back value for value; F16 and BF16
// conversions against values worked out by hand; and every kind of damaged file refused with a
// message naming the file and the tensor or key.
#include "core/models/hf_gpt2.hpp"
#include "core/models/model_files.hpp"
#include "core/models/safetensors.hpp"
#include "tests/support/model_folder.hpp"
#include "tests/support/safetensors_writer.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace attnviz {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::has;
using testing::named;
using testing::put_u16;
using testing::safetensors_file;
using testing::TestTensor;
using testing::with_header;
using testing::write_file;
using testing::write_model;

// ---- Tiny GPT-2 models ----

struct TinyShape {
  int d = 8, heads = 2, layers = 2, vocab = 11, positions = 6, inner = 32;
};

// Tensor number `k`'s element i: a multiple of 1/32 in [-½, ½], exact in F16 and BF16, and
// different from one tensor to the next.
float tiny_value(int k, std::int64_t i) {
  return static_cast<float>(((k * 13 + i * 7) % 33) - 16) / 32.0f;
}

std::vector<TestTensor> tiny_tensors(const TinyShape& s, const std::string& dtype,
                                     const std::string& prefix) {
  std::vector<TestTensor> out;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
    TestTensor t;
    t.name = prefix + name;
    t.shape = std::move(shape);
    std::int64_t count = 1;
    for (const std::int64_t n : t.shape) count *= n;
    const int k = static_cast<int>(out.size());
    for (std::int64_t i = 0; i < count; ++i) t.values.push_back(tiny_value(k, i));
    t.dtype = dtype;
    out.push_back(std::move(t));
  };
  const std::int64_t d = s.d, f = s.inner;
  add("wte.weight", {s.vocab, d});
  add("wpe.weight", {s.positions, d});
  for (int l = 0; l < s.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", {d});
    add(h + "ln_1.bias", {d});
    add(h + "attn.c_attn.weight", {d, 3 * d});
    add(h + "attn.c_attn.bias", {3 * d});
    add(h + "attn.c_proj.weight", {d, d});
    add(h + "attn.c_proj.bias", {d});
    add(h + "ln_2.weight", {d});
    add(h + "ln_2.bias", {d});
    add(h + "mlp.c_fc.weight", {d, f});
    add(h + "mlp.c_fc.bias", {f});
    add(h + "mlp.c_proj.weight", {f, d});
    add(h + "mlp.c_proj.bias", {d});
  }
  add("ln_f.weight", {d});
  add("ln_f.bias", {d});
  return out;
}

// wte + wpe + per layer (2 LayerNorms, c_attn, c_proj, c_fc, c_proj) + ln_f.
std::size_t tiny_parameter_count(const TinyShape& s) {
  const std::size_t d = s.d, f = s.inner;
  const std::size_t per_layer =
      4 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d);
  return s.vocab * d + s.positions * d + s.layers * per_layer + 2 * d;
}

Json tiny_config(const TinyShape& s) {
  return {{"model_type", "gpt2"},
          {"architectures", {"GPT2LMHeadModel"}},
          {"n_embd", s.d},
          {"n_head", s.heads},
          {"n_layer", s.layers},
          {"n_positions", s.positions},
          {"n_ctx", s.positions},
          {"vocab_size", s.vocab},
          {"n_inner", nullptr},
          {"activation_function", "gelu_new"},
          {"layer_norm_epsilon", 1e-5},
          {"resid_pdrop", 0.1},
          {"bos_token_id", 50256}};
}

TestTensor& tensor_named(std::vector<TestTensor>& tensors, const std::string& name) {
  for (TestTensor& t : tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name << " in the test's model");
  return tensors.front();
}

// A folder holding config.json and model.safetensors.
Transformer load(const fs::path& path) {
  return testing::loaded(load_hf_gpt2(path.string()));
}

std::string load_error(const fs::path& path) {
  return testing::error_of(load_hf_gpt2(path.string()));
}

// Every view of the model holds the values the test wrote, where the row-vector convention
// puts them: c_attn split into W_Q, W_K, W_V by columns, each with c_attn's row stride.
void check_tiny_values(const Transformer& model, const std::vector<TestTensor>& tensors,
                       const TinyShape& s) {
  const TransformerWeights& w = model.weights();
  std::size_t k = 0;
  const auto next = [&]() -> const std::vector<float>& { return tensors.at(k++).values; };
  const auto same_matrix = [](const MatrixView& m, const std::vector<float>& values,
                              int column_offset, int row_width) {
    for (int r = 0; r < m.rows; ++r)
      for (int c = 0; c < m.cols; ++c)
        REQUIRE(m.at(r, c) ==
                values.at(static_cast<std::size_t>(r * row_width + column_offset + c)));
  };
  const auto same_vector = [](const VectorView& v, const std::vector<float>& values, int offset) {
    for (int i = 0; i < v.size; ++i)
      REQUIRE(v.data[i] == values.at(static_cast<std::size_t>(offset + i)));
  };
  same_matrix(w.token_embedding, next(), 0, s.d);
  same_matrix(w.position_embedding, next(), 0, s.d);
  for (const TransformerLayer& l : w.layers) {
    same_vector(l.attention_norm_weight, next(), 0);
    same_vector(l.attention_norm_bias, next(), 0);
    const std::vector<float>& c_attn = next();
    same_matrix(l.query, c_attn, 0, 3 * s.d);
    same_matrix(l.key, c_attn, s.d, 3 * s.d);
    same_matrix(l.value, c_attn, 2 * s.d, 3 * s.d);
    const std::vector<float>& c_attn_bias = next();
    same_vector(l.query_bias, c_attn_bias, 0);
    same_vector(l.key_bias, c_attn_bias, s.d);
    same_vector(l.value_bias, c_attn_bias, 2 * s.d);
    same_matrix(l.output, next(), 0, s.d);
    same_vector(l.output_bias, next(), 0);
    same_vector(l.mlp_norm_weight, next(), 0);
    same_vector(l.mlp_norm_bias, next(), 0);
    same_matrix(l.up, next(), 0, s.inner);
    same_vector(l.up_bias, next(), 0);
    same_matrix(l.down, next(), 0, s.d);
    same_vector(l.down_bias, next(), 0);
    CHECK(l.gate.empty());
  }
  same_vector(w.final_norm_weight, next(), 0);
  same_vector(w.final_norm_bias, next(), 0);
  CHECK(k == tensors.size());
}

}  // namespace

// ---- F16 and BF16 ----

TEST_CASE("F16 and BF16 bits become the floats worked out by hand") {
  CHECK(half_to_float(0x3C00) == 1.0f);
  CHECK(half_to_float(0xC000) == -2.0f);
  CHECK(half_to_float(0x7BFF) == 65504.0f);                         // the largest half
  CHECK(half_to_float(0x3555) == 1365.0f / 4096.0f);                // 2^-2 · (1 + 341/1024)
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));            // the smallest normal
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));            // the smallest subnormal
  CHECK(half_to_float(0x03FF) == 1023.0f * std::ldexp(1.0f, -24));  // the largest subnormal
  CHECK(half_to_float(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x0000) == 0.0f);
  CHECK_FALSE(std::signbit(half_to_float(0x0000)));
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(half_to_float(0x7C00) == std::numeric_limits<float>::infinity());
  CHECK(half_to_float(0xFC00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(half_to_float(0x7E00)));
  CHECK(std::isnan(half_to_float(0x7C01)));

  CHECK(bfloat16_to_float(0x3F80) == 1.0f);
  CHECK(bfloat16_to_float(0xBF80) == -1.0f);
  CHECK(bfloat16_to_float(0x4049) == 3.140625f);               // 2 · (1 + 73/128)
  CHECK(bfloat16_to_float(0x0001) == std::ldexp(1.0f, -133));  // subnormal
  CHECK(bfloat16_to_float(0x7F80) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(bfloat16_to_float(0x7FC0)));
}

TEST_CASE("safetensors: F16 and BF16 tensors read through the file, exactly") {
  testing::TempDir dir;
  TestTensor half{"half", {5}, {}, "F16", {}};
  for (const std::uint16_t bits : {0x3C00, 0x7BFF, 0x0001, 0x8000, 0xC000}) put_u16(half.raw, bits);
  TestTensor brain{"brain", {2}, {}, "BF16", {}};
  for (const std::uint16_t bits : {0x3F80, 0xC049}) put_u16(brain.raw, bits);
  write_file(dir.path / "x.safetensors", safetensors_file({half, brain}, {{"format", "pt"}}));
  Result<SafetensorsFile> file = SafetensorsFile::open((dir.path / "x.safetensors").string());
  REQUIRE_MESSAGE(file.ok(), file.error());
  CHECK(file->metadata().at("format") == "pt");
  std::vector<std::vector<float>> buffers;
  const auto allocate = [&buffers](std::size_t n) {
    buffers.emplace_back(n);
    return buffers.back().data();
  };
  const SafetensorsTensor* h = file->find("half");
  REQUIRE(h != nullptr);
  CHECK(h->dtype == SafetensorsDtype::F16);
  CHECK(h->shape_text() == "[5]");
  Result<const float*> values = file->floats(*h, allocate);
  REQUIRE(values.ok());
  CHECK((*values)[0] == 1.0f);
  CHECK((*values)[1] == 65504.0f);
  CHECK((*values)[2] == std::ldexp(1.0f, -24));
  CHECK((*values)[3] == 0.0f);
  CHECK(std::signbit((*values)[3]));
  CHECK((*values)[4] == -2.0f);
  Result<const float*> b = file->floats(*file->find("brain"), allocate);
  REQUIRE(b.ok());
  CHECK((*b)[0] == 1.0f);
  CHECK((*b)[1] == -3.140625f);
  CHECK(file->find("nothing") == nullptr);
}

TEST_CASE("safetensors: F32 is read in place when aligned, and copied when not") {
  testing::TempDir dir;
  const TestTensor t{"w", {2, 2}, {1.5f, -2.0f, 0.25f, 3.0f}};
  std::vector<std::vector<float>> buffers;
  const auto allocate = [&buffers](std::size_t n) {
    buffers.emplace_back(n);
    return buffers.back().data();
  };
  for (const std::size_t misalign : {0, 1, 2}) {
    const std::string bytes = safetensors_file({t}, {}, misalign);
    const fs::path path = dir.path / ("pad" + std::to_string(misalign) + ".safetensors");
    write_file(path, bytes);
    Result<SafetensorsFile> file = SafetensorsFile::open(path.string());
    REQUIRE_MESSAGE(file.ok(), file.error());
    const SafetensorsTensor* w = file->find("w");
    REQUIRE(w != nullptr);
    const bool aligned = reinterpret_cast<std::uintptr_t>(w->bytes) % 4 == 0;
    CHECK(aligned == (misalign == 0));
    buffers.clear();
    Result<const float*> values = file->floats(*w, allocate);
    REQUIRE(values.ok());
    CHECK((reinterpret_cast<const std::uint8_t*>(*values) == w->bytes) == aligned);
    CHECK(buffers.size() == (aligned ? 0u : 1u));
    CHECK(std::vector<float>(*values, *values + 4) == t.values);
  }
}

// ---- Tiny GPT-2 models, read back ----

TEST_CASE("a tiny GPT-2 in F32, F16 and BF16, with and without the prefix, read back exactly") {
  const TinyShape s;
  for (const std::string dtype : {"F32", "F16", "BF16"})
    for (const std::string prefix : {"", "transformer."}) {
      CAPTURE(dtype);
      CAPTURE(prefix);
      testing::TempDir dir;
      const std::vector<TestTensor> tensors = tiny_tensors(s, dtype, prefix);
      const fs::path folder = write_model(dir, tiny_config(s), tensors);
      const Transformer model = load(folder);
      const TransformerConfig& c = model.config();
      CHECK(c.architecture == "gpt2");
      CHECK(c.d_model == 8);
      CHECK(c.n_layers == 2);
      CHECK(c.n_heads == 2);
      CHECK(c.n_kv_heads == 2);
      CHECK(c.d_head == 4);
      CHECK(c.d_ff == 32);
      CHECK(c.vocab_size == 11);
      CHECK(c.context == 6);
      CHECK(c.norm == NormKind::LayerNorm);
      CHECK(c.norm_epsilon == 1e-5f);
      CHECK(c.positions == PositionKind::Learned);
      CHECK(c.feed_forward == FeedForwardKind::GeluTanh);
      CHECK(model.format() == "Hugging Face GPT-2, safetensors " + dtype);
      CHECK(model.source() == folder.string());
      check_tiny_values(model, tensors, s);
      // Tied: the unembedding is wte itself.
      CHECK(model.weights().unembedding.data == model.weights().token_embedding.data);
      CHECK(model.parameter_count() == tiny_parameter_count(s));
    }
}

TEST_CASE("a tiny GPT-2: the model.safetensors path names the model, n_ctx, n_inner, epsilon") {
  TinyShape s;
  s.inner = 20;
  s.positions = 5;
  testing::TempDir dir;
  Json config = tiny_config(s);
  config.erase("n_positions");  // n_ctx alone
  config["n_inner"] = 20;
  config["layer_norm_epsilon"] = 1e-6;
  config["activation_function"] = "gelu_pytorch_tanh";
  const std::vector<TestTensor> tensors = tiny_tensors(s, "F32", "");
  const fs::path folder = write_model(dir, config, tensors);
  const Transformer model = load(folder / "model.safetensors");
  CHECK(model.source() == folder.string());
  CHECK(model.config().d_ff == 20);
  CHECK(model.config().context == 5);
  CHECK(model.config().norm_epsilon == 1e-6f);
  check_tiny_values(model, tensors, s);
}

TEST_CASE("a tiny GPT-2: mixed dtypes are named in the format") {
  const TinyShape s;
  testing::TempDir dir;
  std::vector<TestTensor> tensors = tiny_tensors(s, "F16", "");
  tensor_named(tensors, "ln_f.bias").dtype = "F32";
  const Transformer two = load(write_model(dir, tiny_config(s), tensors, "two"));
  CHECK(two.format() == "Hugging Face GPT-2, safetensors F16 and F32");
  check_tiny_values(two, tensors, s);
  tensor_named(tensors, "wpe.weight").dtype = "BF16";
  const Transformer three = load(write_model(dir, tiny_config(s), tensors, "three"));
  CHECK(three.format() == "Hugging Face GPT-2, safetensors F16, BF16 and F32");
  check_tiny_values(three, tensors, s);
}

TEST_CASE("a tiny GPT-2: the mask buffers are ignored, other strays are warned of") {
  const TinyShape s;
  testing::TempDir dir;
  std::vector<TestTensor> tensors = tiny_tensors(s, "F32", "transformer.");
  tensors.push_back({"transformer.h.0.attn.bias", {1, 1, 6, 6}, std::vector<float>(36, 1.0f)});
  tensors.push_back({"transformer.h.1.attn.masked_bias", {}, {-1e4f}});
  tensors.push_back({"transformer.h.1.attn.masked_bias_dtype_test", {1}, {0}, "I64", "12345678"});
  const fs::path folder = write_model(dir, tiny_config(s), tensors);
  Result<Transformer> model = load_hf_gpt2(folder.string());
  REQUIRE_MESSAGE(model.ok(), model.error());
  REQUIRE(model.warnings.size() == 1);
  CHECK(has(model.warnings[0], "transformer.h.1.attn.masked_bias_dtype_test"));
  CHECK(has(model.warnings[0], "ignored"));
}

TEST_CASE("a tiny GPT-2: lm_head.weight equal to wte is tied, a different one is the unembedding") {
  const TinyShape s;
  for (const bool tied : {true, false}) {
    CAPTURE(tied);
    testing::TempDir dir;
    std::vector<TestTensor> tensors = tiny_tensors(s, "F32", "transformer.");
    TestTensor head = tensors.front();  // wte
    head.name = "lm_head.weight";
    if (!tied) head.values[5] = 0.75f;
    tensors.push_back(head);
    const Transformer model = load(write_model(dir, tiny_config(s), tensors));
    const TransformerWeights& w = model.weights();
    CHECK((w.unembedding.data == w.token_embedding.data) == tied);
    CHECK(w.unembedding.at(0, 5) == (tied ? tensors.front().values[5] : 0.75f));
    CHECK(w.unembedding.at(1, 2) == tensors.front().values[8 + 2]);
    CHECK(model.parameter_count() == tiny_parameter_count(s) + (tied ? 0 : 11 * 8));
  }
}

// ---- Damaged files ----

TEST_CASE("safetensors: a damaged header is refused, naming the file and what is wrong") {
  testing::TempDir dir;
  int counter = 0;
  const auto error_of = [&](const std::string& bytes) {
    const fs::path path = dir.path / ("bad" + std::to_string(counter++) + ".safetensors");
    write_file(path, bytes);
    Result<SafetensorsFile> file = SafetensorsFile::open(path.string());
    REQUIRE_FALSE(file.ok());
    CHECK(has(file.error(), path.string()));
    return file.error();
  };
  const std::string good = safetensors_file({{"a", {2}, {1, 2}}, {"b", {3}, {3, 4, 5}}});
  const std::string data(20, '\0');
  const auto entry = [](const std::string& dtype, const std::string& shape,
                        const std::string& offsets) {
    return R"({"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets +
           "}";
  };

  // Truncated: inside the length, inside the header, inside the data.
  CHECK(has(error_of(good.substr(0, 5)), "too short"));
  CHECK(has(error_of(good.substr(0, 20)), "past the end of the file"));
  const std::string cut = error_of(good.substr(0, good.size() - 2));
  CHECK(has(cut, "\"b\""));
  CHECK(has(cut, "pass the end of the data"));
  // The header's length: past the end; a terabyte.
  std::string past = good;
  const std::uint64_t one_past = good.size() - 8 + 1;
  std::memcpy(past.data(), &one_past, 8);
  CHECK(has(error_of(past), "past the end of the file"));
  std::string terabyte = good;
  const std::uint64_t tb = std::uint64_t{1} << 40;
  std::memcpy(terabyte.data(), &tb, 8);
  const std::string huge = error_of(terabyte);
  CHECK(has(huge, "1099511627776 bytes"));
  CHECK(has(huge, "more than any model's"));
  // Not JSON, not an object, nested without end.
  CHECK(has(error_of(with_header("{\"a\": [1, 2", data)), "not valid JSON"));
  CHECK(has(error_of(with_header("\xff\xfe{}", data)), "not valid JSON"));
  CHECK(has(error_of(with_header("[1, 2]", data)), "not a JSON object"));
  CHECK(has(error_of(with_header(std::string(100000, '[') + std::string(100000, ']'), data)),
            "nested"));
  // Entries.
  CHECK(has(error_of(with_header(R"({"w": 3})", data)), "tensor \"w\": not an object"));
  const std::string unknown =
      error_of(with_header("{\"w\":" + entry("F12", "[2]", "[0, 4]") + "}", data));
  CHECK(has(unknown, "tensor \"w\": unknown dtype \"F12\""));
  CHECK(has(error_of(with_header(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", data)),
            "tensor \"w\": dtype missing"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[-2]", "[0, 8]") + "}", data)),
            "tensor \"w\": shape: -2 is not a size"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[1.5]", "[0, 8]") + "}", data)),
            "tensor \"w\": shape: 1.5 is not a size"));
  // A long value or name is cut short in the message.
  const std::string long_dimension = error_of(with_header(
      "{\"" + std::string(5000, 'n') +
          "\":" + entry("F32", "[\"" + std::string(100000, 'x') + "\"]", "[0, 8]") + "}",
      data));
  CHECK(has(long_dimension, "nnnn...\": shape: \"xxxx"));
  CHECK(long_dimension.size() < 500);
  CHECK(has(
      error_of(with_header("{\"w\":" + entry("F32", "[1,1,1,1,1,1,1,1,1]", "[0, 4]") + "}", data)),
      "tensor \"w\": shape has 9 dimensions"));
  CHECK(has(
      error_of(with_header(
          "{\"w\":" + entry("F32", "[4294967296, 4294967296, 4294967296]", "[0, 4]") + "}", data)),
      "more elements than any file"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[2]", "[0]") + "}", data)),
            "tensor \"w\": data_offsets missing"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[2]", "[8, 0]") + "}", data)),
            "tensor \"w\": data_offsets [8,0] end before they begin"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[2]", "[16, 24]") + "}", data)),
            "tensor \"w\": data_offsets [16,24] pass the end of the data (20 bytes)"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[2]", "[0, 12]") + "}", data)),
            "tensor \"w\": data_offsets [0,12] hold 12 bytes, but shape [2] of F32 needs 8"));
  CHECK(has(error_of(with_header("{\"w\":" + entry("F32", "[2]", "[-4, 4]") + "}", data)),
            "tensor \"w\": data_offsets [-4,4] are not whole numbers"));
  // Overlapping tensors.
  const std::string overlap =
      error_of(with_header("{\"v\":" + entry("F32", "[3]", "[0, 12]") +
                               ", \"w\":" + entry("F32", "[2]", "[8, 16]") + "}",
                           data));
  CHECK(has(overlap, "\"v\" (bytes 0 to 12) and \"w\" (bytes 8 to 16) overlap"));
  // Metadata: strings only.
  CHECK(has(error_of(with_header(R"({"__metadata__": {"format": 1}})", data)),
            "__metadata__: \"format\": not a string"));
  CHECK(
      has(error_of(with_header(R"({"__metadata__": [1]})", data)), "__metadata__: not an object"));
}

TEST_CASE("safetensors: empty tensors and a file of no tensors are fine") {
  testing::TempDir dir;
  const fs::path path = dir.path / "empty.safetensors";
  write_file(path, with_header(R"({"a": {"dtype": "F32", "shape": [0, 4], "data_offsets": [0, 0]},)"
                               R"( "b": {"dtype": "F16", "shape": [], "data_offsets": [0, 2]}})",
                               "xy"));
  Result<SafetensorsFile> file = SafetensorsFile::open(path.string());
  REQUIRE_MESSAGE(file.ok(), file.error());
  CHECK(file->find("a")->elements == 0);
  CHECK(file->find("b")->elements == 1);
  write_file(path, with_header("{}", ""));
  CHECK(SafetensorsFile::open(path.string()).ok());
}

TEST_CASE("safetensors: a dtype that is not a weight type is refused when read as floats") {
  testing::TempDir dir;
  const fs::path path = dir.path / "ints.safetensors";
  write_file(path, safetensors_file({{"ids", {2}, {}, "I32", "12345678"}}));
  Result<SafetensorsFile> file = SafetensorsFile::open(path.string());
  REQUIRE(file.ok());
  const Result<const float*> values =
      file->floats(*file->find("ids"), [](std::size_t) -> float* { return nullptr; });
  REQUIRE_FALSE(values.ok());
  CHECK(has(values.error(), path.string()));
  CHECK(has(values.error(), "tensor \"ids\": dtype I32 cannot be read as weights"));
}

TEST_CASE("a GPT-2 folder with a damaged model.safetensors names the file and the tensor") {
  const TinyShape s;
  testing::TempDir dir;
  const Json config = tiny_config(s);
  const std::vector<TestTensor> good = tiny_tensors(s, "F32", "");
  const auto error_with = [&](const std::function<void(std::vector<TestTensor>&)>& edit) {
    std::vector<TestTensor> tensors = good;
    edit(tensors);
    std::string error = load_error(write_model(dir, config, tensors));
    CHECK(has(error, (dir.path / "model" / "model.safetensors").string()));
    return error;
  };

  // Truncated: the last tensor's bytes pass the end.
  {
    const fs::path folder = write_model(dir, config, good);
    const std::string bytes = safetensors_file(good);
    write_file(folder / "model.safetensors", bytes.substr(0, bytes.size() - 3));
    const std::string error = load_error(folder);
    CHECK(has(error, "\"ln_f.bias\""));
    CHECK(has(error, "truncated"));
  }
  CHECK(has(error_with([](auto& t) {
              t.erase(t.begin() + (&tensor_named(t, "h.1.ln_2.bias") - t.data()));
            }),
            "tensor h.1.ln_2.bias is missing"));
  CHECK(has(error_with([](auto& t) {
              for (TestTensor& x : t) x.name = "transformer." + x.name;
              tensor_named(t, "transformer.ln_f.weight").name = "ln_f.weight";
            }),
            "tensor transformer.ln_f.weight is missing (the file has it without the prefix)"));
  // A wrong shape: the same number of values, another shape.
  CHECK(has(error_with([](auto& t) {
              tensor_named(t, "h.0.mlp.c_fc.weight").shape = {32, 8};
            }),
            "tensor h.0.mlp.c_fc.weight: shape [32, 8], but " +
                (dir.path / "model" / "config.json").string() +
                " (n_embd = 8, n_inner = 4 · n_embd) needs [8, 32]"));
  CHECK(has(error_with([](auto& t) {
              tensor_named(t, "h.1.attn.c_attn.bias").shape = {3, 8};
            }),
            "tensor h.1.attn.c_attn.bias: shape [3, 8]"));
  // A dtype that is no weight.
  CHECK(has(error_with([](auto& t) {
              TestTensor& x = tensor_named(t, "h.0.ln_1.bias");
              x.dtype = "I32";
            }),
            "tensor h.0.ln_1.bias: dtype I32 cannot be read as weights"));
  // NaN and infinity, in F32, F16 and BF16.
  CHECK(has(error_with([](auto& t) {
              tensor_named(t, "h.1.mlp.c_proj.weight").values[8 * 3 + 5] = std::nanf("");
            }),
            "tensor h.1.mlp.c_proj.weight: element 29 (row 3, column 5) is NaN"));
  CHECK(has(error_with([](auto& t) {
              for (TestTensor& x : t) x.dtype = "F16";
              tensor_named(t, "wpe.weight").values[9] = -std::numeric_limits<float>::infinity();
            }),
            "tensor wpe.weight: element 9 (row 1, column 1) is infinite"));
  CHECK(has(error_with([](auto& t) {
              for (TestTensor& x : t) x.dtype = "BF16";
              tensor_named(t, "ln_f.bias").values[0] = std::numeric_limits<float>::infinity();
            }),
            "tensor ln_f.bias: element 0 is infinite"));
  CHECK(has(error_with([](auto& t) {
              t.push_back(t.front());
              t.back().name = "lm_head.bias";
            }),
            "lm_head.bias"));
}

TEST_CASE("a config.json that disagrees with the tensors names both") {
  const TinyShape s;
  testing::TempDir dir;
  const std::vector<TestTensor> tensors = tiny_tensors(s, "F32", "transformer.");
  const auto error_with = [&](const std::function<void(Json&)>& edit) {
    Json config = tiny_config(s);
    edit(config);
    std::string error = load_error(write_model(dir, config, tensors));
    CHECK(has(error, "model.safetensors"));
    return error;
  };
  const std::string config_path = (dir.path / "model" / "config.json").string();
  CHECK(has(error_with([](Json& c) { c["n_embd"] = 16; }),
            "tensor transformer.wte.weight: shape [11, 8], but " + config_path +
                " (vocab_size = 11, n_embd = 16) needs [11, 16]"));
  CHECK(has(error_with([](Json& c) { c["vocab_size"] = 12; }),
            "(vocab_size = 12, n_embd = 8) needs [12, 8]"));
  CHECK(has(error_with([](Json& c) { c["n_positions"] = 7; }),
            "tensor transformer.wpe.weight: shape [6, 8], but " + config_path +
                " (n_positions = 7, n_embd = 8) needs [7, 8]"));
  CHECK(has(error_with([](Json& c) { c["n_inner"] = 16; }),
            "tensor transformer.h.0.mlp.c_fc.weight: shape [8, 32], but " + config_path +
                " (n_embd = 8, n_inner = 16) needs [8, 16]"));
  CHECK(has(error_with([](Json& c) { c["n_layer"] = 3; }),
            "tensor transformer.h.2.ln_1.weight is missing"));
  CHECK(has(error_with([](Json& c) { c["n_layer"] = 1; }),
            "tensor transformer.h.1.ln_1.weight belongs to layer 1, but " + config_path +
                " says n_layer = 1"));
}

TEST_CASE("a config.json that is not JSON, or has absurd or unsupported values, is refused") {
  const TinyShape s;
  testing::TempDir dir;
  const std::vector<TestTensor> tensors = tiny_tensors(s, "F32", "");
  const fs::path folder = write_model(dir, tiny_config(s), tensors);
  const std::string config_path = (folder / "config.json").string();
  const auto error_of_text = [&](const std::string& text) {
    write_file(folder / "config.json", text);
    std::string error = load_error(folder);
    CHECK(has(error, config_path + ": "));
    return error;
  };
  const auto error_with = [&](const std::function<void(Json&)>& edit) {
    Json config = tiny_config(s);
    edit(config);
    return error_of_text(config.dump());
  };
  CHECK(has(error_of_text("{\"n_embd\": 8,"), "not valid JSON"));
  CHECK(has(error_of_text("[8, 2]"), "not a JSON object"));
  CHECK(has(error_of_text(std::string(2 << 20, ' ')), "too large"));
  CHECK(has(error_with([](Json& c) { c["n_embd"] = 1000000000000; }),
            "n_embd = 1000000000000 (expected 1 to 65536)"));
  CHECK(has(error_with([](Json& c) { c["n_embd"] = 18446744073709551615ull; }),
            "n_embd = 9223372036854775807 (expected 1 to 65536)"));
  const std::string long_value =
      error_with([](Json& c) { c["vocab_size"] = std::string(100000, 'x'); });
  CHECK(has(long_value, "vocab_size: \"xxxxxxxx"));
  CHECK(has(long_value, "... is not a whole number"));
  CHECK(long_value.size() < config_path.size() + 150);
  CHECK(has(error_with([](Json& c) { c["n_layer"] = -1; }), "n_layer = -1 (expected 1 to 1024)"));
  CHECK(has(error_with([](Json& c) { c["n_layer"] = 0; }), "n_layer = 0"));
  CHECK(has(error_with([](Json& c) { c["vocab_size"] = "big"; }),
            "vocab_size: \"big\" is not a whole number"));
  CHECK(has(error_with([](Json& c) { c["vocab_size"] = 1e300; }), "vocab_size: 1e+300 is not"));
  CHECK(has(error_with([](Json& c) { c["n_head"] = 3; }),
            "n_embd = 8 is not divisible by n_head = 3"));
  CHECK(has(error_with([](Json& c) { c["n_head"] = 9; }), "n_head = 9 (expected 1 to 8)"));
  CHECK(has(error_with([](Json& c) { c.erase("n_head"); }), "n_head: missing"));
  CHECK(has(error_with([](Json& c) {
              c.erase("n_positions");
              c.erase("n_ctx");
            }),
            "n_positions: missing"));
  CHECK(has(error_with([](Json& c) { c["n_ctx"] = 1 << 30; }), "n_ctx = 1073741824"));
  CHECK(has(error_with([](Json& c) { c["n_inner"] = 0; }), "n_inner = 0"));
  CHECK(has(error_with([](Json& c) { c["layer_norm_epsilon"] = 5; }),
            "layer_norm_epsilon = 5 (expected 1e-12 to 0.1)"));
  CHECK(has(error_with([](Json& c) { c["layer_norm_epsilon"] = "small"; }),
            "layer_norm_epsilon: \"small\" is not a number"));
  CHECK(has(error_with([](Json& c) { c["activation_function"] = "relu"; }),
            "activation_function \"relu\" is not supported"));
  CHECK(has(error_with([](Json& c) { c["activation_function"] = 3; }),
            "activation_function: not text"));
  CHECK(has(error_with([](Json& c) { c["model_type"] = "llama"; }),
            "model_type: \"llama\", not \"gpt2\""));
  CHECK(has(error_with([](Json& c) { c["scale_attn_by_inverse_layer_idx"] = true; }),
            "scale_attn_by_inverse_layer_idx = true is not supported"));
  CHECK(has(error_with([](Json& c) { c["add_cross_attention"] = "no"; }),
            "add_cross_attention: not true or false"));
}

TEST_CASE("a folder that is not a GPT-2 model says what is missing") {
  testing::TempDir dir;
  CHECK(has(load_error(dir.path / "nowhere"), "no such file or folder"));
  CHECK(has(load_error(dir.path), "no config.json"));
  write_file(dir.path / "config.json", tiny_config(TinyShape{}).dump());
  CHECK(has(load_error(dir.path), "no model.safetensors"));
  write_file(dir.path / "pytorch_model.bin", "pickle");
  CHECK(has(load_error(dir.path), "only pytorch_model.bin"));
  write_file(dir.path / "model.safetensors.index.json", "{}");
  CHECK(has(load_error(dir.path), "a sharded checkpoint"));
  CHECK(has(load_error(dir.path / "pytorch_model.bin"), "not a Hugging Face GPT-2 model"));
}

// ---- load_model: a path or a shipped model's name ----

TEST_CASE("load_model: a GPT-2 folder, a llama2.c file, a shipped model's name") {
  const TinyShape s;
  testing::TempDir dir;
  const fs::path folder = write_model(dir, tiny_config(s), tiny_tensors(s, "BF16", ""));
  Result<Transformer> gpt2 = load_model(folder.string());
  REQUIRE_MESSAGE(gpt2.ok(), gpt2.error());
  CHECK(gpt2->config().architecture == "gpt2");
  CHECK(load_model((folder / "model.safetensors").string()).ok());
  CHECK(load_model((folder / "config.json").string()).ok());

  const fs::path shipped = fs::path(ATTNVIZ_SOURCE_DIR) / "assets/models/stories260K";
  for (const std::string& name :
       {std::string("stories260K"), shipped.string(), (shipped / "stories260K.bin").string()}) {
    CAPTURE(name);
    Result<ModelLocation> location = locate_model(name);
    REQUIRE_MESSAGE(location.ok(), location.error());
    CHECK(location->format == ModelFormat::Llama2c);
    CHECK(fs::equivalent(location->path, shipped / "stories260K.bin"));
    CHECK(fs::equivalent(location->folder, shipped));
    Result<Transformer> llama = load_model(name);
    REQUIRE_MESSAGE(llama.ok(), llama.error());
    CHECK(llama->config().architecture == "llama");
    CHECK(llama->config().d_model == 64);
  }
}

TEST_CASE("load_model: anything else is refused with the reason") {
  testing::TempDir dir;
  const std::string unknown = load_model("no-such-model").error();
  CHECK(has(unknown, "no-such-model: no such file or folder, and no model of that name ships"));
  CHECK(has(unknown, "stories260K"));
  CHECK(has(load_model((dir.path / "missing").string()).error(), "no such file or folder"));
  CHECK(has(load_model(dir.path.string()).error(), "not a model folder"));
  write_file(dir.path / "notes.txt", "hello");
  CHECK(has(load_model((dir.path / "notes.txt").string()).error(), "not a model file"));
  write_file(dir.path / "pytorch_model.bin", "pickle");
  CHECK(has(load_model((dir.path / "pytorch_model.bin").string()).error(), "pickle"));
  write_file(dir.path / "broken.bin", "1234");
  CHECK(has(load_model((dir.path / "broken.bin").string()).error(), "too short"));
  CHECK(has(load_model("").error(), "empty"));
}

}  // namespace attnviz
