// The Pipeline view's chain: which rows are shown, and where the tiles go.
#include "app/view/chain_layout.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace attnviz::view {

TEST_CASE("every row is shown when they fit, else a window around the focus with ellipses") {
  const Slots all = make_slots(5, 12, 2);
  CHECK(all.count == 5);
  CHECK(all.find(4) == 4);
  const Slots start = make_slots(40, 6, 1);  // the start, then "…"
  REQUIRE(start.count == 6);
  CHECK(start.index[4] == 4);
  CHECK(start.index[5] == -1);
  const Slots end = make_slots(40, 6, 39);  // "…", then the end
  CHECK(end.index[0] == -1);
  CHECK(end.index[5] == 39);
  const Slots middle = make_slots(40, 6, 20);  // "…", the focus in a window, "…"
  CHECK(middle.index[0] == -1);
  CHECK(middle.index[5] == -1);
  CHECK(middle.find(20) > 0);
  const Slots span = make_slots(64, 12, 16, 8);  // a head's 8 columns kept together
  for (int c = 16; c < 24; ++c) CHECK(span.find(c) >= 0);
}

TEST_CASE("tiles go left to right behind their connectors and wrap when the width runs out") {
  std::vector<ChainTile> tiles(4);
  for (ChainTile& t : tiles) {
    t.n_rows = 4;
    t.n_cols = 4;
    t.rows = StageAxis::Queries;
    t.title_w = 20;
  }
  ChainLayout wide(16, 40, false, 0, 0, 1);
  const ChainSize one_line = wide.fit(tiles, 2000, 2000);
  CHECK(tiles[0].y == tiles[3].y);  // one line
  CHECK(tiles[1].x ==
        doctest::Approx(tiles[0].x + tiles[0].w + wide.connector_w(StageJoin::Arrow)));
  CHECK(tiles[0].labels);  // the line's first: names
  CHECK_FALSE(tiles[1].labels);
  CHECK(one_line.w <= 2000);
  CHECK(wide.cell() == doctest::Approx(std::floor(16 * 2.6f)));  // the largest cells fit
  ChainLayout narrow(16, 40, false, 0, 0, 1);
  const ChainSize wrapped = narrow.place(tiles, wide.cell(), tiles[0].w * 2.5f);
  CHECK(tiles[2].y > tiles[0].y);  // wrapped onto a second line
  CHECK(tiles[2].labels);          // which starts with the names again
  CHECK(wrapped.h > one_line.h);
}

TEST_CASE("in cross-attention a tile whose rows change sentence names them again") {
  std::vector<ChainTile> tiles(2);
  tiles[0].n_rows = 3;
  tiles[1].n_rows = 5;
  tiles[0].n_cols = tiles[1].n_cols = 4;
  tiles[0].rows = StageAxis::Queries;
  tiles[1].rows = StageAxis::Keys;
  ChainLayout self(16, 40, false, 0, 0, 1), cross(16, 40, true, 0, 0, 1);
  self.place(tiles, 20, 5000);
  CHECK_FALSE(tiles[1].labels);
  cross.place(tiles, 20, 5000);
  CHECK(tiles[1].labels);
}

TEST_CASE("a chain too large for the view gets the smallest readable cells, and scrolls") {
  ChainTile large;
  large.n_rows = large.n_cols = 64;
  large.rows = StageAxis::Queries;
  large.title_w = 30;
  std::vector<ChainTile> tiles(12, large);
  ChainLayout layout(16, 40, false, 10, 0, 1);
  const ChainSize size = layout.fit(tiles, 300, 200);
  CHECK((size.w > 300 || size.h > 200));
  CHECK(tiles[0].row_slots.count == 6);     // the fewest rows shown
  CHECK(tiles[0].row_slots.find(10) >= 0);  // the selected query among them
}

}  // namespace attnviz::view
