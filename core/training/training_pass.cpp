#include "core/training/training_pass.hpp"

#include "core/models/blas.hpp"
#include "core/models/rope.hpp"
#include "core/training/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz {
namespace {

using ConstStrided = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;
using Strided = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
using ConstRow = Eigen::Map<const RowVector>;
using Row = Eigen::Map<RowVector>;

ConstRow map(const VectorView& b) {
  return {b.data, b.size};
}

// The gradient of a weight matrix or vector: the same place in the gradient buffer. A view
// outside values[0, count) is a constant (Marian's sinusoid positions, final_logits_bias), not a
// weight: it has no gradient.
struct Gradients {
  const float* values;
  std::size_t count;
  float* gradient;
  bool has(const float* weight) const {
    return weight >= values && static_cast<std::size_t>(weight - values) < count;
  }
  float* gradient_of(const float* weight) const {
    return attnviz::gradient_of(weight, values, gradient);
  }
  Strided of(const MatrixView& w) const {
    return {gradient_of(w.data), w.rows, w.cols, Eigen::OuterStride<>(w.stride)};
  }
  Row of(const VectorView& b) const { return {gradient_of(b.data), b.size}; }
  // The gradient of a vector the model may not have (a bias under RMSNorm): null then.
  float* pointer(const VectorView& b) const { return b.empty() ? nullptr : gradient_of(b.data); }
};

// Products of at least this many multiply-adds go to blas::gemm (OpenBLAS's sgemm where it is
// installed: GPT-2 small's at 128 tokens run at about 1.3 times Eigen's speed there); smaller
// ones stay in Eigen, so that the small models a class trains (width 32, 512 rows: the shipped
// induction-tiny) are the same numbers bit for bit on every machine, with OpenBLAS or without.
constexpr double kBlasProduct = 8.0 * 1024 * 1024;

// A row-major operand of a product: a matrix, a block of one, a weight's view.
struct Operand {
  const float* data;
  int rows, cols;
  std::ptrdiff_t stride;
};
template <class M>
Operand operand(const M& m) {
  return {m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()), m.outerStride()};
}
Operand operand(const MatrixView& w) {
  return {w.data, w.rows, w.cols, w.stride};
}
enum class Into { Set, Add };
enum Transpose : bool { kAsIs = false, kTransposed = true };

// out = op(a) · op(b), or out += it (op: as is or transposed). `out` is a matrix (resized when
// set) or a block or view of the right shape.
template <class Out>
void product(Out&& out, Into into, Operand a, Transpose ta, Operand b, Transpose tb) {
  const int m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols, n = tb ? b.rows : b.cols;
  if constexpr (requires { out.resize(m, n); })
    if (into == Into::Set) out.resize(m, n);
  if (static_cast<double>(m) * n * k >= kBlasProduct) {
    blas::gemm(ta, tb, m, n, k, 1.0f, a.data, a.stride, b.data, b.stride,
               into == Into::Add ? 1.0f : 0.0f, out.data(), out.outerStride());
    return;
  }
  const ConstStrided left(a.data, a.rows, a.cols, Eigen::OuterStride<>(a.stride));
  const ConstStrided right(b.data, b.rows, b.cols, Eigen::OuterStride<>(b.stride));
  const auto assign = [&](const auto& result) {
    if (into == Into::Add)
      out.noalias() += result;
    else
      out.noalias() = result;
  };
  if (ta && tb)
    assign(left.transpose() * right.transpose());
  else if (ta)
    assign(left.transpose() * right);
  else if (tb)
    assign(left * right.transpose());
  else
    assign(left * right);
}

// Adds a bias the model may not have to every row.
void add_bias(Matrix& y, const VectorView& b) {
  if (!b.empty()) y.rowwise() += map(b);
}
// A bias's gradient: the column sums of dy (nothing for a bias the model does not have, or a
// constant).
void add_bias_gradient(const Gradients& g, const VectorView& b, const Matrix& dy) {
  if (!b.empty() && g.has(b.data)) g.of(b) += dy.colwise().sum();
}

float sigmoid(float u) {
  return 1.0f / (1.0f + std::exp(-u));
}

constexpr float kGeluScale = 0.7978845608028654f;       // √(2/π)
constexpr float kInverseSqrt2 = 0.7071067811865476f;    // 1/√2
constexpr float kInverseSqrt2Pi = 0.3989422804014327f;  // 1/√(2π)

// The MLP's (and BERT's MLM head's) activation, ungated: GELU's tanh form (GPT-2), its erf form
// (BERT), SiLU (Marian). SwiGLU's gate is SiLU.
float activation(FeedForwardKind kind, float u) {
  switch (kind) {
    case FeedForwardKind::GeluErf:
      return 0.5f * u * (1.0f + std::erf(u * kInverseSqrt2));
    case FeedForwardKind::Silu:
    case FeedForwardKind::SwiGLU:
      return u * sigmoid(u);
    case FeedForwardKind::GeluTanh:
      break;
  }
  return 0.5f * u * (1.0f + std::tanh(kGeluScale * (u + 0.044715f * u * u * u)));
}
// Its derivative:
//   GELU (tanh)  ½(1 + t) + ½u(1 − t²)·√(2/π)(1 + 3·0.044715u²), t = tanh(√(2/π)(u + 0.044715u³))
//   GELU (erf)   ½(1 + erf(u/√2)) + u·φ(u), φ the standard normal density
//   SiLU         σ(u)(1 + u(1 − σ(u)))
float activation_derivative(FeedForwardKind kind, float u) {
  switch (kind) {
    case FeedForwardKind::GeluErf:
      return 0.5f * (1.0f + std::erf(u * kInverseSqrt2)) +
             u * kInverseSqrt2Pi * std::exp(-0.5f * u * u);
    case FeedForwardKind::Silu:
    case FeedForwardKind::SwiGLU: {
      const float s = sigmoid(u);
      return s * (1.0f + u * (1.0f - s));
    }
    case FeedForwardKind::GeluTanh:
      break;
  }
  const float t = std::tanh(kGeluScale * (u + 0.044715f * u * u * u));
  return 0.5f * (1.0f + t) +
         0.5f * u * (1.0f - t * t) * kGeluScale * (1.0f + 3.0f * 0.044715f * u * u);
}

