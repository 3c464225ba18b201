// BERT in Hugging Face's layout: a folder with config.json and model.safetensors (vocab.txt and
// tokenizer_config.json beside them are read by bert_tokenizer.hpp, not here).
//   config.json: hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
//   vocab_size, max_position_embeddings; optionally type_vocab_size (2), layer_norm_eps (1e-12),
//   hidden_act ("gelu", GELU with erf; or "gelu_new"/"gelu_pytorch_tanh", its tanh form),
//   model_type ("bert"); every key type-checked and range-checked. Options that change the math
//   are refused: position_embedding_type other than "absolute", is_decoder, add_cross_attention.
//   model.safetensors (F32, F16 or BF16), as BertModel saves it, or as BertForMaskedLM (and
//   BertForPreTraining) save it with "bert." before the encoder's names:
//     embeddings.{word_embeddings (V, d), position_embeddings (P, d),
//                 token_type_embeddings (T, d)}.weight, embeddings.LayerNorm.{weight, bias}
//     per layer encoder.layer.{i}.attention.self.{query, key, value}.{weight (d, d), bias},
//       .attention.output.dense.*, .attention.output.LayerNorm.*, .intermediate.dense.{weight
//       (d_ff, d), bias}, .output.dense.{weight (d, d_ff), bias}, .output.LayerNorm.*
//     the MLM head, when the file has it: cls.predictions.transform.dense.*,
//       cls.predictions.transform.LayerNorm.*, cls.predictions.bias (V), and
//       cls.predictions.decoder.weight (V, d) when it is not the word embeddings (tied: missing,
//       or equal to them); cls.predictions.decoder.bias, when present, must equal
//       cls.predictions.bias.
//   LayerNorms named .gamma and .beta (older checkpoints) are read as .weight and .bias. The
//   pooler (pooler.dense.*), the next-sentence head (cls.seq_relationship.*) and the position_ids
//   buffer are not used and are passed over quietly; any other tensor is a warning.
//   nn.Linear stores weights (out, in): they are copied transposed, (in, out), as the engine
//   reads them (y = x · W + b).
// Without the MLM head the model shows attention but predicts no tokens.
#pragma once

#include "core/base/status.hpp"
#include "core/models/transformer.hpp"

#include <string>

namespace attnviz {

// `path`: the model's folder, its model.safetensors or its config.json. format() then reads e.g.
// "Hugging Face BERT with its MLM head, safetensors F32"; source() is the folder.
Result<Transformer> load_hf_bert(const std::string& path);

}  // namespace attnviz
