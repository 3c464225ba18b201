#include "core/training/parameters.hpp"

#include "core/base/rng.hpp"

#include <cmath>
#include <numbers>

namespace attnviz {
namespace {

// The largest sizes training takes: a model past them would not fit a desktop's memory with its
// gradient and two moments (four copies of the weights).
constexpr long long kMostParameters = 400'000'000;

// A standard normal number, counter-based (Box–Muller on two of rng's uniform draws).
float standard_normal(std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t a = rng::combine(stream, 2 * index), b = rng::combine(stream, 2 * index + 1);
  const double u1 = (static_cast<double>(a >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;          // [0, 1)
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

bool ends_with(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

// A buffer's tensors as a Hugging Face file holds them: each matrix whose name `linear` picks
// (an nn.Linear's weight, (in, out) in the buffer) transposed to (out, in), the rest as they are.
template <class IsLinear>
void linear_file_tensors(const ParameterTable& table, const float* buffer, IsLinear linear,
                         ParameterTable& named, std::vector<float>& out) {
  for (const ParameterTensor& tensor : table.tensors()) {
    const float* data = buffer + tensor.offset;
    if (tensor.shape.size() != 2 || !linear(tensor.name)) {
      named.add(tensor.name, tensor.shape);
      out.insert(out.end(), data, data + tensor.count());
      continue;
    }
    const int in = tensor.shape[0], width = tensor.shape[1];
    named.add(tensor.name, {width, in});
    for (int o = 0; o < width; ++o)
      for (int i = 0; i < in; ++i) out.push_back(data[static_cast<std::size_t>(i) * width + o]);
  }
}

}  // namespace

std::size_t ParameterTensor::count() const {
  std::size_t count = 1;
  for (int extent : shape) count *= static_cast<std::size_t>(extent);
  return count;
}

void ParameterTable::add(std::string name, std::vector<int> shape) {
  ParameterTensor tensor{std::move(name), std::move(shape), size_};
  size_ += tensor.count();
  tensors_.push_back(std::move(tensor));
}

const ParameterTensor* ParameterTable::find(std::string_view name) const {
  for (const ParameterTensor& tensor : tensors_)
    if (tensor.name == name) return &tensor;
  return nullptr;
}

TransformerConfig gpt2_config(int vocab_size, int context, int layers, int heads, int d_model) {
  TransformerConfig c;
  c.architecture = "gpt2";
  c.vocab_size = vocab_size;
  c.context = context;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = heads;
  c.d_model = d_model;
  c.d_head = heads > 0 ? d_model / heads : 0;
  c.d_ff = 4 * d_model;
  c.norm = NormKind::LayerNorm;
  c.norm_epsilon = 1e-5f;
  c.positions = PositionKind::Learned;
  c.feed_forward = FeedForwardKind::GeluTanh;
  return c;
}

Status check_trainable(const TransformerConfig& c) {
  if (c.cross_attention && !c.norm_after())
    return Status::error(
        "training's backward pass takes an encoder–decoder's cross-attention with its norms after "
        "the sublayers (Marian's and BART's layout), not before");
  if (c.d_model < 1 || c.n_layers < 1 || c.n_heads < 1 || c.n_kv_heads < 1 || c.d_head < 1 ||
      c.d_ff < 1 || c.vocab_size < 1 || c.context < 1 || c.n_heads % c.n_kv_heads != 0 ||
      (c.positions == PositionKind::Rotary && c.d_head % 2 != 0) || c.token_types < 0 ||
      c.position_offset < 0)
    return Status::error(
        "a model to train needs at least one layer, head, token and position, query heads in "
        "whole groups per key head, and an even d_head under rotary positions");
  return Status::success();
}

Result<ParameterTable> gpt2_parameter_table(const TransformerConfig& c, bool tied_head) {
  if (c.norm != NormKind::LayerNorm || c.positions != PositionKind::Learned ||
      c.feed_forward != FeedForwardKind::GeluTanh || !c.causal() || c.norm_after() ||
      c.n_kv_heads != c.n_heads || c.token_types != 0 || c.cross_attention ||
      c.embedding_scale != 1.0f || c.position_offset != 0)
    return Result<ParameterTable>::failure(
        "training builds GPT-2's layout only: LayerNorm before each sublayer, learned positions, "
        "GELU, one key head per query head");
  if (c.d_model < 1 || c.n_layers < 1 || c.n_heads < 1 || c.d_head < 1 || c.d_ff < 1 ||
      c.vocab_size < 1 || c.context < 1 || c.d_head * c.n_heads != c.d_model)
    return Result<ParameterTable>::failure(
        "a GPT-2 needs at least one layer, head, token and position, and a width the heads "
        "divide");
  const long long d = c.d_model, ff = c.d_ff;
  const long long count = (c.vocab_size + c.context) * d + 2 * d +
                          c.n_layers * (4 * d + 3 * d * d + 3 * d + d * d + d + 2 * d * ff + ff);
  if (c.d_model > 16384 || c.d_ff > 65536 || c.n_layers > 256 || c.vocab_size > 1'000'000 ||
      c.context > 65536 || count > kMostParameters)
    return Result<ParameterTable>::failure("a model of " + std::to_string(count) +
                                           " weights is larger than training takes (at most " +
                                           std::to_string(kMostParameters) + ")");
  const int D = c.d_model;
  ParameterTable table;
  table.add("wte.weight", {c.vocab_size, D});
  table.add("wpe.weight", {c.context, D});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    table.add(h + "ln_1.weight", {D});
    table.add(h + "ln_1.bias", {D});
    table.add(h + "attn.c_attn.weight", {D, 3 * D});
    table.add(h + "attn.c_attn.bias", {3 * D});
    table.add(h + "attn.c_proj.weight", {D, D});
    table.add(h + "attn.c_proj.bias", {D});
    table.add(h + "ln_2.weight", {D});
    table.add(h + "ln_2.bias", {D});
    table.add(h + "mlp.c_fc.weight", {D, c.d_ff});
    table.add(h + "mlp.c_fc.bias", {c.d_ff});
    table.add(h + "mlp.c_proj.weight", {c.d_ff, D});
    table.add(h + "mlp.c_proj.bias", {D});
  }
  table.add("ln_f.weight", {D});
  table.add("ln_f.bias", {D});
  if (!tied_head) table.add("lm_head.weight", {c.vocab_size, D});
  return table;
}

Result<ParameterTable> llama_parameter_table(const TransformerConfig& c, bool tied_head) {
  if (c.norm != NormKind::RMSNorm || c.positions != PositionKind::Rotary ||
      c.feed_forward != FeedForwardKind::SwiGLU)
    return Result<ParameterTable>::failure(
        "a Llama to train has RMSNorm, rotary positions and a SwiGLU MLP");
  if (Status ok = check_trainable(c); !ok) return Result<ParameterTable>::failure(ok.message());
  const long long d = c.d_model, ff = c.d_ff, q = static_cast<long long>(c.n_heads) * c.d_head,
                  kv = static_cast<long long>(c.n_kv_heads) * c.d_head;
  const long long count = (tied_head ? 1 : 2) * static_cast<long long>(c.vocab_size) * d + d +
                          c.n_layers * (2 * d + d * q + 2 * d * kv + q * d + 3 * d * ff);
  if (c.d_model > 16384 || c.d_ff > 65536 || c.n_layers > 256 || c.vocab_size > 1'000'000 ||
      c.context > 65536 || q > 65536 || count > kMostParameters)
    return Result<ParameterTable>::failure("a model of " + std::to_string(count) +
                                           " weights is larger than training takes (at most " +
                                           std::to_string(kMostParameters) + ")");
  const int D = c.d_model, Q = c.n_heads * c.d_head, KV = c.n_kv_heads * c.d_head;
  ParameterTable table;
  table.add("tok_embeddings.weight", {c.vocab_size, D});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "layers." + std::to_string(l) + ".";
    table.add(h + "attention_norm.weight", {D});
    table.add(h + "attention.wq.weight", {D, Q});
    table.add(h + "attention.wk.weight", {D, KV});
    table.add(h + "attention.wv.weight", {D, KV});
    table.add(h + "attention.wo.weight", {Q, D});
    table.add(h + "ffn_norm.weight", {D});
    table.add(h + "feed_forward.w1.weight", {D, c.d_ff});
    table.add(h + "feed_forward.w3.weight", {D, c.d_ff});
    table.add(h + "feed_forward.w2.weight", {c.d_ff, D});
  }
  table.add("norm.weight", {D});
  if (!tied_head) table.add("output.weight", {c.vocab_size, D});
  return table;
}

TransformerWeights llama_weights_of(const TransformerConfig& c, const ParameterTable& table,
                                    const float* values) {
  const auto at = [&](const std::string& name) { return values + table.find(name)->offset; };
  const int D = c.d_model, Q = c.n_heads * c.d_head, KV = c.n_kv_heads * c.d_head;
  TransformerWeights w;
  w.token_embedding = MatrixView{at("tok_embeddings.weight"), c.vocab_size, D, D};
  const ParameterTensor* head = table.find("output.weight");
  w.unembedding = head == nullptr ? w.token_embedding  // tied
                                  : MatrixView{values + head->offset, c.vocab_size, D, D};
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "layers." + std::to_string(l) + ".";
    TransformerLayer layer;
    layer.attention_norm_weight = VectorView{at(h + "attention_norm.weight"), D};
    layer.query = MatrixView{at(h + "attention.wq.weight"), D, Q, Q};
    layer.key = MatrixView{at(h + "attention.wk.weight"), D, KV, KV};
    layer.value = MatrixView{at(h + "attention.wv.weight"), D, KV, KV};
    layer.output = MatrixView{at(h + "attention.wo.weight"), Q, D, D};
    layer.mlp_norm_weight = VectorView{at(h + "ffn_norm.weight"), D};
    layer.gate = MatrixView{at(h + "feed_forward.w1.weight"), D, c.d_ff, c.d_ff};
    layer.up = MatrixView{at(h + "feed_forward.w3.weight"), D, c.d_ff, c.d_ff};
    layer.down = MatrixView{at(h + "feed_forward.w2.weight"), c.d_ff, D, D};
    w.layers.push_back(layer);
  }
  w.final_norm_weight = VectorView{at("norm.weight"), D};
  return w;
}

Result<ParameterTable> bert_parameter_table(const TransformerConfig& c, bool tied_head) {
  if (c.norm != NormKind::LayerNorm || c.positions != PositionKind::Learned || c.causal() ||
      !c.norm_after() || c.n_kv_heads != c.n_heads || c.cross_attention ||
      (c.feed_forward != FeedForwardKind::GeluErf && c.feed_forward != FeedForwardKind::GeluTanh))
    return Result<ParameterTable>::failure(
        "a BERT to train has LayerNorm after each sublayer, attention both ways, learned "
        "positions and a GELU MLP");
  if (Status ok = check_trainable(c); !ok) return Result<ParameterTable>::failure(ok.message());
  const long long d = c.d_model, ff = c.d_ff, q = static_cast<long long>(c.n_heads) * c.d_head;
  const long long count = (tied_head ? 1 : 2) * static_cast<long long>(c.vocab_size) * d +
                          (c.context + c.token_types) * d + 2 * d + d * d + 3 * d + c.vocab_size +
                          c.n_layers * (4 * d * q + 3 * q + 2 * d * ff + ff + 5 * d);
  if (c.d_model > 16384 || c.d_ff > 65536 || c.n_layers > 256 || c.vocab_size > 1'000'000 ||
      c.context > 65536 || c.token_types > 65536 || q > 65536 || count > kMostParameters)
    return Result<ParameterTable>::failure("a model of " + std::to_string(count) +
                                           " weights is larger than training takes (at most " +
                                           std::to_string(kMostParameters) + ")");
  const int D = c.d_model, Q = c.n_heads * c.d_head, F = c.d_ff;
  ParameterTable table;
  table.add("bert.embeddings.word_embeddings.weight", {c.vocab_size, D});
  table.add("bert.embeddings.position_embeddings.weight", {c.context, D});
  if (c.token_types > 0)
    table.add("bert.embeddings.token_type_embeddings.weight", {c.token_types, D});
  table.add("bert.embeddings.LayerNorm.weight", {D});
  table.add("bert.embeddings.LayerNorm.bias", {D});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "bert.encoder.layer." + std::to_string(l) + ".";
    for (const char* part : {"query", "key", "value"}) {
      table.add(h + "attention.self." + part + ".weight", {D, Q});
      table.add(h + "attention.self." + part + ".bias", {Q});
    }
    table.add(h + "attention.output.dense.weight", {Q, D});
    table.add(h + "attention.output.dense.bias", {D});
    table.add(h + "attention.output.LayerNorm.weight", {D});
    table.add(h + "attention.output.LayerNorm.bias", {D});
    table.add(h + "intermediate.dense.weight", {D, F});
    table.add(h + "intermediate.dense.bias", {F});
    table.add(h + "output.dense.weight", {F, D});
    table.add(h + "output.dense.bias", {D});
    table.add(h + "output.LayerNorm.weight", {D});
    table.add(h + "output.LayerNorm.bias", {D});
  }
  table.add("cls.predictions.transform.dense.weight", {D, D});
  table.add("cls.predictions.transform.dense.bias", {D});
  table.add("cls.predictions.transform.LayerNorm.weight", {D});
  table.add("cls.predictions.transform.LayerNorm.bias", {D});
  table.add("cls.predictions.bias", {c.vocab_size});
  if (!tied_head) table.add("cls.predictions.decoder.weight", {c.vocab_size, D});
  return table;
}

TransformerWeights bert_weights_of(const TransformerConfig& c, const ParameterTable& table,
                                   const float* values) {
  const auto at = [&](const std::string& name) { return values + table.find(name)->offset; };
  const int D = c.d_model, Q = c.n_heads * c.d_head, F = c.d_ff;
  const auto vector = [&](const std::string& name, int size) { return VectorView{at(name), size}; };
  TransformerWeights w;
  w.token_embedding = MatrixView{at("bert.embeddings.word_embeddings.weight"), c.vocab_size, D, D};
  w.position_embedding =
      MatrixView{at("bert.embeddings.position_embeddings.weight"), c.context, D, D};
  if (c.token_types > 0)
    w.token_type_embedding =
        MatrixView{at("bert.embeddings.token_type_embeddings.weight"), c.token_types, D, D};
  w.embedding_norm_weight = vector("bert.embeddings.LayerNorm.weight", D);
  w.embedding_norm_bias = vector("bert.embeddings.LayerNorm.bias", D);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "bert.encoder.layer." + std::to_string(l) + ".";
    TransformerLayer layer;
    layer.query = MatrixView{at(h + "attention.self.query.weight"), D, Q, Q};
    layer.query_bias = vector(h + "attention.self.query.bias", Q);
    layer.key = MatrixView{at(h + "attention.self.key.weight"), D, Q, Q};
    layer.key_bias = vector(h + "attention.self.key.bias", Q);
    layer.value = MatrixView{at(h + "attention.self.value.weight"), D, Q, Q};
    layer.value_bias = vector(h + "attention.self.value.bias", Q);
    layer.output = MatrixView{at(h + "attention.output.dense.weight"), Q, D, D};
    layer.output_bias = vector(h + "attention.output.dense.bias", D);
    layer.attention_norm_weight = vector(h + "attention.output.LayerNorm.weight", D);
    layer.attention_norm_bias = vector(h + "attention.output.LayerNorm.bias", D);
    layer.up = MatrixView{at(h + "intermediate.dense.weight"), D, F, F};
    layer.up_bias = vector(h + "intermediate.dense.bias", F);
    layer.down = MatrixView{at(h + "output.dense.weight"), F, D, D};
    layer.down_bias = vector(h + "output.dense.bias", D);
    layer.mlp_norm_weight = vector(h + "output.LayerNorm.weight", D);
    layer.mlp_norm_bias = vector(h + "output.LayerNorm.bias", D);
    w.layers.push_back(layer);
  }
  w.head_transform = MatrixView{at("cls.predictions.transform.dense.weight"), D, D, D};
  w.head_transform_bias = vector("cls.predictions.transform.dense.bias", D);
  w.final_norm_weight = vector("cls.predictions.transform.LayerNorm.weight", D);
  w.final_norm_bias = vector("cls.predictions.transform.LayerNorm.bias", D);
  w.unembedding_bias = vector("cls.predictions.bias", c.vocab_size);
  const ParameterTensor* decoder = table.find("cls.predictions.decoder.weight");
  w.unembedding = decoder == nullptr ? w.token_embedding  // tied
                                     : MatrixView{values + decoder->offset, c.vocab_size, D, D};
  return w;
}

