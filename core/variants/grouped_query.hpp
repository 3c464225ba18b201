// Multi-query and grouped-query attention (Shazeer, 2019; Ainslie et al., 2023): the heads share
// key/value heads, `groups` of them (config.kv_groups; the engine computes it). What sharing
// saves, counted for one layer of a config:
//   query weights       heads · d_model · d_k         (W_Q of every head)
//   key/value weights   groups · d_model · (d_k + d_v) (one W_K and W_V per group)
//   output weights      heads · d_v · d_model          (W_O)
//   K/V cache per token groups · (d_k + d_v) numbers   (what a decoder keeps of each token)
// groups = heads is ordinary multi-head attention; groups = 1 is multi-query attention.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"

#include <cstdint>
#include <vector>

namespace attnviz {

struct GroupedQueryCost {
  int groups = 0;
  std::int64_t query_weights = 0;
  std::int64_t key_value_weights = 0;
  std::int64_t output_weights = 0;
  std::int64_t cache_per_token = 0;  // numbers kept per token: K and V of every group
  std::int64_t total_weights() const { return query_weights + key_value_weights + output_weights; }
};

// The cost with `groups` key/value heads; an error naming kv_groups when groups is not between 1
// and config.heads or does not divide the heads.
Result<GroupedQueryCost> grouped_query_cost(const AttentionConfig& config, int groups);

// Every valid number of groups for config.heads, from heads (multi-head) down to 1 (multi-query).
std::vector<int> kv_group_choices(int heads);

}  // namespace attnviz
