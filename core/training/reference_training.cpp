#include "core/training/reference_training.hpp"

#include "core/training/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
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
  // A decoder with cross-attention: self_mid = n1's output; cross_sum = self_mid + the cross
  // heads' output; mid = nc(cross_sum)
  Vector self_mid, cross_q, cross_o, cross_sum;
  std::vector<Vector> cross_alpha;  // per head, over the source positions
  Norm nc;
};

// The gradient's place of a weight, or null for a constant outside values[0, count) (Marian's
// sinusoid positions, final_logits_bias).
struct Gradient {
  const float* values;
  std::size_t count;
  float* gradient;
  bool has(const float* weight) const {
    return weight >= values && static_cast<std::size_t>(weight - values) < count;
  }
  float* operator()(const float* weight) const {
    return has(weight) ? gradient_of(weight, values, gradient) : nullptr;
  }
  // The gradient of a vector the model may not have (a bias under RMSNorm): null then.
  float* or_null(const VectorView& v) const { return v.empty() ? nullptr : (*this)(v.data); }
};

// One stack (a decoder, an encoder, or an encoder–decoder's either half) over one text: what its
// forward pass keeps, and its output.
struct StackRun {
  std::vector<std::vector<Position>> kept;  // (layers, T)
  std::vector<Vector> embedded;             // (T, d): before LayerNorm_e
  std::vector<Norm> embedding_normed;       // (T)
  std::vector<Vector> x;                    // (T, d): the last layer's output
};

struct Stack {
  const TransformerConfig& c;
  const TransformerWeights& w;
  const bool attention_only;
  const int D = c.d_model, H = c.n_heads, dh = c.d_head, QW = H * dh;
  const bool rotary = c.positions == PositionKind::Rotary,
             swiglu = c.feed_forward == FeedForwardKind::SwiGLU, after = c.norm_after(),
             embedding_norm = !w.embedding_norm_weight.empty();
  const FeedForwardKind kind = c.feed_forward;

  Stack(const TransformerConfig& config, const TransformerWeights& weights, bool only_attention)
      : c(config), w(weights), attention_only(only_attention) {}
  static Vector zeros(int size) { return Vector(static_cast<std::size_t>(size), 0.0f); }
  // The last key query i of T sees: itself in a decoder, the last token in an encoder.
  int last_key(int i, int T) const { return c.causal() ? i : T - 1; }

