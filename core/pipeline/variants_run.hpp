// A cheaper attention method (core/variants/) run on one head of a computed one-layer scenario,
// beside the full attention the engine computed, as `attnviz-cli compute --variant` writes it.
// Each method takes the head's Q, K and V and the scenario's score scale (dot-product scores:
// `dot` and `scaled_dot`, with the temperature), and is compared with the full attention it
// stands for:
//   flash      the engine's head output (its causal and custom masks included)
//   linformer  full attention without a mask (Linformer has none)
//   reformer   full attention over the shared keys (self-attention; the causal mask honoured)
//   window, dilated, blocks (with optional global tokens)
//              the scenario's attention with that mask instead of its own (causal kept)
//   decode     the full causal computation of the head (self-attention), row by row
//   shared_keys the scenario with every head its own K and V (kv_groups left out), any score;
//              with the weights and K/V cache per token of every number of groups
#pragma once

#include "core/base/status.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/variants/flash_attention.hpp"
#include "core/variants/kv_cache.hpp"
#include "core/variants/reformer.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

enum class VariantMethod {
  Flash,
  Linformer,
  Reformer,
  Window,
  Dilated,
  Blocks,
  Decode,
  SharedKeys
};
std::string_view to_string(VariantMethod method);
std::optional<VariantMethod> parse_variant_method(std::string_view name);
// "flash, linformer, reformer, window, dilated, blocks, decode"
std::string variant_method_names();

// The scale of a head's dot-product scores (1/√d_k for scaled_dot, 1 for dot, divided by the
// temperature), as each variant computes them; an error naming `method` for another score
// function or for hard attention (the variants compute a softmax).
Result<float> variant_score_scale(const AttentionConfig& config, std::string_view method);

// Head `head` decoding X (n, d_model; the target's embeddings, positions included) one token at
// a time with a KV cache: its own W_Q, its group's W_K and W_V (grouped-query attention). Every
// step, and the caches after the last; an error from the step that failed.
struct DecodedSentence {
  std::vector<DecodeStep> steps;
  Matrix keys, values;  // (n, d_k), (n, d_v)
};
Result<DecodedSentence> decode_sentence(const Parameters& parameters, const AttentionConfig& config,
                                        int head, const Matrix& X, float scale);

struct VariantRequest {
  VariantMethod method = VariantMethod::Flash;
  int head = 0;
  FlashSettings flash;             // flash
  int summaries = 4;               // linformer: k (clamped to n when larger? no: an error)
  bool share_projection = false;   // linformer: F = E
  ReformerSettings reformer;       // reformer
  int width = 3;                   // window, dilated
  int dilation = 2;                // dilated
  int block = 4;                   // blocks
  std::vector<int> global_tokens;  // window, dilated, blocks: from 0
  std::uint64_t seed = 7;          // linformer's projections
};

// The "variant" object of the result document (docs/cli.md): the method, its settings, its
// intermediates, its output, the full attention it stands for, the largest difference between
// the two, and the pairs it computed against the full count. An error that names the problem for
// a head the scenario lacks, a score function that is not a dot product, a mode or mask the
// method does not take, or bad settings.
Result<std::string> variant_to_json(const Scenario& scenario, const Pipeline& pipeline,
                                    const VariantRequest& request);

}  // namespace attnviz
