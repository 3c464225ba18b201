// GPT-2 in Hugging Face's layout: a folder with config.json and model.safetensors (the
// tokenizer files beside them are read by gpt2_tokenizer.hpp, not here).
//   config.json: n_embd, n_layer, n_head, n_positions (or n_ctx), vocab_size, and optionally
//   layer_norm_epsilon (1e-5), activation_function ("gelu_new" or "gelu_pytorch_tanh"), n_inner
//   (null: 4 · n_embd), model_type ("gpt2"); every key type-checked and range-checked; options
//   that change the math (scale_attn_weights false, scale_attn_by_inverse_layer_idx,
//   add_cross_attention) are refused; other keys are ignored.
//   model.safetensors (F32, F16 or BF16): wte.weight (V, d), wpe.weight (n_positions, d), per
//   layer h.{i}.ln_1.{weight,bias}, h.{i}.attn.c_attn.{weight (d, 3d), bias (3d)},
//   h.{i}.attn.c_proj.{weight (d, d), bias}, h.{i}.ln_2.*, h.{i}.mlp.c_fc.{weight (d, d_ff),
//   bias}, h.{i}.mlp.c_proj.{weight (d_ff, d), bias}, ln_f.*; every name with or without the
//   "transformer." prefix (GPT2LMHeadModel's files have it). Conv1D weights are stored (in, out):
//   y = x · W + b, as the engine reads them, so F32 weights stay in the mapped file.
//   h.{i}.attn.bias and h.{i}.attn.masked_bias (the causal mask as a buffer) are ignored.
//   lm_head.weight (V, d), when present, is the unembedding, as GPT2LMHeadModel uses it: when it
//   holds exactly wte's values (the usual tied head) wte's view serves both; an lm_head.bias is
//   refused (GPT-2 has none). Without it, the unembedding is wte (tied).
// Every tensor's shape is checked against config.json (an error names the tensor, its shape and
// the keys that disagree), and every weight must be a finite number (an error names the tensor).
// Sharded checkpoints (model.safetensors.index.json) and pytorch_model.bin are refused with a
// message saying what to download instead.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"

#include <string>

namespace attnviz {

// `path`: the model's folder, or its model.safetensors (the folder it is in is the model).
// format() then reads e.g. "Hugging Face GPT-2, safetensors F16"; source() is the folder.
Result<Transformer> load_hf_gpt2(const std::string& path);

}  // namespace attnviz
