// What grouped-query attention saves, counted by hand for small configs.
#include "core/variants/grouped_query.hpp"

#include <doctest/doctest.h>

namespace attnviz {

TEST_CASE("grouped-query costs: weights and the K/V cache per token, counted by hand") {
  // 4 heads of d_k 3, d_v 2 over d_model 8.
  const AttentionConfig config{.d_model = 8, .heads = 4, .d_k = 3, .d_v = 2};
  const Result<GroupedQueryCost> multi_head = grouped_query_cost(config, 4);
  REQUIRE(multi_head);
  CHECK(multi_head->query_weights == 4 * 8 * 3);            // 96
  CHECK(multi_head->key_value_weights == 4 * 8 * (3 + 2));  // 160
  CHECK(multi_head->output_weights == 4 * 2 * 8);           // 64
  CHECK(multi_head->cache_per_token == 4 * (3 + 2));        // 20
  CHECK(multi_head->total_weights() == 96 + 160 + 64);
  const Result<GroupedQueryCost> multi_query = grouped_query_cost(config, 1);
  REQUIRE(multi_query);
  CHECK(multi_query->key_value_weights == 40);
  CHECK(multi_query->cache_per_token == 5);
  CHECK(multi_query->query_weights == multi_head->query_weights);
  const Result<GroupedQueryCost> two = grouped_query_cost(config, 2);
  REQUIRE(two);
  CHECK(two->cache_per_token == 10);
}

TEST_CASE("grouped-query costs refuse groups that do not divide the heads") {
  const AttentionConfig config{.d_model = 8, .heads = 6, .d_k = 1, .d_v = 1};
  for (int groups : {0, 4, 5, 7, -1}) {
    CAPTURE(groups);
    const Result<GroupedQueryCost> cost = grouped_query_cost(config, groups);
    REQUIRE(!cost);
    CHECK(cost.status().message().find("kv_groups must divide heads") != std::string::npos);
  }
  CHECK(kv_group_choices(6) == std::vector<int>{6, 3, 2, 1});
  CHECK(kv_group_choices(1) == std::vector<int>{1});
  CHECK(kv_group_choices(16) == std::vector<int>{16, 8, 4, 2, 1});
}

}  // namespace attnviz
