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

float sigmoid(float u) {
  return 1.0f / (1.0f + std::exp(-u));
}
// The MLP's activation (ungated) and its derivative: GELU's tanh form, its erf form, SiLU.
float activation(FeedForwardKind kind, float u) {
  if (kind == FeedForwardKind::GeluErf) return 0.5f * u * (1.0f + std::erf(u / std::sqrt(2.0f)));
  if (kind == FeedForwardKind::Silu || kind == FeedForwardKind::SwiGLU) return u * sigmoid(u);
  return 0.5f * u * (1.0f + std::tanh(0.7978845608028654f * (u + 0.044715f * u * u * u)));
}
float activation_derivative(FeedForwardKind kind, float u) {
  if (kind == FeedForwardKind::GeluErf) {
    const float density = std::exp(-0.5f * u * u) / std::sqrt(2.0f * 3.14159265358979f);
    return 0.5f * (1.0f + std::erf(u / std::sqrt(2.0f))) + u * density;
  }
  if (kind == FeedForwardKind::Silu || kind == FeedForwardKind::SwiGLU) {
    const float s = sigmoid(u);
    return s + u * s * (1.0f - s);
  }
  const float s = 0.7978845608028654f, t = std::tanh(s * (u + 0.044715f * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * s * (1.0f + 3.0f * 0.044715f * u * u);
}

struct Position {  // what one position keeps of one layer
  Vector x, mid;
  Vector attention_in, mlp_in;    // what the sublayers read (norm before: n1, n2's outputs)
  Vector attention_sum, mlp_sum;  // norm after: the sums n1 and n2 norm
  Norm n1, n2;
  Vector q, k, v;
  std::vector<Vector> alpha;  // per head, over the keys it sees
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
  if (attention_only && c.norm_after())
    return Result<float>::failure("an attention-only model has its norms before the sublayers");
  const int T = batch.length, D = c.d_model, H = c.n_heads, dh = c.d_head, V = c.vocab_size,
            QW = H * dh;
  const bool rotary = c.positions == PositionKind::Rotary,
             swiglu = c.feed_forward == FeedForwardKind::SwiGLU, after = c.norm_after(),
             head = !w.head_transform.empty(), final_norm = !w.final_norm_weight.empty(),
             embedding_norm = !w.embedding_norm_weight.empty();
  const FeedForwardKind kind = c.feed_forward;
  const auto g = [&](const float* weight) { return gradient_of(weight, values, gradient); };
  // The gradient of a vector the model may not have (a bias under RMSNorm): null then.
  const auto g_or_null = [&](const VectorView& v) { return v.empty() ? nullptr : g(v.data); };
  // The last key query i sees: itself in a decoder, the last token in an encoder.
  const auto last_key = [&](int i) { return c.causal() ? i : T - 1; };
  const auto zeros = [](int size) { return Vector(static_cast<std::size_t>(size), 0.0f); };
  int counted = 0;
  for (int target : batch.targets) counted += target >= 0 ? 1 : 0;
  double total_loss = 0.0;

  for (int b = 0; b < batch.texts; ++b) {
    const int* tokens = batch.tokens.data() + static_cast<std::ptrdiff_t>(b) * T;
    const int* targets = batch.targets.data() + static_cast<std::ptrdiff_t>(b) * T;
    const auto type_of = [&](int i) {
      return batch.token_types.empty() ? 0 : batch.token_types[static_cast<std::size_t>(b * T + i)];
    };
    // ---- forward ----
    std::vector<std::vector<Position>> kept(static_cast<std::size_t>(c.n_layers),
                                            std::vector<Position>(static_cast<std::size_t>(T)));
    std::vector<Vector> x(static_cast<std::size_t>(T), zeros(D));
    // 0. e_i = wte[token_i] · scale + wpe[i + offset] (none under RoPE) + tte[type_i] (BERT);
    //    x_i = LayerNorm_e(e_i) where the model norms its embeddings, else e_i
    std::vector<Vector> embedded(static_cast<std::size_t>(T));
    std::vector<Norm> embedding_normed(static_cast<std::size_t>(T));
    for (int i = 0; i < T; ++i) {
      for (int j = 0; j < D; ++j) {
        x[i][j] = w.token_embedding.at(tokens[i], j) * c.embedding_scale;
        if (!rotary) x[i][j] += w.position_embedding.at(i + c.position_offset, j);
        if (!w.token_type_embedding.empty()) x[i][j] += w.token_type_embedding.at(type_of(i), j);
      }
      if (embedding_norm) {
        embedded[i] = x[i];
        embedding_normed[i] =
            norm(c.norm, x[i], w.embedding_norm_weight, w.embedding_norm_bias, c.norm_epsilon);
        x[i] = embedding_normed[i].out;
      }
    }
    for (int l = 0; l < c.n_layers; ++l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = kept[static_cast<std::size_t>(l)];
      // 1.–2. (norm after: the attention reads x itself)
      for (int i = 0; i < T; ++i) {
        P[i].x = x[i];
        if (after) {
          P[i].attention_in = x[i];
        } else {
          P[i].n1 =
              norm(c.norm, x[i], lw.attention_norm_weight, lw.attention_norm_bias, c.norm_epsilon);
          P[i].attention_in = P[i].n1.out;
        }
        P[i].q = times(P[i].attention_in, lw.query, lw.query_bias);
        P[i].k = times(P[i].attention_in, lw.key, lw.key_bias);
        P[i].v = times(P[i].attention_in, lw.value, lw.value_bias);
        if (rotary) {  // each head's q and k turned by position
          for (int h = 0; h < H; ++h) rope(&P[i].q[h * dh], dh, i, c.rope_theta, 1.0f);
          for (int h = 0; h < c.n_kv_heads; ++h) rope(&P[i].k[h * dh], dh, i, c.rope_theta, 1.0f);
        }
      }
      // 3.–5.
      for (int i = 0; i < T; ++i) {
        const int last = last_key(i);
        P[i].o.assign(static_cast<std::size_t>(QW), 0.0f);
        P[i].alpha.assign(static_cast<std::size_t>(H), zeros(last + 1));
        for (int h = 0; h < H; ++h) {
          const int kv = c.kv_head_of(h);  // the key/value head query head h reads
          Vector& alpha = P[i].alpha[h];
          float largest = -INFINITY, sum = 0.0f;
          for (int t = 0; t <= last; ++t) {
            float score = 0.0f;
            for (int e = 0; e < dh; ++e) score += P[i].q[h * dh + e] * P[t].k[kv * dh + e];
            alpha[t] = score / std::sqrt(static_cast<float>(dh));
            largest = std::max(largest, alpha[t]);
          }
          for (int t = 0; t <= last; ++t) {
            alpha[t] = std::exp(alpha[t] - largest);
            sum += alpha[t];
          }
          for (int t = 0; t <= last; ++t) alpha[t] /= sum;
          for (int t = 0; t <= last; ++t)
            for (int e = 0; e < dh; ++e) P[i].o[h * dh + e] += alpha[t] * P[t].v[kv * dh + e];
        }
        const Vector projected = times(P[i].o, lw.output, lw.output_bias);
        Vector sum = x[i];
        for (int j = 0; j < D; ++j) sum[j] += projected[j];
        if (after) {  // mid = LayerNorm₁(x + attention)
          P[i].attention_sum = sum;
          P[i].n1 =
              norm(c.norm, sum, lw.attention_norm_weight, lw.attention_norm_bias, c.norm_epsilon);
          P[i].mid = P[i].n1.out;
        } else {
          P[i].mid = sum;
        }
        x[i] = P[i].mid;
        if (attention_only) continue;
        if (after) {
          P[i].mlp_in = P[i].mid;
        } else {
          P[i].n2 = norm(c.norm, P[i].mid, lw.mlp_norm_weight, lw.mlp_norm_bias, c.norm_epsilon);
          P[i].mlp_in = P[i].n2.out;
        }
        P[i].before = times(P[i].mlp_in, lw.up, lw.up_bias);
        P[i].after = P[i].before;
        if (swiglu) {  // silu(x · W_gate) ⊙ (x · W_up)
          P[i].gate = times(P[i].mlp_in, lw.gate, VectorView{});
          for (std::size_t u = 0; u < P[i].after.size(); ++u)
            P[i].after[u] *= P[i].gate[u] * sigmoid(P[i].gate[u]);
        } else {
          for (float& u : P[i].after) u = activation(kind, u);
        }
        const Vector mlp = times(P[i].after, lw.down, lw.down_bias);
        for (int j = 0; j < D; ++j) x[i][j] += mlp[j];
        if (after) {  // x' = LayerNorm₂(mid + MLP)
          P[i].mlp_sum = x[i];
          P[i].n2 = norm(c.norm, x[i], lw.mlp_norm_weight, lw.mlp_norm_bias, c.norm_epsilon);
          x[i] = P[i].n2.out;
        }
      }
    }
    // ---- the output: final = norm_f(x), norm_f(act(x · W_h + b_h)) (BERT's MLM head) or x;
    //      the loss, and backward from it ----
    std::vector<Vector> dx(static_cast<std::size_t>(T), zeros(D));
    for (int i = 0; i < T; ++i) {
      Vector head_before, normed = x[i];
      if (head) {
        head_before = times(x[i], w.head_transform, w.head_transform_bias);
        for (std::size_t j = 0; j < normed.size(); ++j)
          normed[j] = activation(kind, head_before[j]);
      }
      Norm f;
      f.out = normed;
      if (final_norm)
        f = norm(c.norm, normed, w.final_norm_weight, w.final_norm_bias, c.norm_epsilon);
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
      Vector d_final = zeros(D);
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
      Vector d_normed = d_final;
      if (final_norm) {
        d_normed = zeros(D);
        norm_back(c.norm, d_final, normed, f, w.final_norm_weight, g(w.final_norm_weight.data),
                  g_or_null(w.final_norm_bias), d_normed);
      }
      if (head) {
        for (int j = 0; j < D; ++j) d_normed[j] *= activation_derivative(kind, head_before[j]);
        times_back(d_normed, x[i], w.head_transform, g(w.head_transform.data),
                   g_or_null(w.head_transform_bias), dx[i]);
      } else {
        for (int j = 0; j < D; ++j) dx[i][j] += d_normed[j];
      }
    }
    // Under the norm after a sum: dx becomes the sum's gradient.
    const auto back_through_norm = [&](Vector& d, const Vector& sum, const Norm& n,
                                       const VectorView& weight, const VectorView& bias) {
      Vector d_sum = zeros(D);
      norm_back(c.norm, d, sum, n, weight, g(weight.data), g_or_null(bias), d_sum);
      d = d_sum;
    };
    for (int l = c.n_layers - 1; l >= 0; --l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = kept[static_cast<std::size_t>(l)];
      // 5. the MLP (dx is then dmid: the residual passes it on, the MLP adds its share)
      if (!attention_only) {
        for (int i = 0; i < T; ++i) {
          if (after)
            back_through_norm(dx[i], P[i].mlp_sum, P[i].n2, lw.mlp_norm_weight, lw.mlp_norm_bias);
          Vector d_after(P[i].after.size(), 0.0f);
          times_back(dx[i], P[i].after, lw.down, g(lw.down.data), g_or_null(lw.down_bias), d_after);
          Vector d_mlp_in = zeros(D);
          if (swiglu) {
            // after = silu(gate) ⊙ up: d_gate = d_after ⊙ up ⊙ silu′(gate); d_up = d_after ⊙
            // silu(gate)
            Vector d_gate(d_after.size());
            for (std::size_t u = 0; u < d_after.size(); ++u) {
              const float gate = P[i].gate[u];
              d_gate[u] = d_after[u] * P[i].before[u] * activation_derivative(kind, gate);
              d_after[u] *= gate * sigmoid(gate);
            }
            times_back(d_gate, P[i].mlp_in, lw.gate, g(lw.gate.data), nullptr, d_mlp_in);
          } else {
            for (std::size_t u = 0; u < d_after.size(); ++u)
              d_after[u] *= activation_derivative(kind, P[i].before[u]);
          }
          times_back(d_after, P[i].mlp_in, lw.up, g(lw.up.data), g_or_null(lw.up_bias), d_mlp_in);
          if (after)
            for (int j = 0; j < D; ++j) dx[i][j] += d_mlp_in[j];
          else
            norm_back(c.norm, d_mlp_in, P[i].mid, P[i].n2, lw.mlp_norm_weight,
                      g(lw.mlp_norm_weight.data), g_or_null(lw.mlp_norm_bias), dx[i]);
        }
      }
      // 4. m = x + o · W_O + b_O (norm after: m = LayerNorm₁(that))
      std::vector<Vector> d_o(static_cast<std::size_t>(T), zeros(QW));
      for (int i = 0; i < T; ++i) {
        if (after)
          back_through_norm(dx[i], P[i].attention_sum, P[i].n1, lw.attention_norm_weight,
                            lw.attention_norm_bias);
        times_back(dx[i], P[i].o, lw.output, g(lw.output.data), g_or_null(lw.output_bias), d_o[i]);
      }
      // 3. the attention (dk and dv of a key/value head gather its query heads' shares)
      std::vector<Vector> dq(static_cast<std::size_t>(T), zeros(QW));
      std::vector<Vector> dk(static_cast<std::size_t>(T), zeros(c.n_kv_heads * dh));
      auto dv = dk;
      for (int i = 0; i < T; ++i) {
        const int last = last_key(i);
        for (int h = 0; h < H; ++h) {
          const int kv = c.kv_head_of(h);
          const Vector& alpha = P[i].alpha[h];
          Vector d_alpha = zeros(last + 1);
          for (int t = 0; t <= last; ++t)
            for (int e = 0; e < dh; ++e) {
              d_alpha[t] += d_o[i][h * dh + e] * P[t].v[kv * dh + e];
              dv[t][kv * dh + e] += alpha[t] * d_o[i][h * dh + e];
            }
          float dot = 0.0f;
          for (int t = 0; t <= last; ++t) dot += alpha[t] * d_alpha[t];
          for (int t = 0; t <= last; ++t) {
            const float d_score = alpha[t] * (d_alpha[t] - dot) / std::sqrt(static_cast<float>(dh));
            for (int e = 0; e < dh; ++e) {
              dq[i][h * dh + e] += d_score * P[t].k[kv * dh + e];
              dk[t][kv * dh + e] += d_score * P[i].q[h * dh + e];
            }
          }
        }
      }
      // 2.–1. q, k, v = norm₁(x) · W + b (norm after: x · W + b), then RoPE: dq and dk turned
      // back first
      for (int i = 0; i < T; ++i) {
        if (rotary) {
          for (int h = 0; h < H; ++h) rope(&dq[i][h * dh], dh, i, c.rope_theta, -1.0f);
          for (int h = 0; h < c.n_kv_heads; ++h) rope(&dk[i][h * dh], dh, i, c.rope_theta, -1.0f);
        }
        Vector d_in = zeros(D);
        const Vector& in = P[i].attention_in;
        times_back(dq[i], in, lw.query, g(lw.query.data), g_or_null(lw.query_bias), d_in);
        times_back(dk[i], in, lw.key, g(lw.key.data), g_or_null(lw.key_bias), d_in);
        times_back(dv[i], in, lw.value, g(lw.value.data), g_or_null(lw.value_bias), d_in);
        if (after)
          for (int j = 0; j < D; ++j) dx[i][j] += d_in[j];
        else
          norm_back(c.norm, d_in, P[i].x, P[i].n1, lw.attention_norm_weight,
                    g(lw.attention_norm_weight.data), g_or_null(lw.attention_norm_bias), dx[i]);
      }
    }
    // 0. the embeddings (LayerNorm_e's backward first)
    for (int i = 0; i < T; ++i) {
      if (embedding_norm)
        back_through_norm(dx[i], embedded[i], embedding_normed[i], w.embedding_norm_weight,
                          w.embedding_norm_bias);
      for (int j = 0; j < D; ++j) {
        g(w.token_embedding.data)[tokens[i] * w.token_embedding.stride + j] +=
            dx[i][j] * c.embedding_scale;
        if (!rotary)
          g(w.position_embedding.data)[(i + c.position_offset) * w.position_embedding.stride + j] +=
              dx[i][j];
        if (!w.token_type_embedding.empty())
          g(w.token_type_embedding.data)[type_of(i) * w.token_type_embedding.stride + j] +=
              dx[i][j];
      }
    }
  }
  return static_cast<float>(total_loss / counted);
}

}  // namespace attnviz
