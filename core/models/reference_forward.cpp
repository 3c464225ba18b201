#include "core/models/reference_forward.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz {
namespace {

std::vector<float> normalize(const TransformerConfig& c, const std::vector<float>& x,
                             const VectorView& weight, const VectorView& bias) {
  const int d = c.d_model;
  std::vector<float> y(static_cast<std::size_t>(d));
  if (c.norm == NormKind::LayerNorm) {
    float mean = 0.0f;
    for (int j = 0; j < d; ++j) mean += x[j];
    mean /= static_cast<float>(d);
    float variance = 0.0f;
    for (int j = 0; j < d; ++j) variance += (x[j] - mean) * (x[j] - mean);
    variance /= static_cast<float>(d);
    for (int j = 0; j < d; ++j)
      y[j] = (x[j] - mean) / std::sqrt(variance + c.norm_epsilon) * weight.data[j] + bias.data[j];
  } else {
    float mean_square = 0.0f;
    for (int j = 0; j < d; ++j) mean_square += x[j] * x[j];
    mean_square /= static_cast<float>(d);
    const float inverse = 1.0f / std::sqrt(mean_square + c.norm_epsilon);
    for (int j = 0; j < d; ++j) y[j] = weight.data[j] * (inverse * x[j]);
  }
  return y;
}

// x · W (+ b): x (in), W (in, out).
std::vector<float> times(const std::vector<float>& x, const MatrixView& w, const VectorView& b) {
  std::vector<float> y(static_cast<std::size_t>(w.cols), 0.0f);
  for (int o = 0; o < w.cols; ++o) {
    float sum = 0.0f;
    for (int i = 0; i < w.rows; ++i) sum += x[static_cast<std::size_t>(i)] * w.at(i, o);
    y[static_cast<std::size_t>(o)] = sum + (b.empty() ? 0.0f : b.data[o]);
  }
  return y;
}

// The scores made weights in place: exp(score − the largest), over their sum.
void softmax(std::vector<float>& scores) {
  const float largest = *std::max_element(scores.begin(), scores.end());
  float sum = 0.0f;
  for (float& a : scores) {
    a = std::exp(a - largest);
    sum += a;
  }
  for (float& a : scores) a /= sum;
}

// The MLP's activation of one value.
float activation(FeedForwardKind kind, float u) {
  if (kind == FeedForwardKind::Silu) return u / (1.0f + std::exp(-u));
  if (kind == FeedForwardKind::GeluErf) return 0.5f * u * (1.0f + std::erf(u / std::sqrt(2.0f)));
  return 0.5f * u * (1.0f + std::tanh(0.7978845608028654f * (u + 0.044715f * u * u * u)));
}

// Turns the adjacent pairs of every head of `vector` by `position` (RoPE, as llama2.c).
void rotate(const TransformerConfig& c, std::vector<float>& vector, int position) {
  for (std::size_t i = 0; i < vector.size(); i += 2) {
    const int within_head = static_cast<int>(i) % c.d_head;
    const float frequency = 1.0f / std::pow(c.rope_theta, static_cast<float>(within_head) /
                                                              static_cast<float>(c.d_head));
    const float angle = static_cast<float>(position) * frequency;
    const float v0 = vector[i], v1 = vector[i + 1];
    vector[i] = v0 * std::cos(angle) - v1 * std::sin(angle);
    vector[i + 1] = v0 * std::sin(angle) + v1 * std::cos(angle);
  }
}

}  // namespace

ReferenceForward::ReferenceForward(const Transformer& model) : model_(model) {
  interventions_.resize(static_cast<std::size_t>(model.config().n_layers) * model.config().n_heads);
  cross_interventions_.resize(interventions_.size());
}

void ReferenceForward::set_intervention(int layer, int head, HeadIntervention intervention) {
  interventions_[static_cast<std::size_t>(layer) * model_.config().n_heads + head] = intervention;
}

void ReferenceForward::set_cross_intervention(int layer, int head, HeadIntervention intervention) {
  cross_interventions_[static_cast<std::size_t>(layer) * model_.config().n_heads + head] =
      intervention;
}

const ReferenceForward::LayerRow& ReferenceForward::row(int position, int layer) const {
  return kept_[static_cast<std::size_t>(position)].layers[static_cast<std::size_t>(layer)];
}
const std::vector<float>& ReferenceForward::final_normalized(int position) const {
  return kept_[static_cast<std::size_t>(position)].final_normalized;
}
const std::vector<float>& ReferenceForward::logits(int position) const {
  return kept_[static_cast<std::size_t>(position)].logits;
}

