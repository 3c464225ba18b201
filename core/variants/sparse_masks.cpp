#include "core/variants/sparse_masks.hpp"

#include <string>

namespace attnviz {

namespace {

Status at_least_one(int value, const char* name) {
  if (value < 1 || value > Limits::kMaxTokens)
    return Status::error(std::string(name) + " must be between 1 and " +
                         std::to_string(Limits::kMaxTokens) + ", got " + std::to_string(value));
  return Status::success();
}

Status sizes(int n_query, int n_key) {
  if (n_query < 0 || n_key < 0 || n_query > Limits::kMaxTokens || n_key > Limits::kMaxTokens)
    return Status::error("a sentence has 0 to " + std::to_string(Limits::kMaxTokens) + " tokens");
  return Status::success();
}

}  // namespace

Result<MaskMatrix> dilated_mask(int n_query, int n_key, int width, int dilation) {
  if (Status status = sizes(n_query, n_key); !status) return status;
  if (Status status = at_least_one(width, "the window's width"); !status) return status;
  if (Status status = at_least_one(dilation, "the dilation"); !status) return status;
  MaskMatrix mask = MaskMatrix::Zero(n_query, n_key);
  const int before = (width - 1) / 2;  // keys before the query's position; width − 1 − before after
  for (int i = 0; i < n_query; ++i)
    for (int t = -before; t < width - before; ++t) {
      const int j = i + t * dilation;
      if (j >= 0 && j < n_key) mask(i, j) = 1;
    }
  return mask;
}

Result<MaskMatrix> window_mask(int n_query, int n_key, int width) {
  return dilated_mask(n_query, n_key, width, 1);
}

Result<MaskMatrix> block_mask(int n_query, int n_key, int block) {
  if (Status status = sizes(n_query, n_key); !status) return status;
  if (Status status = at_least_one(block, "the block size"); !status) return status;
  MaskMatrix mask = MaskMatrix::Zero(n_query, n_key);
  for (int i = 0; i < n_query; ++i)
    for (int j = 0; j < n_key; ++j) mask(i, j) = i / block == j / block ? 1 : 0;
  return mask;
}

Result<MaskMatrix> with_global_tokens(MaskMatrix mask, const std::vector<int>& tokens) {
  for (const int token : tokens) {
    if (token < 0 || (token >= mask.rows() && token >= mask.cols()))
      return Status::error("global token " + std::to_string(token + 1) +
                           " is not in the sentence (" + std::to_string(mask.cols()) + " tokens)");
    if (token < mask.rows()) mask.row(token).setOnes();  // it sees every key
    if (token < mask.cols()) mask.col(token).setOnes();  // every query sees it
  }
  return mask;
}

PairCount count_pairs(const MaskMatrix& mask, bool causal) {
  PairCount count;
  for (Eigen::Index i = 0; i < mask.rows(); ++i)
    for (Eigen::Index j = 0; j < mask.cols(); ++j) {
      if (causal && j > i) continue;
      ++count.full;
      count.computed += mask(i, j) != 0 ? 1 : 0;
    }
  return count;
}

}  // namespace attnviz
