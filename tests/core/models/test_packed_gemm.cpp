// The weight products with the weights packed once (core/models/packed_gemm.hpp): each kernel
// this machine runs (AVX-512's, AVX2's) against the plain three loops at every edge of its
// blocks, and the forward passes that use it (matrices at least 128 wide) against the plain
// reference, before and after a weight edit (which must drop the packed copy). On a machine
// without either the kernels are not used: the forward tests then check the library's products,
// and the kernels' test says which did not run.
#include "core/models/blas.hpp"
#include "core/models/packed_gemm.hpp"
#include "core/models/reference_forward.hpp"
#include "core/models/transformer_forward.hpp"
#include "core/pipeline/product_workers.hpp"
#include "tests/support/forward_compare.hpp"
#include "tests/support/test_models.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace attnviz {
namespace {

std::vector<float> random_values(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> out(count);
  for (float& x : out) x = normal(generator);
  return out;
}

// Helpers that run a split product's parts on the calling thread, last part first, and count
// them: a product that is split shows in the count, and a part that read or wrote outside its
// panels would show in the floats (each part runs after the ones to its right).
class CountingHelpers final : public blas::ProductHelpers {
 public:
  int threads() const override { return 3; }
  void run(int count, void* context, void (*task)(void*, int)) override {
    ++splits;
    parts += count;
    for (int i = count - 1; i >= 0; --i) task(context, i);
  }
  int splits = 0, parts = 0;
};

}  // namespace

TEST_CASE("each packed kernel equals the plain product at every edge of its blocks, bias or none") {
  int kernels = 0;
  for (const blas::PackedKernel kernel : {blas::PackedKernel::avx512, blas::PackedKernel::avx2}) {
    const char* name = kernel == blas::PackedKernel::avx512 ? "AVX-512" : "AVX2";
    if (!blas::kernel_runs(kernel)) {
      MESSAGE("this machine does not run the " << name << " kernel: it is not tested here");
      continue;
    }
    CAPTURE(name);
    ++kernels;
    int cases = 0;
    // m: the blocks of rows are 12 (AVX-512) and 6 (AVX2); n: panels of 32, halves of 16.
    for (const int m : {1, 5, 6, 7, 12, 13, 25})
      for (const int n : {1, 9, 16, 17, 31, 32, 33, 70, 261})
        for (const int k : {1, 7, 256, 257, 768, 769, 1600})  // kDepth is 768
          for (const bool transposed : {false, true}) {
            // A bias on every row, with the untransposed cases (the forward's weight products)
            // and with the transposed ones (the logits' bias).
            const bool with_bias = (m + n + k) % 2 == 0;
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(k);
            CAPTURE(transposed);
            CAPTURE(with_bias);
            // A (m, k) with a row stride wider than k; B (k, n), or Bᵀ (n, k), likewise; C wider.
            const std::ptrdiff_t lda = k + 3, ldb = (transposed ? k : n) + 5, ldc = n + 2;
            const std::vector<float> a = random_values(static_cast<std::size_t>(m * lda), 1);
            const std::vector<float> b =
                random_values(static_cast<std::size_t>((transposed ? n : k) * ldb), 2);
            std::vector<float> fast(static_cast<std::size_t>(m * ldc), -7.0f);
            std::vector<float> plain(fast);
            blas::PackedMatrix packed;
            packed.pack(k, n, b.data(), ldb, transposed);
            const std::vector<float> bias = random_values(static_cast<std::size_t>(n), 3);
            blas::gemm_packed(kernel, m, a.data(), lda, packed, fast.data(), ldc,
                              with_bias ? bias.data() : nullptr);
            blas::gemm_reference(m, n, k, a.data(), lda, b.data(), ldb, plain.data(), ldc,
                                 transposed);
            if (with_bias)
              for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) plain[i * ldc + j] += bias[static_cast<std::size_t>(j)];
            double largest = 0.0;
            for (int i = 0; i < m; ++i) {
              for (int j = 0; j < n; ++j)
                largest =
                    std::max(largest, double{std::fabs(fast[i * ldc + j] - plain[i * ldc + j])});
              // The columns past n (the row stride's padding) are not written.
              CHECK(fast[i * ldc + n] == -7.0f);
              CHECK(fast[i * ldc + n + 1] == -7.0f);
            }
            CHECK(largest < 1e-4 * std::sqrt(static_cast<double>(k)));
            ++cases;
          }
    CHECK(cases == 7 * 9 * 7 * 2);
  }
  // The products use the widest kernel this machine runs (unless the environment asks).
  if (!std::getenv("ATTNVIZ_PACKED") && !std::getenv("ATTNVIZ_BLAS")) {
    const blas::PackedKernel widest =
        blas::kernel_runs(blas::PackedKernel::avx512) ? blas::PackedKernel::avx512
        : blas::kernel_runs(blas::PackedKernel::avx2) ? blas::PackedKernel::avx2
                                                      : blas::PackedKernel::none;
    CHECK(blas::packed_kernel() == widest);
    CHECK(blas::packed_available() == (kernels > 0));
  }
}

