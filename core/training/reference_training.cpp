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

Norm layer_norm(const Vector& x, const VectorView& w, const VectorView& b, float epsilon) {
  const auto d = x.size();
  Norm n;
  for (float value : x) n.mean += value;
  n.mean /= static_cast<float>(d);
  float variance = 0.0f;
  for (float value : x) variance += (value - n.mean) * (value - n.mean);
  variance /= static_cast<float>(d);
  n.rstd = 1.0f / std::sqrt(variance + epsilon);
  n.out.resize(d);
  for (std::size_t j = 0; j < d; ++j) n.out[j] = (x[j] - n.mean) * n.rstd * w.data[j] + b.data[j];
  return n;
}

// dx += the LayerNorm's share of dy; its weight's and bias's gradients += theirs.
void layer_norm_back(const Vector& dy, const Vector& x, const Norm& n, const VectorView& w,
                     float* dw, float* db, Vector& dx) {
  const auto d = x.size();
  Vector xhat(d), dn(d);
  float mean_dn = 0.0f, mean_dn_xhat = 0.0f;
  for (std::size_t j = 0; j < d; ++j) {
    xhat[j] = (x[j] - n.mean) * n.rstd;
    dn[j] = dy[j] * w.data[j];
    mean_dn += dn[j] / static_cast<float>(d);
    mean_dn_xhat += dn[j] * xhat[j] / static_cast<float>(d);
    dw[j] += dy[j] * xhat[j];
    db[j] += dy[j];
  }
  for (std::size_t j = 0; j < d; ++j) dx[j] += n.rstd * (dn[j] - mean_dn - xhat[j] * mean_dn_xhat);
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

struct Position {  // what one position keeps of one layer
  Vector x, mid;
  Norm n1, n2;
  Vector q, k, v;
  std::vector<Vector> alpha;  // per head, over keys 0..i
  Vector o;                   // the heads' outputs, side by side
  Vector before, after;       // the MLP's hidden units
};

}  // namespace

