// The one table of the views (core/figures/views.hpp): the names users type and the titles
// shown are exactly those AttnViz has always had, and every slot holds a view.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/figures/views.hpp"

using namespace attnviz::view;

TEST_CASE("slot names are the --panels names, and parse back") {
  std::string all;
  for (const SlotInfo& row : kSlots) all += std::string(row.name) + " ";
  CHECK(all == "input weights heatmaps arrows output lesson ");
  for (int i = 0; i < kSlotCount; ++i) CHECK(parse_slot(slot_name(Slot(i))) == Slot(i));
  CHECK(parse_slot("centre") == std::nullopt);  // the centre slot is typed "heatmaps"
  CHECK_FALSE(parse_slot("sidebar"));
  CHECK(user_slot_names() == "input, weights, heatmaps, arrows, output");
  CHECK(user_slot_names(",") == "input,weights,heatmaps,arrows,output");
  CHECK_FALSE(user_may_name(Slot::Lesson));
}

TEST_CASE("the centre tabs are the --view names, in the tab bar's order") {
  CHECK(centre_view_names() ==
        "heatmaps, pipeline, neuron, geometry, compare, model, next, layers, cheaper");
  CHECK(centre_view_names(", ", " or ") ==
        "heatmaps, pipeline, neuron, geometry, compare, model, next, layers or cheaper");
  CHECK(centre_view_names(" | ", " | ") ==
        "heatmaps | pipeline | neuron | geometry | compare | model | next | layers | cheaper");
  CHECK(parse_centre_view("pipeline") == ViewId::Pipeline);
  CHECK(parse_centre_view("heatmaps") == ViewId::Heatmaps);
  CHECK_FALSE(parse_centre_view("input"));  // a view, but not a tab
  CHECK_FALSE(parse_centre_view("3d"));
}

TEST_CASE("views: unique names and titles, the View menu's order, every slot drawn once") {
  std::set<std::string> names, titles;
  std::string menu;
  for (const ViewInfo& row : kViews) {
    CHECK(names.insert(std::string(row.name)).second);
    CHECK(titles.insert(row.title).second);
    menu += std::string(row.name) + " ";
    CHECK(row.centre_tab == (row.slot == Slot::Centre));
  }
  CHECK(menu ==
        "lesson input weights heatmaps pipeline neuron geometry compare model next layers cheaper "
        "arrows output ");
  CHECK(std::string(view_info(ViewId::Arrows).title) ==
        "Arrows: each query \xe2\x86\x92 the keys it attends to");
  const std::array<Slot, kSlotCount> order = slots_in_drawing_order();
  CHECK(order == std::array<Slot, kSlotCount>{Slot::Lesson, Slot::Input, Slot::Weights,
                                              Slot::Centre, Slot::Arrows, Slot::Output});
}

TEST_CASE("a real model's dashboard has its Weights panel, the Next token view is a model's") {
  CHECK(slot_shows_mode(Slot::Weights, false));
  CHECK(slot_shows_mode(Slot::Weights, true));
  CHECK(slot_shows_mode(Slot::Centre, true));
  CHECK(slot_shows_mode(Slot::Input, true));
  CHECK_FALSE(view_info(ViewId::NextToken).one_layer);
  CHECK(view_info(ViewId::Model).one_layer);
  CHECK(view_info(ViewId::Model).real_model);
  CHECK(view_info(ViewId::Pipeline).real_model);
  CHECK(view_info(ViewId::Geometry).real_model);
}