// The norm before a sublayer, by row, keeping each row's mean (0 under RMSNorm) and 1/σ:
//   LayerNorm  y = (x − mean) / √(var + ε) · w + b
//   RMSNorm    y = x / √(mean(x²) + ε) · w
void norm(NormKind kind, const Matrix& x, const VectorView& w, const VectorView& b, float epsilon,
          Matrix& y, std::vector<float>& mean, std::vector<float>& rstd) {
  const int n = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  y.resize(n, d);
  mean.resize(static_cast<std::size_t>(n));
  rstd.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const float* row = x.row(i).data();
    float m = 0.0f;
    if (kind == NormKind::LayerNorm) {
      for (int j = 0; j < d; ++j) m += row[j];
      m /= static_cast<float>(d);
    }
    float variance = 0.0f;
    for (int j = 0; j < d; ++j) variance += (row[j] - m) * (row[j] - m);
    variance /= static_cast<float>(d);
    const float s = 1.0f / std::sqrt(variance + epsilon);
    float* out = y.row(i).data();
    if (b.empty())
      for (int j = 0; j < d; ++j) out[j] = (row[j] - m) * s * w.data[j];
    else
      for (int j = 0; j < d; ++j) out[j] = (row[j] - m) * s * w.data[j] + b.data[j];
    mean[static_cast<std::size_t>(i)] = m;
    rstd[static_cast<std::size_t>(i)] = s;
  }
}

// The norm's backward: dx += its share of dy; dw, db (null: no bias) += theirs.
//   x̂ = (x − mean) · rstd, n = dy ⊙ w:
//   LayerNorm  dx = rstd · (n − mean(n) − x̂ · mean(n ⊙ x̂))
//   RMSNorm    dx = rstd · (n − x̂ · mean(n ⊙ x̂))            (the mean is not subtracted)
void norm_backward(NormKind kind, const Matrix& dy, const Matrix& x, const std::vector<float>& mean,
                   const std::vector<float>& rstd, const VectorView& w, float* dw, float* db,
                   Matrix& dx) {
  const int n = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  for (int i = 0; i < n; ++i) {
    const float* in = x.row(i).data();
    const float* grad = dy.row(i).data();
    const float m = mean[static_cast<std::size_t>(i)], s = rstd[static_cast<std::size_t>(i)];
    float mean_n = 0.0f, mean_n_xhat = 0.0f;
    for (int j = 0; j < d; ++j) {
      const float xhat = (in[j] - m) * s, dn = grad[j] * w.data[j];
      mean_n += dn;
      mean_n_xhat += dn * xhat;
      dw[j] += grad[j] * xhat;
    }
    if (db != nullptr)
      for (int j = 0; j < d; ++j) db[j] += grad[j];
    mean_n = kind == NormKind::LayerNorm ? mean_n / static_cast<float>(d) : 0.0f;
    mean_n_xhat /= static_cast<float>(d);
    float* out = dx.row(i).data();
    for (int j = 0; j < d; ++j) {
      const float xhat = (in[j] - m) * s, dn = grad[j] * w.data[j];
      out[j] += s * (dn - mean_n - xhat * mean_n_xhat);
    }
  }
}

// Under the norm after a sum (y = norm(sum)): d_stream, the gradient of y, becomes the sum's
// (d_sum is scratch); the norm's weight and bias get theirs.
void norm_backward_of_sum(NormKind kind, const Gradients& g, const Matrix& sum,
                          const std::vector<float>& mean, const std::vector<float>& rstd,
                          const VectorView& weight, const VectorView& bias, Matrix& d_stream,
                          Matrix& d_sum) {
  d_sum.setZero(sum.rows(), sum.cols());
  norm_backward(kind, d_stream, sum, mean, rstd, weight, g.pointer(weight), g.pointer(bias), d_sum);
  d_stream.swap(d_sum);
}

// Softmax over keys 0..last of each row of `scores` (scaled), into `attention`'s rows; the keys
// past `last` (the future, for a decoder) keep 0. Every key when not causal (an encoder's, and
// a cross-attention's (T, S) scores).
template <class Scores, class Attention>
void softmax_rows(const Scores& scores, float scale, bool causal, Attention& attention) {
  const auto T = static_cast<int>(scores.rows()), S = static_cast<int>(scores.cols());
  for (int i = 0; i < T; ++i) {
    const int last = causal ? i : S - 1;
    float largest = -std::numeric_limits<float>::infinity();
    for (int t = 0; t <= last; ++t) largest = std::max(largest, scores(i, t) * scale);
    float sum = 0.0f;
    for (int t = 0; t <= last; ++t) {
      const float e = std::exp(scores(i, t) * scale - largest);
      attention(i, t) = e;
      sum += e;
    }
    for (int t = 0; t <= last; ++t) attention(i, t) /= sum;
  }
}

// One head's attention (self or cross), as the header's step 3: scores = q · kᵀ (T, S),
// attention = their softmax by row (scaled; a causal head's keys after the query 0), and its
// output heads = attention · v (T, d_head).
template <class Q, class K, class V, class Heads>
void attention_forward(const Q& q, const K& k, const V& v, bool causal, float scale, Matrix& scores,
                       Eigen::Map<Matrix> attention, Heads&& heads) {
  scores.noalias() = q * k.transpose();  // (T, S)
  softmax_rows(scores, scale, causal, attention);
  heads.noalias() = attention * v;
}

