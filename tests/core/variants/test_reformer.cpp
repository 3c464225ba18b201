// Reformer's LSH attention (core/variants/reformer.hpp): with one bucket and one chunk it is full
// attention over the shared keys (computed plainly here, with the causal mask too); its hash
// depends only on a vector's direction; every pair it computes shares a bucket in some round and
// lies in the same or the previous chunk; rows sum to 1; bad settings are refused by name.
#include "core/variants/reformer.hpp"

#include "tests/support/random_matrix.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace attnviz {
namespace {

using testing::random_matrix;

// Full attention of Q over K = Q's rows at unit length, in double, no self-exclusion.
Eigen::MatrixXd full_shared_qk(const Matrix& Q, const Matrix& V, double scale, bool causal) {
  const Eigen::Index n = Q.rows();
  Eigen::MatrixXd K = Q.cast<double>();
  for (Eigen::Index j = 0; j < n; ++j) K.row(j) /= K.row(j).norm();
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n, V.cols());
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index last = causal ? i : n - 1;
    Eigen::VectorXd s(last + 1);
    for (Eigen::Index j = 0; j <= last; ++j) s(j) = scale * Q.row(i).cast<double>().dot(K.row(j));
    s = (s.array() - s.maxCoeff()).exp();
    s /= s.sum();
    for (Eigen::Index j = 0; j <= last; ++j) out.row(i) += s(j) * V.row(j).cast<double>();
  }
  return out;
}

}  // namespace

TEST_CASE("Reformer with one bucket and one chunk is full attention over the shared keys") {
  const Matrix Q = random_matrix(9, 4, 1), V = random_matrix(9, 3, 2);
  ReformerSettings settings;
  settings.buckets = 1;
  settings.chunk = 9;
  settings.exclude_self = false;
  for (const bool causal : {false, true}) {
    CAPTURE(causal);
    Result<ReformerResult> lsh = reformer_attention(Q, V, 0.5f, causal, settings);
    REQUIRE(lsh.ok());
    CHECK((lsh->output.cast<double>() - full_shared_qk(Q, V, 0.5, causal)).cwiseAbs().maxCoeff() <
          1e-5);
    CHECK(lsh->pairs_computed == (causal ? 45 : 81));
  }
}

TEST_CASE("Reformer's hash depends on the direction only, and its pairs share a bucket") {
  Matrix Q = random_matrix(12, 6, 3);
  const Matrix V = random_matrix(12, 2, 4);
  Q.row(5) = Q.row(2) * 3.0f;  // the same direction as token 2
  ReformerSettings settings;
  settings.buckets = 4;
  settings.chunk = 3;
  settings.rounds = 2;
  Result<ReformerResult> lsh = reformer_attention(Q, V, 1.0f, false, settings);
  REQUIRE(lsh.ok());
  REQUIRE(lsh->rounds.size() == 2);
  std::int64_t pairs = 0;
  for (const ReformerRound& round : lsh->rounds) {
    CHECK(round.bucket[5] == round.bucket[2]);
    for (const int b : round.bucket) CHECK((b >= 0 && b < 4));
  }
  for (Eigen::Index i = 0; i < 12; ++i) {
    CHECK(lsh->weights.row(i).sum() == doctest::Approx(1.0f));
    for (Eigen::Index j = 0; j < 12; ++j) {
      if (!lsh->pairs(i, j)) {
        CHECK(lsh->weights(i, j) == 0.0f);
        continue;
      }
      ++pairs;
      // Some round put them in one bucket, with j in i's chunk of its sorted order or the one
      // before.
      bool met = false;
      for (const ReformerRound& round : lsh->rounds) {
        std::vector<int> chunk(12);
        for (std::size_t k = 0; k < round.order.size(); ++k)
          chunk[static_cast<std::size_t>(round.order[k])] = static_cast<int>(k) / 3;
        const int gap = chunk[static_cast<std::size_t>(i)] - chunk[static_cast<std::size_t>(j)];
        met = met || (round.bucket[static_cast<std::size_t>(i)] ==
                          round.bucket[static_cast<std::size_t>(j)] &&
                      (gap == 0 || gap == 1));
      }
      CHECK(met);
    }
  }
  CHECK(pairs < 144);  // fewer than full attention's
  CHECK(lsh->pairs_computed >= pairs);
  // The output is α·V.
  CHECK((lsh->output - lsh->weights * V).cwiseAbs().maxCoeff() < 1e-5f);
}

TEST_CASE("Reformer: a query does not see itself while it has another key") {
  const Matrix Q = random_matrix(5, 3, 5), V = random_matrix(5, 2, 6);
  ReformerSettings settings;
  settings.buckets = 1;
  settings.chunk = 5;
  Result<ReformerResult> lsh = reformer_attention(Q, V, 1.0f, true, settings);
  REQUIRE(lsh.ok());
  CHECK(lsh->pairs(0, 0) == 1);  // the first token has no other key under the causal mask
  for (Eigen::Index i = 1; i < 5; ++i) CHECK(lsh->pairs(i, i) == 0);
}

TEST_CASE("Reformer refuses 0 buckets, an odd number, a chunk of 0 and 0 rounds") {
  const Matrix Q = random_matrix(4, 2, 7), V = random_matrix(4, 2, 8);
  ReformerSettings settings;
  settings.buckets = 0;
  CHECK(reformer_attention(Q, V, 1.0f, false, settings).error() ==
        "the number of buckets must be 1 or an even number from 2 to 64, got 0");
  settings.buckets = 3;
  CHECK_FALSE(reformer_attention(Q, V, 1.0f, false, settings).ok());
  settings.buckets = 2;
  settings.chunk = 0;
  CHECK(reformer_attention(Q, V, 1.0f, false, settings).error() ==
        "the chunk must be between 1 and 512 positions, got 0");
  settings.chunk = 2;
  settings.rounds = 0;
  CHECK(reformer_attention(Q, V, 1.0f, false, settings).error() ==
        "the hash rounds must be between 1 and 8, got 0");
  settings.rounds = 1;
  CHECK_FALSE(reformer_attention(Q, random_matrix(3, 2, 9), 1.0f, false, settings).ok());
}

}  // namespace attnviz
