// A model's forward pass written out: the "attnviz-model-attention" JSON document of
// `attnviz-cli model attention` (docs/cli.md describes every field). Numbers as the shortest
// decimals that read back to the same float; masked scores as null.
#pragma once

#include "core/models/model_tokens.hpp"
#include "core/models/transformer_forward.hpp"

#include <string>
#include <vector>

namespace attnviz {

struct AttentionExportOptions {
  // Besides every head's weights: Q, K, V, the raw scores and the heads' outputs, and per layer
  // the normalized input, the attention block's output, the residuals and the MLP's output, and
  // the final norm. The logits are always written: a decoder's for the next token after the last
  // position; an encoder's at its [MASK] tokens (or its last position), with their positions.
  bool intermediates = true;
};

// `tokens`: the text's tokens as the tokenizer gave them (as many as forward.size()).
std::string attention_to_json(const TransformerForward& forward,
                              const std::vector<ModelToken>& tokens,
                              const AttentionExportOptions& options = {});

}  // namespace attnviz