void ReferenceForward::attend(int l, int position, const std::vector<const LayerRow*>& key_rows,
                              LayerRow& r) const {
  const TransformerConfig& c = model_.config();
  const TransformerLayer& lw = model_.weights().layers[static_cast<std::size_t>(l)];
  const int d_head = c.d_head, keys = static_cast<int>(key_rows.size());
  r.head_outputs.assign(static_cast<std::size_t>(c.n_heads) * d_head, 0.0f);
  r.attention.clear();
  for (int h = 0; h < c.n_heads; ++h) {
    const int g = c.kv_head_of(h);
    const HeadIntervention& intervention =
        interventions_[static_cast<std::size_t>(l) * c.n_heads + h];
    const auto key = [&](int t) {
      return key_rows[static_cast<std::size_t>(t)]->keys.data() + g * d_head;
    };
    const auto value = [&](int t) {
      return key_rows[static_cast<std::size_t>(t)]->values.data() + g * d_head;
    };
    std::vector<float> alpha(static_cast<std::size_t>(keys));
    if (intervention.pattern == HeadIntervention::Pattern::Computed) {
      for (int t = 0; t < keys; ++t) {
        float score = 0.0f;
        for (int i = 0; i < d_head; ++i) score += r.queries[h * d_head + i] * key(t)[i];
        alpha[t] = score / std::sqrt(static_cast<float>(d_head));
      }
      softmax(alpha);
    } else if (intervention.pattern == HeadIntervention::Pattern::Uniform) {
      std::fill(alpha.begin(), alpha.end(), 1.0f / static_cast<float>(keys));
    } else {
      alpha[static_cast<std::size_t>(std::max(position - 1, 0))] = 1.0f;
    }
    for (int t = 0; t < keys; ++t)
      for (int i = 0; i < d_head; ++i) r.head_outputs[h * d_head + i] += alpha[t] * value(t)[i];
    for (int i = 0; i < d_head; ++i) r.head_outputs[h * d_head + i] *= intervention.output_scale;
    r.attention.push_back(std::move(alpha));
  }
  r.attention_output = times(r.head_outputs, lw.output, lw.output_bias);
}

std::vector<float> ReferenceForward::mlp(int l, const std::vector<float>& input) const {
  const TransformerConfig& c = model_.config();
  const TransformerLayer& lw = model_.weights().layers[static_cast<std::size_t>(l)];
  std::vector<float> hidden = times(input, lw.up, lw.up_bias);  // (d_ff)
  if (c.feed_forward != FeedForwardKind::SwiGLU) {
    for (float& u : hidden) u = activation(c.feed_forward, u);
  } else {
    const std::vector<float> gate = times(input, lw.gate, VectorView{});
    for (std::size_t i = 0; i < hidden.size(); ++i) {  // in run.c's order, to its last bit
      const float silu = gate[i] * (1.0f / (1.0f + std::exp(-gate[i])));
      hidden[i] = silu * hidden[i];
    }
  }
  return times(hidden, lw.down, lw.down_bias);
}

void ReferenceForward::finish(const std::vector<float>& x, Kept& kept) const {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  if (!model_.predicts_tokens()) {  // BertModel, an encoder–decoder's encoder: no head
    kept.final_normalized = x;
    return;
  }
  if (w.head_transform.empty() && w.final_norm_weight.empty()) {  // Marian's decoder: no norm
    kept.final_normalized = x;
  } else if (!w.head_transform.empty()) {  // BERT's MLM head
    std::vector<float> transformed = times(x, w.head_transform, w.head_transform_bias);
    for (float& u : transformed) u = activation(c.feed_forward, u);
    kept.final_normalized = normalize(c, transformed, w.final_norm_weight, w.final_norm_bias);
  } else {
    kept.final_normalized = normalize(c, x, w.final_norm_weight, w.final_norm_bias);
  }
  kept.logits.assign(static_cast<std::size_t>(c.vocab_size), 0.0f);
  for (int v = 0; v < c.vocab_size; ++v) {
    float sum = 0.0f;
    for (int j = 0; j < c.d_model; ++j) sum += kept.final_normalized[j] * w.unembedding.at(v, j);
    kept.logits[v] = sum + (w.unembedding_bias.empty() ? 0.0f : w.unembedding_bias.data[v]);
  }
}

