#include "core/models/transformer_forward.hpp"

#include "core/models/blas.hpp"
#include "core/models/norms.hpp"
#include "core/models/rope.hpp"

#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnviz {

std::string_view to_string(HeadIntervention::Pattern pattern) {
  switch (pattern) {
    case HeadIntervention::Pattern::Uniform:
      return "uniform";
    case HeadIntervention::Pattern::PreviousToken:
      return "previous_token";
    case HeadIntervention::Pattern::Computed:
      break;
  }
  return "computed";
}

std::optional<HeadIntervention::Pattern> parse_head_pattern(std::string_view name) {
  for (auto pattern : {HeadIntervention::Pattern::Computed, HeadIntervention::Pattern::Uniform,
                       HeadIntervention::Pattern::PreviousToken})
    if (to_string(pattern) == name) return pattern;
  return std::nullopt;
}

std::string_view to_string(HeadMatrix matrix) {
  switch (matrix) {
    case HeadMatrix::Key:
      return "W_K";
    case HeadMatrix::Value:
      return "W_V";
    case HeadMatrix::Output:
      return "W_O";
    case HeadMatrix::Query:
      break;
  }
  return "W_Q";
}

std::optional<HeadMatrix> parse_head_matrix(std::string_view name) {
  for (auto matrix : {HeadMatrix::Query, HeadMatrix::Key, HeadMatrix::Value, HeadMatrix::Output})
    if (to_string(matrix) == name) return matrix;
  return std::nullopt;
}

namespace {

using MatrixMap = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;

// rows[i] = norm(rows[i]) · weight (+ bias), for rows first.. of `in` into `out`.
void normalize(const TransformerConfig& c, const RowMatrix& in, RowMatrix& out, int first,
               const VectorView& weight, const VectorView& bias) {
  for (int i = first; i < in.rows(); ++i) normalize_row(c, in.row(i), weight, bias, out.row(i));
}

// out's `rows` rows (each `cols` wide) += bias, when there is one.
void add_bias(float* out, std::ptrdiff_t out_stride, int rows, int cols, const VectorView& bias) {
  if (!bias.empty())
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < cols; ++j) out[r * out_stride + j] += bias.data[j];
}

// out[first..] = in[first..] · W (+ bias): rows of RowMatrix `in` (or any rows) through a weight.
void multiply(const float* in, std::ptrdiff_t in_stride, int rows, const MatrixView& w, float* out,
              std::ptrdiff_t out_stride, const VectorView& bias) {
  blas::gemm(rows, w.cols, w.rows, in, in_stride, w.data, w.stride, out, out_stride);
  add_bias(out, out_stride, rows, w.cols, bias);
}

std::size_t triangle(int rows) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(rows + 1) / 2;
}

// The MLP's activation in place (GELU's two forms, SiLU; SwiGLU is done where its gate is).
void activate(Matrix& hidden, FeedForwardKind kind) {
  auto x = hidden.array();
  if (kind == FeedForwardKind::Silu) {
    x = x / (1.0f + (-x).exp());  // silu(x) = x · sigmoid(x)
  } else if (kind == FeedForwardKind::GeluTanh) {
    // gelu(x) = x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))), with Eigen's vectorized tanh.
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    x = 0.5f * x * (1.0f + (kSqrt2OverPi * (x + 0.044715f * x.cube())).tanh());
  } else {
    // gelu(x) = x/2 · (1 + erf(x/√2)), with Eigen's vectorized erf (a few float ulps).
    constexpr float kInverseSqrt2 = 0.7071067811865476f;
    x = 0.5f * x * (1.0f + (kInverseSqrt2 * x).erf());
  }
}

// rows[first..] = residual[first..] + added[first..], then normed in place (a norm after a
// sublayer, BERT's).
void add_and_normalize(const TransformerConfig& c, const RowMatrix& residual,
                       const RowMatrix& added, RowMatrix& out, int first, const VectorView& weight,
                       const VectorView& bias) {
  out.rows_from(first) = residual.matrix().bottomRows(out.rows() - first) +
                         added.matrix().bottomRows(out.rows() - first);
  for (int i = first; i < out.rows(); ++i) normalize_row(c, out.row(i), weight, bias, out.row(i));
}

}  // namespace

