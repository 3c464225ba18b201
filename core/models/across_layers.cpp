#include "core/models/across_layers.hpp"

#include "core/models/blas.hpp"
#include "core/models/norms.hpp"

#include <cmath>

namespace attnviz {

Matrix residual_norms(const TransformerForward& forward) {
  const int layers = forward.model().config().n_layers, n = forward.size();
  Matrix norms(layers + 1, n);  // (n_layers + 1, n)
  for (int i = 0; i < n; ++i) {
    norms(0, i) =
        Eigen::Map<const RowVector>(forward.embedded().row(i), forward.embedded().cols()).norm();
    for (int l = 0; l < layers; ++l) {
      const RowMatrix& out = forward.layer(l).residual_out;
      norms(l + 1, i) = Eigen::Map<const RowVector>(out.row(i), out.cols()).norm();
    }
  }
  return norms;
}

std::vector<std::vector<LensPrediction>> logit_lens(const TransformerForward& forward) {
  const TransformerConfig& c = forward.model().config();
  const int n = forward.size(), vocab = c.vocab_size;
  std::vector<std::vector<LensPrediction>> lens(static_cast<std::size_t>(c.n_layers));
  RowVector logits(vocab);  // (vocab_size)
  for (int l = 0; l < c.n_layers; ++l) {
    const RowMatrix& stream = forward.layer(l).residual_out;  // (n, d_model)
    for (int i = 0; i < n; ++i) {
      // 1. The model's read-out, as it applies it after its last layer (a decoder's final norm,
      // or BERT's MLM head), and the unembedding; 2. the likeliest token and its probability.
      forward.read_out(stream.row(i), logits.data());
      if (!logits.allFinite()) {  // the stream overflowed (a weight edited far too large)
        lens[static_cast<std::size_t>(l)].push_back({-1, 0.0f});
        continue;
      }
      Eigen::Index best = 0;
      const float largest = logits.maxCoeff(&best);
      const double sum = (logits.array() - largest).exp().cast<double>().sum();
      lens[static_cast<std::size_t>(l)].push_back(
          {static_cast<int>(best), static_cast<float>(1.0 / sum)});
    }
  }
  return lens;
}

std::vector<Matrix> attention_rollout(const TransformerForward& forward) {
  const TransformerConfig& c = forward.model().config();
  const int n = forward.size();
  std::vector<Matrix> rollout;
  Matrix product = Matrix::Identity(n, n);  // (n_query, n_key)
  for (int l = 0; l < c.n_layers; ++l) {
    // Â = ½ · mean over heads of α + ½ · I, rows summing to 1.
    Matrix mixed = Matrix::Zero(n, n);  // (n_query, n_key)
    for (int h = 0; h < c.n_heads; ++h) mixed += forward.attention(l, h);
    mixed *= 0.5f / static_cast<float>(c.n_heads);
    mixed.diagonal().array() += 0.5f;
    for (int i = 0; i < n; ++i) mixed.row(i) /= mixed.row(i).sum();
    product = mixed * product;
    rollout.push_back(product);
  }
  return rollout;
}

}  // namespace attnviz
