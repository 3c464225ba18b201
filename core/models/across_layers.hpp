// What the layers do together, computed from a forward pass (transformer_forward.hpp):
//   residual norms  ‖x‖ of the residual stream at each position, at the input and after each
//                   layer: how large the stream grows
//   logit lens      each layer's residual stream read out as if it were the last layer's:
//                   logits = final_norm(residual_out_ℓ) · Eᵀ, and the token it would predict
//                   (nostalgebraist, 2020); an encoder's through its MLM head, the token it
//                   would put at each position
//   attention rollout  (Abnar & Zuidema, 2020) how much each position's representation after
//                   layer ℓ draws on each input token, through attention and the residual:
//                   per layer Â_ℓ = ½ · mean over heads of α + ½ · I, rows scaled to sum to 1;
//                   rollout_ℓ = Â_ℓ · Â_{ℓ−1} ··· Â_0                           (n_query, n_key)
// Interventions count as the forward pass applied them (an ablated head still has its pattern
// in α: rollout shows where attention looked, not what the head contributed).
#pragma once

#include "core/base/types.hpp"
#include "core/models/transformer_forward.hpp"

#include <vector>

namespace attnviz {

// (n_layers + 1, n): row 0 the input (embeddings), row ℓ + 1 after layer ℓ.
Matrix residual_norms(const TransformerForward& forward);

struct LensPrediction {
  int token = 0;             // the most likely next token; -1 when the logits are not finite
  float probability = 0.0f;  // its probability (softmax of the lens's logits)
};
// (n_layers) × (n): what each layer's residual stream after it predicts at each position. The
// last layer's row is the model's own prediction.
std::vector<std::vector<LensPrediction>> logit_lens(const TransformerForward& forward);

// The rollout after each layer: rollout[ℓ] is (n, n), lower-triangular, rows summing to 1.
std::vector<Matrix> attention_rollout(const TransformerForward& forward);

}  // namespace attnviz