// One head's attention backward (self or cross), as the header's step 3: from d_out, the
// gradient of its output heads = attention · v (attention (T, S) row-major, its keys after
// `last` 0 for a causal head), adds the gradients of q (T, d_head), k and v (S, d_head).
//   dattention = d_out · vᵀ; dv += attentionᵀ · d_out;
//   dscores = attention ⊙ (dattention − rowsum(attention ⊙ dattention)) · scale;
//   dq += dscores · k; dk += dscoresᵀ · q
template <class Q, class K, class V, class DOut, class DQ, class DK, class DV>
void attention_backward(const Eigen::Map<const Matrix>& attention, const Q& q, const K& k,
                        const V& v, const DOut& d_out, bool causal, float scale, Matrix& d_scores,
                        DQ&& d_q, DK&& d_k, DV&& d_v) {
  const auto T = static_cast<int>(attention.rows()), S = static_cast<int>(attention.cols());
  d_v.noalias() += attention.transpose() * d_out;
  d_scores.noalias() = d_out * v.transpose();  // dattention (T, S)
  for (int i = 0; i < T; ++i) {
    const int last = causal ? i : S - 1;
    float dot = 0.0f;
    for (int t = 0; t <= last; ++t) dot += attention(i, t) * d_scores(i, t);
    for (int t = 0; t <= last; ++t)
      d_scores(i, t) = attention(i, t) * (d_scores(i, t) - dot) * scale;
    for (int t = last + 1; t < S; ++t) d_scores(i, t) = 0.0f;
  }
  d_q.noalias() += d_scores * k;
  d_k.noalias() += d_scores.transpose() * q;
}

// The MLP's hidden units from its input: before = in · W_up (+ b); after = act(before), or
// SwiGLU's silu(in · W_gate) ⊙ before.
void mlp_forward(FeedForwardKind kind, const Matrix& in, const TransformerLayer& lw, Matrix& before,
                 Matrix& gate, Matrix& after) {
  product(before, Into::Set, operand(in), kAsIs, operand(lw.up), kAsIs);  // (N, d_ff)
  add_bias(before, lw.up_bias);
  if (kind == FeedForwardKind::SwiGLU) {
    product(gate, Into::Set, operand(in), kAsIs, operand(lw.gate), kAsIs);  // (N, d_ff)
    after = gate.unaryExpr([](float u) { return u * sigmoid(u); });
    after.array() *= before.array();
  } else {
    after = before.unaryExpr([kind](float u) { return activation(kind, u); });
  }
}

}  // namespace

Status check_batch(const TransformerConfig& c, const TrainingBatch& batch) {
  if (batch.texts < 1 || batch.length < 1)
    return Status::error("a batch needs at least one text of at least one token");
  if (batch.length > c.context)
    return Status::error("a text of " + std::to_string(batch.length) +
                         " tokens is longer than the model's context (" +
                         std::to_string(c.context) + ")");
  const auto n = static_cast<std::size_t>(batch.texts) * static_cast<std::size_t>(batch.length);
  if (batch.tokens.size() != n || batch.targets.size() != n)
    return Status::error("a batch's tokens and targets must be texts × length");
  for (std::size_t i = 0; i < n; ++i) {
    if (batch.tokens[i] < 0 || batch.tokens[i] >= c.vocab_size)
      return Status::error("token id " + std::to_string(batch.tokens[i]) +
                           " is outside the vocabulary (" + std::to_string(c.vocab_size) + ")");
    if (batch.targets[i] < -1 || batch.targets[i] >= c.vocab_size)
      return Status::error("target id " + std::to_string(batch.targets[i]) +
                           " is outside the vocabulary (" + std::to_string(c.vocab_size) + ")");
  }
  if (!batch.token_types.empty()) {
    if (batch.token_types.size() != n)
      return Status::error("a batch's token types must be texts × length");
    for (int type : batch.token_types)
      if (type != 0 && (type < 0 || type >= c.token_types))
        return Status::error("token type " + std::to_string(type) + ": the model has " +
                             (c.token_types > 0 ? std::to_string(c.token_types) : "no") +
                             " token types");
  }
  if (c.cross_attention) {
    if (batch.source_length < 1)
      return Status::error("an encoder–decoder's batch needs a source of at least one token");
    if (batch.source_length > c.context)
      return Status::error("a source of " + std::to_string(batch.source_length) +
                           " tokens is longer than the model's context (" +
                           std::to_string(c.context) + ")");
    if (batch.source_tokens.size() !=
        static_cast<std::size_t>(batch.texts) * static_cast<std::size_t>(batch.source_length))
      return Status::error("a batch's source tokens must be texts × source length");
    for (int id : batch.source_tokens)
      if (id < 0 || id >= c.vocab_size)
        return Status::error("source token id " + std::to_string(id) +
                             " is outside the vocabulary (" + std::to_string(c.vocab_size) + ")");
  } else if (batch.source_length != 0 || !batch.source_tokens.empty()) {
    return Status::error("the model reads no source: it is not an encoder–decoder");
  }
  if (std::none_of(batch.targets.begin(), batch.targets.end(), [](int t) { return t >= 0; }))
    return Status::error("nothing to predict: a text needs at least two tokens");
  return Status::success();
}

TrainingBatch next_token_batch(const std::vector<int>& tokens) {
  TrainingBatch batch;
  batch.texts = 1;
  batch.length = static_cast<int>(tokens.size());
  batch.tokens = tokens;
  batch.targets.assign(tokens.size(), -1);
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) batch.targets[i] = tokens[i + 1];
  return batch;
}

Result<TrainingPass> TrainingPass::make(const TransformerConfig& config, bool attention_only) {
  if (Status ok = check_trainable(config); !ok) return Result<TrainingPass>::failure(ok.message());
  if (config.cross_attention)
    return Result<TrainingPass>::failure(
        "a decoder with cross-attention is trained with its encoder (make_encoder_decoder)");
  if (attention_only && config.norm_after())
    return Result<TrainingPass>::failure(
        "an attention-only model is trained with its norms before the sublayers (GPT-2's layout)");
  TrainingPass pass;
  pass.config_ = config;
  pass.attention_only_ = attention_only;
  pass.layers_.resize(static_cast<std::size_t>(config.n_layers));
  return pass;
}