  // Forward over `tokens` (T of them, types by type_of), attending to `memory` (the encoder's
  // output, one row per source position) where the layers have cross-attention.
  template <class TypeOf>
  StackRun forward(const int* tokens, int T, const TypeOf& type_of,
                   const std::vector<Vector>* memory) const {
    StackRun run;
    run.kept.assign(static_cast<std::size_t>(c.n_layers),
                    std::vector<Position>(static_cast<std::size_t>(T)));
    run.x.assign(static_cast<std::size_t>(T), zeros(D));
    run.embedded.resize(static_cast<std::size_t>(T));
    run.embedding_normed.resize(static_cast<std::size_t>(T));
    std::vector<Vector>& x = run.x;
    // 0. e_i = wte[token_i] · scale + wpe[i + offset] (none under RoPE) + tte[type_i] (BERT);
    //    x_i = LayerNorm_e(e_i) where the model norms its embeddings, else e_i
    for (int i = 0; i < T; ++i) {
      for (int j = 0; j < D; ++j) {
        x[i][j] = w.token_embedding.at(tokens[i], j) * c.embedding_scale;
        if (!rotary) x[i][j] += w.position_embedding.at(i + c.position_offset, j);
        if (!w.token_type_embedding.empty()) x[i][j] += w.token_type_embedding.at(type_of(i), j);
      }
      if (embedding_norm) {
        run.embedded[i] = x[i];
        run.embedding_normed[i] =
            norm(c.norm, x[i], w.embedding_norm_weight, w.embedding_norm_bias, c.norm_epsilon);
        x[i] = run.embedding_normed[i].out;
      }
    }
    for (int l = 0; l < c.n_layers; ++l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = run.kept[static_cast<std::size_t>(l)];
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
        const int last = last_key(i, T);
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
        if (memory != nullptr) attend_memory(lw, *memory, P[i]);
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
    return run;
  }

  // 4c. The cross-attention of one position (norms after): self_mid = mid so far;
  //     β_s = softmax_s(cq_h · ck_h(memory_s) / √d_head); co_h = Σ_s β_s cv_h(memory_s);
  //     mid = LayerNorm_c(self_mid + co · W_Oc + b)
  void attend_memory(const TransformerLayer& lw, const std::vector<Vector>& memory,
                     Position& p) const {
    const int S = static_cast<int>(memory.size());
    p.self_mid = p.mid;
    p.cross_q = times(p.self_mid, lw.cross_query, lw.cross_query_bias);
    p.cross_o.assign(static_cast<std::size_t>(H * dh), 0.0f);
    p.cross_alpha.assign(static_cast<std::size_t>(H), Vector(static_cast<std::size_t>(S)));
    for (int s = 0; s < S; ++s) {  // the keys and values, recomputed: plain, not fast
      const Vector k = times(memory[s], lw.cross_key, lw.cross_key_bias);
      for (int h = 0; h < H; ++h) {
        float score = 0.0f;
        for (int e = 0; e < dh; ++e) score += p.cross_q[h * dh + e] * k[h * dh + e];
        p.cross_alpha[h][s] = score / std::sqrt(static_cast<float>(dh));
      }
    }
    for (int h = 0; h < H; ++h) {
      Vector& beta = p.cross_alpha[h];
      float largest = -INFINITY, sum = 0.0f;
      for (float score : beta) largest = std::max(largest, score);
      for (float& score : beta) {
        score = std::exp(score - largest);
        sum += score;
      }
      for (float& score : beta) score /= sum;
    }
    for (int s = 0; s < S; ++s) {
      const Vector v = times(memory[s], lw.cross_value, lw.cross_value_bias);
      for (int h = 0; h < H; ++h)
        for (int e = 0; e < dh; ++e) p.cross_o[h * dh + e] += p.cross_alpha[h][s] * v[h * dh + e];
    }
    const Vector projected = times(p.cross_o, lw.cross_output, lw.cross_output_bias);
    p.cross_sum = p.self_mid;
    for (std::size_t j = 0; j < projected.size(); ++j) p.cross_sum[j] += projected[j];
    p.nc = norm(c.norm, p.cross_sum, lw.cross_norm_weight, lw.cross_norm_bias, c.norm_epsilon);
    p.mid = p.nc.out;
  }

  // Backward from dx (the gradient of run.x) through every layer and the embeddings; the
  // memory's gradient added into d_memory.
  template <class TypeOf>
  void backward(const StackRun& run, std::vector<Vector> dx, const int* tokens, int T,
                const TypeOf& type_of, const Gradient& g, const std::vector<Vector>* memory,
                std::vector<Vector>* d_memory) const {
    // Under the norm after a sum: dx becomes the sum's gradient.
    const auto back_through_norm = [&](Vector& d, const Vector& sum, const Norm& n,
                                       const VectorView& weight, const VectorView& bias) {
      Vector d_sum = zeros(D);
      norm_back(c.norm, d, sum, n, weight, g(weight.data), g.or_null(bias), d_sum);
      d = d_sum;
    };
    for (int l = c.n_layers - 1; l >= 0; --l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      const auto& P = run.kept[static_cast<std::size_t>(l)];
      // 5. the MLP (dx is then dmid: the residual passes it on, the MLP adds its share)
      if (!attention_only) {
        for (int i = 0; i < T; ++i) {
          if (after)
            back_through_norm(dx[i], P[i].mlp_sum, P[i].n2, lw.mlp_norm_weight, lw.mlp_norm_bias);
          Vector d_after(P[i].after.size(), 0.0f);
          times_back(dx[i], P[i].after, lw.down, g(lw.down.data), g.or_null(lw.down_bias), d_after);
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
          times_back(d_after, P[i].mlp_in, lw.up, g(lw.up.data), g.or_null(lw.up_bias), d_mlp_in);
          if (after)
            for (int j = 0; j < D; ++j) dx[i][j] += d_mlp_in[j];
          else
            norm_back(c.norm, d_mlp_in, P[i].mid, P[i].n2, lw.mlp_norm_weight,
                      g(lw.mlp_norm_weight.data), g.or_null(lw.mlp_norm_bias), dx[i]);
        }
      }
      // 4c. the cross-attention (dx is then dself_mid; the memory's share into d_memory)
      if (memory != nullptr)
        for (int i = 0; i < T; ++i) {
          back_through_norm(dx[i], P[i].cross_sum, P[i].nc, lw.cross_norm_weight,
                            lw.cross_norm_bias);
          memory_back(lw, *memory, P[i], g, dx[i], *d_memory);
        }
      // 4. m = x + o · W_O + b_O (norm after: m = LayerNorm₁(that))
      std::vector<Vector> d_o(static_cast<std::size_t>(T), zeros(QW));
      for (int i = 0; i < T; ++i) {
        if (after)
          back_through_norm(dx[i], P[i].attention_sum, P[i].n1, lw.attention_norm_weight,
                            lw.attention_norm_bias);
        times_back(dx[i], P[i].o, lw.output, g(lw.output.data), g.or_null(lw.output_bias), d_o[i]);
      }
      // 3. the attention (dk and dv of a key/value head gather its query heads' shares)
      std::vector<Vector> dq(static_cast<std::size_t>(T), zeros(QW));
      std::vector<Vector> dk(static_cast<std::size_t>(T), zeros(c.n_kv_heads * dh));
      auto dv = dk;
      for (int i = 0; i < T; ++i) {
        const int last = last_key(i, T);
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
        times_back(dq[i], in, lw.query, g(lw.query.data), g.or_null(lw.query_bias), d_in);
        times_back(dk[i], in, lw.key, g(lw.key.data), g.or_null(lw.key_bias), d_in);
        times_back(dv[i], in, lw.value, g(lw.value.data), g.or_null(lw.value_bias), d_in);
        if (after)
          for (int j = 0; j < D; ++j) dx[i][j] += d_in[j];
        else
          norm_back(c.norm, d_in, P[i].x, P[i].n1, lw.attention_norm_weight,
                    g(lw.attention_norm_weight.data), g.or_null(lw.attention_norm_bias), dx[i]);
      }
    }
    // 0. the embeddings (LayerNorm_e's backward first); a constant position table (Marian's)
    //    has no gradient
    float* positions = rotary ? nullptr : g(w.position_embedding.data);
    for (int i = 0; i < T; ++i) {
      if (embedding_norm)
        back_through_norm(dx[i], run.embedded[i], run.embedding_normed[i], w.embedding_norm_weight,
                          w.embedding_norm_bias);
      for (int j = 0; j < D; ++j) {
        g(w.token_embedding.data)[tokens[i] * w.token_embedding.stride + j] +=
            dx[i][j] * c.embedding_scale;
        if (positions != nullptr)
          positions[(i + c.position_offset) * w.position_embedding.stride + j] += dx[i][j];
        if (!w.token_type_embedding.empty())
          g(w.token_type_embedding.data)[type_of(i) * w.token_type_embedding.stride + j] +=
              dx[i][j];
      }
    }
  }

  // 4c backward for one position: d (the gradient of cross_sum) stays as self_mid's residual
  // share and gets the query's; each memory row gets its key's and value's.
  void memory_back(const TransformerLayer& lw, const std::vector<Vector>& memory, const Position& p,
                   const Gradient& g, Vector& d, std::vector<Vector>& d_memory) const {
    const int S = static_cast<int>(memory.size());
    Vector d_o(p.cross_o.size(), 0.0f), d_q(p.cross_q.size(), 0.0f);
    times_back(d, p.cross_o, lw.cross_output, g(lw.cross_output.data),
               g.or_null(lw.cross_output_bias), d_o);
    for (int h = 0; h < H; ++h) {
      const Vector& beta = p.cross_alpha[h];
      Vector d_beta(static_cast<std::size_t>(S), 0.0f);
      for (int s = 0; s < S; ++s) {
        const Vector v = times(memory[s], lw.cross_value, lw.cross_value_bias);
        Vector d_v(v.size(), 0.0f);
        for (int e = 0; e < dh; ++e) {
          d_beta[s] += d_o[h * dh + e] * v[h * dh + e];
          d_v[h * dh + e] = beta[s] * d_o[h * dh + e];
        }
        times_back(d_v, memory[s], lw.cross_value, g(lw.cross_value.data),
                   g.or_null(lw.cross_value_bias), d_memory[s]);
      }
      float dot = 0.0f;
      for (int s = 0; s < S; ++s) dot += beta[s] * d_beta[s];
      for (int s = 0; s < S; ++s) {
        const float d_score = beta[s] * (d_beta[s] - dot) / std::sqrt(static_cast<float>(dh));
        const Vector k = times(memory[s], lw.cross_key, lw.cross_key_bias);
        Vector d_k(k.size(), 0.0f);
        for (int e = 0; e < dh; ++e) {
          d_q[h * dh + e] += d_score * k[h * dh + e];
          d_k[h * dh + e] = d_score * p.cross_q[h * dh + e];
        }
        times_back(d_k, memory[s], lw.cross_key, g(lw.cross_key.data), g.or_null(lw.cross_key_bias),
                   d_memory[s]);
      }
    }
    times_back(d_q, p.self_mid, lw.cross_query, g(lw.cross_query.data),
               g.or_null(lw.cross_query_bias), d);
  }
};

// The output of one text's last layer x: final = norm_f(x), norm_f(act(x · W_h + b_h)) (BERT's
// MLM head) or x; the loss of each position with a target added into total_loss, and the
// gradient of x returned.
std::vector<Vector> output_backward(const TransformerConfig& c, const TransformerWeights& w,
                                    const std::vector<Vector>& x, const int* targets, int counted,
                                    const Gradient& g, double& total_loss) {
  const int T = static_cast<int>(x.size()), D = c.d_model, V = c.vocab_size;
  const bool head = !w.head_transform.empty(), final_norm = !w.final_norm_weight.empty();
  const FeedForwardKind kind = c.feed_forward;
  std::vector<Vector> dx(static_cast<std::size_t>(T), Vector(static_cast<std::size_t>(D), 0.0f));
  for (int i = 0; i < T; ++i) {
    if (targets[i] < 0) continue;
    Vector head_before, normed = x[i];
    if (head) {
      head_before = times(x[i], w.head_transform, w.head_transform_bias);
      for (std::size_t j = 0; j < normed.size(); ++j) normed[j] = activation(kind, head_before[j]);
    }
    Norm f;
    f.out = normed;
    if (final_norm)
      f = norm(c.norm, normed, w.final_norm_weight, w.final_norm_bias, c.norm_epsilon);
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
    float* d_bias = w.unembedding_bias.empty() ? nullptr : g(w.unembedding_bias.data);
    for (int t = 0; t < V; ++t) {
      float dz = static_cast<float>(std::exp(static_cast<double>(logits[t] - largest)) / sum);
      if (t == targets[i]) dz -= 1.0f;
      dz /= static_cast<float>(counted);
      if (d_bias != nullptr) d_bias[t] += dz;
      for (int j = 0; j < D; ++j) {
        d_final[j] += dz * w.unembedding.at(t, j);
        g(w.unembedding.data)[t * w.unembedding.stride + j] += dz * f.out[j];
      }
    }
    Vector d_normed = d_final;
    if (final_norm) {
      d_normed.assign(static_cast<std::size_t>(D), 0.0f);
      norm_back(c.norm, d_final, normed, f, w.final_norm_weight, g(w.final_norm_weight.data),
                g.or_null(w.final_norm_bias), d_normed);
    }
    if (head) {
      for (int j = 0; j < D; ++j) d_normed[j] *= activation_derivative(kind, head_before[j]);
      times_back(d_normed, x[i], w.head_transform, g(w.head_transform.data),
                 g.or_null(w.head_transform_bias), dx[i]);
    } else {
      for (int j = 0; j < D; ++j) dx[i][j] += d_normed[j];
    }
  }
  return dx;
}

int targets_counted(const TrainingBatch& batch) {
  int counted = 0;
  for (int target : batch.targets) counted += target >= 0 ? 1 : 0;
  return counted;
}

}  // namespace