void bert_file_tensors(const ParameterTable& table, const float* buffer, ParameterTable& named,
                       std::vector<float>& out) {
  linear_file_tensors(
      table, buffer,
      [](const std::string& name) {
        return name.find("embeddings") == std::string::npos &&
               name != "cls.predictions.decoder.weight";
      },
      named, out);
}

namespace {

// What each of an encoder–decoder's stacks has: BART its learned positions (two rows before the
// first) and the LayerNorm of its embeddings; Marian neither (its sinusoids are a constant).
bool bart_layout(const TransformerConfig& c) {
  return c.architecture == "bart";
}

}  // namespace

Result<ParameterTable> encoder_decoder_parameter_table(const TransformerConfig& e,
                                                       const TransformerConfig& c, bool tied_head) {
  for (const TransformerConfig* stack : {&e, &c})
    if (stack->norm != NormKind::LayerNorm || stack->positions != PositionKind::Learned ||
        !stack->norm_after() || stack->n_kv_heads != stack->n_heads ||
        stack->n_heads * stack->d_head != stack->d_model ||
        stack->feed_forward == FeedForwardKind::SwiGLU)
      return Result<ParameterTable>::failure(
          "an encoder–decoder to train has Marian's or BART's layout: LayerNorm after each "
          "sublayer, learned or fixed positions, heads as wide as the model together");
  if (e.causal() || e.cross_attention || !c.cross_attention || e.d_model != c.d_model ||
      e.vocab_size != c.vocab_size || e.context != c.context ||
      e.position_offset != c.position_offset || e.architecture != c.architecture)
    return Result<ParameterTable>::failure(
        "an encoder–decoder is an encoder and a decoder with cross-attention, of one width, one "
        "vocabulary and one kind");
  for (const TransformerConfig* stack : {&e, &c})
    if (Status ok = check_trainable(*stack); !ok)
      return Result<ParameterTable>::failure(ok.message());
  const bool bart = bart_layout(c);
  const long long d = c.d_model, positions = bart ? c.context + c.position_offset : 0;
  long long count = (tied_head ? 1 : 2) * static_cast<long long>(c.vocab_size) * d;
  for (const TransformerConfig* stack : {&e, &c})
    count +=
        (positions + 2) * d +
        stack->n_layers * ((stack->cross_attention ? 8 : 4) * (d * d + d) + 2 * d * stack->d_ff +
                           stack->d_ff + 5 * d + (stack->cross_attention ? 2 * d : 0));
  if (c.d_model > 16384 || e.d_ff > 65536 || c.d_ff > 65536 || e.n_layers > 256 ||
      c.n_layers > 256 || c.vocab_size > 1'000'000 || c.context > 65536 || count > kMostParameters)
    return Result<ParameterTable>::failure("a model of " + std::to_string(count) +
                                           " weights is larger than training takes (at most " +
                                           std::to_string(kMostParameters) + ")");
  const int D = c.d_model;
  ParameterTable table;
  table.add("model.shared.weight", {c.vocab_size, D});
  for (const TransformerConfig* stack : {&e, &c}) {
    const std::string side = stack == &e ? "model.encoder." : "model.decoder.";
    if (bart) {
      table.add(side + "embed_positions.weight", {c.context + c.position_offset, D});
      table.add(side + "layernorm_embedding.weight", {D});
      table.add(side + "layernorm_embedding.bias", {D});
    }
    const auto linear = [&](const std::string& name, int in, int out) {
      table.add(name + ".weight", {in, out});
      table.add(name + ".bias", {out});
    };
    const auto norm = [&](const std::string& name) {
      table.add(name + ".weight", {D});
      table.add(name + ".bias", {D});
    };
    for (int l = 0; l < stack->n_layers; ++l) {
      const std::string h = side + "layers." + std::to_string(l) + ".";
      for (const char* part : {"q_proj", "k_proj", "v_proj", "out_proj"})
        linear(h + "self_attn." + part, D, D);
      norm(h + "self_attn_layer_norm");
      if (stack->cross_attention) {
        for (const char* part : {"q_proj", "k_proj", "v_proj", "out_proj"})
          linear(h + "encoder_attn." + part, D, D);
        norm(h + "encoder_attn_layer_norm");
      }
      linear(h + "fc1", D, stack->d_ff);
      linear(h + "fc2", stack->d_ff, D);
      norm(h + "final_layer_norm");
    }
  }
  if (!tied_head) table.add("lm_head.weight", {c.vocab_size, D});
  return table;
}

