// The views' memo: a result is computed again exactly when one of its inputs changed.
#include "app/view/memo.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace attnviz::view {

TEST_CASE("a memo says changed the first time, then only when an input changes") {
  Memo<std::uint64_t, int> memo;
  CHECK_FALSE(memo.holds(1, 0));
  CHECK(memo.changed(1, 0));
  CHECK(memo.holds(1, 0));
  CHECK_FALSE(memo.changed(1, 0));
  CHECK(memo.changed(2, 0));  // the result's version
  CHECK(memo.changed(2, 3));  // the head
  CHECK_FALSE(memo.changed(2, 3));
  CHECK(std::get<1>(memo.inputs()) == 3);
  CHECK(memo.changed(1, 0));  // back to earlier inputs: computed again, not an old result
}

TEST_CASE("a forgotten memo computes again with the same inputs") {
  Memo<std::string, float> memo;
  CHECK(memo.changed("lens", 0.5f));
  memo.forget();
  CHECK_FALSE(memo.holds("lens", 0.5f));
  CHECK(memo.changed("lens", 0.5f));
  CHECK_FALSE(memo.changed("lens", 0.5f));
}

}  // namespace attnviz::view