Result<float> reference_loss_and_gradient(const TransformerConfig& c, const TransformerWeights& w,
                                          const float* values, float* gradient,
                                          const TrainingBatch& batch, bool attention_only) {
  if (Status ok = check_batch(c, batch); !ok) return Result<float>::failure(ok.message());
  if (Status ok = check_trainable(c); !ok) return Result<float>::failure(ok.message());
  if (c.cross_attention)
    return Result<float>::failure("a decoder with cross-attention is read with its encoder");
  if (attention_only && c.norm_after())
    return Result<float>::failure("an attention-only model has its norms before the sublayers");
  const Gradient g{values, std::numeric_limits<std::size_t>::max(), gradient};
  const Stack stack{c, w, attention_only};
  const int T = batch.length, counted = targets_counted(batch);
  double total_loss = 0.0;
  for (int b = 0; b < batch.texts; ++b) {
    const int* tokens = batch.tokens.data() + static_cast<std::ptrdiff_t>(b) * T;
    const auto type_of = [&](int i) {
      return batch.token_types.empty() ? 0 : batch.token_types[static_cast<std::size_t>(b * T + i)];
    };
    const StackRun run = stack.forward(tokens, T, type_of, nullptr);
    std::vector<Vector> dx =
        output_backward(c, w, run.x, batch.targets.data() + static_cast<std::ptrdiff_t>(b) * T,
                        counted, g, total_loss);
    stack.backward(run, std::move(dx), tokens, T, type_of, g, nullptr, nullptr);
  }
  return static_cast<float>(total_loss / counted);
}

