// The welcome on a first start: offered with nothing named to show, never once dismissed, and
// never in a headless run.
#include "app/session/welcome.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {

TEST_CASE("the welcome is offered on a first start until it is dismissed, then never") {
  testing::TempDir dir;
  const std::string folder = dir.path.string();
  CHECK(offers_welcome(folder, {}));
  CHECK_FALSE(offers_welcome(folder, {.names_something = true}));  // a file, lesson or model
  CHECK_FALSE(offers_welcome(folder, {.headless = true}));         // a screenshot
  REQUIRE(remember_welcome_dismissed(folder));
  CHECK(welcome_dismissed(folder));
  CHECK_FALSE(offers_welcome(folder, {}));
  // No state folder: shown each time (nothing can remember it), and nothing written.
  CHECK(offers_welcome("", {}));
  CHECK_FALSE(remember_welcome_dismissed(""));
}

}  // namespace attnviz::app
