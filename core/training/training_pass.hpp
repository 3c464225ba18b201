// Training's forward and backward pass over a batch of texts, for a decoder in GPT-2's layout or
// Llama's, for an encoder in BERT's, and for an encoder–decoder in Marian's or BART's
// (parameters.hpp: check_trainable), kept apart from the app's
// forward pass (transformer_forward.hpp), which keeps one text with a cache of keys and values and
// what the views show: this one keeps what the backward pass needs, for every text of a batch, and
// nothing more.
//
// B texts of T tokens each; N = B · T rows; d = d_model; H heads of d_head; V the vocabulary.
// Written below for GPT-2; Llama's differences: RMSNorm (no mean, no bias) for each LayerNorm, no
// wpe (RoPE turns q and k by position after step 2, and turns dq and dk back before step 2's
// backward), no biases, query head h reads key/value head kv_head_of(h) (whose dk and dv gather
// every query head of its group), and SwiGLU's down(silu(x · W_gate) ⊙ (x · W_up)) for the MLP.
// BERT's: x = LayerNorm_e(wte[token] + wpe[position] + tte[type]); no mask in step 3 (every
// query sees every key); each norm after its sublayer, on the sum (mid = LayerNorm₁(x + heads ·
// W_O + b_O), x' = LayerNorm₂(mid + MLP(mid))), so that in the backward pass each norm's gradient
// comes before its sublayer's and the residual's; GELU with erf; the MLM head's
// final = LayerNorm_f(gelu(x · W_h + b_h)), logits = final · wteᵀ + b_V.
// An encoder–decoder's: the encoder (BERT's passes, no token types, no head) over the source;
// its last layer's output is the memory (B · S rows). Each decoder layer (norms after) has
// between steps 4 and 5 the cross-attention, 4c: cq = self_mid · W_Qc + b, ck and cv = memory ·
// W + b, per text and head softmax(cq · ckᵀ / √d_head) over every source position · cv,
// mid = LayerNorm_c(self_mid + that · W_Oc + b). Its backward pass gives self_mid the residual's
// share and the queries', and the memory the keys' and values'; the encoder's backward pass
// starts from the memory's gradient, summed over every decoder layer.
// Forward, in passes (as transformer_forward.hpp, its numbers the same):
//   0. x = wte[token] + wpe[position]                                               (N, d)
// Per layer:
//   1. normalized = LayerNorm₁(x), keeping each row's mean and 1/σ                   (N, d)
//   2. q, k, v    = normalized · W_Q + b_Q, … (column blocks of c_attn)             (N, d)
//   3. per text b, head h: scores = q_bh · k_bhᵀ / √d_head, key t > query i masked      (T, T)
//      attention = softmax(scores) by row; heads_bh = attention · v_bh             (T, d_head)
//   4. mid = x + heads · W_O + b_O                                                    (N, d)
//   5. mlp_in = LayerNorm₂(mid); before = mlp_in · W_up + b_up                   (N, d_ff)
//      after = gelu(before); x' = mid + after · W_down + b_down                       (N, d)
// Then final = LayerNorm_f(x), logits = final · wteᵀ                                   (N, V)
//   loss = mean over the positions with a target of −log softmax(logits)[target].
// Backward, the same passes in reverse (each product's gradient two products: for Y = X · W,
// dX = dY · Wᵀ and dW += Xᵀ · dY), as llm.c's train_gpt2.c does it:
//   dlogits = (softmax − one-hot(target)) / targets counted; dfinal = dlogits · wte;
//   dwte += dlogitsᵀ · final (the tied unembedding's use)
//   per layer from the top: the MLP (GELU's derivative), LayerNorm₂'s, the attention:
//     dattention = dheads_bh · v_bhᵀ; dv_bh = attentionᵀ · dheads_bh;
//     dscores = attention ⊙ (dattention − rowsum(attention ⊙ dattention)) / √d_head;
//     dq_bh = dscores · k_bh; dk_bh = dscoresᵀ · q_bh; then LayerNorm₁'s
//   dwte[token] += dx, dwpe[position] += dx (the embedding's use).
// reference_training.hpp computes the same plainly, one text and one number at a time; the tests
// check this pass against it, and both against PyTorch's autograd in float64.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/models/transformer.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace attnviz {

