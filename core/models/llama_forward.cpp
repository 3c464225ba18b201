#include "core/models/llama_forward.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz {
namespace {

// out = weight ⊙ x / rms(x)   (n)
void rmsnorm(float* out, const float* x, const float* weight, int n) {
  float sum_of_squares = 0.0f;
  for (int j = 0; j < n; ++j) sum_of_squares += x[j] * x[j];
  sum_of_squares /= static_cast<float>(n);
  sum_of_squares += 1e-5f;
  const float scale = 1.0f / std::sqrt(sum_of_squares);
  for (int j = 0; j < n; ++j) out[j] = weight[j] * (scale * x[j]);
}

// out = W·x, W (rows, cols) row-major.
void matmul(float* out, const float* x, const float* weight, int cols, int rows) {
  for (int i = 0; i < rows; ++i) {
    float sum = 0.0f;
    const float* row = weight + static_cast<std::ptrdiff_t>(i) * cols;
    for (int j = 0; j < cols; ++j) sum += row[j] * x[j];
    out[i] = sum;
  }
}

void softmax(float* x, int n) {
  const float largest = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - largest);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

}  // namespace

LlamaForward::LlamaForward(const Llama2cModel& model) : model_(model) {
  const Llama2cConfig& c = model.config();
  const std::size_t cache = static_cast<std::size_t>(c.n_layers) *
                            static_cast<std::size_t>(c.seq_len) *
                            static_cast<std::size_t>(c.kv_dim());
  key_cache_.assign(cache, 0.0f);
  value_cache_.assign(cache, 0.0f);
}

const std::vector<float>& LlamaForward::attention(int layer, int head, int position) const {
  const Llama2cConfig& c = model_.config();
  return attention_[(static_cast<std::size_t>(position) * static_cast<std::size_t>(c.n_layers) +
                     static_cast<std::size_t>(layer)) *
                        static_cast<std::size_t>(c.n_heads) +
                    static_cast<std::size_t>(head)];
}

