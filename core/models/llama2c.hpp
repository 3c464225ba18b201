// A llama2.c checkpoint (Karpathy's llama2.c, versions 0 and 1): a Llama-architecture model
// (RMSNorm, RoPE, grouped-query attention, SwiGLU), memory-mapped. The header's sizes are
// checked, and the size the weights need computed without overflow and compared with the file's,
// before any weight is read. Matrices are (out, in), row-major: y = W·x.
//   Version 0: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a
//   negative vocab_size: the classifier is not the embedding), then fp32 arrays in the order of
//   Llama2cWeights below, two legacy RoPE tables (skipped), then the classifier when unshared.
//   Version 1: uint32 magic "ak42" (0x616b3432), int32 version 1, the same 7 int32 (vocab_size
//   positive), a byte: 1 when the classifier is the embedding; zeros to byte 256. Then fp32:
//   rms_att, rms_ffn, rms_final, token_embedding, wq, wk, wv, wo, w1, w2, w3, the classifier
//   when unshared.
// Version 2 (int8-quantized) is refused with a message saying so.
#pragma once

#include "core/base/status.hpp"
#include "core/models/mapped_file.hpp"
#include "core/models/transformer.hpp"

#include <string>

namespace attnviz {

struct Llama2cConfig {
  int dim = 0;         // d_model
  int hidden_dim = 0;  // the FFN's width
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads; each serves n_heads / n_kv_heads query heads
  int vocab_size = 0;
  int seq_len = 0;                // the longest context
  bool shared_classifier = true;  // logits = token_embedding · x
  int version = 0;                // of the file: 0 (legacy) or 1 ("ak42")
  int head_size() const { return dim / n_heads; }
  int kv_dim() const { return head_size() * n_kv_heads; }
};

// Views into the mapped file: [layer][...] arrays, fp32.
struct Llama2cWeights {
  const float* token_embedding = nullptr;  // (vocab_size, dim)
  const float* rms_att = nullptr;          // (n_layers, dim)
  const float* wq = nullptr;               // (n_layers, dim, dim)
  const float* wk = nullptr;               // (n_layers, kv_dim, dim)
  const float* wv = nullptr;               // (n_layers, kv_dim, dim)
  const float* wo = nullptr;               // (n_layers, dim, dim)
  const float* rms_ffn = nullptr;          // (n_layers, dim)
  const float* w1 = nullptr;               // (n_layers, hidden_dim, dim)
  const float* w2 = nullptr;               // (n_layers, dim, hidden_dim)
  const float* w3 = nullptr;               // (n_layers, hidden_dim, dim)
  const float* rms_final = nullptr;        // (dim)
  const float* classifier = nullptr;       // (vocab_size, dim)
};

class Llama2cModel {
 public:
  // The checkpoint at `path`, or an error naming the file and what is wrong with it.
  static Result<Llama2cModel> load(const std::string& path);

  const Llama2cConfig& config() const { return config_; }
  const Llama2cWeights& weights() const { return weights_; }
  const std::string& path() const { return file_.path(); }

  // The model as the engine runs it: the embedding, norms and classifier stay in the mapped
  // file; the matrices, stored (out, in), are transposed into buffers the Transformer owns.
  // Consumes the checkpoint (the Transformer keeps its file mapped).
  Result<Transformer> to_transformer() &&;

 private:
  MappedFile file_;
  Llama2cConfig config_;
  Llama2cWeights weights_;
};

// A llama2.c checkpoint, loaded and made a Transformer.
Result<Transformer> load_llama2c(const std::string& path);

}  // namespace attnviz