Result<float> reference_loss_and_gradient(const TransformerConfig& c, const TransformerWeights& w,
                                          const float* values, float* gradient,
                                          const TrainingBatch& batch, bool attention_only) {
  if (Status ok = check_batch(c, batch); !ok) return Result<float>::failure(ok.message());
  const int T = batch.length, D = c.d_model, H = c.n_heads, dh = c.d_head, V = c.vocab_size;
  const auto g = [&](const float* weight) { return gradient_of(weight, values, gradient); };
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
    // 0. x_i = wte[token_i] + wpe[i]
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < D; ++j)
        x[i][j] = w.token_embedding.at(tokens[i], j) + w.position_embedding.at(i, j);
    for (int l = 0; l < c.n_layers; ++l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = kept[static_cast<std::size_t>(l)];
      // 1.–2.
      for (int i = 0; i < T; ++i) {
        P[i].x = x[i];
        P[i].n1 =
            layer_norm(x[i], lw.attention_norm_weight, lw.attention_norm_bias, c.norm_epsilon);
        P[i].q = times(P[i].n1.out, lw.query, lw.query_bias);
        P[i].k = times(P[i].n1.out, lw.key, lw.key_bias);
        P[i].v = times(P[i].n1.out, lw.value, lw.value_bias);
      }
      // 3.–5.
      for (int i = 0; i < T; ++i) {
        P[i].o.assign(static_cast<std::size_t>(D), 0.0f);
        P[i].alpha.assign(static_cast<std::size_t>(H), Vector(static_cast<std::size_t>(i + 1)));
        for (int h = 0; h < H; ++h) {
          Vector& alpha = P[i].alpha[h];
          float largest = -INFINITY, sum = 0.0f;
          for (int t = 0; t <= i; ++t) {
            float score = 0.0f;
            for (int e = 0; e < dh; ++e) score += P[i].q[h * dh + e] * P[t].k[h * dh + e];
            alpha[t] = score / std::sqrt(static_cast<float>(dh));
            largest = std::max(largest, alpha[t]);
          }
          for (int t = 0; t <= i; ++t) {
            alpha[t] = std::exp(alpha[t] - largest);
            sum += alpha[t];
          }
          for (int t = 0; t <= i; ++t) alpha[t] /= sum;
          for (int t = 0; t <= i; ++t)
            for (int e = 0; e < dh; ++e) P[i].o[h * dh + e] += alpha[t] * P[t].v[h * dh + e];
        }
        const Vector projected = times(P[i].o, lw.output, lw.output_bias);
        P[i].mid = x[i];
        for (int j = 0; j < D; ++j) P[i].mid[j] += projected[j];
        x[i] = P[i].mid;
        if (!attention_only) {
          P[i].n2 = layer_norm(P[i].mid, lw.mlp_norm_weight, lw.mlp_norm_bias, c.norm_epsilon);
          P[i].before = times(P[i].n2.out, lw.up, lw.up_bias);
          P[i].after = P[i].before;
          for (float& u : P[i].after) u = gelu(u);
          const Vector mlp = times(P[i].after, lw.down, lw.down_bias);
          for (int j = 0; j < D; ++j) x[i][j] += mlp[j];
        }
      }
    }
    // ---- the loss, and backward from it ----
    std::vector<Vector> dx(static_cast<std::size_t>(T), Vector(static_cast<std::size_t>(D), 0.0f));
    for (int i = 0; i < T; ++i) {
      const Norm f = layer_norm(x[i], w.final_norm_weight, w.final_norm_bias, c.norm_epsilon);
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
      layer_norm_back(d_final, x[i], f, w.final_norm_weight, g(w.final_norm_weight.data),
                      g(w.final_norm_bias.data), dx[i]);
    }
    for (int l = c.n_layers - 1; l >= 0; --l) {
      const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
      auto& P = kept[static_cast<std::size_t>(l)];
      // 5. the MLP (dx is then dmid: the residual passes it on, the MLP adds its share)
      if (!attention_only) {
        for (int i = 0; i < T; ++i) {
          Vector d_after(P[i].after.size(), 0.0f);
          times_back(dx[i], P[i].after, lw.down, g(lw.down.data), g(lw.down_bias.data), d_after);
          for (std::size_t u = 0; u < d_after.size(); ++u)
            d_after[u] *= gelu_derivative(P[i].before[u]);
          Vector d_n2(static_cast<std::size_t>(D), 0.0f);
          times_back(d_after, P[i].n2.out, lw.up, g(lw.up.data), g(lw.up_bias.data), d_n2);
          layer_norm_back(d_n2, P[i].mid, P[i].n2, lw.mlp_norm_weight, g(lw.mlp_norm_weight.data),
                          g(lw.mlp_norm_bias.data), dx[i]);
        }
      }
      // 4. m = x + o · W_O + b_O
      std::vector<Vector> d_o(static_cast<std::size_t>(T),
                              Vector(static_cast<std::size_t>(D), 0.0f));
      for (int i = 0; i < T; ++i)
        times_back(dx[i], P[i].o, lw.output, g(lw.output.data), g(lw.output_bias.data), d_o[i]);
      // 3. the attention
      std::vector<Vector> dq(static_cast<std::size_t>(T),
                             Vector(static_cast<std::size_t>(D), 0.0f));
      auto dk = dq, dv = dq;
      for (int i = 0; i < T; ++i) {
        for (int h = 0; h < H; ++h) {
          const Vector& alpha = P[i].alpha[h];
          Vector d_alpha(static_cast<std::size_t>(i + 1), 0.0f);
          for (int t = 0; t <= i; ++t)
            for (int e = 0; e < dh; ++e) {
              d_alpha[t] += d_o[i][h * dh + e] * P[t].v[h * dh + e];
              dv[t][h * dh + e] += alpha[t] * d_o[i][h * dh + e];
            }
          float dot = 0.0f;
          for (int t = 0; t <= i; ++t) dot += alpha[t] * d_alpha[t];
          for (int t = 0; t <= i; ++t) {
            const float d_score = alpha[t] * (d_alpha[t] - dot) / std::sqrt(static_cast<float>(dh));
            for (int e = 0; e < dh; ++e) {
              dq[i][h * dh + e] += d_score * P[t].k[h * dh + e];
              dk[t][h * dh + e] += d_score * P[i].q[h * dh + e];
            }
          }
        }
      }
      // 2.–1. q, k, v = LayerNorm₁(x) · W + b
      for (int i = 0; i < T; ++i) {
        Vector d_n1(static_cast<std::size_t>(D), 0.0f);
        times_back(dq[i], P[i].n1.out, lw.query, g(lw.query.data), g(lw.query_bias.data), d_n1);
        times_back(dk[i], P[i].n1.out, lw.key, g(lw.key.data), g(lw.key_bias.data), d_n1);
        times_back(dv[i], P[i].n1.out, lw.value, g(lw.value.data), g(lw.value_bias.data), d_n1);
        layer_norm_back(d_n1, P[i].x, P[i].n1, lw.attention_norm_weight,
                        g(lw.attention_norm_weight.data), g(lw.attention_norm_bias.data), dx[i]);
      }
    }
    // 0. the embeddings
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < D; ++j) {
        g(w.token_embedding.data)[tokens[i] * w.token_embedding.stride + j] += dx[i][j];
        g(w.position_embedding.data)[i * w.position_embedding.stride + j] += dx[i][j];
      }
  }
  return static_cast<float>(total_loss / counted);
}

}  // namespace attnviz
