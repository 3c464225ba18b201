// The command line's help names the panels and views from core/figures/views.hpp's table.
#include <doctest/doctest.h>

#include "app/session/options.hpp"

namespace attnviz::app {
namespace {

TEST_CASE("--help lists the panels and the centre views by the names they are typed") {
  const std::string text = usage();
  CHECK(text.find("comma-separated: input,weights,heatmaps,arrows,output\n") != std::string::npos);
  CHECK(text.find("centre view: heatmaps | pipeline | neuron | geometry | compare | model | next | "
                  "layers | cheaper;") != std::string::npos);
  CHECK(text.find('{') == std::string::npos);  // every placeholder filled
}

TEST_CASE("a bad --panels or --view names the ones there are") {
  Options options;
  const Status panels = parse_options({"--panels", "input,sidebar"}, options);
  CHECK(panels.message() ==
        "--panels: unknown panel 'sidebar' (input, weights, heatmaps, arrows, output)");
  const Status view = parse_options({"--view", "timeline"}, options);
  CHECK(view.message() ==
        "--view needs heatmaps, pipeline, neuron, geometry, compare, model, next, layers, "
        "cheaper, arrows or output");
  Options arrows;
  REQUIRE(parse_options({"--view", "arrows"}, arrows).is_ok());
  CHECK(arrows.tab == view::ViewId::Arrows);
  CHECK_FALSE(arrows.view);
  CHECK(parse_options({"--panels", "lesson"}, options).is_ok());  // as before: the band by name
}

}  // namespace
}  // namespace attnviz::app