TransformerForward::TransformerForward(const Transformer& model)
    : model_(model), dirty_layer_(model.config().n_layers) {
  const TransformerConfig& c = model.config();
  interventions_.assign(static_cast<std::size_t>(c.n_layers) * c.n_heads, HeadIntervention{});
  if (c.cross_attention)
    cross_interventions_.assign(static_cast<std::size_t>(c.n_layers) * c.n_heads,
                                HeadIntervention{});
  memory_.set_cols(c.d_model);
  embedded_.set_cols(c.d_model);
  final_.set_cols(c.d_model);
  layers_.resize(static_cast<std::size_t>(c.n_layers));
  for (LayerActivations& a : layers_) {
    a.normalized.set_cols(c.d_model);
    a.queries.set_cols(c.n_heads * c.d_head);
    a.keys.set_cols(c.n_kv_heads * c.d_head);
    a.values.set_cols(c.n_kv_heads * c.d_head);
    a.attention.resize(static_cast<std::size_t>(c.n_heads));
    a.head_outputs.set_cols(c.n_heads * c.d_head);
    a.attention_output.set_cols(c.d_model);
    a.residual_mid.set_cols(c.d_model);
    a.mlp_output.set_cols(c.d_model);
    a.residual_out.set_cols(c.d_model);
    a.cross_queries.set_cols(c.n_heads * c.d_head);
    a.cross_keys.set_cols(c.n_heads * c.d_head);
    a.cross_values.set_cols(c.n_heads * c.d_head);
    a.cross_attention.resize(c.cross_attention ? static_cast<std::size_t>(c.n_heads) : 0);
    a.cross_head_outputs.set_cols(c.n_heads * c.d_head);
    a.cross_attention_output.set_cols(c.d_model);
    a.residual_cross.set_cols(c.d_model);
  }
}

Status TransformerForward::check_intervention(int layer, int head,
                                              const HeadIntervention& intervention) const {
  const TransformerConfig& c = model_.config();
  if (layer < 0 || layer >= c.n_layers || head < 0 || head >= c.n_heads)
    return Status::error("layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                         ": the model has " + std::to_string(c.n_layers) + " layers of " +
                         std::to_string(c.n_heads) + " heads (counted from 0)");
  if (!std::isfinite(intervention.output_scale))
    return Status::error("a head's scale must be a finite number");
  return Status::success();
}

Status TransformerForward::set_intervention(int layer, int head, HeadIntervention intervention) {
  const TransformerConfig& c = model_.config();
  if (Status s = check_intervention(layer, head, intervention); !s) return s;
  HeadIntervention& slot = interventions_[static_cast<std::size_t>(layer) * c.n_heads + head];
  if (slot == intervention) return Status::success();
  slot = intervention;
  dirty_layer_ = std::min(dirty_layer_, layer);
  return Status::success();
}

const HeadIntervention& TransformerForward::intervention(int layer, int head) const {
  return interventions_[static_cast<std::size_t>(layer) * model_.config().n_heads + head];
}

Status TransformerForward::set_cross_intervention(int layer, int head,
                                                  HeadIntervention intervention) {
  const TransformerConfig& c = model_.config();
  if (!c.cross_attention)
    return Status::error(
        "the model has no cross-attention (it is not an encoder–decoder's decoder)");
  if (Status s = check_intervention(layer, head, intervention); !s) return s;
  if (intervention.pattern == HeadIntervention::Pattern::PreviousToken)
    return Status::error(
        "a cross-attention head looks at the other text: its pattern can be computed or "
        "uniform, not the previous token");
  HeadIntervention& slot = cross_interventions_[static_cast<std::size_t>(layer) * c.n_heads + head];
  if (slot == intervention) return Status::success();
  slot = intervention;
  dirty_layer_ = std::min(dirty_layer_, layer);
  return Status::success();
}

const HeadIntervention& TransformerForward::cross_intervention(int layer, int head) const {
  static const HeadIntervention none{};
  if (cross_interventions_.empty()) return none;
  return cross_interventions_[static_cast<std::size_t>(layer) * model_.config().n_heads + head];
}

void TransformerForward::clear_interventions() {
  const int heads = model_.config().n_heads;
  for (std::vector<HeadIntervention>* all : {&interventions_, &cross_interventions_})
    for (std::size_t i = 0; i < all->size(); ++i)
      if ((*all)[i].changes_anything()) {
        (*all)[i] = HeadIntervention{};
        dirty_layer_ = std::min(dirty_layer_, static_cast<int>(i) / heads);
      }
}

void TransformerForward::weights_changed(int layer) {
  dirty_layer_ = std::min(dirty_layer_, std::max(layer, 0));
}

void TransformerForward::embeddings_changed() {
  embeddings_dirty_ = true;
  dirty_layer_ = 0;
}