Result<TrainingPass> TrainingPass::make_encoder_decoder(const TransformerConfig& encoder,
                                                        const TransformerConfig& decoder) {
  if (Status ok = check_trainable(encoder); !ok) return Result<TrainingPass>::failure(ok.message());
  if (Status ok = check_trainable(decoder); !ok) return Result<TrainingPass>::failure(ok.message());
  if (encoder.cross_attention || encoder.causal() || !decoder.cross_attention ||
      encoder.d_model != decoder.d_model || encoder.vocab_size != decoder.vocab_size)
    return Result<TrainingPass>::failure(
        "an encoder–decoder is an encoder (attention both ways) and a decoder with "
        "cross-attention, of one width and one vocabulary");
  Result<TrainingPass> encoder_pass = make(encoder);
  if (!encoder_pass) return encoder_pass;
  TrainingPass pass;
  pass.config_ = decoder;
  pass.layers_.resize(static_cast<std::size_t>(decoder.n_layers));
  pass.encoder_ = std::make_unique<TrainingPass>(std::move(*encoder_pass));
  return pass;
}

const float* TrainingPass::attention(int text, int layer, int head) const {
  const std::size_t T = static_cast<std::size_t>(length_);
  return layers_[static_cast<std::size_t>(layer)].attention.data() +
         (static_cast<std::size_t>(text) * static_cast<std::size_t>(config_.n_heads) +
          static_cast<std::size_t>(head)) *
             T * T;
}

void TrainingPass::forward_stack(const TransformerWeights& w, const int* tokens, const int* types,
                                 int B, int T, const Matrix* memory, int S) {
  const TransformerConfig& c = config_;
  const int N = B * T, D = c.d_model, H = c.n_heads, dh = c.d_head, QW = H * dh,
            KVW = c.n_kv_heads * dh;
  texts_ = B;
  length_ = T;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  const bool rotary = c.positions == PositionKind::Rotary, after = c.norm_after();

  // 0. x = wte[token] · scale (+ wpe[position + offset]) (+ tte[type])                  (N, d)
  //    then LayerNorm_e(x) where the model norms its embeddings (BERT, BART)
  Matrix x(N, D);
  for (int i = 0; i < N; ++i) {
    const float* token = w.token_embedding.data + tokens[i] * w.token_embedding.stride;
    for (int j = 0; j < D; ++j) x(i, j) = token[j] * c.embedding_scale;
    if (!rotary) {
      const float* position =
          w.position_embedding.data + (i % T + c.position_offset) * w.position_embedding.stride;
      for (int j = 0; j < D; ++j) x(i, j) += position[j];
    }
    if (!w.token_type_embedding.empty()) {
      const float* type = w.token_type_embedding.data +
                          (types == nullptr ? 0 : types[i]) * w.token_type_embedding.stride;
      for (int j = 0; j < D; ++j) x(i, j) += type[j];
    }
  }
  if (!w.embedding_norm_weight.empty()) {
    embedded_ = std::move(x);
    norm(c.norm, embedded_, w.embedding_norm_weight, w.embedding_norm_bias, c.norm_epsilon, x,
         mean_e_, rstd_e_);
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
    Layer& a = layers_[static_cast<std::size_t>(l)];
    a.input = std::move(x);
    // 1. normalized = norm₁(x) (norm before); after, the sublayer reads x itself
    if (!after)
      norm(c.norm, a.input, lw.attention_norm_weight, lw.attention_norm_bias, c.norm_epsilon,
           a.normalized, a.mean1, a.rstd1);
    const Matrix& attention_in = after ? a.input : a.normalized;
    // 2. q (N, H · d_head), k, v (N, KV · d_head); RoPE turns q and k by position
    product(a.q, Into::Set, operand(attention_in), kAsIs, operand(lw.query), kAsIs);
    add_bias(a.q, lw.query_bias);
    product(a.k, Into::Set, operand(attention_in), kAsIs, operand(lw.key), kAsIs);
    add_bias(a.k, lw.key_bias);
    product(a.v, Into::Set, operand(attention_in), kAsIs, operand(lw.value), kAsIs);
    add_bias(a.v, lw.value_bias);
    if (rotary) {
      for (int i = 0; i < N; ++i) {
        rotate_pairs(a.q.row(i).data(), QW, dh, i % T, c.rope_theta, 1.0f);
        rotate_pairs(a.k.row(i).data(), KVW, dh, i % T, c.rope_theta, 1.0f);
      }
    }
    // 3. per text and head: attention = softmax(q kᵀ / √d_head, causal for a decoder);
    //    heads = attention · v (query head h reads key/value head kv_head_of(h))
    a.attention.assign(static_cast<std::size_t>(B) * H * T * T, 0.0f);
    a.heads.resize(N, QW);
    for (int b = 0; b < B; ++b) {
      for (int h = 0; h < H; ++h) {
        const int kv = c.kv_head_of(h);
        const auto q = a.q.block(b * T, h * dh, T, dh);
        const auto k = a.k.block(b * T, kv * dh, T, dh);
        const auto v = a.v.block(b * T, kv * dh, T, dh);
        attention_forward(
            q, k, v, c.causal(), scale, scores_,
            Eigen::Map<Matrix>(a.attention.data() + (static_cast<std::size_t>(b) * H + h) * T * T,
                               T, T),
            a.heads.block(b * T, h * dh, T, dh));
      }
    }
    // 4. mid = x + heads · W_O (+ b_O); norm after: mid = norm₁(that sum)
    Matrix& attention_sum = after ? a.attention_sum : a.mid;
    attention_sum = a.input;
    product(attention_sum, Into::Add, operand(a.heads), kAsIs, operand(lw.output), kAsIs);
    add_bias(attention_sum, lw.output_bias);
    if (after)
      norm(c.norm, a.attention_sum, lw.attention_norm_weight, lw.attention_norm_bias,
           c.norm_epsilon, memory != nullptr ? a.self_mid : a.mid, a.mean1, a.rstd1);
    // 4c. An encoder–decoder's decoder (norm after, check_trainable): the cross-attention to
    //     the encoder's output, queries from self_mid, keys and values from the memory, every
    //     source position seen; mid = norm_c(self_mid + cross_heads · W_Oc + b)
    if (memory != nullptr) cross_forward(lw, a, *memory, B, T, S);
    // 5. x' = mid + MLP(norm₂(mid)): down(act(up)), or SwiGLU's down(silu(gate) ⊙ up);
    //    norm after: x' = norm₂(mid + MLP(mid))
    if (attention_only_) {
      x = a.mid;
      continue;
    }
    if (!after)
      norm(c.norm, a.mid, lw.mlp_norm_weight, lw.mlp_norm_bias, c.norm_epsilon, a.mlp_in, a.mean2,
           a.rstd2);
    mlp_forward(c.feed_forward, after ? a.mid : a.mlp_in, lw, a.before, a.gate, a.after);
    Matrix& mlp_sum = after ? a.mlp_sum : x;
    mlp_sum = a.mid;
    product(mlp_sum, Into::Add, operand(a.after), kAsIs, operand(lw.down), kAsIs);
    add_bias(mlp_sum, lw.down_bias);
    if (after)
      norm(c.norm, a.mlp_sum, lw.mlp_norm_weight, lw.mlp_norm_bias, c.norm_epsilon, x, a.mean2,
           a.rstd2);
  }
  stream_ = std::move(x);
}

