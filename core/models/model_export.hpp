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

// `tokens`: the text's tokens as the tokenizer gave them (as many as forward.size()). An
// encoder–decoder's decoder: `encoder` is its encoder's forward pass and `source_tokens` the
// source's tokens; the document adds "source_tokens", "encoder_layers" (shaped as "layers"),
// "encoder_output", and on each decoder layer "cross_heads".
std::string attention_to_json(const TransformerForward& forward,
                              const std::vector<ModelToken>& tokens,
                              const AttentionExportOptions& options = {},
                              const TransformerForward* encoder = nullptr,
                              const std::vector<ModelToken>* source_tokens = nullptr);

}  // namespace attnviz
