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

}  // namespace

ReferenceForward::ReferenceForward(const Transformer& model) : model_(model) {
  interventions_.resize(static_cast<std::size_t>(model.config().n_layers) * model.config().n_heads);
}

void ReferenceForward::set_intervention(int layer, int head, HeadIntervention intervention) {
  interventions_[static_cast<std::size_t>(layer) * model_.config().n_heads + head] = intervention;
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

Result<std::vector<float>> ReferenceForward::step(int token) {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  const int position = positions();
  if (position >= c.context)
    return Status::error("the model's context holds " + std::to_string(c.context) + " tokens");
  if (token < 0 || token >= c.vocab_size)
    return Status::error("token " + std::to_string(token) + " is not in the vocabulary of " +
                         std::to_string(c.vocab_size));
  const int d = c.d_model, d_head = c.d_head;
  // 0. The token's embedding (+ its position's, for learned positions).
  std::vector<float> x(static_cast<std::size_t>(d));
  for (int j = 0; j < d; ++j)
    x[j] = w.token_embedding.at(token, j) +
           (c.positions == PositionKind::Learned ? w.position_embedding.at(position, j) : 0.0f);
  Kept kept;
  for (int l = 0; l < c.n_layers; ++l) {
    const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
    LayerRow r;
    // 1. The normalized input. 2. q, k, v; RoPE.
    r.normalized = normalize(c, x, lw.attention_norm_weight, lw.attention_norm_bias);
    r.queries = times(r.normalized, lw.query, lw.query_bias);
    r.keys = times(r.normalized, lw.key, lw.key_bias);
    r.values = times(r.normalized, lw.value, lw.value_bias);
    if (c.positions == PositionKind::Rotary) {
      for (std::vector<float>* vector : {&r.queries, &r.keys})
        for (std::size_t i = 0; i < vector->size(); i += 2) {
          const int within_head = static_cast<int>(i) % d_head;
          const float frequency = 1.0f / std::pow(c.rope_theta, static_cast<float>(within_head) /
                                                                    static_cast<float>(d_head));
          const float angle = static_cast<float>(position) * frequency;
          const float v0 = (*vector)[i], v1 = (*vector)[i + 1];
          (*vector)[i] = v0 * std::cos(angle) - v1 * std::sin(angle);
          (*vector)[i + 1] = v0 * std::sin(angle) + v1 * std::cos(angle);
        }
    }
    // 3. Each query head against the keys of positions 0..position.
    r.head_outputs.assign(static_cast<std::size_t>(c.n_heads) * d_head, 0.0f);
    for (int h = 0; h < c.n_heads; ++h) {
      const int g = c.kv_head_of(h);
      const HeadIntervention& intervention =
          interventions_[static_cast<std::size_t>(l) * c.n_heads + h];
      const auto key = [&](int t) -> const float* {
        const std::vector<float>& keys =
            t == position ? r.keys : kept_[static_cast<std::size_t>(t)].layers[l].keys;
        return keys.data() + static_cast<std::ptrdiff_t>(g) * d_head;
      };
      const auto value = [&](int t) -> const float* {
        const std::vector<float>& values =
            t == position ? r.values : kept_[static_cast<std::size_t>(t)].layers[l].values;
        return values.data() + static_cast<std::ptrdiff_t>(g) * d_head;
      };
      std::vector<float> alpha(static_cast<std::size_t>(position) + 1);
      if (intervention.pattern == HeadIntervention::Pattern::Computed) {
        for (int t = 0; t <= position; ++t) {
          float score = 0.0f;
          for (int i = 0; i < d_head; ++i) score += r.queries[h * d_head + i] * key(t)[i];
          alpha[t] = score / std::sqrt(static_cast<float>(d_head));
        }
        const float largest = *std::max_element(alpha.begin(), alpha.end());
        float sum = 0.0f;
        for (float& a : alpha) {
          a = std::exp(a - largest);
          sum += a;
        }
        for (float& a : alpha) a /= sum;
      } else if (intervention.pattern == HeadIntervention::Pattern::Uniform) {
        std::fill(alpha.begin(), alpha.end(), 1.0f / static_cast<float>(position + 1));
      } else {
        alpha[static_cast<std::size_t>(std::max(position - 1, 0))] = 1.0f;
      }
      for (int t = 0; t <= position; ++t)
        for (int i = 0; i < d_head; ++i) r.head_outputs[h * d_head + i] += alpha[t] * value(t)[i];
      for (int i = 0; i < d_head; ++i) r.head_outputs[h * d_head + i] *= intervention.output_scale;
      r.attention.push_back(std::move(alpha));
    }
    // 4. W_O; the residual.
    r.attention_output = times(r.head_outputs, lw.output, lw.output_bias);
    for (int j = 0; j < d; ++j) x[j] += r.attention_output[j];
    r.residual_mid = x;
    // 5. The MLP; the residual.
    const std::vector<float> mlp_input = normalize(c, x, lw.mlp_norm_weight, lw.mlp_norm_bias);
    std::vector<float> hidden = times(mlp_input, lw.up, lw.up_bias);  // (d_ff)
    if (c.feed_forward == FeedForwardKind::GeluTanh) {
      for (float& u : hidden)
        u = 0.5f * u * (1.0f + std::tanh(0.7978845608028654f * (u + 0.044715f * u * u * u)));
    } else {
      const std::vector<float> gate = times(mlp_input, lw.gate, VectorView{});
      for (std::size_t i = 0; i < hidden.size(); ++i) {  // in run.c's order, to its last bit
        const float silu = gate[i] * (1.0f / (1.0f + std::exp(-gate[i])));
        hidden[i] = silu * hidden[i];
      }
    }
    r.mlp_output = times(hidden, lw.down, lw.down_bias);
    for (int j = 0; j < d; ++j) x[j] += r.mlp_output[j];
    r.residual_out = x;
    kept.layers.push_back(std::move(r));
  }
  // 6. The final norm and the logits.
  kept.final_normalized = normalize(c, x, w.final_norm_weight, w.final_norm_bias);
  kept.logits.assign(static_cast<std::size_t>(c.vocab_size), 0.0f);
  for (int v = 0; v < c.vocab_size; ++v) {
    float sum = 0.0f;
    for (int j = 0; j < d; ++j) sum += kept.final_normalized[j] * w.unembedding.at(v, j);
    kept.logits[v] = sum;
  }
  std::vector<float> logits = kept.logits;
  kept_.push_back(std::move(kept));
  return logits;
}

int argmax(const std::vector<float>& logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); ++i)
    if (logits[static_cast<std::size_t>(i)] > logits[static_cast<std::size_t>(best)]) best = i;
  return best;
}

}  // namespace attnviz
