// The plain reference of training_pass.hpp: the same loss and gradient, one text at a time, in
// loops over floats (as llm.c's train_gpt2.c writes its CPU passes), no Eigen, nothing kept
// between calls. The fast pass is tested against it (tests/core/training/), and both against
// PyTorch's autograd in float64 (tests/oracle/gradient_oracle_test.py).
//
// Per text of T tokens, forward in numbered passes:
//   0. x_i = wte[token_i] + wpe[i]
//   per layer: 1. n_i = LayerNorm₁(x_i)   2. q_i, k_i, v_i = n_i · W + b
//              3. α_it = softmax_t≤i(q_i,h · k_t,h / √d_head); o_i,h = Σ_t α_it v_t,h
//              4. m_i = x_i + o_i · W_O + b_O   5. x'_i = m_i + gelu(LayerNorm₂(m_i) · W_up + b) ·
//                 W_down + b
//   f_i = LayerNorm_f(x_i); z_i = f_i · wteᵀ; loss = mean −log softmax(z_i)[target_i]
// and backward, the same passes in reverse, each written for one number at a time. Llama's
// differences (RMSNorm, RoPE on q and k, no wpe and no biases, grouped-query heads, SwiGLU) are
// written where they apply, as are BERT's (LayerNorm of the embeddings, token types, attention
// both ways, each norm after its sublayer, GELU with erf, the MLM head), as in training_pass.hpp.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"
#include "core/training/training_pass.hpp"

#include <cstddef>

namespace attnviz {

// The batch's mean loss, its gradient added into `gradient` (gradient[i] for the weight at
// values[i]). `attention_only` skips the MLP, as TrainingPass. An error for a batch the model
// cannot read.
Result<float> reference_loss_and_gradient(const TransformerConfig& config,
                                          const TransformerWeights& weights, const float* values,
                                          float* gradient, const TrainingBatch& batch,
                                          bool attention_only = false);

// An encoder–decoder's (norms after: Marian, BART): per text, the encoder over the batch's
// source, the decoder over its tokens attending to the encoder's output (4c. β = softmax over
// every source position of cq · ck / √d_head; mid = LayerNorm_c(self_mid + Σ β cv · W_Oc + b)),
// and backward through both. A view outside values[0, count) is a constant and gets no gradient.
Result<float> reference_encoder_decoder_loss_and_gradient(
    const TransformerConfig& encoder_config, const TransformerWeights& encoder,
    const TransformerConfig& decoder_config, const TransformerWeights& decoder, const float* values,
    std::size_t count, float* gradient, const TrainingBatch& batch);

}  // namespace attnviz
