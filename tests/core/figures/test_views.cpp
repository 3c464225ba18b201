// The one table of the views (core/figures/views.hpp): the names users type and the titles
// shown are exactly those AttnViz has always had, and every slot holds a view.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/figures/views.hpp"
#include "core/pipeline/model_run.hpp"
#include "core/pipeline/one_layer_run.hpp"

using namespace attnviz::view;
using attnviz::Capabilities;
using attnviz::ModelRun;
using attnviz::OneLayerRun;

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
        "heatmaps, pipeline, neuron, geometry, compare, model, next, fill, layers, cheaper, train");
  CHECK(
      centre_view_names(", ", " or ") ==
      "heatmaps, pipeline, neuron, geometry, compare, model, next, fill, layers, cheaper or train");
  CHECK(centre_view_names(" | ", " | ") ==
        "heatmaps | pipeline | neuron | geometry | compare | model | next | fill | layers | "
        "cheaper | "
        "train");
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
        "lesson input weights heatmaps pipeline neuron geometry compare model next fill layers "
        "cheaper train arrows output ");
  CHECK(std::string(view_info(ViewId::Arrows).title) ==
        "Arrows: each query \xe2\x86\x92 the keys it attends to");
  const std::array<Slot, kSlotCount> order = slots_in_drawing_order();
  CHECK(order == std::array<Slot, kSlotCount>{Slot::Lesson, Slot::Input, Slot::Weights,
                                              Slot::Centre, Slot::Arrows, Slot::Output});
}

TEST_CASE("a real model's dashboard has its Weights panel, the Next token view is a model's") {
  // What the two built-in runs can do, as they say it (core/pipeline/run.hpp).
  const Capabilities one_layer = OneLayerRun().capabilities();
  const Capabilities model = ModelRun().capabilities();
  CHECK(slot_shows(Slot::Weights, one_layer));
  CHECK(slot_shows(Slot::Weights, model));
  CHECK(slot_shows(Slot::Centre, model));
  CHECK(slot_shows(Slot::Input, model));
  // An encoder–decoder's weights are not edited here: no Weights band, the views get its room.
  const Capabilities translation{
      attnviz::Capability::TrainedWeights, attnviz::Capability::HeadInterventions,
      attnviz::Capability::ResidualStream, attnviz::Capability::SourceAndTarget};
  CHECK_FALSE(slot_shows(Slot::Weights, translation));
  CHECK_FALSE(view_shows(view_info(ViewId::Weights), translation));  // the table's own rule
  CHECK(view_shows(view_info(ViewId::Weights), one_layer));
  CHECK(view_shows(view_info(ViewId::Weights), model));
  CHECK(slot_shows(Slot::Centre, translation));
  CHECK_FALSE(view_shows(view_info(ViewId::NextToken), one_layer));
  CHECK(view_shows(view_info(ViewId::NextToken), model));
  CHECK_FALSE(view_shows(view_info(ViewId::Layers), one_layer));
  CHECK(view_shows(view_info(ViewId::Cheaper), one_layer));
  CHECK_FALSE(view_shows(view_info(ViewId::Cheaper), model));
  for (const ViewId id : {ViewId::Model, ViewId::Pipeline, ViewId::Geometry, ViewId::Heatmaps}) {
    CHECK(view_shows(view_info(id), one_layer));
    CHECK(view_shows(view_info(id), model));
    // A run that can do nothing in particular (a toy family) still has these views.
    CHECK(view_shows(view_info(id), Capabilities{}));
  }
}