Result<std::vector<float>> ReferenceForward::step(int token) {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  const int position = positions();
  if (!c.causal()) return Status::error("an encoder reads a whole text at once: use encode()");
  if (position >= c.context)
    return Status::error("the model's context holds " + std::to_string(c.context) + " tokens");
  if (token < 0 || token >= c.vocab_size)
    return Status::error("token " + std::to_string(token) + " is not in the vocabulary of " +
                         std::to_string(c.vocab_size));
  if (c.cross_attention && memory_.empty())
    return Status::error("a decoder with cross-attention reads the encoder's output: set_memory");
  const int d = c.d_model;
  // 0. The token's embedding (× the scale) + its position's (learned positions), normed when the
  // model has an embedding norm.
  std::vector<float> x = embed(token, position);
  Kept kept;
  for (int l = 0; l < c.n_layers; ++l) {
    const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
    LayerRow r;
    // 1. The normalized input (a norm after each sublayer: x itself). 2. q, k, v; RoPE.
    r.normalized =
        c.norm_after() ? x : normalize(c, x, lw.attention_norm_weight, lw.attention_norm_bias);
    r.queries = times(r.normalized, lw.query, lw.query_bias);
    r.keys = times(r.normalized, lw.key, lw.key_bias);
    r.values = times(r.normalized, lw.value, lw.value_bias);
    if (c.positions == PositionKind::Rotary) {
      rotate(c, r.queries, position);
      rotate(c, r.keys, position);
    }
    // 3. Each query head against the keys of positions 0..position. 4. W_O; the residual.
    std::vector<const LayerRow*> key_rows;
    for (int t = 0; t < position; ++t)
      key_rows.push_back(&kept_[static_cast<std::size_t>(t)].layers[static_cast<std::size_t>(l)]);
    key_rows.push_back(&r);
    attend(l, position, key_rows, r);
    for (int j = 0; j < d; ++j) x[j] += r.attention_output[j];
    if (c.norm_after()) x = normalize(c, x, lw.attention_norm_weight, lw.attention_norm_bias);
    r.residual_mid = x;
    // 4c. An encoder–decoder's decoder: the cross-attention to the encoder's output.
    if (c.cross_attention) {
      attend_memory(l, r);
      for (int j = 0; j < d; ++j) x[j] += r.cross_attention_output[j];
      if (c.norm_after()) x = normalize(c, x, lw.cross_norm_weight, lw.cross_norm_bias);
      r.residual_cross = x;
    }
    // 5. The MLP; the residual (a norm after: the MLP reads x, and the sum is normed).
    r.mlp_output =
        mlp(l, c.norm_after() ? x : normalize(c, x, lw.mlp_norm_weight, lw.mlp_norm_bias));
    for (int j = 0; j < d; ++j) x[j] += r.mlp_output[j];
    if (c.norm_after()) x = normalize(c, x, lw.mlp_norm_weight, lw.mlp_norm_bias);
    r.residual_out = x;
    kept.layers.push_back(std::move(r));
  }
  // 6. The final norm and the logits.
  finish(x, kept);
  std::vector<float> logits = kept.logits;
  kept_.push_back(std::move(kept));
  return logits;
}

Status ReferenceForward::encode(const std::vector<int>& tokens,
                                const std::vector<int>& token_types) {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  if (c.causal()) return Status::error("a decoder reads one token at a time: use step()");
  const int n = static_cast<int>(tokens.size()), d = c.d_model;
  if (n < 1 || n > c.context)
    return Status::error("the model reads 1 to " + std::to_string(c.context) + " tokens");
  for (int i = 0; i < n; ++i) {
    const int type = token_types.empty() ? 0 : token_types.at(static_cast<std::size_t>(i));
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size || type < 0 ||
        type >= std::max(c.token_types, 1))
      return Status::error("token " + std::to_string(i) + ": id or type out of range");
  }
  // 0. Each position's embedding: token (× the scale) + position + type, normed (when the model
  // has an embedding norm: BERT, BART).
  std::vector<std::vector<float>> x(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    x[i] = embed(tokens[i], i, token_types.empty() ? 0 : token_types[static_cast<std::size_t>(i)]);
  kept_.assign(static_cast<std::size_t>(n), Kept{});
  for (int l = 0; l < c.n_layers; ++l) {
    const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
    // 1. The input as it is (normed already). 2. Every position's q, k, v.
    std::vector<LayerRow> rows(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      LayerRow& r = rows[static_cast<std::size_t>(i)];
      r.normalized = x[i];
      r.queries = times(r.normalized, lw.query, lw.query_bias);
      r.keys = times(r.normalized, lw.key, lw.key_bias);
      r.values = times(r.normalized, lw.value, lw.value_bias);
    }
    std::vector<const LayerRow*> key_rows;
    for (const LayerRow& r : rows) key_rows.push_back(&r);
    for (int i = 0; i < n; ++i) {
      LayerRow& r = rows[static_cast<std::size_t>(i)];
      // 3. Every key. 4. W_O, then the norm of the sum.
      attend(l, i, key_rows, r);
      std::vector<float> sum(static_cast<std::size_t>(d));
      for (int j = 0; j < d; ++j) sum[j] = x[i][j] + r.attention_output[j];
      r.residual_mid = normalize(c, sum, lw.attention_norm_weight, lw.attention_norm_bias);
      // 5. The MLP, then the norm of the sum.
      r.mlp_output = mlp(l, r.residual_mid);
      for (int j = 0; j < d; ++j) sum[j] = r.residual_mid[j] + r.mlp_output[j];
      r.residual_out = normalize(c, sum, lw.mlp_norm_weight, lw.mlp_norm_bias);
    }
    for (int i = 0; i < n; ++i) {
      x[i] = rows[static_cast<std::size_t>(i)].residual_out;
      kept_[static_cast<std::size_t>(i)].layers.push_back(
          std::move(rows[static_cast<std::size_t>(i)]));
    }
  }
  for (int i = 0; i < n; ++i) finish(x[i], kept_[static_cast<std::size_t>(i)]);
  return Status::success();
}

