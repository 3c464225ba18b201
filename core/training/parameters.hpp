// A model's weights as training sees them: named tensors, one after the other in one buffer of
// floats, so that a gradient, an optimizer's moments and a saved file are the same table over
// another buffer. The names and shapes are the model file's own (GPT-2's Hugging Face names:
// "wte.weight" (vocab, d_model), "h.0.attn.c_attn.weight" (d_model, 3 · d_model), ...).
//
// weights_of() gives the TransformerWeights views the forward pass reads, pointing into the
// buffer: the engine's forward pass, every view of the app and the training pass all read the
// same numbers. A gradient buffer has the same layout: the gradient of the weight at
// values[i] is at gradient[i] (gradient_of below), for strided views too (GPT-2's W_Q, W_K and
// W_V are column blocks of c_attn). A tied embedding is one tensor read twice (token embedding
// and unembedding), so its gradient is the sum of both uses.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

// A buffer of weights (or of their gradient, or an optimizer's moments) at a 64-byte boundary.
// Eigen's products and sums take a path that depends on where their data lies against the
// vector width; every buffer on the same boundary makes two runs add in the same order, so the
// same seed gives the same weights bit for bit.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{64}); }
  bool operator==(const CacheLineAllocator&) const { return true; }
};
using ParameterBuffer = std::vector<float, CacheLineAllocator<float>>;

struct ParameterTensor {
  std::string name;
  std::vector<int> shape;  // row-major, as the file stores it
  std::size_t offset = 0;  // of its first float in the buffer
  std::size_t count() const;
  // Weight decay applies to matrices (rank 2: the products' weights and the embeddings), not to
  // gains and biases (nanoGPT's rule).
  bool decays() const { return shape.size() >= 2; }
};

class ParameterTable {
 public:
  // Appends a tensor after the others.
  void add(std::string name, std::vector<int> shape);
  const std::vector<ParameterTensor>& tensors() const { return tensors_; }
  const ParameterTensor* find(std::string_view name) const;
  std::size_t size() const { return size_; }  // floats in all

 private:
  std::vector<ParameterTensor> tensors_;
  std::size_t size_ = 0;
};

// The layout of a decoder in GPT-2's layout (TransformerConfig as GPT-2: LayerNorm before each
// sublayer, learned positions, GELU (tanh), biases everywhere, the unembedding tied to wte), under
// GPT2Model's names (no "transformer." prefix; the loader reads both):
//   wte.weight (vocab, d)  wpe.weight (context, d)
//   h.ℓ.ln_1.weight, .bias (d)   h.ℓ.attn.c_attn.weight (d, 3d), .bias (3d)   [Q | K | V]
//   h.ℓ.attn.c_proj.weight (d, d), .bias (d)   h.ℓ.ln_2.weight, .bias (d)
//   h.ℓ.mlp.c_fc.weight (d, d_ff), .bias (d_ff)   h.ℓ.mlp.c_proj.weight (d_ff, d), .bias (d)
//   ln_f.weight, .bias (d)
// With `tied_head` false, "lm_head.weight" (vocab, d) follows: an unembedding of its own (a file
// that saves the tied head apart holds both; each then gets its own use's gradient).
// An error for a configuration that is not GPT-2's (another norm, rotary positions, grouped
// queries) or sizes out of the range training takes.
Result<ParameterTable> gpt2_parameter_table(const TransformerConfig& config, bool tied_head = true);

// Whether training's passes (training_pass.hpp, reference_training.hpp) take a configuration:
// a decoder or an encoder, its norms before or after the sublayers, LayerNorm or RMSNorm,
// learned or rotary positions (scaled embeddings, offset positions, token types), GELU (tanh or
// erf), SiLU or SwiGLU, any grouped-query attention; an encoder–decoder's decoder with its norms
// after the sublayers (Marian's, BART's).
Status check_trainable(const TransformerConfig& config);

