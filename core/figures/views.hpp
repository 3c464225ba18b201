// The views AttnViz shows: one row each, the only place a view's identity is written down. The
// app's panels, the View menu, the dashboard's slots and drawing order, the centre's tabs, the
// PNG export's list, the command line (--panels, --view), the scenario's view state and the
// lesson format all read these tables. GL-free (core/lessons validates the names lessons use).
//
// Adding a view is one row in kViews (and its ViewId) and one panel file in app/panels/ that
// registers itself for that id (app/panels/registry.hpp).
#pragma once

#include "core/base/capabilities.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace attnviz::view {

// -----------------------------------------------------------------------------
// [SECTION] Slots: the places of the dashboard (app/view/layout.hpp tiles them)
// -----------------------------------------------------------------------------
// The centre slot holds the centre views as tabs; the lesson slot is a band across the top
// while a lesson runs.
enum class Slot { Input = 0, Weights, Centre, Arrows, Output, Lesson, Count };
inline constexpr int kSlotCount = static_cast<int>(Slot::Count);

struct SlotInfo {
  Slot slot;
  // As a user types it: --panels, a lesson step's "panels", the scenario's view state. The
  // centre is "heatmaps" because that is the name users have always typed for it.
  std::string_view name;
  const char* label;  // File > Export > Panel as PNG
};

// In Slot order.
inline constexpr std::array<SlotInfo, kSlotCount> kSlots = {{
    {Slot::Input, "input", "Input"},
    {Slot::Weights, "weights", "Weights"},
    {Slot::Centre, "heatmaps", "Views (centre)"},
    {Slot::Arrows, "arrows", "Arrows"},
    {Slot::Output, "output", "Output"},
    {Slot::Lesson, "lesson", "Lesson"},
}};

const SlotInfo& slot_info(Slot slot);
std::string_view slot_name(Slot slot);
std::optional<Slot> parse_slot(std::string_view name);  // any slot, "lesson" included
// The slots a user may list (all but the lesson band, which a lesson shows by itself), by name
// for a message: "input, weights, heatmaps, arrows, output" (or with another `separator`).
bool user_may_name(Slot slot);
std::string user_slot_names(std::string_view separator = ", ");

// -----------------------------------------------------------------------------
// [SECTION] Views: what is drawn in the slots
// -----------------------------------------------------------------------------
enum class ViewId {
  Lesson = 0,
  Input,
  Weights,
  Heatmaps,
  Pipeline,
  Neuron,
  Geometry,
  Compare,
  Model,
  NextToken,
  FillMask,
  Layers,
  Cheaper,
  Training,
  Arrows,
  Output,
  Count
};
inline constexpr int kViewCount = static_cast<int>(ViewId::Count);

struct ViewInfo {
  ViewId id;
  std::string_view name;    // as a user types it (--view, a lesson step's "view"; centre tabs)
  const char* title;        // the window's or the tab's title, and the View menu's item
  const char* short_title;  // where the title does not fit: a narrow window, a tab
  Slot slot;
  bool centre_tab;  // a tab of the centre slot (slot == Slot::Centre)
  // What the run must be able to do for the view to show it (core/base/capabilities.hpp): a
  // view whose needs the run lacks says so in its place.
  Capabilities needs{};
  // A view that takes another's place (Fill the mask for Next token): where the run has this
  // view's needs, its tab replaces the other's; elsewhere it has no tab. Count: none.
  ViewId takes_place_of = ViewId::Count;
  // And at least one of these (none: no such need). The Weights band edits weights: a run with
  // none to edit (an encoder–decoder's) leaves it out, and the views get its room.
  Capabilities needs_one_of{};
};

// In ViewId order, which is the View menu's order and the order in which the panels are drawn:
// editors first, then the views, so that every view shows the edits made earlier in the same
// frame. A slot is drawn when its first view comes; the centre's tabs follow this order.
inline constexpr std::array<ViewInfo, kViewCount> kViews = {{
    {ViewId::Lesson, "lesson", "Lesson", "Lesson", Slot::Lesson, false},
    {ViewId::Input, "input", "Input", "Input", Slot::Input, false},
    {ViewId::Weights,
     "weights",
     "Weights",
     "Weights",
     Slot::Weights,
     false,
     {},
     ViewId::Count,
     {Capability::EditableParameters, Capability::EditableModelWeights}},
    {ViewId::Heatmaps, "heatmaps", "Heatmaps", "Heatmaps", Slot::Centre, true},
    {ViewId::Pipeline, "pipeline", "Pipeline", "Pipeline", Slot::Centre, true},
    {ViewId::Neuron, "neuron", "Neuron", "Neuron", Slot::Centre, true},
    {ViewId::Geometry, "geometry", "Geometry", "Geometry", Slot::Centre, true},
    {ViewId::Compare, "compare", "Compare", "Compare", Slot::Centre, true},
    {ViewId::Model, "model", "Model: every layer and head", "Model", Slot::Centre, true},
    {ViewId::NextToken,
     "next",
     "Next token",
     "Next",
     Slot::Centre,
     true,
     {Capability::PredictsNextToken}},
    {ViewId::FillMask,
     "fill",
     "Fill the mask",
     "Fill",
     Slot::Centre,
     true,
     {Capability::FillsMask},
     ViewId::NextToken},
    {ViewId::Layers,
     "layers",
     "Across layers",
     "Layers",
     Slot::Centre,
     true,
     {Capability::ResidualStream, Capability::ReadsOutTokens}},
    {ViewId::Cheaper,
     "cheaper",
     "Cheaper attention",
     "Cheaper",
     Slot::Centre,
     true,
     {Capability::EditableParameters}},
    // Training needs nothing of the run: it trains a model of its own (Use this model hands it to
    // every other view).
    {ViewId::Training, "train", "Training: watch a model learn", "Train", Slot::Centre, true},
    {ViewId::Arrows, "arrows", "Arrows: each query \xe2\x86\x92 the keys it attends to", "Arrows",
     Slot::Arrows, false},
    {ViewId::Output, "output",
     "Output = \xce\xa3 \xce\xb1\xc2\xb7v: the weighted average of the values",
     "Output = \xce\xa3 \xce\xb1\xc2\xb7v", Slot::Output, false},
}};

const ViewInfo& view_info(ViewId id);

// The Cheaper attention view's parts by name (the view state's "cheaper_method", a lesson step's
// "method"), in the order of its method list.
inline constexpr std::array<std::string_view, 6> kCheaperMethods = {
    "flash", "linformer", "reformer", "sparse", "shared_keys", "decoding"};
// A centre tab by name ("heatmaps", "pipeline", ...); other views are not chosen by name.
std::optional<ViewId> parse_centre_view(std::string_view name);
// The centre tabs' names for a message: "heatmaps, pipeline, neuron, geometry, compare", or with
// `last_separator` " or ": "heatmaps, pipeline, neuron, geometry or compare".
std::string centre_view_names(std::string_view separator = ", ",
                              std::string_view last_separator = ", ");

// Whether a run that can do `can` has what the view needs.
inline bool view_shows(const ViewInfo& info, Capabilities can) {
  return can.has_all(info.needs) && (info.needs_one_of.empty() || can.has_any(info.needs_one_of));
}
// Whether some view in `slot` shows such a run: a slot none of whose views does is left out of
// the dashboard.
bool slot_shows(Slot slot, Capabilities can);

// The slots in the order they are drawn: each at its first view in kViews.
std::array<Slot, kSlotCount> slots_in_drawing_order();

}  // namespace attnviz::view
