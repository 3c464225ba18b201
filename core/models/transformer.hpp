// A transformer as the engine runs it, whatever file it came from: the decoders GPT-2 (LayerNorm
// before each sublayer, learned positions, a GELU MLP, biases) and Llama (RMSNorm, RoPE, a SwiGLU
// MLP, grouped-query attention), and the encoder BERT (attention both ways, LayerNorm after each
// sublayer and after the embeddings, token types, GELU with erf, a masked-language-model head).
// Every weight is a view in the row-vector convention of the rest of the engine (y = x · W + b, W
// as (in, out), row-major with a stride), into either a mapped file (GPT-2's Conv1D weights are
// stored so) or a buffer the model owns (weights converted from F16 or BF16, transposed from (out,
// in) as llama2.c stores them, or edited by a user).
//
// The loaders (llama2c_model.hpp, hf_gpt2.hpp) check every shape against the file before they
// build a Transformer; `Transformer::check` checks the views against the configuration once
// more, so the forward pass can trust them.
#pragma once

#include "core/base/status.hpp"
#include "core/models/head_intervention.hpp"
#include "core/models/mapped_file.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

enum class NormKind { LayerNorm, RMSNorm };
enum class PositionKind { Learned, Rotary };
// GELU's tanh form (GPT-2) and erf form (BERT, BART); SiLU, x · sigmoid(x) (Marian's "swish", not
// gated); Llama's gated SwiGLU.
enum class FeedForwardKind { GeluTanh, GeluErf, Silu, SwiGLU };
// A decoder's token sees itself and the tokens before it; an encoder's sees every token.
enum class AttentionDirection { Causal, BothWays };
// Where each sublayer's norm stands: before it, on its input, with the residual added plainly
// (GPT-2, Llama: x + f(norm(x))); or after it, on the sum (BERT: norm(x + f(x))), the embeddings
// normed too.
enum class NormPlacement { Before, After };

struct TransformerConfig {
  std::string architecture;  // "gpt2" or "llama", as a person reads it
  int d_model = 0;
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (= n_heads unless grouped-query attention)
  int d_head = 0;      // per head: queries, keys and values alike
  int d_ff = 0;        // the MLP's hidden width
  int vocab_size = 0;
  int context = 0;  // the longest sequence the model was made for
  NormKind norm = NormKind::LayerNorm;
  float norm_epsilon = 1e-5f;
  PositionKind positions = PositionKind::Learned;
  float rope_theta = 10000.0f;  // RoPE's base: frequency theta^(-2i / d_head) of pair i
  FeedForwardKind feed_forward = FeedForwardKind::GeluTanh;
  AttentionDirection direction = AttentionDirection::Causal;
  NormPlacement norm_placement = NormPlacement::Before;
  int token_types = 0;  // BERT's segment embeddings (2: sentence A and B); 0: none
  // The token embedding is multiplied by this before the position is added (Marian, BART with
  // scale_embedding: √d_model).
  float embedding_scale = 1.0f;
  // Position i reads row i + position_offset of the position table (BART's learned positions
  // start at row 2); the table has context + position_offset rows.
  int position_offset = 0;
  // An encoder–decoder's decoder (Marian, BART): each layer attends, after its self-attention, to
  // the encoder's output (cross-attention: queries from the decoder, keys and values from the
  // encoder), with its own norm.
  bool cross_attention = false;

  bool causal() const { return direction == AttentionDirection::Causal; }
  bool norm_after() const { return norm_placement == NormPlacement::After; }
  int queries_per_kv_head() const { return n_heads / n_kv_heads; }
  // The key/value head that query head `head` reads (grouped-query attention).
  int kv_head_of(int head) const { return head / queries_per_kv_head(); }
};

// A row-major matrix somewhere in memory: element (r, c) at data[r · stride + c].
struct MatrixView {
  const float* data = nullptr;
  int rows = 0;
  int cols = 0;
  std::ptrdiff_t stride = 0;
  bool empty() const { return data == nullptr; }
  float at(int row, int col) const { return data[row * stride + col]; }
};

struct VectorView {
  const float* data = nullptr;
  int size = 0;
  bool empty() const { return data == nullptr; }
};

// Under NormPlacement::After the attention norm is applied to x + attention (BERT's
// attention.output.LayerNorm) and the MLP norm to x′ + MLP (output.LayerNorm).
struct TransformerLayer {
  VectorView attention_norm_weight, attention_norm_bias;  // (d_model); no bias under RMSNorm
  MatrixView query;                                       // (d_model, n_heads · d_head)
  MatrixView key;                                         // (d_model, n_kv_heads · d_head)
  MatrixView value;                                       // (d_model, n_kv_heads · d_head)
  VectorView query_bias, key_bias, value_bias;            // with LayerNorm (GPT-2, BERT)
  MatrixView output;                                      // (n_heads · d_head, d_model): W_O
  VectorView output_bias;                                 // (d_model), with LayerNorm
  VectorView mlp_norm_weight, mlp_norm_bias;              // (d_model)
  // GPT-2, BERT: down(gelu(x · up + up_bias)) + down_bias.  Llama: down(silu(x · gate) ⊙ (x · up)).
  MatrixView up;    // (d_model, d_ff)
  MatrixView gate;  // (d_model, d_ff), SwiGLU only
  MatrixView down;  // (d_ff, d_model)
  VectorView up_bias, down_bias;
  // An encoder–decoder's decoder only (TransformerConfig::cross_attention): the cross-attention
  // between the self-attention and the MLP, its norm placed as the others.
  VectorView cross_norm_weight, cross_norm_bias;  // (d_model)
  MatrixView cross_query;                         // (d_model, n_heads · d_head), on the decoder
  MatrixView cross_key;                           // (d_model, n_heads · d_head), on the encoder's
  MatrixView cross_value;                         // (d_model, n_heads · d_head)    output
  VectorView cross_query_bias, cross_key_bias, cross_value_bias;
  MatrixView cross_output;  // (n_heads · d_head, d_model)
  VectorView cross_output_bias;
};