const blas::PackedMatrix* TransformerForward::packed(const MatrixView& w, bool transposed,
                                                     int rows) const {
  // One row (a token appended, one position's logits) reads the weights once whatever the
  // kernel: the library's matrix-vector product is as fast. Past kMostPackedRows the library's
  // own packing pays for itself (1,024 tokens of GPT-2 small: 4 % faster), and with the AVX2
  // kernel past kMostPackedRowsAvx2.
  if (rows < 2 || rows > kMostPackedRows) return nullptr;
  if (blas::packed_kernel() == blas::PackedKernel::avx2 && rows > kMostPackedRowsAvx2)
    return nullptr;
  // (k, n) of the product: W is (k, n); a transposed W (the unembedding) is stored (n, k).
  const int k = transposed ? w.cols : w.rows, n = transposed ? w.rows : w.cols;
  if (!blas::packed_available() || k < kLeastPackedWidth || n < kLeastPackedWidth) return nullptr;
  if (packed_version_ != model_.weights_version()) {  // an edit since they were packed
    packed_.clear();
    packed_bytes_ = 0;
    packed_version_ = model_.weights_version();
  }
  if (const auto it = packed_.find(w.data); it != packed_.end()) return &it->second;
  const std::size_t bytes = static_cast<std::size_t>(k) * static_cast<std::size_t>(n) * 4;
  if (packed_bytes_ + bytes > kMostPackedBytes) return nullptr;
  blas::PackedMatrix& made = packed_[w.data];
  made.pack(k, n, w.data, w.stride, transposed);
  packed_bytes_ += made.bytes();
  return &made;
}

void TransformerForward::multiply_weights(const float* in, std::ptrdiff_t in_stride, int rows,
                                          const MatrixView& w, float* out,
                                          std::ptrdiff_t out_stride, const VectorView& bias) const {
  const blas::PackedMatrix* kernel_ready = packed(w, false, rows);
  if (!kernel_ready) {
    multiply(in, in_stride, rows, w, out, out_stride, bias);
    return;
  }
  blas::gemm(rows, in, in_stride, *kernel_ready, out, out_stride,
             bias.empty() ? nullptr : bias.data);  // the bias in the kernel's sums
}

const LayerActivations& TransformerForward::layer(int layer) const {
  return layers_[static_cast<std::size_t>(layer)];
}

std::size_t TransformerForward::row_start(int query) const {
  return model_.config().causal()
             ? triangle(query)
             : static_cast<std::size_t>(query) * static_cast<std::size_t>(size());
}

int TransformerForward::row_length(int query) const {
  return model_.config().causal() ? query + 1 : size();
}

std::span<const float> TransformerForward::attention_row(int layer, int head, int query) const {
  const std::vector<float>& weights =
      layers_[static_cast<std::size_t>(layer)].attention[static_cast<std::size_t>(head)];
  return {weights.data() + row_start(query), static_cast<std::size_t>(row_length(query))};
}

Matrix TransformerForward::attention(int layer, int head) const {
  const int n = size();
  Matrix weights = Matrix::Zero(n, n);  // (n_query, n_key)
  for (int i = 0; i < n; ++i) {
    const std::span<const float> row = attention_row(layer, head, i);
    std::copy(row.begin(), row.end(), weights.row(i).data());
  }
  return weights;
}

std::span<const float> TransformerForward::cross_attention_row(int layer, int head,
                                                               int query) const {
  const LayerActivations& a = layers_[static_cast<std::size_t>(layer)];
  if (a.cross_attention.empty()) return {};
  const std::size_t n_source = static_cast<std::size_t>(source_size());
  return {a.cross_attention[static_cast<std::size_t>(head)].data() +
              static_cast<std::size_t>(query) * n_source,
          n_source};
}

Matrix TransformerForward::cross_attention(int layer, int head) const {
  const int n = size(), n_source = source_size();
  Matrix weights = Matrix::Zero(n, n_source);  // (n_query, n_source)
  if (!model_.config().cross_attention) return weights;
  for (int i = 0; i < n; ++i) {
    const std::span<const float> row = cross_attention_row(layer, head, i);
    std::copy(row.begin(), row.end(), weights.row(i).data());
  }
  return weights;
}

Matrix TransformerForward::cross_raw_scores(int layer, int head) const {
  const TransformerConfig& c = model_.config();
  const LayerActivations& a = layers_[static_cast<std::size_t>(layer)];
  const int n = size(), n_source = source_size(), d_head = c.d_head;
  if (!c.cross_attention) return Matrix::Zero(n, n_source);
  const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> queries(
      a.cross_queries.row(0) + head * d_head, n, d_head,
      Eigen::OuterStride<>(a.cross_queries.cols()));
  const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> keys(
      a.cross_keys.row(0) + head * d_head, n_source, d_head,
      Eigen::OuterStride<>(a.cross_keys.cols()));
  return queries * keys.transpose();  // (n_query, n_source)
}

