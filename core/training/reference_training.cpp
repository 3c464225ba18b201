#include "core/training/reference_training.hpp"

#include "core/training/parameters.hpp"

#include <cmath>
#include <vector>

namespace attnviz {
namespace {

using Vector = std::vector<float>;

struct Norm {
  Vector out;
  float mean = 0.0f, rstd = 0.0f;
};

// LayerNorm: (x − mean) / √(var + ε) · w + b.  RMSNorm: x / √(mean(x²) + ε) · w (mean 0, no b).
Norm norm(NormKind kind, const Vector& x, const VectorView& w, const VectorView& b, float epsilon) {
  const auto d = x.size();
  Norm n;
  if (kind == NormKind::LayerNorm) {
    for (float value : x) n.mean += value;
    n.mean /= static_cast<float>(d);
  }
  float variance = 0.0f;
  for (float value : x) variance += (value - n.mean) * (value - n.mean);
  variance /= static_cast<float>(d);
  n.rstd = 1.0f / std::sqrt(variance + epsilon);
  n.out.resize(d);
  for (std::size_t j = 0; j < d; ++j)
    n.out[j] = (x[j] - n.mean) * n.rstd * w.data[j] + (b.empty() ? 0.0f : b.data[j]);
  return n;
}

// dx += the norm's share of dy; its weight's and bias's (null: none) gradients += theirs.
void norm_back(NormKind kind, const Vector& dy, const Vector& x, const Norm& n, const VectorView& w,
               float* dw, float* db, Vector& dx) {
  const auto d = x.size();
  Vector xhat(d), dn(d);
  float mean_dn = 0.0f, mean_dn_xhat = 0.0f;
  for (std::size_t j = 0; j < d; ++j) {
    xhat[j] = (x[j] - n.mean) * n.rstd;
    dn[j] = dy[j] * w.data[j];
    if (kind == NormKind::LayerNorm) mean_dn += dn[j] / static_cast<float>(d);
    mean_dn_xhat += dn[j] * xhat[j] / static_cast<float>(d);
    dw[j] += dy[j] * xhat[j];
    if (db != nullptr) db[j] += dy[j];
  }
  for (std::size_t j = 0; j < d; ++j) dx[j] += n.rstd * (dn[j] - mean_dn - xhat[j] * mean_dn_xhat);
}

// RoPE on one head's d_head numbers at `position`: pair (2i, 2i + 1) turned by
// position · θ^(−2i / d_head); `direction` −1 turns back.
void rope(float* head, int d_head, int position, float theta, float direction) {
  for (int i = 0; i < d_head; i += 2) {
    const double angle =
        position * std::pow(static_cast<double>(theta), -static_cast<double>(i) / d_head);
    const auto cos_a = static_cast<float>(std::cos(angle)),
               sin_a = static_cast<float>(direction * std::sin(angle));
    const float a = head[i], b = head[i + 1];
    head[i] = a * cos_a - b * sin_a;
    head[i + 1] = a * sin_a + b * cos_a;
  }
}

// y = x · W + b: x (in), W (in, out).
Vector times(const Vector& x, const MatrixView& w, const VectorView& b) {
  Vector y(static_cast<std::size_t>(w.cols));
  for (int o = 0; o < w.cols; ++o) {
    float sum = b.empty() ? 0.0f : b.data[o];
    for (int i = 0; i < w.rows; ++i) sum += x[static_cast<std::size_t>(i)] * w.at(i, o);
    y[static_cast<std::size_t>(o)] = sum;
  }
  return y;
}

// For y = x · W + b: dx += dy · Wᵀ, dW += xᵀ · dy, db += dy.
void times_back(const Vector& dy, const Vector& x, const MatrixView& w, float* dw, float* db,
                Vector& dx) {
  for (int i = 0; i < w.rows; ++i) {
    for (int o = 0; o < w.cols; ++o) {
      dx[static_cast<std::size_t>(i)] += dy[static_cast<std::size_t>(o)] * w.at(i, o);
      dw[i * w.stride + o] += x[static_cast<std::size_t>(i)] * dy[static_cast<std::size_t>(o)];
    }
  }
  if (db != nullptr)
    for (int o = 0; o < w.cols; ++o) db[o] += dy[static_cast<std::size_t>(o)];
}

float gelu(float u) {
  return 0.5f * u * (1.0f + std::tanh(0.7978845608028654f * (u + 0.044715f * u * u * u)));
}
float gelu_derivative(float u) {
  const float s = 0.7978845608028654f, t = std::tanh(s * (u + 0.044715f * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * s * (1.0f + 3.0f * 0.044715f * u * u);
}
float sigmoid(float u) {
  return 1.0f / (1.0f + std::exp(-u));
}

struct Position {  // what one position keeps of one layer
  Vector x, mid;
  Norm n1, n2;
  Vector q, k, v;
  std::vector<Vector> alpha;  // per head, over keys 0..i
  Vector o;                   // the heads' outputs, side by side
  Vector before, after;       // the MLP's hidden units (SwiGLU: x · W_up, silu(gate) ⊙ it)
  Vector gate;                // SwiGLU's x · W_gate
};

}  // namespace

Result<float> reference_loss_and_gradient(const TransformerConfig& c, const TransformerWeights& w,
                                          const float* values, float* gradient,
                                          const TrainingBatch& batch, bool attention_only) {
  if (Status ok = check_batch(c, batch); !ok) return Result<float>::failure(ok.message());
  if (Status ok = check_trainable(c); !ok) return Result<float>::failure(ok.message());
  const int T = batch.length, D = c.d_model, H = c.n_heads, dh = c.d_head, V = c.vocab_size,
            QW = H * dh;
  const bool rotary = c.positions == PositionKind::Rotary,
             swiglu = c.feed_forward == FeedForwardKind::SwiGLU;
  const auto g = [&](const float* weight) { return gradient_of(weight, values, gradient); };
  // The gradient of a vector the model may not have (a bias under RMSNorm): null then.
  const auto g_or_null = [&](const VectorView& v) { return v.empty() ? nullptr : g(v.data); };
  int counted = 0;
  for (int target : batch.targets) counted += target >= 0 ? 1 : 0;
  double total_loss = 0.0;

  for (int b = 0; b < batch.texts; ++b) {
    const int* tokens = batch.tokens.data() + static_cast<std::ptrdiff_t>(b) * T;
    const int* targets = batch.targets.data() + static_cast<std::ptrdiff_t>(b) * T;
    // ---- forward ----
    std::vector<std::vector<Position>> kept(static_cast<std::size_t>(c.n_layers),
                                            std::vector<Position>(static_cast<std::size_t>(T)));
    std::vector<Vector> x(static_cast<std::size_t>(T), Vector(static_cast<std::size_t>(D)));
    // 0. x_i = wte[token_i] + wpe[i] (no wpe under RoPE)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < D; ++j)
        x[i][j] =
            w.token_embedding.at(tokens[i], j) + (rotary ? 0.0f : w.position_embedding.at(i, j));
    for (int l = 0; l < c.n_layers; ++l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = kept[static_cast<std::size_t>(l)];
      // 1.–2.
      for (int i = 0; i < T; ++i) {
        P[i].x = x[i];
        P[i].n1 =
            norm(c.norm, x[i], lw.attention_norm_weight, lw.attention_norm_bias, c.norm_epsilon);
        P[i].q = times(P[i].n1.out, lw.query, lw.query_bias);
        P[i].k = times(P[i].n1.out, lw.key, lw.key_bias);
        P[i].v = times(P[i].n1.out, lw.value, lw.value_bias);
        if (rotary) {  // each head's q and k turned by position
          for (int h = 0; h < H; ++h) rope(&P[i].q[h * dh], dh, i, c.rope_theta, 1.0f);
          for (int h = 0; h < c.n_kv_heads; ++h) rope(&P[i].k[h * dh], dh, i, c.rope_theta, 1.0f);
        }
      }
      // 3.–5.
      for (int i = 0; i < T; ++i) {
        P[i].o.assign(static_cast<std::size_t>(QW), 0.0f);
        P[i].alpha.assign(static_cast<std::size_t>(H), Vector(static_cast<std::size_t>(i + 1)));
        for (int h = 0; h < H; ++h) {
          const int kv = c.kv_head_of(h);  // the key/value head query head h reads
          Vector& alpha = P[i].alpha[h];
          float largest = -INFINITY, sum = 0.0f;
          for (int t = 0; t <= i; ++t) {
            float score = 0.0f;
            for (int e = 0; e < dh; ++e) score += P[i].q[h * dh + e] * P[t].k[kv * dh + e];
            alpha[t] = score / std::sqrt(static_cast<float>(dh));
            largest = std::max(largest, alpha[t]);
          }
          for (int t = 0; t <= i; ++t) {
            alpha[t] = std::exp(alpha[t] - largest);
            sum += alpha[t];
          }
          for (int t = 0; t <= i; ++t) alpha[t] /= sum;
          for (int t = 0; t <= i; ++t)
            for (int e = 0; e < dh; ++e) P[i].o[h * dh + e] += alpha[t] * P[t].v[kv * dh + e];
        }
        const Vector projected = times(P[i].o, lw.output, lw.output_bias);
        P[i].mid = x[i];
        for (int j = 0; j < D; ++j) P[i].mid[j] += projected[j];
        x[i] = P[i].mid;
        if (!attention_only) {
          P[i].n2 = norm(c.norm, P[i].mid, lw.mlp_norm_weight, lw.mlp_norm_bias, c.norm_epsilon);
          P[i].before = times(P[i].n2.out, lw.up, lw.up_bias);
          P[i].after = P[i].before;
          if (swiglu) {  // silu(x · W_gate) ⊙ (x · W_up)
            P[i].gate = times(P[i].n2.out, lw.gate, VectorView{});
            for (std::size_t u = 0; u < P[i].after.size(); ++u)
              P[i].after[u] *= P[i].gate[u] * sigmoid(P[i].gate[u]);
          } else {
            for (float& u : P[i].after) u = gelu(u);
          }
          const Vector mlp = times(P[i].after, lw.down, lw.down_bias);
          for (int j = 0; j < D; ++j) x[i][j] += mlp[j];
        }
      }
    }
    // ---- the loss, and backward from it ----
    std::vector<Vector> dx(static_cast<std::size_t>(T), Vector(static_cast<std::size_t>(D), 0.0f));
    for (int i = 0; i < T; ++i) {
      const Norm f = norm(c.norm, x[i], w.final_norm_weight, w.final_norm_bias, c.norm_epsilon);
      if (targets[i] < 0) continue;
      Vector logits(static_cast<std::size_t>(V));
      float largest = -INFINITY;
      for (int t = 0; t < V; ++t) {
        float z = w.unembedding_bias.empty() ? 0.0f : w.unembedding_bias.data[t];
        for (int j = 0; j < D; ++j) z += f.out[j] * w.unembedding.at(t, j);
        logits[t] = z;
        largest = std::max(largest, z);
      }
      double sum = 0.0;
      for (int t = 0; t < V; ++t) sum += std::exp(static_cast<double>(logits[t] - largest));
      total_loss += std::log(sum) - static_cast<double>(logits[targets[i]] - largest);
      Vector d_final(static_cast<std::size_t>(D), 0.0f);
      for (int t = 0; t < V; ++t) {
        float dz = static_cast<float>(std::exp(static_cast<double>(logits[t] - largest)) / sum);
        if (t == targets[i]) dz -= 1.0f;
        dz /= static_cast<float>(counted);
        if (!w.unembedding_bias.empty()) g(w.unembedding_bias.data)[t] += dz;
        for (int j = 0; j < D; ++j) {
          d_final[j] += dz * w.unembedding.at(t, j);
          g(w.unembedding.data)[t * w.unembedding.stride + j] += dz * f.out[j];
        }
      }
      norm_back(c.norm, d_final, x[i], f, w.final_norm_weight, g(w.final_norm_weight.data),
                g_or_null(w.final_norm_bias), dx[i]);
    }
    for (int l = c.n_layers - 1; l >= 0; --l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = kept[static_cast<std::size_t>(l)];
      // 5. the MLP (dx is then dmid: the residual passes it on, the MLP adds its share)
      if (!attention_only) {
        for (int i = 0; i < T; ++i) {
          Vector d_after(P[i].after.size(), 0.0f);
          times_back(dx[i], P[i].after, lw.down, g(lw.down.data), g_or_null(lw.down_bias), d_after);
          Vector d_n2(static_cast<std::size_t>(D), 0.0f);
          if (swiglu) {
            // after = silu(gate) ⊙ up: d_gate = d_after ⊙ up ⊙ silu′(gate); d_up = d_after ⊙
            // silu(gate); silu′(u) = σ(u) + u · σ(u) · (1 − σ(u))
            Vector d_gate(d_after.size());
            for (std::size_t u = 0; u < d_after.size(); ++u) {
              const float gate = P[i].gate[u], s = sigmoid(gate);
              d_gate[u] = d_after[u] * P[i].before[u] * (s + gate * s * (1.0f - s));
              d_after[u] *= gate * s;
            }
            times_back(d_gate, P[i].n2.out, lw.gate, g(lw.gate.data), nullptr, d_n2);
          } else {
            for (std::size_t u = 0; u < d_after.size(); ++u)
              d_after[u] *= gelu_derivative(P[i].before[u]);
          }
          times_back(d_after, P[i].n2.out, lw.up, g(lw.up.data), g_or_null(lw.up_bias), d_n2);
          norm_back(c.norm, d_n2, P[i].mid, P[i].n2, lw.mlp_norm_weight, g(lw.mlp_norm_weight.data),
                    g_or_null(lw.mlp_norm_bias), dx[i]);
        }
      }
      // 4. m = x + o · W_O + b_O
      std::vector<Vector> d_o(static_cast<std::size_t>(T),
                              Vector(static_cast<std::size_t>(QW), 0.0f));
      for (int i = 0; i < T; ++i)
        times_back(dx[i], P[i].o, lw.output, g(lw.output.data), g_or_null(lw.output_bias), d_o[i]);
      // 3. the attention (dk and dv of a key/value head gather its query heads' shares)
      std::vector<Vector> dq(static_cast<std::size_t>(T),
                             Vector(static_cast<std::size_t>(QW), 0.0f));
      std::vector<Vector> dk(static_cast<std::size_t>(T),
                             Vector(static_cast<std::size_t>(c.n_kv_heads * dh), 0.0f));
      auto dv = dk;
      for (int i = 0; i < T; ++i) {
        for (int h = 0; h < H; ++h) {
          const int kv = c.kv_head_of(h);
          const Vector& alpha = P[i].alpha[h];
          Vector d_alpha(static_cast<std::size_t>(i + 1), 0.0f);
          for (int t = 0; t <= i; ++t)
            for (int e = 0; e < dh; ++e) {
              d_alpha[t] += d_o[i][h * dh + e] * P[t].v[kv * dh + e];
              dv[t][kv * dh + e] += alpha[t] * d_o[i][h * dh + e];
            }
          float dot = 0.0f;
          for (int t = 0; t <= i; ++t) dot += alpha[t] * d_alpha[t];
          for (int t = 0; t <= i; ++t) {
            const float d_score = alpha[t] * (d_alpha[t] - dot) / std::sqrt(static_cast<float>(dh));
            for (int e = 0; e < dh; ++e) {
              dq[i][h * dh + e] += d_score * P[t].k[kv * dh + e];
              dk[t][kv * dh + e] += d_score * P[i].q[h * dh + e];
            }
          }
        }
      }
      // 2.–1. q, k, v = norm₁(x) · W + b, then RoPE: dq and dk turned back first
      for (int i = 0; i < T; ++i) {
        if (rotary) {
          for (int h = 0; h < H; ++h) rope(&dq[i][h * dh], dh, i, c.rope_theta, -1.0f);
          for (int h = 0; h < c.n_kv_heads; ++h) rope(&dk[i][h * dh], dh, i, c.rope_theta, -1.0f);
        }
        Vector d_n1(static_cast<std::size_t>(D), 0.0f);
        times_back(dq[i], P[i].n1.out, lw.query, g(lw.query.data), g_or_null(lw.query_bias), d_n1);
        times_back(dk[i], P[i].n1.out, lw.key, g(lw.key.data), g_or_null(lw.key_bias), d_n1);
        times_back(dv[i], P[i].n1.out, lw.value, g(lw.value.data), g_or_null(lw.value_bias), d_n1);
        norm_back(c.norm, d_n1, P[i].x, P[i].n1, lw.attention_norm_weight,
                  g(lw.attention_norm_weight.data), g_or_null(lw.attention_norm_bias), dx[i]);
      }
    }
    // 0. the embeddings
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < D; ++j) {
        g(w.token_embedding.data)[tokens[i] * w.token_embedding.stride + j] += dx[i][j];
        if (!rotary) g(w.position_embedding.data)[i * w.position_embedding.stride + j] += dx[i][j];
      }
  }
  return static_cast<float>(total_loss / counted);
}

}  // namespace attnviz