Result<float> reference_encoder_decoder_loss_and_gradient(
    const TransformerConfig& encoder_config, const TransformerWeights& encoder,
    const TransformerConfig& decoder_config, const TransformerWeights& decoder, const float* values,
    std::size_t count, float* gradient, const TrainingBatch& batch) {
  if (Status ok = check_batch(decoder_config, batch); !ok)
    return Result<float>::failure(ok.message());
  for (const TransformerConfig* c : {&encoder_config, &decoder_config})
    if (Status ok = check_trainable(*c); !ok) return Result<float>::failure(ok.message());
  if (encoder_config.cross_attention || !decoder_config.cross_attention)
    return Result<float>::failure("an encoder and a decoder with cross-attention are needed");
  const Gradient g{values, count, gradient};
  const Stack encoding{encoder_config, encoder, false}, decoding{decoder_config, decoder, false};
  const int T = batch.length, S = batch.source_length, counted = targets_counted(batch);
  const auto no_types = [](int) { return 0; };
  double total_loss = 0.0;
  for (int b = 0; b < batch.texts; ++b) {
    const int* source = batch.source_tokens.data() + static_cast<std::ptrdiff_t>(b) * S;
    const int* tokens = batch.tokens.data() + static_cast<std::ptrdiff_t>(b) * T;
    // The encoder over the source; its output is the memory every decoder layer attends to.
    const StackRun encoded = encoding.forward(source, S, no_types, nullptr);
    const StackRun decoded = decoding.forward(tokens, T, no_types, &encoded.x);
    std::vector<Vector> dx = output_backward(
        decoder_config, decoder, decoded.x,
        batch.targets.data() + static_cast<std::ptrdiff_t>(b) * T, counted, g, total_loss);
    std::vector<Vector> d_memory(static_cast<std::size_t>(S),
                                 Vector(static_cast<std::size_t>(decoder_config.d_model), 0.0f));
    decoding.backward(decoded, std::move(dx), tokens, T, no_types, g, &encoded.x, &d_memory);
    encoding.backward(encoded, std::move(d_memory), source, S, no_types, g, nullptr, nullptr);
  }
  return static_cast<float>(total_loss / counted);
}

}  // namespace attnviz