void TrainingPass::cross_forward(const TransformerLayer& lw, Layer& a, const Matrix& memory, int B,
                                 int T, int S) {
  const TransformerConfig& c = config_;
  const int H = c.n_heads, dh = c.d_head, QW = H * dh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  product(a.cross_q, Into::Set, operand(a.self_mid), kAsIs, operand(lw.cross_query),
          kAsIs);  // (N, H · d_head)
  add_bias(a.cross_q, lw.cross_query_bias);
  product(a.cross_k, Into::Set, operand(memory), kAsIs, operand(lw.cross_key),
          kAsIs);  // (B · S, H · d_head)
  add_bias(a.cross_k, lw.cross_key_bias);
  product(a.cross_v, Into::Set, operand(memory), kAsIs, operand(lw.cross_value), kAsIs);
  add_bias(a.cross_v, lw.cross_value_bias);
  a.cross_attention.assign(static_cast<std::size_t>(B) * H * T * S, 0.0f);
  a.cross_heads.resize(static_cast<Eigen::Index>(B) * T, QW);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const auto q = a.cross_q.block(b * T, h * dh, T, dh);
      const auto k = a.cross_k.block(b * S, h * dh, S, dh);
      const auto v = a.cross_v.block(b * S, h * dh, S, dh);
      attention_forward(
          q, k, v, /*causal=*/false, scale, scores_,
          Eigen::Map<Matrix>(
              a.cross_attention.data() + (static_cast<std::size_t>(b) * H + h) * T * S, T, S),
          a.cross_heads.block(b * T, h * dh, T, dh));
    }
  }
  a.cross_sum = a.self_mid;
  product(a.cross_sum, Into::Add, operand(a.cross_heads), kAsIs, operand(lw.cross_output), kAsIs);
  add_bias(a.cross_sum, lw.cross_output_bias);
  norm(c.norm, a.cross_sum, lw.cross_norm_weight, lw.cross_norm_bias, c.norm_epsilon, a.mid,
       a.mean3, a.rstd3);
}

Result<float> TrainingPass::forward(const TransformerWeights& w, const TransformerWeights* encoder,
                                    const TrainingBatch& batch) {
  const TransformerConfig& c = config_;
  if (Status ok = check_batch(c, batch); !ok) return Result<float>::failure(ok.message());
  if ((encoder != nullptr) != (encoder_ != nullptr))
    return Result<float>::failure(encoder_ ? "an encoder–decoder's pass needs the encoder's weights"
                                           : "the model has no encoder");
  const int B = batch.texts, T = batch.length, N = B * T, V = c.vocab_size;
  const int* types = batch.token_types.empty() ? nullptr : batch.token_types.data();
  const Matrix* memory = nullptr;
  if (encoder != nullptr) {
    // The encoder over the source; its last layer's output is the decoder's memory.
    encoder_->forward_stack(*encoder, batch.source_tokens.data(), nullptr, B, batch.source_length,
                            nullptr, 0);
    memory = &encoder_->stream_;
  }
  forward_stack(w, batch.tokens.data(), types, B, T, memory, batch.source_length);
  // The output: final = norm_f(x) (norm before), norm_f(act(x · W_h + b_h)) (BERT's MLM head),
  // or x itself (a decoder with its norms after and no head: Marian's)
  if (!w.head_transform.empty()) {
    product(head_before_, Into::Set, operand(stream_), kAsIs, operand(w.head_transform), kAsIs);
    add_bias(head_before_, w.head_transform_bias);
    const FeedForwardKind kind = c.feed_forward;
    head_after_ = head_before_.unaryExpr([kind](float u) { return activation(kind, u); });
  }
  const Matrix& normed = w.head_transform.empty() ? stream_ : head_after_;
  if (w.final_norm_weight.empty())
    final_ = normed;
  else
    norm(c.norm, normed, w.final_norm_weight, w.final_norm_bias, c.norm_epsilon, final_, mean_f_,
         rstd_f_);
  product(logits_, Into::Set, operand(final_), kAsIs, operand(w.unembedding),
          kTransposed);  // (N, V)
  add_bias(logits_, w.unembedding_bias);

  double total = 0.0;
  int counted = 0;
  for (int i = 0; i < N; ++i) {
    const int target = batch.targets[static_cast<std::size_t>(i)];
    if (target < 0) continue;
    const float* row = logits_.row(i).data();
    const float largest = *std::max_element(row, row + V);
    double sum = 0.0;
    for (int t = 0; t < V; ++t) sum += std::exp(static_cast<double>(row[t] - largest));
    total += std::log(sum) - static_cast<double>(row[target] - largest);
    ++counted;
  }
  const auto loss = static_cast<float>(total / counted);
  if (!std::isfinite(loss))
    return Result<float>::failure("the loss is not a finite number: the weights have diverged");
  return loss;
}