// The layout of a Llama in llama2.c's form (RMSNorm, RoPE, SwiGLU, grouped-query attention, no
// biases), under the names of llama2.c's model.py, but each matrix in the engine's orientation
// (in, out), the transpose of what PyTorch's nn.Linear stores (llama2c_file_tensors below turns
// a buffer into the checkpoint's own arrays):
//   tok_embeddings.weight (vocab, d)
//   layers.ℓ.attention_norm.weight (d)   layers.ℓ.attention.wq.weight (d, H · d_head)
//   layers.ℓ.attention.wk.weight, .wv.weight (d, KV · d_head)   .wo.weight (H · d_head, d)
//   layers.ℓ.ffn_norm.weight (d)   layers.ℓ.feed_forward.w1.weight (d, d_ff) (the gate),
//   .w3.weight (d, d_ff) (up), .w2.weight (d_ff, d) (down)
//   norm.weight (d)   output.weight (vocab, d), with `tied_head` false
Result<ParameterTable> llama_parameter_table(const TransformerConfig& config,
                                             bool tied_head = true);
TransformerWeights llama_weights_of(const TransformerConfig& config, const ParameterTable& table,
                                    const float* values);

// The layout of a BERT with its masked-language-model head (Hugging Face's BertForMaskedLM
// names, each matrix in the engine's orientation (in, out), the transpose of what nn.Linear
// stores; bert_file_tensors below gives the file's own):
//   bert.embeddings.word_embeddings.weight (vocab, d)   .position_embeddings.weight (context, d)
//   .token_type_embeddings.weight (types, d) when the model has token types
//   bert.embeddings.LayerNorm.weight, .bias (d)
//   bert.encoder.layer.ℓ.attention.self.query.weight (d, H · d_head), .bias; .key.*, .value.*
//   bert.encoder.layer.ℓ.attention.output.dense.weight (H · d_head, d), .bias (d)
//   bert.encoder.layer.ℓ.attention.output.LayerNorm.weight, .bias (d)
//   bert.encoder.layer.ℓ.intermediate.dense.weight (d, d_ff), .bias (d_ff)
//   bert.encoder.layer.ℓ.output.dense.weight (d_ff, d), .bias (d)   .output.LayerNorm.*
//   cls.predictions.transform.dense.weight (d, d), .bias   cls.predictions.transform.LayerNorm.*
//   cls.predictions.bias (vocab)   cls.predictions.decoder.weight (vocab, d), with `tied_head`
//   false
// An error for a configuration that is not BERT's (norms after, both ways, LayerNorm, learned
// positions, GELU).
Result<ParameterTable> bert_parameter_table(const TransformerConfig& config, bool tied_head = true);
TransformerWeights bert_weights_of(const TransformerConfig& config, const ParameterTable& table,
                                   const float* values);
// A buffer laid out by bert_parameter_table under the names and shapes of a Hugging Face BERT
// file: every nn.Linear's weight (out, in) (the table's transposed), the embeddings, gains and
// biases as they are. `named` gets the table, `out` the floats.
void bert_file_tensors(const ParameterTable& table, const float* buffer, ParameterTable& named,
                       std::vector<float>& out);

// The layout of an encoder–decoder in Marian's or BART's form (encoder config `encoder`, decoder
// `decoder`), under the names of Hugging Face's MarianMTModel and BartForConditionalGeneration,
// each matrix in the engine's orientation (in, out) (encoder_decoder_file_tensors gives the
// file's (out, in)):
//   model.shared.weight (vocab, d): both stacks' token embedding and the tied unembedding
//   BART only, per stack: model.{encoder,decoder}.embed_positions.weight (context + 2, d),
//     .layernorm_embedding.weight, .bias (d)
//   model.{encoder,decoder}.layers.ℓ.self_attn.{q,k,v,out}_proj.weight (d, d), .bias (d)
//     .self_attn_layer_norm.weight, .bias (d)
//   decoder only: model.decoder.layers.ℓ.encoder_attn.{q,k,v,out}_proj.*,
//   .encoder_attn_layer_norm.* .fc1.weight (d, d_ff), .bias (d_ff)   .fc2.weight (d_ff, d), .bias
//   (d)   .final_layer_norm.* lm_head.weight (vocab, d), with `tied_head` false
// Marian's sinusoid positions and final_logits_bias are constants (a buffer in PyTorch), not
// weights: they are not in the table.
Result<ParameterTable> encoder_decoder_parameter_table(const TransformerConfig& encoder,
                                                       const TransformerConfig& decoder,
                                                       bool tied_head = true);