Result<std::vector<float>> LlamaForward::step(int token, int position) {
  const Llama2cConfig& c = model_.config();
  const Llama2cWeights& w = model_.weights();
  if (position != positions_)
    return Status::error("position " + std::to_string(position) + " after " +
                         std::to_string(positions_) + " positions: tokens go in order");
  if (position >= c.seq_len)
    return Status::error("the model's context holds " + std::to_string(c.seq_len) + " tokens");
  if (token < 0 || token >= c.vocab_size)
    return Status::error("token " + std::to_string(token) + " is not in the vocabulary of " +
                         std::to_string(c.vocab_size));
  const int dim = c.dim, kv_dim = c.kv_dim(), hidden = c.hidden_dim, head_size = c.head_size();
  const int kv_share = c.n_heads / c.n_kv_heads;
  std::vector<float> x(w.token_embedding + static_cast<std::ptrdiff_t>(token) * dim,
                       w.token_embedding + static_cast<std::ptrdiff_t>(token + 1) * dim);  // (dim)
  std::vector<float> xb(dim), xb2(dim), q(dim), hb(hidden), hb2(hidden), scores(position + 1);
  for (int l = 0; l < c.n_layers; ++l) {
    // 1. Attention's input, normalized; q, k and v, k and v into the cache at this position.
    rmsnorm(xb.data(), x.data(), w.rms_att + static_cast<std::ptrdiff_t>(l) * dim, dim);
    const std::size_t cache_at = (static_cast<std::size_t>(l) * c.seq_len + position) * kv_dim;
    float* k = key_cache_.data() + cache_at;    // (kv_dim)
    float* v = value_cache_.data() + cache_at;  // (kv_dim)
    matmul(q.data(), xb.data(), w.wq + static_cast<std::ptrdiff_t>(l) * dim * dim, dim, dim);
    matmul(k, xb.data(), w.wk + static_cast<std::ptrdiff_t>(l) * kv_dim * dim, dim, kv_dim);
    matmul(v, xb.data(), w.wv + static_cast<std::ptrdiff_t>(l) * kv_dim * dim, dim, kv_dim);
    // 2. RoPE: each adjacent pair of a head turned by position · frequency.
    for (int i = 0; i < dim; i += 2) {
      const int head_dim = i % head_size;
      const float frequency =
          1.0f / std::pow(10000.0f, static_cast<float>(head_dim) / static_cast<float>(head_size));
      const float angle = static_cast<float>(position) * frequency;
      const float cos_a = std::cos(angle), sin_a = std::sin(angle);
      const int rotations = i < kv_dim ? 2 : 1;  // q always; k where it has the pair
      for (int r = 0; r < rotations; ++r) {
        float* vec = r == 0 ? q.data() : k;
        const float v0 = vec[i], v1 = vec[i + 1];
        vec[i] = v0 * cos_a - v1 * sin_a;
        vec[i + 1] = v0 * sin_a + v1 * cos_a;
      }
    }
    // 3. Each query head against the keys so far; α kept; its output into xb.
    for (int h = 0; h < c.n_heads; ++h) {
      const float* q_head = q.data() + static_cast<std::ptrdiff_t>(h) * head_size;
      const int kv_offset = (h / kv_share) * head_size;
      for (int t = 0; t <= position; ++t) {
        const float* k_t =
            key_cache_.data() + (static_cast<std::size_t>(l) * c.seq_len + t) * kv_dim + kv_offset;
        float score = 0.0f;
        for (int i = 0; i < head_size; ++i) score += q_head[i] * k_t[i];
        scores[static_cast<std::size_t>(t)] = score / std::sqrt(static_cast<float>(head_size));
      }
      softmax(scores.data(), position + 1);
      attention_.emplace_back(scores.begin(), scores.begin() + position + 1);
      float* out = xb.data() + static_cast<std::ptrdiff_t>(h) * head_size;
      std::fill(out, out + head_size, 0.0f);
      for (int t = 0; t <= position; ++t) {
        const float* v_t = value_cache_.data() +
                           (static_cast<std::size_t>(l) * c.seq_len + t) * kv_dim + kv_offset;
        const float a = scores[static_cast<std::size_t>(t)];
        for (int i = 0; i < head_size; ++i) out[i] += a * v_t[i];
      }
    }
    // 4. W_O, the residual; the SwiGLU feed-forward, the residual.
    matmul(xb2.data(), xb.data(), w.wo + static_cast<std::ptrdiff_t>(l) * dim * dim, dim, dim);
    for (int i = 0; i < dim; ++i) x[i] += xb2[i];
    rmsnorm(xb.data(), x.data(), w.rms_ffn + static_cast<std::ptrdiff_t>(l) * dim, dim);
    matmul(hb.data(), xb.data(), w.w1 + static_cast<std::ptrdiff_t>(l) * dim * hidden, dim, hidden);
    matmul(hb2.data(), xb.data(), w.w3 + static_cast<std::ptrdiff_t>(l) * dim * hidden, dim,
           hidden);
    for (int i = 0; i < hidden; ++i) {
      const float silu = hb[i] * (1.0f / (1.0f + std::exp(-hb[i])));
      hb[i] = silu * hb2[i];
    }
    matmul(xb.data(), hb.data(), w.w2 + static_cast<std::ptrdiff_t>(l) * dim * hidden, hidden, dim);
    for (int i = 0; i < dim; ++i) x[i] += xb[i];
  }
  // 5. The final norm and the logits.
  rmsnorm(x.data(), x.data(), w.rms_final, dim);
  std::vector<float> logits(static_cast<std::size_t>(c.vocab_size));
  matmul(logits.data(), x.data(), w.classifier, dim, c.vocab_size);
  ++positions_;
  return logits;
}

int argmax(const std::vector<float>& logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); ++i)
    if (logits[static_cast<std::size_t>(i)] > logits[static_cast<std::size_t>(best)]) best = i;
  return best;
}

}  // namespace attnviz