Matrix TransformerForward::raw_scores(int layer, int head) const {
  const TransformerConfig& c = model_.config();
  const LayerActivations& a = layers_[static_cast<std::size_t>(layer)];
  const int n = size(), d_head = c.d_head, kv_head = c.kv_head_of(head);
  const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> queries(
      a.queries.row(0) + head * d_head, n, d_head, Eigen::OuterStride<>(a.queries.cols()));
  const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> keys(
      a.keys.row(0) + kv_head * d_head, n, d_head, Eigen::OuterStride<>(a.keys.cols()));
  Matrix scores = queries * keys.transpose();  // (n_query, n_key)
  if (c.causal())
    for (int i = 0; i < n; ++i)
      for (int t = i + 1; t < n; ++t) scores(i, t) = -std::numeric_limits<float>::infinity();
  return scores;
}

Matrix TransformerForward::scaled_scores(int layer, int head) const {
  return raw_scores(layer, head) / std::sqrt(static_cast<float>(model_.config().d_head));
}

RowVector TransformerForward::logits(int position) const {
  RowVector logits(model_.config().vocab_size);  // (vocab_size)
  this->logits(position, logits.data());
  return logits;
}

void TransformerForward::logits(int position, float* out) const {
  const TransformerWeights& w = model_.weights();
  const MatrixView& unembedding = w.unembedding;  // (vocab_size, d_model)
  if (unembedding.empty()) {
    std::fill(out, out + model_.config().vocab_size, 0.0f);
    return;
  }
  // One row: the library's matrix-vector product (packed() never packs for a single row).
  blas::gemm(1, unembedding.rows, unembedding.cols, final_.row(position), final_.cols(),
             unembedding.data, unembedding.stride, out, unembedding.rows, /*transpose_b=*/true);
  if (!w.unembedding_bias.empty())
    for (int v = 0; v < unembedding.rows; ++v) out[v] += w.unembedding_bias.data[v];
}

void TransformerForward::all_logits(float* out) const {
  const TransformerWeights& w = model_.weights();
  const MatrixView& unembedding = w.unembedding;  // (vocab_size, d_model)
  const int vocab = model_.config().vocab_size;
  if (unembedding.empty()) {
    std::fill(out, out + static_cast<std::ptrdiff_t>(size()) * vocab, 0.0f);
    return;
  }
  if (const blas::PackedMatrix* kernel_ready = packed(unembedding, true, size())) {
    // The bias (BERT's, Marian's final_logits_bias) in the kernel's sums: no second pass over
    // the n × vocab logits.
    blas::gemm(size(), final_.row(0), final_.cols(), *kernel_ready, out, unembedding.rows,
               w.unembedding_bias.empty() ? nullptr : w.unembedding_bias.data);
    return;
  }
  blas::gemm(size(), unembedding.rows, unembedding.cols, final_.row(0), final_.cols(),
             unembedding.data, unembedding.stride, out, unembedding.rows, /*transpose_b=*/true);
  if (!w.unembedding_bias.empty())
    for (int i = 0; i < size(); ++i)
      for (int v = 0; v < vocab; ++v)
        out[static_cast<std::ptrdiff_t>(i) * vocab + v] += w.unembedding_bias.data[v];
}

void TransformerForward::read_out(const float* residual, float* out) const {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  const MatrixView& unembedding = w.unembedding;  // (vocab_size, d_model)
  if (unembedding.empty() || !model_.predicts_tokens()) {
    std::fill(out, out + c.vocab_size, 0.0f);
    return;
  }
  std::vector<float> normalized(static_cast<std::size_t>(c.d_model));  // (d_model)
  if (!w.head_transform.empty()) {     // 1. BERT's MLM head: the transform and its GELU, then norm
    Matrix transformed(1, c.d_model);  // (1, d_model)
    multiply_weights(residual, c.d_model, 1, w.head_transform, transformed.data(), c.d_model,
                     w.head_transform_bias);
    activate(transformed, c.feed_forward);
    normalize_row(c, transformed.data(), w.final_norm_weight, w.final_norm_bias, normalized.data());
  } else if (!w.final_norm_weight.empty()) {  // 1. a decoder's final norm
    normalize_row(c, residual, w.final_norm_weight, w.final_norm_bias, normalized.data());
  } else {  // 1. none (Marian's decoder: its last layer's norm is the last)
    std::copy(residual, residual + c.d_model, normalized.data());
  }
  // 2. The unembedding, and its bias.
  if (const blas::PackedMatrix* kernel_ready = packed(unembedding, true, 1))
    blas::gemm(1, normalized.data(), c.d_model, *kernel_ready, out, unembedding.rows);
  else
    blas::gemm(1, unembedding.rows, unembedding.cols, normalized.data(), c.d_model,
               unembedding.data, unembedding.stride, out, unembedding.rows, /*transpose_b=*/true);
  if (!w.unembedding_bias.empty())
    for (int v = 0; v < unembedding.rows; ++v) out[v] += w.unembedding_bias.data[v];
}

