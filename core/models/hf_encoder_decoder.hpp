// The encoder–decoders in Hugging Face's layout: Marian (MarianMTModel: the opus-mt translation
// models) and BART (BartForConditionalGeneration). A folder with config.json and
// model.safetensors (the tokenizer's files beside them are read by marian_tokenizer.hpp, or
// gpt2_tokenizer.hpp for BART, not here).
//   config.json: model_type "marian" or "bart"; d_model, encoder_layers, decoder_layers,
//   encoder_attention_heads, decoder_attention_heads, encoder_ffn_dim, decoder_ffn_dim,
//   vocab_size, max_position_embeddings; optionally activation_function ("swish"/"silu": SiLU;
//   "gelu": GELU with erf; "gelu_new": its tanh form), scale_embedding (false: the token
//   embedding × √d_model when true), share_encoder_decoder_embeddings (Marian; must be true),
//   decoder_vocab_size (must be vocab_size); every key type-checked and range-checked. Options
//   that change the math are refused: normalize_before = true (mBART's norms before the
//   sublayers), add_final_layer_norm, a decoder_vocab_size other than vocab_size.
//   model.safetensors (F32, F16 or BF16), names after "model.":
//     shared.weight (V, d): the token embedding of both stacks and the unembedding (lm_head.weight
//       at the top level, when present and different, is the unembedding instead)
//     {encoder, decoder}.embed_positions.weight: Marian's are sinusoids, computed here as
//       modeling_marian.py does (any in the file are passed over); BART's are learned, (P + 2, d),
//       position i at row i + 2
//     {encoder, decoder}.layernorm_embedding.{weight, bias}: BART only
//     per layer {encoder, decoder}.layers.{i}.self_attn.{q, k, v, out}_proj.{weight (d, d), bias},
//       .self_attn_layer_norm.*, .fc1.{weight (d_ff, d), bias}, .fc2.{weight (d, d_ff), bias},
//       .final_layer_norm.*; a decoder layer also .encoder_attn.{q, k, v, out}_proj.*,
//       .encoder_attn_layer_norm.*
//     final_logits_bias (1, V), at the top level: the logits' bias (zeros when missing)
//   {encoder, decoder}.embed_tokens.weight, copies of shared.weight, are passed over when equal
//   to it (an error otherwise); any other tensor is a warning.
// Both stacks put their norms after each sublayer and have no final norm: the encoder's output is
// its last layer's, and logits = decoder output · Eᵀ + final_logits_bias.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"

#include <string>

namespace attnviz {

// What config.json says of the tokens a translation starts and ends with.
struct EncoderDecoderTokens {
  int decoder_start = -1;  // the decoder's first token (Marian's is <pad>)
  int end = -1;            // </s>: ends the source, and a translation
  int pad = -1;
};

// `path`: the model's folder, its model.safetensors or its config.json. The Transformer returned
// is the decoder (with cross-attention), holding its encoder (Transformer::encoder()); format()
// reads e.g. "Hugging Face Marian, safetensors F32". `tokens` gets the special tokens.
Result<Transformer> load_hf_encoder_decoder(const std::string& path,
                                            EncoderDecoderTokens* tokens = nullptr);

}  // namespace attnviz
