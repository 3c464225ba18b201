// The stages of AttentionEngine::compute, one function each, in the order the engine runs them.
// The engine is the API; these are exposed so that the micro benchmarks
// (tests/bench/micro_benchmarks.cpp) time exactly the code the engine runs. None validates its
// input (compute() does, before any stage runs) and none allocates once its outputs have their
// shapes.
#pragma once

#include "core/engine/attention.hpp"

namespace attnviz::stages {

// dst = lhs · rhs (dst already (lhs.rows(), rhs.cols())), as the engine multiplies: products up
// to 2^19 multiply-adds by its small-product kernel, larger ones by Eigen's GEMM a band of columns
// at a time so that Eigen's packed blocks stay on the stack: no heap allocation.
void multiply(const Matrix& lhs, const Matrix& rhs, Matrix& dst);

// Step 1 checks that every head's W_Q, W_K and W_V are finite, where they are or as it copies
// them for its product: the one pass over them before the product (compute() has
// check_parameters() check every other value). Each returns false when one is not finite.

// Step 1 for small products whose heads are 8 wide (an even number of them) or a multiple of 16
// (projects_directly() says when): part 1 checks the weights and, when heads are 8 wide, copies
// each pair's rows side by side into a block of `paired`, (d_model, 16): every W_Q block, then
// every W_K block, then every W_V block, (paired_weights_rows(), 16) in all. Part 2 makes each
// head's Q, K and V in place from those blocks or from its own weights, with no packed copy of
// every head's weights and no copy of the results: heads [first_head, end_head) (an even number
// of them when they are 8 wide).
bool projects_directly(const AttentionConfig& config, Eigen::Index n_query, Eigen::Index n_key);
Eigen::Index paired_weights_rows(const AttentionConfig& config);
bool check_and_pair_projection_weights(const Parameters& parameters, const AttentionConfig& config,
                                       Matrix& paired);
void project_directly(std::vector<HeadResult>& heads, const Parameters& parameters,
                      const Matrix& paired, const AttentionConfig& config, const Matrix& X_query,
                      const Matrix& X_key, int first_head, int end_head);

// Step 1, part 1, otherwise: every head's W_Q, W_K and W_V side by side,
// [W_Q⁰ … W_Q^{H-1} | W_K⁰ … W_K^{H-1} | W_V⁰ … W_V^{H-1}]   (d_model, H·(2·d_k + d_v)),
// so that one product projects every head: X · packed = [Q⁰ … | K⁰ … | V⁰ …].
bool pack_projection_weights(const Parameters& parameters, const AttentionConfig& config,
                             Matrix& packed);

// Step 1, part 2: head h's Q, K and V copied out of the products of every head. queries holds
// the Q columns at query_offset, keys_values the K then the V columns at key_offset.
void extract_head_projections(HeadResult& head, int h, const AttentionConfig& config,
                              const Matrix& queries, Eigen::Index query_offset,
                              const Matrix& keys_values, Eigen::Index key_offset);

// Steps 2 to 6 work on a band of queries, rows [first, first + rows) of the head's scores; the
// engine runs them band by band (rows_per_band: 1 MiB of scores), so that a band's scores stay
// in cache from the product that makes them to the one that uses them. The work on the keys
// alone is done with the first band (first == 0).

// How many query rows a band has, for n_key keys.
Eigen::Index rows_per_band(Eigen::Index n_key);

// Step 2: raw_scores (rows, n_key) = compat(q_i, k_j), with the compatibility function's
// working buffers (query_projection, key_projection and its transpose, norms, key_transposed)
// filled.
void compatibility_scores(HeadResult& head, const HeadParameters& parameters,
                          const AttentionConfig& config, Eigen::Index first, Eigen::Index rows);

// Steps 3 to 5: scaled_scores, masked_scores, weights and fully_masked_rows of the band, and
// overflow (false with the first band, then true when scores are not finite).
void scale_mask_softmax(HeadResult& head, const AttentionConfig& config,
                        const MaskMatrix* custom_mask, Eigen::Index first, Eigen::Index rows);

// Step 6: output (rows, d_v) = weights · V; overflow also when V (checked with the first band)
// or the output is not finite. When head.value_groups is sized ((n_key + g - 1) / g, 16) for
// g = keys_per_value_group() > 0 (d_v divides 16, the product is small and a vector is one
// 16-float register), the first band fills it with V's rows by groups of g keys, and the product
// goes over those groups, 16 lanes at a time; when it is empty, over the rows of V.
Eigen::Index keys_per_value_group(const AttentionConfig& config, Eigen::Index n_query,
                                  Eigen::Index n_key);
void weighted_sum(HeadResult& head, Eigen::Index first, Eigen::Index rows);

}  // namespace attnviz::stages