Status TransformerForward::run(std::span<const int> tokens, std::span<const int> token_types,
                               const RowMatrix* memory) {
  const TransformerConfig& c = model_.config();
  const TransformerWeights& w = model_.weights();
  if (c.cross_attention && (memory == nullptr || memory->rows() < 1))
    return Status::error("a decoder with cross-attention reads the encoder's output: none given");
  if (!c.cross_attention && memory != nullptr)
    return Status::error("the model has no cross-attention: it reads no encoder output");
  if (memory != nullptr && memory->cols() != c.d_model)
    return Status::error("the encoder's output has " + std::to_string(memory->cols()) +
                         " values a row; the decoder's d_model is " + std::to_string(c.d_model));
  if (static_cast<long long>(tokens.size()) > c.context)
    return Status::error(std::to_string(tokens.size()) + " tokens: the model's context holds " +
                         std::to_string(c.context));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size)
      return Status::error("token " + std::to_string(i) + " has id " + std::to_string(tokens[i]) +
                           ", outside the vocabulary of " + std::to_string(c.vocab_size));
  if (!token_types.empty() && token_types.size() != tokens.size())
    return Status::error(std::to_string(token_types.size()) + " token types for " +
                         std::to_string(tokens.size()) + " tokens");
  for (std::size_t i = 0; i < token_types.size(); ++i)
    if (token_types[i] != 0 && (token_types[i] < 0 || token_types[i] >= c.token_types))
      return Status::error("token " + std::to_string(i) + " has type " +
                           std::to_string(token_types[i]) + "; the model has " +
                           (c.token_types > 0 ? std::to_string(c.token_types) : "no") +
                           " token types");
  const int n = static_cast<int>(tokens.size());
  // Token i's type as given (0 when none were).
  const auto type_of = [&token_types](int i) {
    return token_types.empty() ? 0 : token_types[static_cast<std::size_t>(i)];
  };
  int shared = 0;
  while (shared < n && shared < size() &&
         tokens_[static_cast<std::size_t>(shared)] == tokens[static_cast<std::size_t>(shared)] &&
         token_types_[static_cast<std::size_t>(shared)] == type_of(shared))
    ++shared;
  // An encoder's every position sees every token: anything changed, everything changes.
  if (!c.causal() && (shared != n || n != size())) shared = 0;
  if (embeddings_dirty_) shared = 0;  // every position's embedding may have changed
  embeddings_dirty_ = false;
  if (memory != nullptr &&
      (memory->rows() != memory_.rows() || memory->matrix() != memory_.matrix())) {
    // Another source: every cross-attention, so every layer from the first cross-attention
    // on, changes; the first layers' self-attention does not, but it is cheap beside.
    memory_.resize_rows(memory->rows());
    memory_.rows_from(0) = memory->matrix();
    dirty_layer_ = 0;
  }
  tokens_.assign(tokens.begin(), tokens.end());  // (no allocation once the text has been this long)
  token_types_.resize(tokens.size());
  for (int i = 0; i < n; ++i) token_types_[static_cast<std::size_t>(i)] = type_of(i);
  work_ = Work{shared, dirty_layer_};

  // 0. The residual stream's start: token embedding + position embedding (learned positions)
  // + token type embedding (BERT's), normed under a norm after each sublayer.
  embedded_.resize_rows(n);
  for (int i = shared; i < n; ++i) {
    const float* token =
        w.token_embedding.data + tokens_[static_cast<std::size_t>(i)] * w.token_embedding.stride;
    float* row = embedded_.row(i);
    for (int j = 0; j < c.d_model; ++j) row[j] = token[j] * c.embedding_scale;
    if (c.positions == PositionKind::Learned) {
      const float* position =
          w.position_embedding.data + (i + c.position_offset) * w.position_embedding.stride;
      for (int j = 0; j < c.d_model; ++j) row[j] += position[j];
    }
    if (c.token_types > 0) {
      const float* type = w.token_type_embedding.data +
                          token_types_[static_cast<std::size_t>(i)] * w.token_type_embedding.stride;
      for (int j = 0; j < c.d_model; ++j) row[j] += type[j];
    }
    if (!w.embedding_norm_weight.empty())
      normalize_row(c, row, w.embedding_norm_weight, w.embedding_norm_bias, row);
  }
  for (int l = 0; l < c.n_layers; ++l) compute_layer(l, l >= dirty_layer_ ? 0 : shared);
  const int first_final = c.n_layers - 1 >= dirty_layer_ ? 0 : shared;
  dirty_layer_ = c.n_layers;
  final_.resize_rows(n);
  const RowMatrix& last = layers_.back().residual_out;
  if (!model_.predicts_tokens() || (w.head_transform.empty() && w.final_norm_weight.empty())) {
    // BertModel, an encoder–decoder's encoder: no head; Marian's decoder: no final norm. Final is
    // the last layer's output.
    final_.rows_from(first_final) = last.matrix().bottomRows(n - first_final);
  } else if (!w.head_transform.empty()) {
    // BERT's MLM head: final = norm_f(gelu(x · head_transform + b)).
    const int rows = n - first_final;
    transformed_.resize(rows, c.d_model);  // (rows, d_model)
    if (rows > 0)
      multiply_weights(last.row(first_final), last.cols(), rows, w.head_transform,
                       transformed_.data(), c.d_model, w.head_transform_bias);
    activate(transformed_, c.feed_forward);
    for (int r = 0; r < rows; ++r)
      normalize_row(c, transformed_.row(r).data(), w.final_norm_weight, w.final_norm_bias,
                    final_.row(first_final + r));
  } else {
    normalize(c, last, final_, first_final, w.final_norm_weight, w.final_norm_bias);
  }
  return Status::success();
}

