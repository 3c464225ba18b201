// Two attention maps compared cell by cell (app/view/attention_difference.hpp), as the Compare
// view shows them. Every expected value is worked out by hand from the matrices beside it.
#include "app/view/attention_difference.hpp"

#include <doctest/doctest.h>

#include "tests/support/matrix_of.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace attnviz::view {
namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

Matrix matrix(Eigen::Index rows, Eigen::Index cols, std::initializer_list<float> values) {
  return testing::matrix_of(rows, cols, values);
}

}  // namespace

TEST_CASE("the difference of two maps: its sign, largest cell and mean, masked cells left out") {
  const Matrix a = matrix(2, 2, {1.0f, 0.0f, 0.25f, 0.75f});
  const Matrix b = matrix(2, 2, {0.5f, 0.5f, 0.25f, 0.75f});
  AttentionDifference d;
  compute_difference(a, nullptr, b, nullptr, false, d);  // A − B
  CHECK(d.values(0, 0) == 0.5f);
  CHECK(d.values(0, 1) == -0.5f);
  CHECK(d.largest == 0.5f);
  CHECK(d.largest_at[0] == 0);
  CHECK(d.largest_at[1] == 0);                          // the first of the two equal ones
  CHECK(d.mean == doctest::Approx(0.25));               // (0.5 + 0.5 + 0 + 0) / 4
  compute_difference(a, nullptr, b, nullptr, true, d);  // B − A: what grew since is positive
  CHECK(d.values(0, 1) == 0.5f);

  // Cell (0, 1) masked in both: no weight at all, out of the largest and the mean; masked in one
  // only, it is compared.
  const Matrix masked_a = matrix(2, 2, {0, kMasked, kMasked, 0});
  const Matrix masked_b = matrix(2, 2, {0, kMasked, 0, 0});
  const Matrix c = matrix(2, 2, {0.1f, 0.0f, 0.0f, 0.9f});
  const Matrix e = matrix(2, 2, {0.1f, 0.9f, 0.3f, 0.7f});
  compute_difference(c, &masked_a, e, &masked_b, false, d);
  CHECK(d.masked(0, 1) == kMasked);
  CHECK(d.masked(1, 0) == 0.0f);
  CHECK(d.values(0, 1) == 0.0f);
  CHECK(d.largest == doctest::Approx(0.3));
  CHECK(d.largest_at[0] == 1);
  CHECK(d.largest_at[1] == 0);
  CHECK(d.mean == doctest::Approx((0.0 + 0.3 + 0.2) / 3));
}

TEST_CASE("a non-finite difference counts as none") {
  const Matrix a = matrix(1, 2, {std::numeric_limits<float>::infinity(), 1.0f});
  const Matrix b = matrix(1, 2, {0.0f, 0.5f});
  AttentionDifference d;
  compute_difference(a, nullptr, b, nullptr, false, d);
  CHECK(d.values(0, 0) == 0.0f);
  CHECK(d.largest == 0.5f);
  CHECK(d.largest_at[1] == 1);
}

TEST_CASE("a signed difference and the stride of labels") {
  char text[16];
  format_signed(text, sizeof text, 0.42f);
  CHECK(std::string(text) == "+0.42");
  format_signed(text, sizeof text, -0.05f);
  CHECK(std::string(text) == "-0.050");  // two significant digits (format_significant)
  format_signed(text, sizeof text, 0.0f);
  CHECK(std::string(text) == "0");
  format_signed(text, 1, 0.5f);
  CHECK(text[0] == '\0');
  CHECK(label_stride(10.0f, 5.0f) == 1);
  CHECK(label_stride(4.0f, 10.0f) == 3);
  CHECK(label_stride(0.0f, 10.0f) == 1);
}

TEST_CASE("the line under the heatmaps: same, two heads, a snapshot, words changed") {
  AttentionDifference same;
  compute_difference(matrix(1, 1, {0.5f}), nullptr, matrix(1, 1, {0.5f}), nullptr, false, same);
  DifferenceSummary s = summarize_difference(same, true, false, "cat", "sat", 0.5f, 0.5f);
  REQUIRE(s.parts == 1);
  CHECK(std::string(s.text[0]) == "A and B are the same in every cell.");

  AttentionDifference d;
  compute_difference(matrix(1, 2, {0.75f, 0.25f}), nullptr, matrix(1, 2, {0.5f, 0.5f}), nullptr,
                     false, d);
  s = summarize_difference(d, true, false, "cat", "sat", 0.75f, 0.5f);
  REQUIRE(s.parts == 2);
  CHECK(std::string(s.text[0]) ==
        "largest difference: cat \xe2\x86\x92 sat, +0.25 (A 0.75, B 0.50)");
  CHECK(std::string(s.text[1]) == "mean |A \xe2\x88\x92 B| = 0.250");
  CHECK_FALSE(s.warning[0]);

  compute_difference(matrix(1, 2, {0.75f, 0.25f}), nullptr, matrix(1, 2, {0.5f, 0.5f}), nullptr,
                     true, d);
  s = summarize_difference(d, false, true, "cat", "sat", 0.75f, 0.5f);
  REQUIRE(s.parts == 3);
  CHECK(s.warning[0]);
  CHECK(std::string(s.text[0]).find("some words changed") == 0);
  CHECK(std::string(s.text[1]) ==
        "largest change since the snapshot: cat \xe2\x86\x92 sat, 0.75 \xe2\x86\x92 0.50 (-0.25)");
}

}  // namespace attnviz::view

namespace attnviz::view {

TEST_CASE("a snapshot keeps every head's weights and the tokens, and says what it was of") {
  AttentionResult result;
  result.n_query = 2;
  result.n_key = 3;
  result.heads.resize(2);
  for (HeadResult& head : result.heads) {
    head.weights = Matrix::Constant(2, 3, 1.0f / 3.0f);
    head.masked_scores = Matrix::Zero(2, 3);
  }
  result.heads[1].masked_scores(0, 2) = -std::numeric_limits<float>::infinity();
  const Tokenization queries = tokenize("the cat", 8), keys = tokenize("le chat noir", 8);
  std::tm at{};
  at.tm_hour = 16;
  at.tm_min = 2;
  at.tm_sec = 11;
  AttentionSnapshot snapshot;
  take_snapshot(result, queries, keys, true, at, snapshot);
  CHECK(snapshot.taken);
  CHECK(snapshot.id == 1);
  CHECK(snapshot.weights.size() == 2);
  CHECK(snapshot.key_tokens.size() == 3);
  CHECK(std::string(snapshot.time) == "16:02:11");
  CHECK(std::string(snapshot.label) == "snapshot of 16:02:11, 2 heads, 2 \xc3\x97 3 tokens");
  CHECK(std::string(snapshot.short_label) == "snapshot of 16:02:11");
  CHECK(snapshot.shown_weights[1](0, 2) != snapshot.weights[1](0, 2));  // marked masked
  take_snapshot(result, queries, keys, true, at, snapshot);
  CHECK(snapshot.id == 2);  // a new snapshot: its texture is uploaded again
}

}  // namespace attnviz::view