TEST_CASE("a packed product split by panels over threads gives the same floats bit for bit") {
  if (!blas::packed_available()) {
    MESSAGE("this machine runs no packed kernel: no product is split");
    return;
  }
  ProductWorkers two(2);
  CountingHelpers counting;
  int split_cases = 0, expected_parts = 0;
  for (const int m : {1, 6, 13})
    for (const int n : {33, 100, 577, 8003})  // 2 panels and a bit, ..., the search's open rows
      for (const int k : {7, 192}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        const std::vector<float> a = random_values(static_cast<std::size_t>(m * k), 4);
        const std::vector<float> b = random_values(static_cast<std::size_t>(k * n), 5);
        const std::vector<float> bias = random_values(static_cast<std::size_t>(n), 6);
        blas::PackedMatrix packed;
        packed.pack(k, n, b.data(), n, false);
        std::vector<float> whole(static_cast<std::size_t>(m * n), -7.0f);
        blas::gemm_packed(m, a.data(), k, packed, whole.data(), n, bias.data());
        const bool enough_work = static_cast<double>(m) * n * k >= blas::kSplitWork;
        for (blas::ProductHelpers* helpers :
             std::initializer_list<blas::ProductHelpers*>{&two, &counting}) {
          const int splits_before = counting.splits;
          std::vector<float> split(whole.size(), -7.0f);
          {
            const blas::SplitProducts scope(helpers);
            blas::gemm(m, a.data(), k, packed, split.data(), n, bias.data());
          }
          CHECK(std::memcmp(split.data(), whole.data(), whole.size() * sizeof(float)) == 0);
          if (helpers == &counting) CHECK((counting.splits > splits_before) == enough_work);
        }
        // Out of the scope, nothing is split.
        const int splits_before = counting.splits;
        std::vector<float> after(whole.size(), -7.0f);
        blas::gemm(m, a.data(), k, packed, after.data(), n, bias.data());
        CHECK(counting.splits == splits_before);
        CHECK(std::memcmp(after.data(), whole.data(), whole.size() * sizeof(float)) == 0);
        split_cases += enough_work;
        // A part a thread, at most one a panel.
        if (enough_work) expected_parts += std::min(3, packed.panels());
      }
  CHECK(split_cases >= 10);
  CHECK(counting.splits == split_cases);
  CHECK(counting.parts == expected_parts);

  // One run of panels alone writes its columns and no other.
  const int m = 5, n = 100, k = 40;  // 4 panels: columns 32..95 are panels 1 and 2
  const std::vector<float> a = random_values(static_cast<std::size_t>(m * k), 7);
  const std::vector<float> b = random_values(static_cast<std::size_t>(k * n), 8);
  blas::PackedMatrix packed;
  packed.pack(k, n, b.data(), n, false);
  std::vector<float> whole(static_cast<std::size_t>(m * n)), part(whole.size(), -7.0f);
  blas::gemm_packed(m, a.data(), k, packed, whole.data(), n);
  blas::gemm_packed_panels(blas::packed_kernel(), m, a.data(), k, packed, 1, 3, part.data(), n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(part[i * n + j] == (j >= 32 && j < 96 ? whole[i * n + j] : -7.0f));
    }
}

TEST_CASE("a forward pass with its products split over two threads gives the same floats") {
  const Transformer decoder = testing::random_gpt2(30, 192, 2, 4, 300, 24);
  const std::vector<int> tokens = testing::seeded_tokens(17, 300, 12);
  TransformerForward alone(decoder), split(decoder);
  REQUIRE(alone.run(tokens).is_ok());
  ProductWorkers two(2);
  {
    const blas::SplitProducts scope(&two);
    REQUIRE(split.run(tokens).is_ok());
  }
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    const RowVector expected = alone.logits(i), got = split.logits(i);
    REQUIRE(expected.size() == got.size());
    CHECK(std::memcmp(expected.data(), got.data(), sizeof(float) * expected.size()) == 0);
  }
}

TEST_CASE("forward passes 192 and 256 wide (packed weights) equal the plain reference") {
  // A decoder 192 wide (the models trained here) and 256 wide, and an encoder with its MLM head,
  // 256 wide: every weight product and the logits go through the packed kernel where the
  // machine has one.
  const std::vector<int> tokens = testing::seeded_tokens(17, 300, 5);
  for (const int d_model : {192, 256}) {
    CAPTURE(d_model);
    const Transformer decoder =
        testing::random_gpt2(d_model == 256 ? 31 : 30, d_model, 2, 4, 300, 24);
    TransformerForward fast(decoder);
    REQUIRE(fast.run(tokens).is_ok());
    ReferenceForward reference(decoder);
    for (const int t : tokens) REQUIRE(reference.step(t).ok());
    CHECK(testing::compare(fast, reference) < 1e-4);
  }

  const Transformer encoder = testing::random_bert(32, true, 256, 2, 4, 300, 24);
  TransformerForward fast_encoder(encoder);
  std::vector<int> types(tokens.size(), 0);
  for (std::size_t i = 9; i < types.size(); ++i) types[i] = 1;
  REQUIRE(fast_encoder.run(tokens, types).is_ok());
  ReferenceForward encoder_reference(encoder);
  REQUIRE(encoder_reference.encode(tokens, types).is_ok());
  CHECK(testing::compare(fast_encoder, encoder_reference) < 1e-4);
}

TEST_CASE("a weight edit drops the packed copy: the next run multiplies the edited weights") {
  Transformer model = testing::random_gpt2(33, 256, 2, 4, 300, 24);
  const std::vector<int> tokens = testing::seeded_tokens(9, 300, 6);
  TransformerForward forward(model);
  REQUIRE(forward.run(tokens).is_ok());  // packs every matrix
  // The first edit copies the matrix out of the file (a new one to pack); the second changes
  // that copy in place, which a packed copy kept by its address would miss.
  for (const float value : {25.0f, -40.0f}) {
    REQUIRE(model.set_head_weight(1, 2, HeadMatrix::Value, 3, 4, value).is_ok());
    REQUIRE(model.set_token_embedding(tokens[2], 5, value).is_ok());
    forward.weights_changed(1);
    forward.embeddings_changed();
    REQUIRE(forward.run(tokens).is_ok());
  }
  ReferenceForward reference(model);  // reads the edited weights
  for (const int t : tokens) REQUIRE(reference.step(t).ok());
  CHECK(testing::compare(forward, reference) < 1e-4);
}

}  // namespace attnviz