void TransformerForward::compute_layer(int l, int first) {
  const TransformerConfig& c = model_.config();
  const TransformerLayer& w = model_.weights().layers[static_cast<std::size_t>(l)];
  LayerActivations& a = layers_[static_cast<std::size_t>(l)];
  const RowMatrix& input =
      l == 0 ? embedded_ : layers_[static_cast<std::size_t>(l) - 1].residual_out;
  const int n = input.rows(), rows = n - first, d_head = c.d_head;
  for (RowMatrix* m : {&a.normalized, &a.queries, &a.keys, &a.values, &a.head_outputs,
                       &a.attention_output, &a.residual_mid, &a.mlp_output, &a.residual_out})
    m->resize_rows(n);
  if (c.cross_attention)
    for (RowMatrix* m :
         {&a.cross_queries, &a.cross_head_outputs, &a.cross_attention_output, &a.residual_cross})
      m->resize_rows(n);
  if (rows <= 0) {
    for (std::vector<float>& weights : a.attention) weights.resize(row_start(n));
    for (std::vector<float>& weights : a.cross_attention)
      weights.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(source_size()));
    return;
  }

  // 1. The normalized input (a norm after each sublayer: the input is normed already).
  if (c.norm_after())
    a.normalized.rows_from(first) = input.matrix().bottomRows(rows);
  else
    normalize(c, input, a.normalized, first, w.attention_norm_weight, w.attention_norm_bias);

  // 2. Queries, keys and values of the new rows; RoPE by position.
  const float* normalized = a.normalized.row(first);  // (rows, d_model)
  const int d = c.d_model;
  multiply_weights(normalized, d, rows, w.query, a.queries.row(first), a.queries.cols(),
                   w.query_bias);  // (rows, heads · d_head)
  multiply_weights(normalized, d, rows, w.key, a.keys.row(first), a.keys.cols(),
                   w.key_bias);  // (rows, kv_heads · d_head)
  multiply_weights(normalized, d, rows, w.value, a.values.row(first), a.values.cols(),
                   w.value_bias);  // (rows, kv_heads · d_head)
  if (c.positions == PositionKind::Rotary)
    for (int i = first; i < n; ++i) {
      rotate_pairs(a.queries.row(i), a.queries.cols(), d_head, i, c.rope_theta);
      rotate_pairs(a.keys.row(i), a.keys.cols(), d_head, i, c.rope_theta);
    }

  // 3. Each query head: scores against every key it sees, the softmax (or the intervention's
  // pattern), the weighted sum of the values, scaled. The rows go in blocks of kQueryBlock
  // queries, each against the keys it can see (a decoder's: 0 .. its last query, so that the
  // masked scores above the diagonal are neither computed nor multiplied by the values; an
  // encoder's: every key).
  constexpr int kQueryBlock = 128;
  const float inverse_sqrt = 1.0f / std::sqrt(static_cast<float>(d_head));
  for (int h = 0; h < c.n_heads; ++h) {
    const HeadIntervention& intervention = this->intervention(l, h);
    const int kv = c.kv_head_of(h);
    block_scores_.resize(std::min(rows, kQueryBlock), n);  // (block rows, n_key)
    std::vector<float>& kept = a.attention[static_cast<std::size_t>(h)];
    kept.resize(row_start(n));
    for (int block = 0; block < rows; block += kQueryBlock) {
      const int block_rows = std::min(kQueryBlock, rows - block);
      // A decoder's keys 0 .. the block's last query; an encoder's every key.
      const int visible_keys = c.causal() ? first + block + block_rows : n;
      blas::gemm(block_rows, visible_keys, d_head, a.queries.row(first + block) + h * d_head,
                 a.queries.cols(), a.keys.row(0) + kv * d_head, a.keys.cols(), block_scores_.data(),
                 n, /*transpose_b=*/true);
      for (int r = 0; r < block_rows; ++r) {
        const int i = first + block + r;  // the query's position
        const int seen = row_length(i);   // keys 0..seen − 1 are visible to it
        float* row = block_scores_.row(r).data();
        switch (intervention.pattern) {
          case HeadIntervention::Pattern::Computed: {
            Eigen::Map<Eigen::ArrayXf> visible(row, seen);
            visible *= inverse_sqrt;
            visible = (visible - visible.maxCoeff()).exp();
            visible /= visible.sum();
            break;
          }
          case HeadIntervention::Pattern::Uniform:
            std::fill(row, row + seen, 1.0f / static_cast<float>(seen));
            break;
          case HeadIntervention::Pattern::PreviousToken:
            std::fill(row, row + seen, 0.0f);
            row[std::max(i - 1, 0)] = 1.0f;
            break;
        }
        std::fill(row + seen, row + visible_keys, 0.0f);  // masked
        std::copy(row, row + seen, kept.data() + row_start(i));
      }
      float* head_output = a.head_outputs.row(first + block) + h * d_head;  // (block rows, d_head)
      blas::gemm(block_rows, d_head, visible_keys, block_scores_.data(), n,
                 a.values.row(0) + kv * d_head, a.values.cols(), head_output,
                 a.head_outputs.cols());
      if (intervention.output_scale != 1.0f)
        MatrixMap(head_output, block_rows, d_head, Eigen::OuterStride<>(a.head_outputs.cols())) *=
            intervention.output_scale;
    }
  }

  // 4. W_O and the residual.
  multiply_weights(a.head_outputs.row(first), a.head_outputs.cols(), rows, w.output,
                   a.attention_output.row(first), d, w.output_bias);  // (rows, d_model)
  if (c.norm_after())
    add_and_normalize(c, input, a.attention_output, a.residual_mid, first, w.attention_norm_weight,
                      w.attention_norm_bias);
  else
    a.residual_mid.rows_from(first) =
        input.matrix().bottomRows(rows) + a.attention_output.rows_from(first);

  // 4c. An encoder–decoder's decoder: the cross-attention, and the stream after it.
  if (c.cross_attention) compute_cross_attention(l, first);
  const RowMatrix& stream = c.cross_attention ? a.residual_cross : a.residual_mid;  // (n, d_model)

  // 5. The MLP on the normalized residual, and the residual again (a.residual_out holds the
  // normalized input for a moment; with the norm after, the MLP reads the stream as it is).
  const float* mlp_input = stream.row(first);  // (rows, d_model)
  if (!c.norm_after()) {
    normalize(c, stream, a.residual_out, first, w.mlp_norm_weight, w.mlp_norm_bias);
    mlp_input = a.residual_out.row(first);
  }
  hidden_.resize(rows, c.d_ff);  // (rows, d_ff)
  multiply_weights(mlp_input, d, rows, w.up, hidden_.data(), c.d_ff, w.up_bias);
  if (c.feed_forward != FeedForwardKind::SwiGLU) {
    activate(hidden_, c.feed_forward);
  } else {
    gate_.resize(rows, c.d_ff);  // (rows, d_ff)
    multiply_weights(mlp_input, d, rows, w.gate, gate_.data(), c.d_ff, VectorView{});
    hidden_.array() *= gate_.array() / (1.0f + (-gate_.array()).exp());  // silu(gate) ⊙ up
  }
  multiply_weights(hidden_.data(), c.d_ff, rows, w.down, a.mlp_output.row(first), d,
                   w.down_bias);  // (rows, d_model)
  if (c.norm_after()) {
    add_and_normalize(c, stream, a.mlp_output, a.residual_out, first, w.mlp_norm_weight,
                      w.mlp_norm_bias);
  } else {
    const auto mlp_output = a.mlp_output.rows_from(first);
    a.residual_out.rows_from(first) = stream.matrix().bottomRows(rows) + mlp_output;
  }
}