// B texts of T tokens, one after the other (B · T ids), and what each position should predict
// (−1: nothing; the loss is the mean over the others).
struct TrainingBatch {
  int texts = 0;
  int length = 0;
  std::vector<int> tokens;   // (texts, length)
  std::vector<int> targets;  // (texts, length)
  // (texts, length): each token's type (BERT's sentence A 0, B 1), or empty: every type 0
  std::vector<int> token_types;
  // An encoder–decoder's: the source each text's decoder attends to, read by the encoder
  // (texts, source_length); the tokens above are the decoder's (its start token first).
  int source_length = 0;
  std::vector<int> source_tokens;
};

// Checks a batch against a model: sizes, ids inside the vocabulary, at most the context (for an
// encoder–decoder's decoder, the source too).
Status check_batch(const TransformerConfig& config, const TrainingBatch& batch);

// Every position predicts the token after it (the last predicts nothing): the batch of one text
// that `model grad` and the `text` task read.
TrainingBatch next_token_batch(const std::vector<int>& tokens);

class TrainingPass {
 public:
  // An error for a configuration this pass does not train (check_trainable), or a decoder with
  // cross-attention (make_encoder_decoder trains it).
  // With `attention_only`, the MLP (whose weights are then all 0, and stay so) is skipped: it
  // adds nothing to the stream and gets no gradient.
  static Result<TrainingPass> make(const TransformerConfig& config, bool attention_only = false);
  // An encoder–decoder (Marian, BART): the encoder reads the batch's source, the decoder (with
  // cross-attention) its tokens; the gradient reaches the encoder through the cross-attention's
  // keys and values.
  static Result<TrainingPass> make_encoder_decoder(const TransformerConfig& encoder,
                                                   const TransformerConfig& decoder);

  // The batch's loss, and its gradient added into `gradient`: for the weight at values[i] (every
  // view of `weights` points into `values`), gradient[i]. An error (nothing added) for a batch the
  // model cannot read, or a loss that is not a finite number.
  Result<float> loss_and_gradient(const TransformerWeights& weights, const float* values,
                                  float* gradient, const TrainingBatch& batch);
  // The loss alone (the forward pass).
  Result<float> loss(const TransformerWeights& weights, const TrainingBatch& batch);
  // An encoder–decoder's: the decoder's weights and the encoder's. A view that points outside
  // values[0, count) is a constant, not a weight, and gets no gradient (Marian's sinusoid
  // positions, final_logits_bias: a buffer in PyTorch).
  Result<float> loss_and_gradient(const TransformerWeights& decoder,
                                  const TransformerWeights& encoder, const float* values,
                                  std::size_t count, float* gradient, const TrainingBatch& batch);
  Result<float> loss(const TransformerWeights& decoder, const TransformerWeights& encoder,
                     const TrainingBatch& batch);

  // The last forward pass's attention of text `text`, layer `layer`, head `head`: (T, T)
  // row-major, rows the queries, keys after the query 0.
  const float* attention(int text, int layer, int head) const;