EncoderDecoderWeights encoder_decoder_weights_of(const TransformerConfig& e,
                                                 const TransformerConfig& c,
                                                 const ParameterTable& table, const float* values,
                                                 const TransformerWeights& constants) {
  const auto at = [&](const std::string& name) { return values + table.find(name)->offset; };
  const int D = c.d_model;
  const auto vector = [&](const std::string& name, int size) { return VectorView{at(name), size}; };
  const auto linear = [&](const std::string& name, int in, int out, MatrixView& weight,
                          VectorView& bias) {
    weight = MatrixView{at(name + ".weight"), in, out, out};
    bias = vector(name + ".bias", out);
  };
  const auto norm = [&](const std::string& name, VectorView& weight, VectorView& bias) {
    weight = vector(name + ".weight", D);
    bias = vector(name + ".bias", D);
  };
  const bool bart = bart_layout(c);
  EncoderDecoderWeights out;
  for (const TransformerConfig* stack : {&e, &c}) {
    const std::string side = stack == &e ? "model.encoder." : "model.decoder.";
    TransformerWeights& w = stack == &e ? out.encoder : out.decoder;
    w.token_embedding = MatrixView{at("model.shared.weight"), c.vocab_size, D, D};
    if (bart) {
      w.position_embedding =
          MatrixView{at(side + "embed_positions.weight"), c.context + c.position_offset, D, D};
      norm(side + "layernorm_embedding", w.embedding_norm_weight, w.embedding_norm_bias);
    } else {
      w.position_embedding = constants.position_embedding;  // Marian's sinusoids
    }
    for (int l = 0; l < stack->n_layers; ++l) {
      const std::string h = side + "layers." + std::to_string(l) + ".";
      TransformerLayer layer;
      linear(h + "self_attn.q_proj", D, D, layer.query, layer.query_bias);
      linear(h + "self_attn.k_proj", D, D, layer.key, layer.key_bias);
      linear(h + "self_attn.v_proj", D, D, layer.value, layer.value_bias);
      linear(h + "self_attn.out_proj", D, D, layer.output, layer.output_bias);
      norm(h + "self_attn_layer_norm", layer.attention_norm_weight, layer.attention_norm_bias);
      if (stack->cross_attention) {
        linear(h + "encoder_attn.q_proj", D, D, layer.cross_query, layer.cross_query_bias);
        linear(h + "encoder_attn.k_proj", D, D, layer.cross_key, layer.cross_key_bias);
        linear(h + "encoder_attn.v_proj", D, D, layer.cross_value, layer.cross_value_bias);
        linear(h + "encoder_attn.out_proj", D, D, layer.cross_output, layer.cross_output_bias);
        norm(h + "encoder_attn_layer_norm", layer.cross_norm_weight, layer.cross_norm_bias);
      }
      linear(h + "fc1", D, stack->d_ff, layer.up, layer.up_bias);
      linear(h + "fc2", stack->d_ff, D, layer.down, layer.down_bias);
      norm(h + "final_layer_norm", layer.mlp_norm_weight, layer.mlp_norm_bias);
      w.layers.push_back(layer);
    }
  }
  const ParameterTensor* head = table.find("lm_head.weight");
  out.decoder.unembedding = head == nullptr ? out.decoder.token_embedding  // tied
                                            : MatrixView{values + head->offset, c.vocab_size, D, D};
  out.decoder.unembedding_bias = constants.unembedding_bias;  // final_logits_bias: a buffer
  return out;
}