void TransformerForward::compute_cross_attention(int l, int first) {
  const TransformerConfig& c = model_.config();
  const TransformerLayer& w = model_.weights().layers[static_cast<std::size_t>(l)];
  LayerActivations& a = layers_[static_cast<std::size_t>(l)];
  const int n = a.residual_mid.rows(), rows = n - first, d = c.d_model, d_head = c.d_head;
  const int n_source = memory_.rows();

  // 1. The keys and values of the encoder's output: once a source (and the layer's weights),
  // kept while the target is typed.
  if (first == 0 || a.cross_keys.rows() != n_source) {
    a.cross_keys.resize_rows(n_source);
    a.cross_values.resize_rows(n_source);
    multiply_weights(memory_.row(0), d, n_source, w.cross_key, a.cross_keys.row(0),
                     a.cross_keys.cols(), w.cross_key_bias);  // (n_source, heads · d_head)
    multiply_weights(memory_.row(0), d, n_source, w.cross_value, a.cross_values.row(0),
                     a.cross_values.cols(), w.cross_value_bias);  // (n_source, heads · d_head)
  }

  // 2. The queries, from the stream after self-attention (normed first under a norm before).
  const float* query_input = a.residual_mid.row(first);  // (rows, d_model)
  if (!c.norm_after()) {  // residual_cross holds norm_c(residual_mid) for a moment
    normalize(c, a.residual_mid, a.residual_cross, first, w.cross_norm_weight, w.cross_norm_bias);
    query_input = a.residual_cross.row(first);
  }
  multiply_weights(query_input, d, rows, w.cross_query, a.cross_queries.row(first),
                   a.cross_queries.cols(), w.cross_query_bias);  // (rows, heads · d_head)

  // 3. Each head: scores against every source position, softmax (or uniform), · values, scaled.
  const float inverse_sqrt = 1.0f / std::sqrt(static_cast<float>(d_head));
  block_scores_.resize(rows, n_source);  // (rows, n_source)
  for (int h = 0; h < c.n_heads; ++h) {
    const HeadIntervention& intervention = cross_intervention(l, h);
    std::vector<float>& kept = a.cross_attention[static_cast<std::size_t>(h)];
    kept.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n_source));
    blas::gemm(rows, n_source, d_head, a.cross_queries.row(first) + h * d_head,
               a.cross_queries.cols(), a.cross_keys.row(0) + h * d_head, a.cross_keys.cols(),
               block_scores_.data(), n_source, /*transpose_b=*/true);
    for (int r = 0; r < rows; ++r) {
      Eigen::Map<Eigen::ArrayXf> row(block_scores_.row(r).data(), n_source);
      if (intervention.pattern == HeadIntervention::Pattern::Uniform) {
        row.setConstant(1.0f / static_cast<float>(n_source));
      } else {
        row *= inverse_sqrt;
        row = (row - row.maxCoeff()).exp();
        row /= row.sum();
      }
      std::copy(row.data(), row.data() + n_source,
                kept.data() + static_cast<std::ptrdiff_t>(first + r) * n_source);
    }
    float* head_output = a.cross_head_outputs.row(first) + h * d_head;  // (rows, d_head)
    blas::gemm(rows, d_head, n_source, block_scores_.data(), n_source,
               a.cross_values.row(0) + h * d_head, a.cross_values.cols(), head_output,
               a.cross_head_outputs.cols());
    if (intervention.output_scale != 1.0f)
      MatrixMap(head_output, rows, d_head, Eigen::OuterStride<>(a.cross_head_outputs.cols())) *=
          intervention.output_scale;
  }

  // 4. W_Oc and the residual.
  multiply_weights(a.cross_head_outputs.row(first), a.cross_head_outputs.cols(), rows,
                   w.cross_output, a.cross_attention_output.row(first), d,
                   w.cross_output_bias);  // (rows, d_model)
  if (c.norm_after())
    add_and_normalize(c, a.residual_mid, a.cross_attention_output, a.residual_cross, first,
                      w.cross_norm_weight, w.cross_norm_bias);
  else
    a.residual_cross.rows_from(first) =
        a.residual_mid.matrix().bottomRows(rows) + a.cross_attention_output.rows_from(first);
}

}  // namespace attnviz
