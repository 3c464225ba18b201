#include "core/models/transformer.hpp"

#include <cmath>
#include <cstring>

namespace attnviz {
namespace {

// The error for a view whose shape is not what the configuration says, or "" when it is.
std::string check_matrix(const MatrixView& m, const std::string& name, int rows, int cols,
                         bool optional = false) {
  if (m.empty()) return optional ? std::string() : name + ": missing";
  if (m.rows != rows || m.cols != cols || m.stride < cols)
    return name + ": shape (" + std::to_string(m.rows) + ", " + std::to_string(m.cols) +
           "), expected (" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  return {};
}

std::string check_vector(const VectorView& v, const std::string& name, int size, bool wanted) {
  if (!wanted) return v.empty() ? std::string() : name + ": not expected in this architecture";
  if (v.empty()) return name + ": missing";
  if (v.size != size)
    return name + ": " + std::to_string(v.size) + " values, expected " + std::to_string(size);
  return {};
}

std::string check_config(const TransformerConfig& c) {
  if (c.d_model < 1 || c.n_layers < 1 || c.n_heads < 1 || c.n_kv_heads < 1 || c.d_head < 1 ||
      c.d_ff < 1 || c.vocab_size < 1 || c.context < 1)
    return "every size must be at least 1";
  if (c.n_heads % c.n_kv_heads != 0)
    return std::to_string(c.n_heads) + " query heads do not share " + std::to_string(c.n_kv_heads) +
           " key/value heads evenly";
  if (c.positions == PositionKind::Rotary && c.d_head % 2 != 0)
    return "RoPE needs an even head width, not " + std::to_string(c.d_head);
  if (!(c.norm_epsilon >= 0.0f && c.norm_epsilon < 1.0f)) return "the norm's epsilon is not small";
  return {};
}

}  // namespace

float* Transformer::allocate(std::size_t count) {
  owned_.push_back(std::make_unique<float[]>(count));  // value-initialized: zeros
  return owned_.back().get();
}

Status Transformer::set_weights(TransformerConfig config, TransformerWeights weights,
                                std::string source, std::string format) {
  const TransformerConfig& c = config;
  std::string problem = check_config(c);
  const bool layer_norm = c.norm == NormKind::LayerNorm;
  const bool biases = layer_norm;  // GPT-2 and BERT have biases; Llama has none
  const bool norm_after = c.norm_after();
  const bool head = !weights.unembedding.empty();
  const int q_width = c.n_heads * c.d_head, kv_width = c.n_kv_heads * c.d_head;
  const auto first = [&problem](std::string found) {
    if (problem.empty()) problem = std::move(found);
  };
  if (problem.empty()) {
    if (norm_after && !layer_norm) first("a norm after each sublayer must be a LayerNorm");
    if (c.token_types < 0 || c.token_types > 1024) first("token types: not 0 to 1,024");
    first(check_matrix(weights.token_embedding, "token embedding", c.vocab_size, c.d_model));
    if (c.position_offset < 0 || c.position_offset > 1024) first("position offset: not 0 to 1,024");
    if (!(std::isfinite(c.embedding_scale) && c.embedding_scale > 0.0f))
      first("the embedding scale is not a positive number");
    if (c.positions == PositionKind::Learned)
      first(check_matrix(weights.position_embedding, "position embedding",
                         c.context + c.position_offset, c.d_model));
    else if (!weights.position_embedding.empty())
      first("position embedding: not expected with RoPE");
    if (c.token_types > 0)
      first(check_matrix(weights.token_type_embedding, "token type embedding", c.token_types,
                         c.d_model));
    else if (!weights.token_type_embedding.empty())
      first("token type embedding: not expected without token types");
    // Under a norm after each sublayer the embeddings' norm is optional (Marian has none).
    const bool embedding_norm = norm_after && (!weights.embedding_norm_weight.empty() ||
                                               !weights.embedding_norm_bias.empty());
    first(check_vector(weights.embedding_norm_weight, "embedding norm weight", c.d_model,
                       embedding_norm));
    first(check_vector(weights.embedding_norm_bias, "embedding norm bias", c.d_model,
                       embedding_norm));
    if (static_cast<int>(weights.layers.size()) != c.n_layers)
      first(std::to_string(weights.layers.size()) + " layers, expected " +
            std::to_string(c.n_layers));
    for (std::size_t i = 0; i < weights.layers.size() && problem.empty(); ++i) {
      const TransformerLayer& l = weights.layers[i];
      const std::string at = "layer " + std::to_string(i) + ": ";
      first(check_vector(l.attention_norm_weight, at + "attention norm weight", c.d_model, true));
      first(check_vector(l.attention_norm_bias, at + "attention norm bias", c.d_model, layer_norm));
      first(check_matrix(l.query, at + "W_Q", c.d_model, q_width));
      first(check_matrix(l.key, at + "W_K", c.d_model, kv_width));
      first(check_matrix(l.value, at + "W_V", c.d_model, kv_width));
      first(check_vector(l.query_bias, at + "query bias", q_width, biases));
      first(check_vector(l.key_bias, at + "key bias", kv_width, biases));
      first(check_vector(l.value_bias, at + "value bias", kv_width, biases));
      first(check_matrix(l.output, at + "W_O", q_width, c.d_model));
      first(check_vector(l.output_bias, at + "output bias", c.d_model, biases));
      first(check_vector(l.mlp_norm_weight, at + "MLP norm weight", c.d_model, true));
      first(check_vector(l.mlp_norm_bias, at + "MLP norm bias", c.d_model, layer_norm));
      first(check_matrix(l.up, at + "MLP up", c.d_model, c.d_ff));
      if (c.feed_forward == FeedForwardKind::SwiGLU)
        first(check_matrix(l.gate, at + "MLP gate", c.d_model, c.d_ff));
      else if (!l.gate.empty())
        first(at + "MLP gate: not expected in a GELU MLP");
      first(check_matrix(l.down, at + "MLP down", c.d_ff, c.d_model));
      first(check_vector(l.up_bias, at + "MLP up bias", c.d_ff, biases));
      first(check_vector(l.down_bias, at + "MLP down bias", c.d_model, biases));
      const bool cross = c.cross_attention;
      if (cross && (c.n_kv_heads != c.n_heads || !layer_norm))
        first("cross-attention: every head with its own keys and values, and LayerNorm");
      first(
          check_vector(l.cross_norm_weight, at + "cross-attention norm weight", c.d_model, cross));
      first(check_vector(l.cross_norm_bias, at + "cross-attention norm bias", c.d_model, cross));
      first(check_matrix(l.cross_query, at + "cross W_Q", c.d_model, q_width, !cross));
      first(check_matrix(l.cross_key, at + "cross W_K", c.d_model, q_width, !cross));
      first(check_matrix(l.cross_value, at + "cross W_V", c.d_model, q_width, !cross));
      first(check_matrix(l.cross_output, at + "cross W_O", q_width, c.d_model, !cross));
      if (!cross && !(l.cross_query.empty() && l.cross_key.empty() && l.cross_value.empty() &&
                      l.cross_output.empty()))
        first(at + "cross-attention: not expected without an encoder");
      first(check_vector(l.cross_query_bias, at + "cross query bias", q_width, cross));
      first(check_vector(l.cross_key_bias, at + "cross key bias", q_width, cross));
      first(check_vector(l.cross_value_bias, at + "cross value bias", q_width, cross));
      first(check_vector(l.cross_output_bias, at + "cross output bias", c.d_model, cross));
    }
    // The output: a decoder's final norm and unembedding; BERT's MLM head, when it has one;
    // an encoder–decoder's decoder with its norms after the sublayers (Marian, BART): the
    // unembedding alone.
    if (!norm_after && !head) first("unembedding: missing");
    if (c.cross_attention && !head) first("unembedding: missing (a decoder predicts tokens)");
    const bool transform = norm_after && head && !c.cross_attention;
    if (transform)
      first(check_matrix(weights.head_transform, "head transform", c.d_model, c.d_model));
    else if (!weights.head_transform.empty())
      first("head transform: not expected here");
    first(check_vector(weights.head_transform_bias, "head transform bias", c.d_model, transform));
    const bool final_norm = head && (!norm_after || transform);
    first(check_vector(weights.final_norm_weight, "final norm weight", c.d_model, final_norm));
    first(check_vector(weights.final_norm_bias, "final norm bias", c.d_model,
                       final_norm && layer_norm));
    if (head) first(check_matrix(weights.unembedding, "unembedding", c.vocab_size, c.d_model));
    if (!weights.unembedding_bias.empty())
      first(check_vector(weights.unembedding_bias, "unembedding bias", c.vocab_size, head));
  }
  if (!problem.empty()) return Status::error(source + ": " + problem);
  config_ = std::move(config);
  weights_ = std::move(weights);
  original_weights_ = weights_;
  source_ = std::move(source);
  format_ = std::move(format);
  return Status::success();
}

std::size_t Transformer::parameter_count() const {
  const auto size = [](const MatrixView& m) {
    return m.empty() ? std::size_t{0} : static_cast<std::size_t>(m.rows) * m.cols;
  };
  const auto length = [](const VectorView& v) { return static_cast<std::size_t>(v.size); };
  const TransformerWeights& w = original_weights_;
  std::size_t count = size(w.token_embedding) + size(w.position_embedding) +
                      size(w.token_type_embedding) + length(w.embedding_norm_weight) +
                      length(w.embedding_norm_bias) + size(w.head_transform) +
                      length(w.head_transform_bias) + length(w.final_norm_weight) +
                      length(w.final_norm_bias) + length(w.unembedding_bias);
  if (w.unembedding.data != w.token_embedding.data) count += size(w.unembedding);  // untied
  for (const TransformerLayer& l : w.layers)
    count += length(l.attention_norm_weight) + length(l.attention_norm_bias) + size(l.query) +
             size(l.key) + size(l.value) + length(l.query_bias) + length(l.key_bias) +
             length(l.value_bias) + size(l.output) + length(l.output_bias) +
             length(l.mlp_norm_weight) + length(l.mlp_norm_bias) + size(l.up) + size(l.gate) +
             size(l.down) + length(l.up_bias) + length(l.down_bias) + length(l.cross_norm_weight) +
             length(l.cross_norm_bias) + size(l.cross_query) + size(l.cross_key) +
             size(l.cross_value) + size(l.cross_output) + length(l.cross_query_bias) +
             length(l.cross_key_bias) + length(l.cross_value_bias) + length(l.cross_output_bias);
  if (encoder_) {  // its own weights; an embedding it shares with the decoder counted once
    count += encoder_->parameter_count();
    if (encoder_->original_weights_.token_embedding.data == w.token_embedding.data)
      count -= size(w.token_embedding);
  }
  return count;
}

MatrixView& matrix_of(TransformerLayer& layer, HeadMatrix matrix) {
  switch (matrix) {
    case HeadMatrix::Query:
      return layer.query;
    case HeadMatrix::Key:
      return layer.key;
    case HeadMatrix::Value:
      return layer.value;
    case HeadMatrix::Output:
      break;
  }
  return layer.output;
}

const MatrixView& matrix_of(const TransformerLayer& layer, HeadMatrix matrix) {
  return matrix_of(const_cast<TransformerLayer&>(layer), matrix);
}

MatrixView& Transformer::attention_matrix(int layer, HeadMatrix matrix) {
  return matrix_of(weights_.layers[static_cast<std::size_t>(layer)], matrix);
}

namespace {

// Where W[row, col] of head `head`'s block lies in the layer's whole matrix.
struct Cell {
  int row, col;
};

Cell head_cell(const TransformerConfig& c, int head, HeadMatrix matrix, int row, int col) {
  switch (matrix) {
    case HeadMatrix::Query:
      return {row, head * c.d_head + col};
    case HeadMatrix::Key:
    case HeadMatrix::Value:
      return {row, c.kv_head_of(head) * c.d_head + col};
    case HeadMatrix::Output:
      break;
  }
  return {head * c.d_head + row, col};
}

}  // namespace

float Transformer::head_weight(int layer, int head, HeadMatrix matrix, int row, int col) const {
  const Cell cell = head_cell(config_, head, matrix, row, col);
  return const_cast<Transformer*>(this)->attention_matrix(layer, matrix).at(cell.row, cell.col);
}

Status Transformer::set_head_weight(int layer, int head, HeadMatrix matrix, int row, int col,
                                    float value) {
  const TransformerConfig& c = config_;
  if (layer < 0 || layer >= c.n_layers)
    return Status::error("layer " + std::to_string(layer) + " is not one of the model's " +
                         std::to_string(c.n_layers));
  if (head < 0 || head >= c.n_heads)
    return Status::error("head " + std::to_string(head) + " is not one of the layer's " +
                         std::to_string(c.n_heads));
  const int rows = matrix == HeadMatrix::Output ? c.d_head : c.d_model;
  const int cols = matrix == HeadMatrix::Output ? c.d_model : c.d_head;
  if (row < 0 || row >= rows || col < 0 || col >= cols)
    return Status::error("(" + std::to_string(row) + ", " + std::to_string(col) +
                         ") is outside the head's " + std::to_string(rows) + " × " +
                         std::to_string(cols) + " matrix");
  if (!std::isfinite(value)) return Status::error("a weight must be a finite number");
  MatrixView& view = attention_matrix(layer, matrix);
  const MatrixView& on_disk =
      matrix_of(original_weights_.layers[static_cast<std::size_t>(layer)], matrix);
  if (view.data == on_disk.data) view = copy_for_edits(view);  // first edit: out of the file
  const Cell cell = head_cell(c, head, matrix, row, col);
  const_cast<float*>(view.data)[cell.row * view.stride + cell.col] = value;
  ++weights_version_;
  return Status::success();
}

Status Transformer::set_token_embedding(int token, int dimension, float value) {
  const TransformerConfig& c = config_;
  if (token < 0 || token >= c.vocab_size)
    return Status::error("token " + std::to_string(token) + " is not in the vocabulary of " +
                         std::to_string(c.vocab_size));
  if (dimension < 0 || dimension >= c.d_model)
    return Status::error("dimension " + std::to_string(dimension) + " is not one of the " +
                         std::to_string(c.d_model) + " of an embedding");
  if (!std::isfinite(value)) return Status::error("a weight must be a finite number");
  MatrixView& embedding = weights_.token_embedding;
  if (embedding.data == original_weights_.token_embedding.data) {  // first edit: copy it out
    const bool tied = weights_.unembedding.data == embedding.data;
    embedding = copy_for_edits(embedding);
    if (tied) weights_.unembedding = embedding;
  }
  const_cast<float*>(embedding.data)[token * embedding.stride + dimension] = value;
  ++weights_version_;
  return Status::success();
}

MatrixView Transformer::copy_for_edits(const MatrixView& view) {
  const std::size_t count = static_cast<std::size_t>(view.rows) * view.cols;
  edited_.push_back(std::make_unique<float[]>(count));
  float* copy = edited_.back().get();
  for (int r = 0; r < view.rows; ++r)
    std::memcpy(copy + static_cast<std::ptrdiff_t>(r) * view.cols, view.data + r * view.stride,
                sizeof(float) * static_cast<std::size_t>(view.cols));
  return MatrixView{copy, view.rows, view.cols, view.cols};
}

void Transformer::reset_weights() {
  weights_ = original_weights_;
  edited_.clear();
  ++weights_version_;
}

}  // namespace attnviz