std::vector<float> ReferenceForward::embed(int token, int position, int type) const {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  std::vector<float> sum(static_cast<std::size_t>(c.d_model));
  for (int j = 0; j < c.d_model; ++j) {
    sum[j] = w.token_embedding.at(token, j) * c.embedding_scale;
    if (c.positions == PositionKind::Learned)
      sum[j] += w.position_embedding.at(position + c.position_offset, j);
    if (c.token_types > 0) sum[j] += w.token_type_embedding.at(type, j);
  }
  if (w.embedding_norm_weight.empty()) return sum;
  return normalize(c, sum, w.embedding_norm_weight, w.embedding_norm_bias);
}

void ReferenceForward::set_memory(std::vector<std::vector<float>> memory) {
  memory_ = std::move(memory);
  kept_.clear();
}

void ReferenceForward::attend_memory(int l, LayerRow& r) const {
  const TransformerConfig& c = model_.config();
  const TransformerLayer& lw = model_.weights().layers[static_cast<std::size_t>(l)];
  const int d_head = c.d_head, n_source = static_cast<int>(memory_.size());
  // The query from the stream after self-attention (normed first under a norm before).
  r.cross_queries =
      times(c.norm_after() ? r.residual_mid
                           : normalize(c, r.residual_mid, lw.cross_norm_weight, lw.cross_norm_bias),
            lw.cross_query, lw.cross_query_bias);
  // Every source position's key and value (computed again for each query: plain, not fast).
  std::vector<std::vector<float>> keys, values;
  for (const std::vector<float>& m : memory_) {
    keys.push_back(times(m, lw.cross_key, lw.cross_key_bias));
    values.push_back(times(m, lw.cross_value, lw.cross_value_bias));
  }
  r.cross_head_outputs.assign(static_cast<std::size_t>(c.n_heads) * d_head, 0.0f);
  r.cross_attention.clear();
  for (int h = 0; h < c.n_heads; ++h) {
    const HeadIntervention& intervention =
        cross_interventions_[static_cast<std::size_t>(l) * c.n_heads + h];
    std::vector<float> alpha(static_cast<std::size_t>(n_source));
    if (intervention.pattern == HeadIntervention::Pattern::Uniform) {
      std::fill(alpha.begin(), alpha.end(), 1.0f / static_cast<float>(n_source));
    } else {
      for (int t = 0; t < n_source; ++t) {
        float score = 0.0f;
        for (int i = 0; i < d_head; ++i)
          score += r.cross_queries[h * d_head + i] * keys[t][h * d_head + i];
        alpha[t] = score / std::sqrt(static_cast<float>(d_head));
      }
      softmax(alpha);
    }
    for (int t = 0; t < n_source; ++t)
      for (int i = 0; i < d_head; ++i)
        r.cross_head_outputs[h * d_head + i] += alpha[t] * values[t][h * d_head + i];
    for (int i = 0; i < d_head; ++i)
      r.cross_head_outputs[h * d_head + i] *= intervention.output_scale;
    r.cross_attention.push_back(std::move(alpha));
  }
  r.cross_attention_output = times(r.cross_head_outputs, lw.cross_output, lw.cross_output_bias);
}

int argmax(const std::vector<float>& logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); ++i)
    if (logits[static_cast<std::size_t>(i)] > logits[static_cast<std::size_t>(best)]) best = i;
  return best;
}

}  // namespace attnviz
