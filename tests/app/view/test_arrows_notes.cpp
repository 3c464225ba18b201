// What the Arrows view says when it draws no line, and its tooltips' lists: true of the numbers.
#include "app/view/arrows_notes.hpp"

#include <doctest/doctest.h>

#include <random>

namespace attnviz::view {
namespace {

// A result with one head per matrix of weights (n_query, n_key); no row masked unless `masked`.
AttentionResult result_of(const std::vector<Matrix>& weights, const std::vector<int>& masked = {}) {
  AttentionResult r;
  r.n_query = weights.front().rows();
  r.n_key = weights.front().cols();
  for (const Matrix& w : weights) {
    HeadResult head;
    head.weights = w;
    head.fully_masked_rows = RowFlags::Zero(w.rows());
    for (const int i : masked) head.fully_masked_rows(i) = 1;
    r.heads.push_back(std::move(head));
  }
  return r;
}

ArrowsScope scope_of(ArrowsFocus focus, int index, std::string_view name, std::vector<int> heads,
                     int head_count, float threshold = 0.02f) {
  ArrowsScope s;
  s.focus = focus;
  s.index = index;
  s.name = name;
  s.all_heads = static_cast<int>(heads.size()) == head_count;
  s.heads = std::move(heads);
  s.threshold = threshold;
  return s;
}

// Hard attention over 3 tokens: in head 0 every query picks key 0; in head 1 query 0 picks key 2.
AttentionResult hard_two_heads() {
  Matrix head0(3, 3), head1(3, 3);
  head0 << 1, 0, 0, 1, 0, 0, 1, 0, 0;
  head1 << 0, 0, 1, 1, 0, 0, 0, 1, 0;
  return result_of({head0, head1});
}

}  // namespace

// The case: the key gets α = 0 from every query of the head shown, α = 1 from a query of
// the other head; "every α < 0.020" was said of it.
TEST_CASE("a key no query attends to in the head shown is said to be so, of that head only") {
  const AttentionResult r = hard_two_heads();
  const ArrowsNote one_head = arrows_empty_note(r, scope_of(ArrowsFocus::Key, 2, "bread", {0}, 2));
  CHECK(one_head.full == "no query attends to \"bread\" in head 1");
  CHECK(one_head.brief == one_head.full);
  // Every head shown: head 2's line from query 1 is drawn, and nothing is said.
  CHECK(arrows_draw_a_line(r, scope_of(ArrowsFocus::Key, 2, "bread", {0, 1}, 2)));
  CHECK(arrows_empty_note(r, scope_of(ArrowsFocus::Key, 2, "bread", {0, 1}, 2)).empty());
  CHECK(arrows_empty_note(r, scope_of(ArrowsFocus::Key, 2, "bread", {1}, 2)).empty());
}

TEST_CASE("a key with small weights is not said to spread its attention") {
  Matrix w(2, 2);
  w << 0.99f, 0.01f, 0.995f, 0.005f;
  const ArrowsNote note =
      arrows_empty_note(result_of({w}), scope_of(ArrowsFocus::Key, 1, "the", {0}, 1));
  CHECK(note.full == "every \xce\xb1 to \"the\" < 0.020");
  CHECK(note.full.find("spread") == std::string::npos);
}

TEST_CASE("rows below the threshold are spread thin, said of the rows looked at") {
  const Matrix even = Matrix::Constant(2, 64, 1.0f / 64.0f);  // every α 0.016
  const AttentionResult r = result_of({even, even});
  CHECK(arrows_empty_note(r, scope_of(ArrowsFocus::None, -1, "", {0, 1}, 2)).full ==
        "every \xce\xb1 < 0.020: attention spread thin");
  const ArrowsNote of_query = arrows_empty_note(r, scope_of(ArrowsFocus::Query, 1, "eat", {1}, 2));
  CHECK(of_query.full == "every \xce\xb1 of \"eat\" < 0.020 in head 2: attention spread thin");
  CHECK(of_query.brief == "every \xce\xb1 of \"eat\" < 0.020 in head 2");
}

TEST_CASE("a query whose every key is masked attends to no key") {
  Matrix w = Matrix::Zero(2, 3);
  w(1, 0) = 1;
  const AttentionResult r = result_of({w}, {0});
  CHECK(arrows_empty_note(r, scope_of(ArrowsFocus::Query, 0, "my", {0}, 1)).full ==
        "\"my\" attends to no key: every key is masked");
  CHECK(arrows_empty_note(r, scope_of(ArrowsFocus::Query, 1, "dog", {0}, 1)).empty());
}

// Whatever the weights and the scope, a note is given exactly when no α in the scope reaches the
// threshold, and "no query attends" only when every α of the key is 0.
TEST_CASE("the note is true of random weights") {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int trial = 0; trial < 300; ++trial) {
    const int n_query = 1 + trial % 5, n_key = 1 + (trial / 5) % 7;
    std::vector<Matrix> heads;
    for (int h = 0; h < 2; ++h) {
      Matrix w = Matrix::Zero(n_query, n_key);
      for (int i = 0; i < n_query; ++i) {
        const int kind = static_cast<int>(uniform(random) * 3);  // one-hot, small, zero
        for (int j = 0; j < n_key; ++j)
          w(i, j) = kind == 0 ? (j == i % n_key ? 1.0f : 0.0f)
                              : (kind == 1 ? uniform(random) * 0.03f : 0.0f);
      }
      heads.push_back(w);
    }
    const AttentionResult r = result_of(heads);
    const float threshold = 0.02f;
    for (const ArrowsFocus focus : {ArrowsFocus::None, ArrowsFocus::Query, ArrowsFocus::Key}) {
      const int index = focus == ArrowsFocus::Query ? trial % n_query : trial % n_key;
      for (const std::vector<int>& shown :
           {std::vector<int>{0}, std::vector<int>{1}, std::vector<int>{0, 1}}) {
        float largest = 0;
        for (const int h : shown)
          for (int i = 0; i < n_query; ++i)
            for (int j = 0; j < n_key; ++j)
              if (focus == ArrowsFocus::None || (focus == ArrowsFocus::Query && i == index) ||
                  (focus == ArrowsFocus::Key && j == index))
                largest = std::max(largest, heads[static_cast<std::size_t>(h)](i, j));
        const ArrowsNote note =
            arrows_empty_note(r, scope_of(focus, index, "x", shown, 2, threshold));
        INFO("trial " << trial << ", largest " << largest << ": " << note.full);
        CHECK(note.empty() == (largest >= threshold));
        if (note.full.rfind("no query attends", 0) == 0) CHECK(largest == 0.0f);
      }
    }
  }
}

TEST_CASE("a token's strongest connections are its largest weights above 0, largest first") {
  Matrix w(3, 4);
  w << 0.1f, 0.4f, 0.4f, 0.1f,  //
      0.0f, 1.0f, 0.0f, 0.0f,   //
      0.0f, 0.0f, 0.0f, 1.0f;
  const std::vector<Connection> of_query = strongest_connections(w, ArrowsFocus::Query, 0, 3);
  REQUIRE(of_query.size() == 3);
  CHECK(of_query[0].index == 1);  // equal weights: the lower index first
  CHECK(of_query[1].index == 2);
  CHECK(of_query[2].index == 0);
  CHECK(of_query[2].alpha == doctest::Approx(0.1f));
  const std::vector<Connection> of_key = strongest_connections(w, ArrowsFocus::Key, 1, 3);
  REQUIRE(of_key.size() == 2);  // query 3 gives it 0: not a connection
  CHECK(of_key[0].index == 1);
  CHECK(of_key[1].index == 0);
  CHECK(strongest_connections(w, ArrowsFocus::Key, 0, 3).size() == 1);
  CHECK(strongest_connections(w, ArrowsFocus::Key, 9, 3).empty());
}

}  // namespace attnviz::view
