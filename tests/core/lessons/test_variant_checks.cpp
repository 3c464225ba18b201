// The lesson checks about cheaper attention (flash_exact, flash_raises_max,
// linformer_most_changed, same_bucket/different_bucket, decode_matches_full, pattern_hides,
// pairs_below) and kv_shared/kv_separate on the one-layer scenario: each true claim holds, each
// false one fails with the real numbers, and bad settings are refused where the lesson is read.
#include "core/lessons/lesson.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>

namespace attnviz {
namespace {

// The sentence and weights of lessons 15 to 19.
constexpr const char* kScenario =
    R"({"target": "the animal did not cross the street because it was too tired", "d_model": 8,
        "heads": 4, "d_k": 2, "d_v": 2, "kv_groups": 2, "seed": 42, "temperature": 0.15)";

Result<Lesson> lesson_with(const std::string& scenario_extra, const std::string& step_fields) {
  return parse_lesson(R"({"format": "attnviz-lesson", "title": "t", "scenario": )" +
                          std::string(kScenario) + scenario_extra +
                          R"(}, "steps": [{"title": "s", )" + step_fields + "}]}",
                      "test");
}

std::vector<std::string> failures_of(const std::string& checks,
                                     const std::string& scenario_extra = "") {
  Result<Lesson> load = lesson_with(scenario_extra, R"("checks": [)" + checks + "]");
  INFO(load.error());
  REQUIRE(load.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(load->steps[0].scenario));
  return failed_checks(load->steps[0], pipeline);
}

std::string only_failure(const std::string& checks, const std::string& scenario_extra = "") {
  const std::vector<std::string> failures = failures_of(checks, scenario_extra);
  REQUIRE(failures.size() == 1);
  return failures[0];
}

}  // namespace

TEST_CASE("flash checks: exact output, and the key tiles where a row's maximum rises") {
  CHECK(failures_of(R"({"check": "flash_exact", "head": 0, "tile": 4},
                       {"check": "flash_exact", "head": 3, "tile": 5})")
            .empty());
  // Where "street"'s running maximum rises, from the engine's scores in tiles of 4 keys, here.
  Result<Lesson> load = lesson_with("", R"("checks": [])");
  REQUIRE(load.ok());
  Pipeline pipeline;
  REQUIRE(pipeline.run(load->steps[0].scenario));
  const Matrix& scores = pipeline.result().heads[0].masked_scores;  // (n_query, n_key)
  const int street = resolve_token(pipeline.target(), "street");
  std::string expected;
  float running = -std::numeric_limits<float>::infinity();
  for (int tile = 0; tile * 4 < scores.cols(); ++tile) {
    const float largest = scores.row(street).segment(tile * 4, 4).maxCoeff();
    if (largest > running) expected += (expected.empty() ? "" : ", ") + std::to_string(tile);
    running = std::max(running, largest);
  }
  MESSAGE("street's maximum rises at key tiles " << expected);
  CHECK(failures_of(R"({"check": "flash_raises_max", "head": 0, "query": "street", "tile": 4,
                       "tiles": [)" +
                    expected + "]}")
            .empty());
  const std::string failure = only_failure(
      R"({"check": "flash_raises_max", "head": 0, "query": "street", "tile": 4, "tiles": [2]})");
  CHECK(failure.find("rises at key tile") != std::string::npos);
  // Hard attention has no softmax to tile: the claim says so rather than holding.
  CHECK(only_failure(R"({"check": "flash_exact", "head": 0})", R"(, "hard": true)").find("hard") !=
        std::string::npos);
}

TEST_CASE("linformer_most_changed names the query whose output moves most, or fails") {
  CHECK(failures_of(R"({"check": "linformer_most_changed", "head": 0, "k": 2, "query": "was"})",
                    R"(, "heads": 2, "d_k": 4, "d_v": 4, "kv_groups": 2)")
            .empty());
  const std::string failure =
      only_failure(R"({"check": "linformer_most_changed", "head": 0, "k": 2, "query": "the"})",
                   R"(, "heads": 2, "d_k": 4, "d_v": 4, "kv_groups": 2)");
  CHECK(failure.find("the output of \"was\" moves most") != std::string::npos);
  CHECK(only_failure(R"({"check": "linformer_most_changed", "head": 0, "k": 2, "query": "was"})",
                     R"(, "causal": true)")
            .find("no mask") != std::string::npos);
}