void encoder_decoder_file_tensors(const ParameterTable& table, const float* buffer,
                                  ParameterTable& named, std::vector<float>& out) {
  linear_file_tensors(
      table, buffer,
      [](const std::string& name) {
        return ends_with(name, "_proj.weight") || ends_with(name, "fc1.weight") ||
               ends_with(name, "fc2.weight");
      },
      named, out);
}

Result<ParameterTable> parameter_table_of(const TransformerConfig& c, bool tied_head) {
  if (c.norm_after()) return bert_parameter_table(c, tied_head);
  if (c.norm == NormKind::RMSNorm) return llama_parameter_table(c, tied_head);
  return gpt2_parameter_table(c, tied_head);
}

TransformerWeights weights_of(const TransformerConfig& c, const ParameterTable& table,
                              const float* values) {
  if (c.norm_after()) return bert_weights_of(c, table, values);
  if (c.norm == NormKind::RMSNorm) return llama_weights_of(c, table, values);
  return gpt2_weights_of(c, table, values);
}

void llama2c_file_tensors(const TransformerConfig& c, const ParameterTable& table,
                          const float* buffer, ParameterTable& named, std::vector<float>& out) {
  const int L = c.n_layers, D = c.d_model, Q = c.n_heads * c.d_head, KV = c.n_kv_heads * c.d_head,
            F = c.d_ff;
  const auto tensor = [&](const std::string& name) { return buffer + table.find(name)->offset; };
  const auto layer_name = [](int l, const char* rest) {
    return "layers." + std::to_string(l) + "." + rest;
  };
  // An array of the file: per layer, the buffer's (in, out) matrix written as (out, in).
  const auto stacked = [&](const char* file_name, const char* name, int in, int width,
                           bool transpose) {
    named.add(file_name, transpose ? std::vector<int>{L, width, in} : std::vector<int>{L, in});
    for (int l = 0; l < L; ++l) {
      const float* m = tensor(layer_name(l, name));
      if (!transpose) {
        out.insert(out.end(), m, m + in);
        continue;
      }
      for (int o = 0; o < width; ++o)
        for (int i = 0; i < in; ++i) out.push_back(m[static_cast<std::size_t>(i) * width + o]);
    }
  };
  const float* embedding = tensor("tok_embeddings.weight");
  named.add("token_embedding_table", {c.vocab_size, D});
  out.insert(out.end(), embedding, embedding + static_cast<std::size_t>(c.vocab_size) * D);
  stacked("rms_att_weight", "attention_norm.weight", D, 0, false);
  stacked("wq", "attention.wq.weight", D, Q, true);
  stacked("wk", "attention.wk.weight", D, KV, true);
  stacked("wv", "attention.wv.weight", D, KV, true);
  stacked("wo", "attention.wo.weight", Q, D, true);
  stacked("rms_ffn_weight", "ffn_norm.weight", D, 0, false);
  stacked("w1", "feed_forward.w1.weight", D, F, true);
  stacked("w2", "feed_forward.w2.weight", F, D, true);
  stacked("w3", "feed_forward.w3.weight", D, F, true);
  const float* final_norm = tensor("norm.weight");
  named.add("rms_final_weight", {D});
  out.insert(out.end(), final_norm, final_norm + D);
  if (const ParameterTensor* head = table.find("output.weight")) {
    named.add("wcls", {c.vocab_size, D});
    out.insert(out.end(), buffer + head->offset,
               buffer + head->offset + static_cast<std::size_t>(c.vocab_size) * D);
  }
}