Result<float> TrainingPass::loss(const TransformerWeights& weights, const TrainingBatch& batch) {
  return forward(weights, nullptr, batch);
}

Result<float> TrainingPass::loss(const TransformerWeights& decoder,
                                 const TransformerWeights& encoder, const TrainingBatch& batch) {
  return forward(decoder, &encoder, batch);
}

Result<float> TrainingPass::loss_and_gradient(const TransformerWeights& w, const float* values,
                                              float* gradient, const TrainingBatch& batch) {
  return gradient_of_batch(w, nullptr, values, std::numeric_limits<std::size_t>::max(), gradient,
                           batch);
}

Result<float> TrainingPass::loss_and_gradient(const TransformerWeights& decoder,
                                              const TransformerWeights& encoder,
                                              const float* values, std::size_t count,
                                              float* gradient, const TrainingBatch& batch) {
  return gradient_of_batch(decoder, &encoder, values, count, gradient, batch);
}

Result<float> TrainingPass::gradient_of_batch(const TransformerWeights& w,
                                              const TransformerWeights* encoder,
                                              const float* values, std::size_t count,
                                              float* gradient, const TrainingBatch& batch) {
  Result<float> loss = forward(w, encoder, batch);
  if (!loss) return loss;
  const TransformerConfig& c = config_;
  const int B = batch.texts, T = batch.length, N = B * T, D = c.d_model, V = c.vocab_size;
  const Gradients g{values, count, gradient};
  // Under the norm after a sum, d_stream_ becomes the sum's gradient: dy through the norm.
  const auto through_norm = [&](const Matrix& sum, const std::vector<float>& mean,
                                const std::vector<float>& rstd, const VectorView& weight,
                                const VectorView& bias) {
    norm_backward_of_sum(c.norm, g, sum, mean, rstd, weight, bias, d_stream_, d_sum_);
  };

  // dlogits = (softmax − one-hot(target)) / targets counted, in place of the logits.   (N, V)
  int counted = 0;
  for (int target : batch.targets) counted += target >= 0 ? 1 : 0;
  for (int i = 0; i < N; ++i) {
    float* row = logits_.row(i).data();
    const int target = batch.targets[static_cast<std::size_t>(i)];
    if (target < 0) {
      std::fill(row, row + V, 0.0f);
      continue;
    }
    const float largest = *std::max_element(row, row + V);
    float sum = 0.0f;
    for (int t = 0; t < V; ++t) {
      row[t] = std::exp(row[t] - largest);
      sum += row[t];
    }
    for (int t = 0; t < V; ++t) row[t] = row[t] / sum / static_cast<float>(counted);
    row[target] -= 1.0f / static_cast<float>(counted);
  }
  // logits = final · Eᵀ (+ bias); final = norm_f(stream), norm_f(act(stream · W_h + b_h)) or stream
  add_bias_gradient(g, w.unembedding_bias, logits_);
  product(g.of(w.unembedding), Into::Add, operand(logits_), kTransposed, operand(final_),
          kAsIs);  // (V, d)
  product(d_stream_, Into::Set, operand(logits_), kAsIs, operand(w.unembedding),
          kAsIs);  // dfinal (N, d)
  if (!w.final_norm_weight.empty())
    through_norm(w.head_transform.empty() ? stream_ : head_after_, mean_f_, rstd_f_,
                 w.final_norm_weight, w.final_norm_bias);
  if (!w.head_transform.empty()) {
    const FeedForwardKind kind = c.feed_forward;
    d_stream_.array() *=
        head_before_.unaryExpr([kind](float u) { return activation_derivative(kind, u); }).array();
    add_bias_gradient(g, w.head_transform_bias, d_stream_);
    product(g.of(w.head_transform), Into::Add, operand(stream_), kTransposed, operand(d_stream_),
            kAsIs);
    product(d_sum_, Into::Set, operand(d_stream_), kAsIs, operand(w.head_transform), kTransposed);
    d_stream_.swap(d_sum_);
  }
  const int* types = batch.token_types.empty() ? nullptr : batch.token_types.data();
  if (encoder == nullptr) {
    backward_stack(w, values, count, gradient, batch.tokens.data(), types, nullptr, 0, nullptr);
    return loss;
  }
  // The decoder's layers give the gradient of the memory, the encoder's output: the encoder's
  // backward pass starts from it.
  const int S = batch.source_length;
  d_memory_.setZero(static_cast<Eigen::Index>(B) * S, D);
  backward_stack(w, values, count, gradient, batch.tokens.data(), types, &encoder_->stream_, S,
                 &d_memory_);
  encoder_->d_stream_.swap(d_memory_);
  encoder_->backward_stack(*encoder, values, count, gradient, batch.source_tokens.data(), nullptr,
                           nullptr, 0, nullptr);
  return loss;
}