// The layer's whole matrix that `matrix` names (W_Q, W_K, W_V: (d_model, heads · d_head);
// W_O: (n_heads · d_head, d_model)).
MatrixView& matrix_of(TransformerLayer& layer, HeadMatrix matrix);
const MatrixView& matrix_of(const TransformerLayer& layer, HeadMatrix matrix);

// The output, from the last layer's x:
//   norm before each sublayer (GPT-2, Llama): final = norm_f(x)
//   norm after (BERT's MLM head):             final = norm_f(gelu(x · head_transform + its bias))
//   norm after, no head (Marian's decoder):   final = x
//   logits = final · unembeddingᵀ (+ unembedding_bias: BERT's, Marian's final_logits_bias)
// A BERT without its MLM head (BertModel) has no head_transform, final norm or unembedding: its
// final is x, and it predicts no tokens (predicts_tokens() false).
struct TransformerWeights {
  MatrixView token_embedding;       // (vocab_size, d_model)
  MatrixView position_embedding;    // (context + position_offset, d_model); empty under RoPE
  MatrixView token_type_embedding;  // (token_types, d_model); empty without token types
  // (d_model): under NormPlacement::After only, and there optional (BERT and BART have it, Marian
  // not)
  VectorView embedding_norm_weight, embedding_norm_bias;
  std::vector<TransformerLayer> layers;
  MatrixView head_transform;                      // (d_model, d_model): BERT's MLM head only
  VectorView head_transform_bias;                 // (d_model)
  VectorView final_norm_weight, final_norm_bias;  // (d_model)
  MatrixView unembedding;       // (vocab_size, d_model): logits = final · unembeddingᵀ
  VectorView unembedding_bias;  // (vocab_size): BERT's MLM head, Marian's final_logits_bias
};

class Transformer {
 public:
  Transformer() = default;
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;
  Transformer(Transformer&&) = default;
  Transformer& operator=(Transformer&&) = default;

  const TransformerConfig& config() const { return config_; }
  const TransformerWeights& weights() const { return weights_; }
  // The weights as the files hold them, whatever has been edited since.
  const TransformerWeights& weights_on_disk() const { return original_weights_; }
  // Where the model came from ("stories260K.bin"), and its format as a person reads it
  // ("llama2.c version 0, fp32").
  const std::string& source() const { return source_; }
  const std::string& format() const { return format_; }
  std::size_t parameter_count() const;
  // Whether the model gives logits over its vocabulary (every decoder; BERT with its MLM head).
  bool predicts_tokens() const { return !weights_.unembedding.empty(); }
  // An encoder–decoder's encoder (this Transformer is then its decoder, with cross-attention),
  // or null. Its weights may view this model's files (shared embeddings): it lives as long as
  // this model.
  const Transformer* encoder() const { return encoder_.get(); }
  Transformer* encoder() { return encoder_.get(); }
  void set_encoder(Transformer encoder) {
    encoder_ = std::make_unique<Transformer>(std::move(encoder));
  }

  // Sets W[row, col] of `matrix` for query head `head` of `layer` (Query and Output: the head's
  // own columns or rows; Key and Value: the columns of the key/value head it reads, which the
  // other query heads of its group share). Row and column count from 0 within the head's block:
  // Query/Key/Value (d_model, d_head), Output (d_head, d_model). The matrix is copied out of the
  // file the first time it is edited; the file is never written.
  Status set_head_weight(int layer, int head, HeadMatrix matrix, int row, int col, float value);
  float head_weight(int layer, int head, HeadMatrix matrix, int row, int col) const;
  // Sets value `dimension` of token `token`'s embedding. The embedding matrix is copied out of
  // the file on its first edit; a model whose unembedding is its embedding (tied, as GPT-2 and
  // stories260K) keeps them one matrix, so the edit changes that token's logit too. A forward
  // pass must be told: TransformerForward::embeddings_changed().
  Status set_token_embedding(int token, int dimension, float value);
  // Back to the weights on disk.
  void reset_weights();
  bool edited() const { return !edited_.empty(); }
  // A number new after every weight or embedding edit and every reset (what a forward pass keeps
  // of the weights, packed copies, is stale when it has changed).
  std::uint64_t weights_version() const { return weights_version_; }

  // ---- For the loaders ----
  // A buffer the model keeps (converted or transposed weights), zeroed.
  float* allocate(std::size_t count);
  void keep_file(MappedFile file) {
    files_.push_back(std::make_shared<MappedFile>(std::move(file)));
  }
  // Checks the views against the configuration (every shape, every pointer set) and records
  // them as the weights on disk. An error names what disagrees.
  Status set_weights(TransformerConfig config, TransformerWeights weights, std::string source,
                     std::string format);

 private:
  TransformerConfig config_;
  TransformerWeights weights_;           // what the forward pass reads (edits included)
  TransformerWeights original_weights_;  // the weights on disk
  std::string source_, format_;
  std::vector<std::shared_ptr<MappedFile>> files_;
  std::vector<std::unique_ptr<float[]>> owned_;
  std::vector<std::unique_ptr<float[]>> edited_;  // copies made for edits, dropped on reset
  std::uint64_t weights_version_ = 0;
  std::unique_ptr<Transformer> encoder_;
  MatrixView& attention_matrix(int layer, HeadMatrix matrix);
  // A copy of `view` the model owns (contiguous), kept until reset_weights.
  MatrixView copy_for_edits(const MatrixView& view);
};

}  // namespace attnviz
