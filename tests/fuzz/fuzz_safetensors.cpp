// Fuzz target: safetensors files and Hugging Face GPT-2 and BERT folders, from arbitrary bytes.
// The first byte chooses what the rest is (by its value mod 8):
//   even: a safetensors file. Opened; when it opens, every tensor lies inside the data, holds
//         exactly the bytes its shape and dtype need, overlaps no other, and is found by its
//         name; F32, F16 and BF16 tensors read as that many floats (each one touched), other
//         dtypes refused with a message naming the file.
//   1, 5: a GPT-2 folder: two bytes (little endian) say how long config.json is, then
//         config.json, then model.safetensors. Loaded; when it loads, the configuration is
//         GPT-2's and consistent, and every weight of every view is a finite number (each one
//         touched).
//   3:    a BERT folder, the same way. When it loads: an encoder (both ways, norms after, token
//         types), every weight finite, and a small one runs forward on a sentence pair.
//   7:    a Marian or BART folder, the same way. When it loads: a decoder with cross-attention
//         holding its encoder, every weight of both finite, and a small one runs a source and a
//         target through both.
// Every error names the file it is about. The files go to a temporary folder of this process.
#include "core/models/encoder_decoder.hpp"
#include "core/models/hf_bert.hpp"
#include "core/models/hf_encoder_decoder.hpp"
#include "core/models/hf_gpt2.hpp"
#include "core/models/safetensors.hpp"
#include "core/models/transformer_forward.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// The folder this target writes its files in.
const std::string& scratch_folder() {
  return attnviz::fuzz::scratch_folder("safetensors",
                                       {"fuzz.safetensors", "config.json", "model.safetensors"});
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(file != nullptr);
  if (size) FUZZ_CHECK(std::fwrite(data, 1, size, file) == size);
  FUZZ_CHECK(std::fclose(file) == 0);
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

void check_safetensors(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch_folder() + "/fuzz.safetensors";
  write_file(path, data, size);
  attnviz::Result<attnviz::SafetensorsFile> file = attnviz::SafetensorsFile::open(path);
  if (!file) {
    FUZZ_CHECK(starts_with(file.error(), path + ": "));
    return;
  }
  FUZZ_CHECK(size >= 8);
  std::uint64_t header = 0;
  for (int i = 0; i < 8; ++i) header |= static_cast<std::uint64_t>(data[i]) << (8 * i);
  FUZZ_CHECK(header <= size - 8);
  const std::size_t data_size = size - 8 - static_cast<std::size_t>(header);
  std::size_t previous_end = 0;
  std::vector<std::vector<float>> buffers;
  const auto allocate = [&buffers](std::size_t n) {
    buffers.emplace_back(n);
    return buffers.back().data();
  };
  for (const attnviz::SafetensorsTensor& t : file->tensors()) {
    FUZZ_CHECK(t.begin <= t.end && t.end <= data_size);
    FUZZ_CHECK(t.end - t.begin == static_cast<std::size_t>(t.elements) *
                                      static_cast<std::size_t>(attnviz::dtype_size(t.dtype)));
    if (t.begin != t.end) {  // in the order of their data, none overlapping
      FUZZ_CHECK(t.begin >= previous_end);
      previous_end = t.end;
    }
    FUZZ_CHECK(file->find(t.name) == &t);
    std::int64_t elements = 1;
    for (const std::int64_t n : t.shape) {
      FUZZ_CHECK(n >= 0);
      elements *= n;
    }
    FUZZ_CHECK(elements == t.elements);
    buffers.clear();
    attnviz::Result<const float*> floats = file->floats(t, allocate);
    const bool readable = t.dtype == attnviz::SafetensorsDtype::F32 ||
                          t.dtype == attnviz::SafetensorsDtype::F16 ||
                          t.dtype == attnviz::SafetensorsDtype::BF16;
    FUZZ_CHECK(floats.ok() == readable);
    if (!floats) {
      FUZZ_CHECK(starts_with(floats.error(), path + ": "));
      continue;
    }
    volatile float sink = 0;
    for (std::int64_t i = 0; i < t.elements; ++i) sink = sink + (*floats)[i];
  }
}

void check_views(const attnviz::Transformer& model) {
  const auto finite_matrix = [](const attnviz::MatrixView& m) {
    if (m.empty()) return;
    FUZZ_CHECK(m.stride >= m.cols);
    for (int r = 0; r < m.rows; ++r)
      for (int c = 0; c < m.cols; ++c) FUZZ_CHECK(std::isfinite(m.at(r, c)));
  };
  const auto finite_vector = [](const attnviz::VectorView& v) {
    for (int i = 0; i < v.size; ++i) FUZZ_CHECK(std::isfinite(v.data[i]));
  };
  const attnviz::TransformerWeights& w = model.weights();
  finite_matrix(w.token_embedding);
  finite_matrix(w.position_embedding);
  finite_matrix(w.token_type_embedding);
  finite_matrix(w.head_transform);
  finite_matrix(w.unembedding);
  for (const attnviz::VectorView* v :
       {&w.final_norm_weight, &w.final_norm_bias, &w.embedding_norm_weight, &w.embedding_norm_bias,
        &w.head_transform_bias, &w.unembedding_bias})
    finite_vector(*v);
  for (const attnviz::TransformerLayer& l : w.layers) {
    for (const attnviz::MatrixView* m :
         {&l.query, &l.key, &l.value, &l.output, &l.up, &l.down, &l.cross_query, &l.cross_key,
          &l.cross_value, &l.cross_output})
      finite_matrix(*m);
    for (const attnviz::VectorView* v :
         {&l.attention_norm_weight, &l.attention_norm_bias, &l.query_bias, &l.key_bias,
          &l.value_bias, &l.output_bias, &l.mlp_norm_weight, &l.mlp_norm_bias, &l.up_bias,
          &l.down_bias, &l.cross_norm_weight, &l.cross_norm_bias, &l.cross_query_bias,
          &l.cross_key_bias, &l.cross_value_bias, &l.cross_output_bias})
      finite_vector(*v);
  }
}

// The folder's two files from the input: two bytes of config.json's length, then it, then
// model.safetensors. Returns the folder; empty when the input is too short.
std::string write_folder(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return {};
  const std::size_t config_size = std::min<std::size_t>(data[0] | (data[1] << 8), size - 2);
  const std::string folder = scratch_folder();
  write_file(folder + "/config.json", data + 2, config_size);
  write_file(folder + "/model.safetensors", data + 2 + config_size, size - 2 - config_size);
  return folder;
}

void check_bert_folder(const std::uint8_t* data, std::size_t size) {
  const std::string folder = write_folder(data, size);
  if (folder.empty()) return;
  attnviz::Result<attnviz::Transformer> model = attnviz::load_hf_bert(folder);
  if (!model) {
    FUZZ_CHECK(starts_with(model.error(), folder));
    return;
  }
  const attnviz::TransformerConfig& c = model->config();
  FUZZ_CHECK(c.architecture == "bert");
  FUZZ_CHECK(!c.causal() && c.norm_after() && c.token_types >= 1);
  FUZZ_CHECK(c.n_heads * c.d_head == c.d_model);
  FUZZ_CHECK(static_cast<int>(model->weights().layers.size()) == c.n_layers);
  FUZZ_CHECK(starts_with(model->format(), "Hugging Face BERT"));
  check_views(*model);
  // A small model runs: a pair of types over at most 6 tokens, the logits written out.
  if (model->parameter_count() > 100000) return;
  std::vector<int> tokens, types;
  for (int i = 0; i < std::min(c.context, 6); ++i) {
    tokens.push_back(i % c.vocab_size);
    types.push_back(i >= 3 && c.token_types > 1 ? 1 : 0);
  }
  attnviz::TransformerForward forward(*model);
  FUZZ_CHECK(forward.run(tokens, types).is_ok());
  std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
  forward.logits(forward.size() - 1, logits.data());
  for (int l = 0; l < c.n_layers; ++l)
    FUZZ_CHECK(forward.attention_row(l, 0, 0).size() == tokens.size());
}

void check_encoder_decoder_folder(const std::uint8_t* data, std::size_t size) {
  const std::string folder = write_folder(data, size);
  if (folder.empty()) return;
  attnviz::Result<attnviz::Transformer> model = attnviz::load_hf_encoder_decoder(folder);
  if (!model) {
    FUZZ_CHECK(starts_with(model.error(), folder));
    return;
  }
  const attnviz::TransformerConfig& c = model->config();
  FUZZ_CHECK(c.architecture == "marian" || c.architecture == "bart");
  FUZZ_CHECK(c.causal() && c.norm_after() && c.cross_attention);
  FUZZ_CHECK(model->encoder() != nullptr);
  const attnviz::TransformerConfig& e = model->encoder()->config();
  FUZZ_CHECK(!e.causal() && !e.cross_attention && e.d_model == c.d_model);
  FUZZ_CHECK(c.n_heads * c.d_head == c.d_model && e.n_heads * e.d_head == e.d_model);
  FUZZ_CHECK(starts_with(model->format(), "Hugging Face "));
  check_views(*model);
  check_views(*model->encoder());
  // A small model runs: 3 source tokens, 2 target tokens.
  if (model->parameter_count() > 100000) return;
  const std::vector<int> source = {0, 1 % c.vocab_size, 2 % c.vocab_size};
  const std::vector<int> target = {c.vocab_size - 1, 0};
  attnviz::EncoderDecoderForward forward(*model);
  const bool fits = c.context >= 3;
  FUZZ_CHECK(forward.run(source, target).is_ok() == fits);
  if (!fits) return;
  for (int l = 0; l < c.n_layers; ++l)
    FUZZ_CHECK(forward.decoder().cross_attention_row(l, 0, 1).size() == source.size());
  std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
  forward.decoder().logits(1, logits.data());
}

void check_gpt2_folder(const std::uint8_t* data, std::size_t size) {
  const std::string folder = write_folder(data, size);
  if (folder.empty()) return;
  attnviz::Result<attnviz::Transformer> model = attnviz::load_hf_gpt2(folder);
  if (!model) {
    FUZZ_CHECK(starts_with(model.error(), folder));
    return;
  }
  const attnviz::TransformerConfig& c = model->config();
  FUZZ_CHECK(c.architecture == "gpt2");
  FUZZ_CHECK(c.d_model >= 1 && c.n_layers >= 1 && c.vocab_size >= 1 && c.context >= 1);
  FUZZ_CHECK(c.n_heads * c.d_head == c.d_model);
  FUZZ_CHECK(c.n_kv_heads == c.n_heads);
  FUZZ_CHECK(static_cast<int>(model->weights().layers.size()) == c.n_layers);
  FUZZ_CHECK(starts_with(model->format(), "Hugging Face GPT-2, safetensors "));
  FUZZ_CHECK(model->parameter_count() > 0);
  check_views(*model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0)
    check_safetensors(data + 1, size - 1);
  else if (data[0] % 4 == 1)
    check_gpt2_folder(data + 1, size - 1);
  else if (data[0] % 8 == 3)
    check_bert_folder(data + 1, size - 1);
  else
    check_encoder_decoder_folder(data + 1, size - 1);
  return 0;
}
