// A tiny BERT in Hugging Face's layout, written by the tests' own safetensors writer: its tensors
// (BertModel's names, or BertForMaskedLM's with "bert." and the MLM head; F32, F16 or BF16;
// LayerNorms as .weight/.bias or, as older checkpoints, .gamma/.beta), its config, and a folder
// with a vocabulary, for the reader's tests and the pipeline's.
#pragma once

#include "tests/support/safetensors_writer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnviz::testing {

struct TinyBertShape {
  int d = 8, heads = 2, layers = 2, vocab = 12, positions = 10, types = 2, inner = 16;
};

// Tensor number `k`'s element i: a multiple of 1/32 in [-½, ½] (exact in F16 and BF16).
inline float value_of(int k, std::int64_t i) {
  return static_cast<float>(((k * 11 + i * 5) % 33) - 16) / 32.0f;
}

enum class Layout { Model, MaskedLm };

inline std::vector<TestTensor> tiny_bert_tensors(const TinyBertShape& s, Layout layout,
                                                 const std::string& dtype = "F32",
                                                 bool old_names = false) {
  std::vector<TestTensor> out;
  const std::string prefix = layout == Layout::MaskedLm ? "bert." : "";
  const auto add = [&](std::string name, std::vector<std::int64_t> shape, bool encoder = true) {
    if (old_names && name.find(".LayerNorm.") != std::string::npos) {
      if (name.ends_with(".weight")) name = name.substr(0, name.size() - 6) + "gamma";
      if (name.ends_with(".bias")) name = name.substr(0, name.size() - 4) + "beta";
    }
    TestTensor t(encoder ? prefix + name : name, std::move(shape));
    std::int64_t count = 1;
    for (const std::int64_t n : t.shape) count *= n;
    for (std::int64_t i = 0; i < count; ++i)
      t.values.push_back(value_of(static_cast<int>(out.size()), i));
    t.dtype = dtype;
    out.push_back(std::move(t));
  };
  const std::int64_t d = s.d, f = s.inner;
  add("embeddings.word_embeddings.weight", {s.vocab, d});
  add("embeddings.position_embeddings.weight", {s.positions, d});
  add("embeddings.token_type_embeddings.weight", {s.types, d});
  add("embeddings.LayerNorm.weight", {d});
  add("embeddings.LayerNorm.bias", {d});
  for (int l = 0; l < s.layers; ++l) {
    const std::string at = "encoder.layer." + std::to_string(l) + ".";
    for (const char* part : {"query", "key", "value"}) {
      add(at + "attention.self." + part + ".weight", {d, d});
      add(at + "attention.self." + part + ".bias", {d});
    }
    add(at + "attention.output.dense.weight", {d, d});
    add(at + "attention.output.dense.bias", {d});
    add(at + "attention.output.LayerNorm.weight", {d});
    add(at + "attention.output.LayerNorm.bias", {d});
    add(at + "intermediate.dense.weight", {f, d});
    add(at + "intermediate.dense.bias", {f});
    add(at + "output.dense.weight", {d, f});
    add(at + "output.dense.bias", {d});
    add(at + "output.LayerNorm.weight", {d});
    add(at + "output.LayerNorm.bias", {d});
  }
  if (layout == Layout::MaskedLm) {
    add("cls.predictions.transform.dense.weight", {d, d}, false);
    add("cls.predictions.transform.dense.bias", {d}, false);
    add("cls.predictions.transform.LayerNorm.weight", {d}, false);
    add("cls.predictions.transform.LayerNorm.bias", {d}, false);
    add("cls.predictions.bias", {s.vocab}, false);
  } else {
    add("pooler.dense.weight", {d, d});
    add("pooler.dense.bias", {d});
  }
  TestTensor ids(prefix + "embeddings.position_ids", {1, s.positions}, {}, "I64",
                 std::string(8 * static_cast<std::size_t>(s.positions), '\0'));
  out.push_back(ids);
  return out;
}

inline nlohmann::json tiny_bert_config(const TinyBertShape& s) {
  return {{"architectures", {"BertForMaskedLM"}},
          {"model_type", "bert"},
          {"hidden_size", s.d},
          {"num_hidden_layers", s.layers},
          {"num_attention_heads", s.heads},
          {"intermediate_size", s.inner},
          {"vocab_size", s.vocab},
          {"max_position_embeddings", s.positions},
          {"type_vocab_size", s.types},
          {"layer_norm_eps", 1e-12},
          {"hidden_act", "gelu"},
          {"position_embedding_type", "absolute"}};
}

// A folder `folder` holding the tiny BERT (BertForMaskedLM, F32) with a vocabulary of 12:
// [PAD] [UNK] [CLS] [SEP] [MASK] the cat sat . ##s dog play.
inline void write_tiny_bert_folder(const std::filesystem::path& folder) {
  const TinyBertShape shape;
  std::filesystem::create_directories(folder);
  write_file(folder / "config.json", tiny_bert_config(shape).dump(2));
  write_file(folder / "model.safetensors",
             safetensors_file(tiny_bert_tensors(shape, Layout::MaskedLm)));
  write_file(folder / "vocab.txt",
             "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\n.\n##s\ndog\nplay\n");
}

}  // namespace attnviz::testing