 private:
  struct Layer {
    Matrix input;                     // (N, d): the residual stream into the layer
    Matrix normalized;                // (N, d): LayerNorm₁(input)
    std::vector<float> mean1, rstd1;  // (N)
    Matrix q, k, v;                   // (N, H · d_head), (N, KV · d_head) twice: after RoPE
    std::vector<float> attention;     // (B, H, T, T)
    Matrix heads;                     // (N, H · d_head): every head's attention · v, side by side
    Matrix mid;                       // (N, d): after the attention's residual
    Matrix mlp_in;                    // (N, d): LayerNorm₂(mid)
    std::vector<float> mean2, rstd2;  // (N)
    Matrix before, after;             // (N, d_ff): the MLP's hidden units before and after GELU
                                      // (SwiGLU: x · W_up, and silu(gate) ⊙ it)
    Matrix gate;                      // (N, d_ff): SwiGLU's x · W_gate
    // Norm after (BERT): the sums each norm reads; mean1/rstd1 and mean2/rstd2 are theirs, mid is
    // norm₁(attention_sum) and the MLP reads mid (normalized and mlp_in stay empty).
    Matrix attention_sum, mlp_sum;  // (N, d)
    // A decoder with cross-attention (norms after): self_mid = norm₁(attention_sum), which the
    // cross-attention reads and adds to; cross_sum = self_mid + its output, mid = norm_c(that)
    // (mean3, rstd3 its norm's).
    Matrix self_mid, cross_sum;          // (N, d)
    std::vector<float> mean3, rstd3;     // (N)
    Matrix cross_q;                      // (N, H · d_head)
    Matrix cross_k, cross_v;             // (B · S, H · d_head): from the encoder's output
    std::vector<float> cross_attention;  // (B, H, T, S)
    Matrix cross_heads;                  // (N, H · d_head)
  };
  TransformerConfig config_;
  bool attention_only_ = false;
  int texts_ = 0, length_ = 0;
  std::vector<Layer> layers_;
  Matrix embedded_;  // (N, d): the embeddings' sum before LayerNorm_e (a model that norms them)
  std::vector<float> mean_e_, rstd_e_;
  Matrix stream_;                    // (N, d): the last layer's output
  Matrix head_before_, head_after_;  // (N, d): BERT's MLM head, x · W_h + b_h and act(it)
  Matrix final_;                     // (N, d): LayerNorm_f(stream), or of the head's; or stream
  std::vector<float> mean_f_, rstd_f_;
  Matrix logits_;  // (N, V); the backward pass turns it into dlogits
  // Scratch of the backward pass.
  Matrix d_stream_, d_sum_, d_normalized_, d_heads_, d_q_, d_k_, d_v_, d_hidden_, d_gate_;
  Matrix scores_, d_scores_;  // (T, T), or (T, S) for the cross-attention
  Matrix d_cross_q_, d_cross_k_, d_cross_v_, d_memory_;
  // An encoder–decoder's encoder (this pass is then its decoder).
  std::unique_ptr<TrainingPass> encoder_;

  Result<float> forward(const TransformerWeights& weights, const TransformerWeights* encoder,
                        const TrainingBatch& batch);
  // The embeddings and every layer over B texts of T tokens (types: null for all 0), attending
  // to `memory` (B · S rows: the encoder's output) where the layers have cross-attention;
  // leaves the last layer's output in stream_.
  void forward_stack(const TransformerWeights& weights, const int* tokens, const int* types,
                     int texts, int length, const Matrix* memory, int memory_length);
  void cross_forward(const TransformerLayer& weights, Layer& layer, const Matrix& memory, int texts,
                     int length, int memory_length);
  // From d_stream_ (the gradient of stream_) down through every layer and the embeddings; the
  // gradient of `memory` added into d_memory.
  void backward_stack(const TransformerWeights& weights, const float* values, std::size_t count,
                      float* gradient, const int* tokens, const int* types, const Matrix* memory,
                      int memory_length, Matrix* d_memory);
  // From the gradient of cross_sum (in d_stream_) to self_mid's (in d_stream_) and the memory's
  // (added into d_memory).
  void cross_backward(const TransformerLayer& weights, Layer& layer, const float* values,
                      std::size_t count, float* gradient, const Matrix& memory, int memory_length,
                      Matrix& d_memory);
  Result<float> gradient_of_batch(const TransformerWeights& weights,
                                  const TransformerWeights* encoder, const float* values,
                                  std::size_t count, float* gradient, const TrainingBatch& batch);
};

}  // namespace attnviz
