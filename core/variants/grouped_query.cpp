#include "core/variants/grouped_query.hpp"

#include <string>

namespace attnviz {

Result<GroupedQueryCost> grouped_query_cost(const AttentionConfig& config, int groups) {
  if (groups < 1 || groups > config.heads || config.heads % groups != 0)
    return Status::error("kv_groups must divide heads: " + std::to_string(config.heads) +
                         " heads cannot be shared out among " + std::to_string(groups) +
                         " key/value groups");
  const std::int64_t heads = config.heads, d_model = config.d_model, d_k = config.d_k,
                     d_v = config.d_v;
  GroupedQueryCost cost;
  cost.groups = groups;
  cost.query_weights = heads * d_model * d_k;
  cost.key_value_weights = groups * d_model * (d_k + d_v);
  cost.output_weights = heads * d_v * d_model;
  cost.cache_per_token = groups * (d_k + d_v);
  return cost;
}

std::vector<int> kv_group_choices(int heads) {
  std::vector<int> choices;
  for (int g = heads; g >= 1; --g)
    if (heads % g == 0) choices.push_back(g);
  return choices;
}

}  // namespace attnviz