void TrainingPass::backward_stack(const TransformerWeights& w, const float* values,
                                  std::size_t count, float* gradient, const int* tokens,
                                  const int* types, const Matrix* memory, int S, Matrix* d_memory) {
  const TransformerConfig& c = config_;
  const Gradients g{values, count, gradient};
  const int B = texts_, T = length_, N = B * T, D = c.d_model, H = c.n_heads, dh = c.d_head,
            QW = H * dh, KVW = c.n_kv_heads * dh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  const bool rotary = c.positions == PositionKind::Rotary, after = c.norm_after();
  const auto through_norm = [&](const Matrix& sum, const std::vector<float>& mean,
                                const std::vector<float>& rstd, const VectorView& weight,
                                const VectorView& bias) {
    norm_backward_of_sum(c.norm, g, sum, mean, rstd, weight, bias, d_stream_, d_sum_);
  };

  // d_stream_ holds the gradient of the current layer's output, then of its input.
  for (int l = c.n_layers - 1; l >= 0; --l) {
    const TransformerLayer& lw = w.layers[static_cast<std::size_t>(l)];
    Layer& a = layers_[static_cast<std::size_t>(l)];
    // 5. the MLP: x' = mid + down(hidden) (+ b_down), hidden = act(up) or silu(gate) ⊙ up
    //    (norm after: x' = norm₂(that sum), whose gradient comes first). d_stream_ is then dmid:
    //    the residual passes it through, the MLP adds its share.
    if (!attention_only_) {
      if (after) through_norm(a.mlp_sum, a.mean2, a.rstd2, lw.mlp_norm_weight, lw.mlp_norm_bias);
      const Matrix& mlp_in = after ? a.mid : a.mlp_in;
      add_bias_gradient(g, lw.down_bias, d_stream_);
      product(g.of(lw.down), Into::Add, operand(a.after), kTransposed, operand(d_stream_), kAsIs);
      product(d_hidden_, Into::Set, operand(d_stream_), kAsIs, operand(lw.down),
              kTransposed);  // dhidden (N, d_ff)
      if (c.feed_forward == FeedForwardKind::SwiGLU) {
        // hidden = silu(gate) ⊙ up: dgate = dhidden ⊙ up ⊙ silu′(gate), dup = dhidden ⊙ silu(gate)
        d_gate_ =
            d_hidden_.array() * a.before.array() *
            a.gate
                .unaryExpr([](float u) { return activation_derivative(FeedForwardKind::Silu, u); })
                .array();
        d_hidden_.array() *= a.gate.unaryExpr([](float u) { return u * sigmoid(u); }).array();
        product(g.of(lw.gate), Into::Add, operand(mlp_in), kTransposed, operand(d_gate_), kAsIs);
      } else {
        const FeedForwardKind kind = c.feed_forward;
        d_hidden_.array() *=
            a.before.unaryExpr([kind](float u) { return activation_derivative(kind, u); }).array();
      }
      add_bias_gradient(g, lw.up_bias, d_hidden_);
      product(g.of(lw.up), Into::Add, operand(mlp_in), kTransposed, operand(d_hidden_), kAsIs);
      product(d_normalized_, Into::Set, operand(d_hidden_), kAsIs, operand(lw.up),
              kTransposed);  // (N, d)
      if (c.feed_forward == FeedForwardKind::SwiGLU)
        product(d_normalized_, Into::Add, operand(d_gate_), kAsIs, operand(lw.gate), kTransposed);
      if (after)
        d_stream_ += d_normalized_;
      else
        norm_backward(c.norm, d_normalized_, a.mid, a.mean2, a.rstd2, lw.mlp_norm_weight,
                      g.pointer(lw.mlp_norm_weight), g.pointer(lw.mlp_norm_bias), d_stream_);
    }
    // 4c. the cross-attention (d_stream_ is then the gradient of self_mid; the memory's added
    //     into d_memory)
    if (memory != nullptr) {
      through_norm(a.cross_sum, a.mean3, a.rstd3, lw.cross_norm_weight, lw.cross_norm_bias);
      cross_backward(lw, a, values, count, gradient, *memory, S, *d_memory);
    }
    // 4. mid = x + heads · W_O (+ b_O) (norm after: mid = norm₁(that sum))
    if (after)
      through_norm(a.attention_sum, a.mean1, a.rstd1, lw.attention_norm_weight,
                   lw.attention_norm_bias);
    add_bias_gradient(g, lw.output_bias, d_stream_);
    product(g.of(lw.output), Into::Add, operand(a.heads), kTransposed, operand(d_stream_), kAsIs);
    product(d_heads_, Into::Set, operand(d_stream_), kAsIs, operand(lw.output),
            kTransposed);  // (N, H · d_head)
    // 3. the attention, per text and head; a key/value head gathers its query heads' shares
    d_q_.setZero(N, QW);
    d_k_.setZero(N, KVW);
    d_v_.setZero(N, KVW);
    for (int b = 0; b < B; ++b) {
      for (int h = 0; h < H; ++h) {
        const int kv = c.kv_head_of(h);
        const auto q = a.q.block(b * T, h * dh, T, dh);
        const auto k = a.k.block(b * T, kv * dh, T, dh);
        const auto v = a.v.block(b * T, kv * dh, T, dh);
        const auto d_out = d_heads_.block(b * T, h * dh, T, dh);
        Eigen::Map<const Matrix> attention(
            a.attention.data() + (static_cast<std::size_t>(b) * H + h) * T * T, T, T);
        attention_backward(attention, q, k, v, d_out, c.causal(), scale, d_scores_,
                           d_q_.block(b * T, h * dh, T, dh), d_k_.block(b * T, kv * dh, T, dh),
                           d_v_.block(b * T, kv * dh, T, dh));
      }
    }
    // RoPE's backward: the gradients turned back by the same angles (a rotation's transpose)
    if (rotary) {
      for (int i = 0; i < N; ++i) {
        rotate_pairs(d_q_.row(i).data(), QW, dh, i % T, c.rope_theta, -1.0f);
        rotate_pairs(d_k_.row(i).data(), KVW, dh, i % T, c.rope_theta, -1.0f);
      }
    }
    // 2. q, k, v = normalized · W (+ b)   (norm after: x · W (+ b))
    const Matrix& attention_in = after ? a.input : a.normalized;
    add_bias_gradient(g, lw.query_bias, d_q_);
    add_bias_gradient(g, lw.key_bias, d_k_);
    add_bias_gradient(g, lw.value_bias, d_v_);
    product(g.of(lw.query), Into::Add, operand(attention_in), kTransposed, operand(d_q_), kAsIs);
    product(g.of(lw.key), Into::Add, operand(attention_in), kTransposed, operand(d_k_), kAsIs);
    product(g.of(lw.value), Into::Add, operand(attention_in), kTransposed, operand(d_v_), kAsIs);
    product(d_normalized_, Into::Set, operand(d_q_), kAsIs, operand(lw.query), kTransposed);
    product(d_normalized_, Into::Add, operand(d_k_), kAsIs, operand(lw.key), kTransposed);
    product(d_normalized_, Into::Add, operand(d_v_), kAsIs, operand(lw.value), kTransposed);
    // 1. norm₁ (norm before); the residual passes d_stream_ through to the layer's input
    if (after)
      d_stream_ += d_normalized_;
    else
      norm_backward(c.norm, d_normalized_, a.input, a.mean1, a.rstd1, lw.attention_norm_weight,
                    g.pointer(lw.attention_norm_weight), g.pointer(lw.attention_norm_bias),
                    d_stream_);
  }
  // 0. the embeddings: LayerNorm_e's backward first (BERT, BART), then each use's share (none
  //    for a constant table: Marian's sinusoid positions)
  if (!w.embedding_norm_weight.empty())
    through_norm(embedded_, mean_e_, rstd_e_, w.embedding_norm_weight, w.embedding_norm_bias);
  const bool learned_positions = !rotary && g.has(w.position_embedding.data);
  for (int i = 0; i < N; ++i) {
    float* token = g.gradient_of(w.token_embedding.data) + tokens[i] * w.token_embedding.stride;
    for (int j = 0; j < D; ++j) token[j] += d_stream_(i, j) * c.embedding_scale;
    if (learned_positions) {
      float* position = g.gradient_of(w.position_embedding.data) +
                        (i % T + c.position_offset) * w.position_embedding.stride;
      for (int j = 0; j < D; ++j) position[j] += d_stream_(i, j);
    }
    if (!w.token_type_embedding.empty()) {
      float* type = g.gradient_of(w.token_type_embedding.data) +
                    (types == nullptr ? 0 : types[i]) * w.token_type_embedding.stride;
      for (int j = 0; j < D; ++j) type[j] += d_stream_(i, j);
    }
  }
}