TEST_CASE("same_bucket and different_bucket read Reformer's first round") {
  CHECK(failures_of(R"({"check": "different_bucket", "head": 0, "query": "it", "key": "animal",
                        "buckets": 4},
                       {"check": "same_bucket", "head": 0, "query": "it", "key": "animal",
                        "buckets": 1})",
                    R"(, "heads": 2, "d_k": 4, "d_v": 4, "kv_groups": 2)")
            .empty());
  CHECK(only_failure(R"({"check": "same_bucket", "head": 0, "query": "it", "key": "animal"})",
                     R"(, "heads": 2, "d_k": 4, "d_v": 4, "kv_groups": 2)")
            .find("lands in bucket") != std::string::npos);
  CHECK(!lesson_with("", R"("checks": [{"check": "same_bucket", "query": "it", "key": "the",
                                          "buckets": 3}])")
             .ok());
}

TEST_CASE("decode_matches_full holds for every head, grouped keys included") {
  CHECK(failures_of(R"({"check": "decode_matches_full", "head": 0},
                       {"check": "decode_matches_full", "head": 1},
                       {"check": "decode_matches_full", "head": 3})",
                    R"(, "causal": true)")
            .empty());
  CHECK(!lesson_with(R"(, "mode": "cross", "source": "a b")",
                     R"("checks": [{"check": "decode_matches_full"}])")
             .ok());
  // A student who switches the step to cross-attention: the claim no longer applies, and says so.
  Result<Lesson> load = lesson_with("", R"("checks": [{"check": "decode_matches_full"}])");
  REQUIRE(load.ok());
  Scenario cross = load->steps[0].scenario;
  cross.edit_one_layer()->mode = Mode::Cross;
  cross.edit_one_layer()->source = "un animal fatigue";
  Pipeline pipeline;
  REQUIRE(pipeline.run(cross));
  const std::vector<std::string> failures = failed_checks(load->steps[0], pipeline);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].find("needs self-attention") != std::string::npos);
}

TEST_CASE("pattern_hides and pairs_below: a window of 3 over 12 tokens computes 34 of 144 pairs") {
  const std::string window = R"(, "mask_pattern": {"kind": "window", "width": 3})";
  CHECK(failures_of(R"({"check": "pattern_hides", "query": "it", "key": "animal"},
                       {"check": "pairs_below", "value": 0.24})",
                    window)
            .empty());
  CHECK(only_failure(R"({"check": "pattern_hides", "query": "it", "key": "was"})", window)
            .find("still sees") != std::string::npos);
  // 12 rows of 3, less the two ends: 34 pairs, 0.236 of 144.
  CHECK(only_failure(R"({"check": "pairs_below", "value": 0.23})", window).find("34 of 144") !=
        std::string::npos);
  CHECK(!lesson_with("", R"("checks": [{"check": "pairs_below", "value": 0.5}])").ok());
}

TEST_CASE("kv_shared and kv_separate on the one-layer scenario follow kv_groups") {
  CHECK(failures_of(R"({"check": "kv_shared", "head": 0, "head_b": 1},
                       {"check": "kv_separate", "head": 1, "head_b": 2})")
            .empty());
  CHECK(only_failure(R"({"check": "kv_shared", "head": 1, "head_b": 2})")
            .find("read different keys and values") != std::string::npos);
  CHECK(only_failure(R"({"check": "kv_separate", "head": 0, "head_b": 3})", R"(, "kv_groups": 1)")
            .find("read the same keys and values") != std::string::npos);
}

TEST_CASE("a step's method belongs to the Cheaper attention view and must be one of its parts") {
  CHECK(lesson_with("", R"("view": "cheaper", "method": "reformer")").ok());
  Result<Lesson> no_view = lesson_with("", R"("view": "heatmaps", "method": "reformer")");
  REQUIRE(!no_view.ok());
  CHECK(no_view.error().find("steps[0].method") != std::string::npos);
  Result<Lesson> unknown = lesson_with("", R"("view": "cheaper", "method": "performer")");
  REQUIRE(!unknown.ok());
  CHECK(unknown.error().find("unknown method \"performer\"") != std::string::npos);
}

}  // namespace attnviz