TransformerWeights gpt2_weights_of(const TransformerConfig& c, const ParameterTable& table,
                                   const float* values) {
  const auto at = [&](const std::string& name) { return values + table.find(name)->offset; };
  const auto matrix = [](const float* data, int rows, int cols, std::ptrdiff_t stride) {
    return MatrixView{data, rows, cols, stride};
  };
  const auto vector = [](const float* data, int size) { return VectorView{data, size}; };
  const int D = c.d_model;
  TransformerWeights w;
  w.token_embedding = matrix(at("wte.weight"), c.vocab_size, D, D);
  const ParameterTensor* head = table.find("lm_head.weight");
  w.unembedding = head == nullptr ? w.token_embedding  // tied
                                  : matrix(values + head->offset, c.vocab_size, D, D);
  w.position_embedding = matrix(at("wpe.weight"), c.context, D, D);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    TransformerLayer layer;
    layer.attention_norm_weight = vector(at(h + "ln_1.weight"), D);
    layer.attention_norm_bias = vector(at(h + "ln_1.bias"), D);
    const float* qkv = at(h + "attn.c_attn.weight");  // (D, 3D): [Q | K | V]
    layer.query = matrix(qkv, D, D, 3 * D);
    layer.key = matrix(qkv + D, D, D, 3 * D);
    layer.value = matrix(qkv + 2 * D, D, D, 3 * D);
    const float* qkv_bias = at(h + "attn.c_attn.bias");
    layer.query_bias = vector(qkv_bias, D);
    layer.key_bias = vector(qkv_bias + D, D);
    layer.value_bias = vector(qkv_bias + 2 * D, D);
    layer.output = matrix(at(h + "attn.c_proj.weight"), D, D, D);
    layer.output_bias = vector(at(h + "attn.c_proj.bias"), D);
    layer.mlp_norm_weight = vector(at(h + "ln_2.weight"), D);
    layer.mlp_norm_bias = vector(at(h + "ln_2.bias"), D);
    layer.up = matrix(at(h + "mlp.c_fc.weight"), D, c.d_ff, c.d_ff);
    layer.up_bias = vector(at(h + "mlp.c_fc.bias"), c.d_ff);
    layer.down = matrix(at(h + "mlp.c_proj.weight"), c.d_ff, D, D);
    layer.down_bias = vector(at(h + "mlp.c_proj.bias"), D);
    w.layers.push_back(layer);
  }
  w.final_norm_weight = vector(at("ln_f.weight"), D);
  w.final_norm_bias = vector(at("ln_f.bias"), D);
  return w;
}

