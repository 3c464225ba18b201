// A view that scrolls follows the selected token: it scrolls as little as shows it.
#include "app/view/follow_scroll.hpp"

#include <doctest/doctest.h>

namespace attnviz::view {

TEST_CASE("scroll_to_show moves as little as shows the item, with its margin, within the content") {
  // A window 100 long over content 1000 long, at the top.
  CHECK(scroll_to_show(0, 20, 40, 100, 1000, 10) == 0);        // in sight: unchanged
  CHECK(scroll_to_show(0, 500, 520, 100, 1000, 10) == 430);    // below: its end at the bottom
  CHECK(scroll_to_show(600, 500, 520, 100, 1000, 10) == 490);  // above: its beginning at the top
  CHECK(scroll_to_show(0, 980, 1000, 100, 1000, 10) == 900);   // never past the end
  CHECK(scroll_to_show(300, 0, 20, 100, 1000, 10) == 0);       // nor before the start
  CHECK(scroll_to_show(0, 400, 700, 100, 1000, 10) == 390);    // too long: its beginning
  CHECK(scroll_to_show(0, 50, 60, 100, 80, 10) == 0);          // content shorter than the window
}

TEST_CASE("a followed token scrolls the view once per change of the selection") {
  FollowedToken followed;
  CHECK(followed.changed_to(3));  // the first frame
  CHECK_FALSE(followed.changed_to(3));
  CHECK(followed.changed_to(12));
  CHECK_FALSE(followed.changed_to(12));
}

}  // namespace attnviz::view
