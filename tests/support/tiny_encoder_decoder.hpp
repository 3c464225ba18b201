// A tiny encoder–decoder in Hugging Face's layout (Marian's, or BART's: learned positions from row
// 2, embedding norms, GELU), written by the tests' own safetensors writer: its config and tensors
// for the reader's tests, and a BART folder with a GPT-2 vocabulary (<s>, </s>, a few letters)
// for the pipeline's.
#pragma once

#include "core/models/gpt2_tokenizer.hpp"
#include "core/text/utf8.hpp"
#include "tests/support/model_folder.hpp"
#include "tests/support/safetensors_writer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnviz::testing {

inline constexpr int kD = 8, kHeads = 2, kLayers = 2, kVocab = 14, kPositions = 12,
                     kFeedForward = 16;

// Tensor number `k`'s element i: a multiple of 1/32 in [-½, ½] (exact in F16 and BF16).
inline float encoder_decoder_value(int k, std::int64_t i) {
  return static_cast<float>(((k * 13 + i * 7) % 33) - 16) / 32.0f;
}

inline nlohmann::json tiny_config(bool bart = false, int vocab = kVocab) {
  return nlohmann::json{
      {"model_type", bart ? "bart" : "marian"},
      {"architectures", {bart ? "BartForConditionalGeneration" : "MarianMTModel"}},
      {"d_model", kD},
      {"encoder_layers", kLayers},
      {"decoder_layers", kLayers},
      {"encoder_attention_heads", kHeads},
      {"decoder_attention_heads", kHeads},
      {"encoder_ffn_dim", kFeedForward},
      {"decoder_ffn_dim", kFeedForward},
      {"vocab_size", vocab},
      {"max_position_embeddings", kPositions},
      {"activation_function", bart ? "gelu" : "swish"},
      {"scale_embedding", !bart},
      {"pad_token_id", vocab - 1},
      {"decoder_start_token_id", vocab - 1},
      {"eos_token_id", 0}};
}

inline std::vector<TestTensor> tiny_tensors(bool bart = false, const std::string& dtype = "F32",
                                            int vocab = kVocab) {
  std::vector<TestTensor> out;
  int k = 0;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, bool norm_gain) {
    TestTensor t(name, std::move(shape));
    std::int64_t count = 1;
    for (const std::int64_t s : t.shape) count *= s;
    for (std::int64_t i = 0; i < count; ++i)
      t.values.push_back((norm_gain ? 1.0f : 0.0f) + encoder_decoder_value(k, i));
    t.dtype = dtype;
    ++k;
    out.push_back(std::move(t));
  };
  const auto linear = [&](const std::string& name, int n_out, int n_in) {
    add(name + ".weight", {n_out, n_in}, false);
    add(name + ".bias", {n_out}, false);
  };
  const auto norm = [&](const std::string& name) {
    add(name + ".weight", {kD}, true);
    add(name + ".bias", {kD}, false);
  };
  add("model.shared.weight", {vocab, kD}, false);
  for (const std::string side : {"encoder", "decoder"}) {
    const std::string at = "model." + side + ".";
    if (bart) {
      add(at + "embed_positions.weight", {kPositions + 2, kD}, false);
      norm(at + "layernorm_embedding");
    }
    for (int l = 0; l < kLayers; ++l) {
      const std::string layer = at + "layers." + std::to_string(l) + ".";
      for (const char* p : {"q_proj", "k_proj", "v_proj", "out_proj"})
        linear(layer + "self_attn." + p, kD, kD);
      norm(layer + "self_attn_layer_norm");
      if (side == "decoder") {
        for (const char* p : {"q_proj", "k_proj", "v_proj", "out_proj"})
          linear(layer + "encoder_attn." + p, kD, kD);
        norm(layer + "encoder_attn_layer_norm");
      }
      linear(layer + "fc1", kFeedForward, kD);
      linear(layer + "fc2", kD, kFeedForward);
      norm(layer + "final_layer_norm");
    }
  }
  add("final_logits_bias", {1, vocab}, false);
  return out;
}

// A tiny BART's vocabulary: </s> 0 (the end), <s> 1, the 256 bytes (2 to 257), "ab" 258, "Ġa"
// 259, <pad> 260 (the decoder's start): "ab a" reads as <s> ab Ġa </s>.
inline constexpr int kBartVocab = 261;

// A tiny BART's folder, for the pipeline: the model, and GPT-2's vocab.json and merges.txt.
inline std::filesystem::path write_tiny_bart_folder(const TempDir& dir,
                                                    const std::string& name = "tiny-bart") {
  const std::filesystem::path folder =
      write_model(dir, tiny_config(true, kBartVocab), tiny_tensors(true, "F32", kBartVocab), name);
  nlohmann::json vocab = nlohmann::json::object();
  vocab["</s>"] = 0;
  vocab["<s>"] = 1;
  for (unsigned b = 0; b < 256; ++b) {  // GPT-2's printable stand-in for each byte
    std::string piece;
    append_utf8(piece, static_cast<char32_t>(Gpt2Tokenizer::byte_symbol(b)));
    vocab[piece] = 2 + static_cast<int>(b);
  }
  vocab["ab"] = 258;
  vocab
      ["\xc4\xa0"
       "a"] = 259;
  vocab["<pad>"] = 260;
  write_file(folder / "vocab.json", vocab.dump());
  write_file(folder / "merges.txt", "#version: 0.2\na b\n\xc4\xa0 a\n");
  return folder;
}

}  // namespace attnviz::testing