struct EncoderDecoderWeights {
  TransformerWeights encoder, decoder;
};
// The views of both stacks into `values`; the constants (Marian's positions, final_logits_bias)
// are `constants`' own (the loaded decoder's views, which must outlive the result).
EncoderDecoderWeights encoder_decoder_weights_of(const TransformerConfig& encoder,
                                                 const TransformerConfig& decoder,
                                                 const ParameterTable& table, const float* values,
                                                 const TransformerWeights& constants);
// A buffer laid out by encoder_decoder_parameter_table under the file's names and shapes: every
// nn.Linear's weight (out, in), the rest as they are.
void encoder_decoder_file_tensors(const ParameterTable& table, const float* buffer,
                                  ParameterTable& named, std::vector<float>& out);

// The table of whichever layout the configuration has (GPT-2's, Llama's or BERT's), and its
// views.
Result<ParameterTable> parameter_table_of(const TransformerConfig& config, bool tied_head = true);
TransformerWeights weights_of(const TransformerConfig& config, const ParameterTable& table,
                              const float* values);

// A buffer laid out by llama_parameter_table as the arrays of a llama2.c checkpoint (run.c's
// names and shapes, every layer's matrices stacked, (out, in) as the file stores them):
//   token_embedding_table (vocab, d)  rms_att_weight (L, d)  wq (L, H · d_head, d)
//   wk, wv (L, KV · d_head, d)  wo (L, d, H · d_head)  rms_ffn_weight (L, d)  w1, w3 (L, d_ff, d)
//   w2 (L, d, d_ff)  rms_final_weight (d)  wcls (vocab, d) when the head is not tied
// `named` gets the table of those arrays, `out` their floats.
void llama2c_file_tensors(const TransformerConfig& config, const ParameterTable& table,
                          const float* buffer, ParameterTable& named, std::vector<float>& out);

// A GPT-2 configuration for training: d_head = d_model / heads, d_ff = 4 · d_model.
TransformerConfig gpt2_config(int vocab_size, int context, int layers, int heads, int d_model);

// The views of a GPT-2 model whose weights are `values` (laid out by gpt2_parameter_table).
TransformerWeights gpt2_weights_of(const TransformerConfig& config, const ParameterTable& table,
                                   const float* values);

// Copies every weight `from` views (any model in GPT-2's, Llama's or BERT's layout, whatever its
// strides)
// into the views `to` (into `values`, which they point into); the shapes are the same
// configuration's. A view `to` does not have (a bias under RMSNorm, positions under RoPE) is
// skipped.
void copy_weights(const TransformerWeights& from, const TransformerWeights& to, float* values);

// The spread of the weights a model starts from (their standard deviations).
struct InitialScales {
  float matrices = 0.02f;   // every matrix not named below (the embeddings, the MLP's)
  float attention = 0.02f;  // W_Q, W_K, W_V (attn.c_attn)
  float projection = 0.0f;  // W_O (attn.c_proj); 0: GPT-2's, 0.02/√(2 · layers), as mlp.c_proj
};

// GPT-2's initialization, seeded (core/base/rng.hpp: the same seed gives the same floats on every
// machine): every matrix N(0, 0.02²), the residual projections (attn.c_proj, mlp.c_proj)
// N(0, (0.02/√(2 · layers))²), gains 1, biases 0; `scales` changes the spreads. With
// `attention_only` the MLP's weights are 0 (the model then adds nothing through its MLP, and
// training keeps them 0).
void initialize_gpt2(const TransformerConfig& config, const ParameterTable& table,
                     std::uint64_t seed, bool attention_only, float* values,
                     const InitialScales& scales = {});

// Whether tensor `tensor` is one of the MLP's (h.ℓ.mlp.*, h.ℓ.ln_2.*).
bool is_mlp_tensor(const ParameterTensor& tensor);

// The gradient's float for the weight at `weight` (a pointer into `values`).
inline float* gradient_of(const float* weight, const float* values, float* gradient) {
  return gradient + (weight - values);
}

}  // namespace attnviz