void copy_weights(const TransformerWeights& from, const TransformerWeights& to, float* values) {
  // A view that is the same place (a constant both read: Marian's positions) is left as it is.
  const auto copy_matrix = [values](const MatrixView& into, const MatrixView& in) {
    if (into.empty() || into.data == in.data) return;
    float* out = values + (into.data - values);
    for (int r = 0; r < into.rows; ++r)
      for (int c = 0; c < into.cols; ++c) out[r * into.stride + c] = in.at(r, c);
  };
  const auto copy_vector = [values](const VectorView& into, const VectorView& in) {
    if (into.empty() || into.data == in.data) return;
    float* out = values + (into.data - values);
    for (int i = 0; i < into.size; ++i) out[i] = in.data[i];
  };
  copy_matrix(to.token_embedding, from.token_embedding);
  copy_matrix(to.position_embedding, from.position_embedding);
  copy_matrix(to.token_type_embedding, from.token_type_embedding);
  copy_vector(to.embedding_norm_weight, from.embedding_norm_weight);
  copy_vector(to.embedding_norm_bias, from.embedding_norm_bias);
  copy_matrix(to.head_transform, from.head_transform);
  copy_vector(to.head_transform_bias, from.head_transform_bias);
  copy_vector(to.unembedding_bias, from.unembedding_bias);
  if (to.unembedding.data != to.token_embedding.data) copy_matrix(to.unembedding, from.unembedding);
  for (std::size_t l = 0; l < to.layers.size(); ++l) {
    const TransformerLayer &into = to.layers[l], &in = from.layers[l];
    for (auto member :
         {&TransformerLayer::query, &TransformerLayer::key, &TransformerLayer::value,
          &TransformerLayer::output, &TransformerLayer::up, &TransformerLayer::gate,
          &TransformerLayer::down, &TransformerLayer::cross_query, &TransformerLayer::cross_key,
          &TransformerLayer::cross_value, &TransformerLayer::cross_output})
      copy_matrix(into.*member, in.*member);
    for (auto member :
         {&TransformerLayer::attention_norm_weight, &TransformerLayer::attention_norm_bias,
          &TransformerLayer::query_bias, &TransformerLayer::key_bias, &TransformerLayer::value_bias,
          &TransformerLayer::output_bias, &TransformerLayer::mlp_norm_weight,
          &TransformerLayer::mlp_norm_bias, &TransformerLayer::up_bias,
          &TransformerLayer::down_bias, &TransformerLayer::cross_norm_weight,
          &TransformerLayer::cross_norm_bias, &TransformerLayer::cross_query_bias,
          &TransformerLayer::cross_key_bias, &TransformerLayer::cross_value_bias,
          &TransformerLayer::cross_output_bias})
      copy_vector(into.*member, in.*member);
  }
  copy_vector(to.final_norm_weight, from.final_norm_weight);
  copy_vector(to.final_norm_bias, from.final_norm_bias);
}