void TrainingPass::cross_backward(const TransformerLayer& lw, Layer& a, const float* values,
                                  std::size_t count, float* gradient, const Matrix& memory, int S,
                                  Matrix& d_memory) {
  const TransformerConfig& c = config_;
  const Gradients g{values, count, gradient};
  const int B = texts_, T = length_, H = c.n_heads, dh = c.d_head, QW = H * dh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  // cross_sum = self_mid + cross_heads · W_Oc + b: d_stream_ (its gradient) passes to self_mid
  add_bias_gradient(g, lw.cross_output_bias, d_stream_);
  product(g.of(lw.cross_output), Into::Add, operand(a.cross_heads), kTransposed, operand(d_stream_),
          kAsIs);
  product(d_heads_, Into::Set, operand(d_stream_), kAsIs, operand(lw.cross_output),
          kTransposed);  // (N, H · d_head)
  // Per text and head, as the self-attention's with no mask over the S source positions
  d_cross_q_.setZero(static_cast<Eigen::Index>(B) * T, QW);
  d_cross_k_.setZero(static_cast<Eigen::Index>(B) * S, QW);
  d_cross_v_.setZero(static_cast<Eigen::Index>(B) * S, QW);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const auto q = a.cross_q.block(b * T, h * dh, T, dh);
      const auto k = a.cross_k.block(b * S, h * dh, S, dh);
      const auto v = a.cross_v.block(b * S, h * dh, S, dh);
      const auto d_out = d_heads_.block(b * T, h * dh, T, dh);
      Eigen::Map<const Matrix> attention(
          a.cross_attention.data() + (static_cast<std::size_t>(b) * H + h) * T * S, T, S);
      attention_backward(attention, q, k, v, d_out, /*causal=*/false, scale, d_scores_,
                         d_cross_q_.block(b * T, h * dh, T, dh),
                         d_cross_k_.block(b * S, h * dh, S, dh),
                         d_cross_v_.block(b * S, h * dh, S, dh));
    }
  }
  // cross_q = self_mid · W_Qc + b: self_mid's gradient gets its share beside the residual's;
  // cross_k, cross_v = memory · W + b: the memory's gradient gets theirs
  add_bias_gradient(g, lw.cross_query_bias, d_cross_q_);
  add_bias_gradient(g, lw.cross_key_bias, d_cross_k_);
  add_bias_gradient(g, lw.cross_value_bias, d_cross_v_);
  product(g.of(lw.cross_query), Into::Add, operand(a.self_mid), kTransposed, operand(d_cross_q_),
          kAsIs);
  product(g.of(lw.cross_key), Into::Add, operand(memory), kTransposed, operand(d_cross_k_), kAsIs);
  product(g.of(lw.cross_value), Into::Add, operand(memory), kTransposed, operand(d_cross_v_),
          kAsIs);
  product(d_stream_, Into::Add, operand(d_cross_q_), kAsIs, operand(lw.cross_query), kTransposed);
  product(d_memory, Into::Add, operand(d_cross_k_), kAsIs, operand(lw.cross_key), kTransposed);
  product(d_memory, Into::Add, operand(d_cross_v_), kAsIs, operand(lw.cross_value), kTransposed);
}

}  // namespace attnviz
