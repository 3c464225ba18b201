// The sparse and local patterns (core/variants/sparse_masks.hpp), each written out by hand for a
// small sentence, their pair counts, and the settings they refuse.
#include "core/variants/sparse_masks.hpp"

#include <doctest/doctest.h>

#include <string>

namespace attnviz {
namespace {

// "110000/111000/..." : row by row, 1 where allowed.
std::string rows_of(const MaskMatrix& mask) {
  std::string out;
  for (Eigen::Index i = 0; i < mask.rows(); ++i) {
    if (i > 0) out += '/';
    for (Eigen::Index j = 0; j < mask.cols(); ++j) out += mask(i, j) ? '1' : '0';
  }
  return out;
}

}  // namespace

TEST_CASE("a window of 3 keys: the query's own and one on each side") {
  Result<MaskMatrix> mask = window_mask(6, 6, 3);
  REQUIRE(mask.ok());
  CHECK(rows_of(*mask) == "110000/111000/011100/001110/000111/000011");
  const PairCount pairs = count_pairs(*mask, false);
  CHECK(pairs.computed == 16);
  CHECK(pairs.full == 36);
  const PairCount causal = count_pairs(*mask, true);  // itself and the one before
  CHECK(causal.computed == 11);
  CHECK(causal.full == 21);
  // An even width: one more after than before.
  CHECK(rows_of(*window_mask(4, 4, 2)) == "1100/0110/0011/0001");
}

TEST_CASE("a dilated window: the same number of keys, further apart") {
  Result<MaskMatrix> mask = dilated_mask(7, 7, 3, 2);
  REQUIRE(mask.ok());
  CHECK(rows_of(*mask) == "1010000/0101000/1010100/0101010/0010101/0001010/0000101");
  CHECK(rows_of(*dilated_mask(5, 5, 3, 1)) == rows_of(*window_mask(5, 5, 3)));
}

TEST_CASE("blocks, and global tokens added to them") {
  Result<MaskMatrix> blocks = block_mask(5, 5, 2);
  REQUIRE(blocks.ok());
  CHECK(rows_of(*blocks) == "11000/11000/00110/00110/00001");
  Result<MaskMatrix> global = with_global_tokens(*blocks, {0});
  REQUIRE(global.ok());
  CHECK(rows_of(*global) == "11111/11000/10110/10110/10001");
  CHECK(count_pairs(*global, false).computed == 15);  // 5 + 2 + 3 + 3 + 2
}

TEST_CASE("cross attention: positions meet by index") {
  CHECK(rows_of(*window_mask(2, 4, 3)) == "1100/1110");
  CHECK(rows_of(*block_mask(3, 2, 2)) == "11/11/00");
}

TEST_CASE("sparse patterns refuse a width, dilation or block below 1, and a token not there") {
  CHECK(window_mask(4, 4, 0).error() == "the window's width must be between 1 and 512, got 0");
  CHECK(dilated_mask(4, 4, 3, 0).error() == "the dilation must be between 1 and 512, got 0");
  CHECK(block_mask(4, 4, -2).error() == "the block size must be between 1 and 512, got -2");
  CHECK(with_global_tokens(*window_mask(4, 4, 1), {4}).error() ==
        "global token 5 is not in the sentence (4 tokens)");
  CHECK_FALSE(window_mask(-1, 4, 2).ok());
}

}  // namespace attnviz