bool is_mlp_tensor(const ParameterTensor& tensor) {
  return tensor.name.find(".mlp.") != std::string::npos ||
         tensor.name.find(".ln_2.") != std::string::npos;
}

void initialize_gpt2(const TransformerConfig& c, const ParameterTable& table, std::uint64_t seed,
                     bool attention_only, float* values, const InitialScales& scales) {
  const float residual_scale = 0.02f / std::sqrt(2.0f * static_cast<float>(c.n_layers));
  for (const ParameterTensor& tensor : table.tensors()) {
    float* out = values + tensor.offset;
    const std::size_t count = tensor.count();
    const bool gain = ends_with(tensor.name, "ln_1.weight") ||
                      ends_with(tensor.name, "ln_2.weight") || tensor.name == "ln_f.weight";
    if (attention_only && is_mlp_tensor(tensor) && !gain) {
      for (std::size_t i = 0; i < count; ++i) out[i] = 0.0f;
    } else if (gain) {
      for (std::size_t i = 0; i < count; ++i) out[i] = 1.0f;
    } else if (!tensor.decays()) {
      for (std::size_t i = 0; i < count; ++i) out[i] = 0.0f;  // a bias
    } else {
      float scale = scales.matrices;
      if (ends_with(tensor.name, "mlp.c_proj.weight")) scale = residual_scale;
      if (ends_with(tensor.name, "attn.c_proj.weight"))
        scale = scales.projection > 0.0f ? scales.projection : residual_scale;
      if (ends_with(tensor.name, "attn.c_attn.weight")) scale = scales.attention;
      const std::uint64_t stream = rng::combine(seed, rng::hash(tensor.name));
      for (std::size_t i = 0; i < count; ++i) out[i] = scale * standard_normal(stream, i);
    }
  }
}

}  // namespace attnviz
