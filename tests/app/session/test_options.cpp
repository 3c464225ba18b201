// The command line's help names the panels and views from core/figures/views.hpp's table.
#include <doctest/doctest.h>

#include "app/session/options.hpp"

namespace attnviz::app {
namespace {

TEST_CASE("--help lists the panels and the centre views by the names they are typed") {
  const std::string text = usage();
  CHECK(text.find("comma-separated: input,weights,heatmaps,arrows,output\n") != std::string::npos);
  CHECK(text.find("centre view: heatmaps | pipeline | neuron | geometry | compare | model | next | "
                  "fill | layers | cheaper | train;") != std::string::npos);
  CHECK(text.find('{') == std::string::npos);  // every placeholder filled
}

TEST_CASE("a bad --panels or --view names the ones there are") {
  Options options;
  const Status panels = parse_options({"--panels", "input,sidebar"}, options);
  CHECK(panels.message() ==
        "--panels: unknown panel 'sidebar' (input, weights, heatmaps, arrows, output)");
  const Status view = parse_options({"--view", "timeline"}, options);
  CHECK(view.message() ==
        "--view needs heatmaps, pipeline, neuron, geometry, compare, model, next, fill, layers, "
        "cheaper, train, arrows or output");
  Options arrows;
  REQUIRE(parse_options({"--view", "arrows"}, arrows).is_ok());
  CHECK(arrows.tab == view::ViewId::Arrows);
  CHECK_FALSE(arrows.view);
  CHECK(parse_options({"--panels", "lesson"}, options).is_ok());  // as before: the band by name
}

TEST_CASE("--monkey takes a seed and --monkey-actions a count, and no picture or benchmark") {
  Options options;
  REQUIRE(parse_options({"--monkey", "18446744073709551615", "--monkey-actions", "250"}, options)
              .is_ok());
  CHECK(options.monkey == 18446744073709551615ull);
  CHECK(options.monkey_actions == 250);
  Options defaults;
  REQUIRE(parse_options({"--monkey", "0"}, defaults).is_ok());
  CHECK(defaults.monkey == 0u);
  CHECK(defaults.monkey_actions == 1000);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--monkey"},
                                              {"--monkey", ""},
                                              {"--monkey", "-1"},
                                              {"--monkey", "1x"},
                                              {"--monkey", "18446744073709551616"}}) {
    Options o;
    CHECK(parse_options(bad, o).message() == "--monkey needs a seed (a whole number from 0)");
  }
  Options zero;
  CHECK(parse_options({"--monkey", "1", "--monkey-actions", "0"}, zero).message() ==
        "--monkey-actions needs a number from 1 to 10000000");
  Options shot;
  CHECK(parse_options({"--monkey", "1", "--screenshot", "a.png"}, shot).message() ==
        "--monkey does not go with --screenshot, --screenshot-steps, --bench-frames or --recover");
}

}  // namespace
}  // namespace attnviz::app
