#include "core/figures/views.hpp"

#include <algorithm>

namespace attnviz::view {
namespace {

// Rows are looked up by their enum value: the tables must list them in that order.
constexpr bool slots_in_enum_order() {
  for (int i = 0; i < kSlotCount; ++i)
    if (kSlots[static_cast<std::size_t>(i)].slot != static_cast<Slot>(i)) return false;
  return true;
}
constexpr bool views_in_enum_order() {
  for (int i = 0; i < kViewCount; ++i) {
    const ViewInfo& row = kViews[static_cast<std::size_t>(i)];
    if (row.id != static_cast<ViewId>(i) || row.centre_tab != (row.slot == Slot::Centre))
      return false;
  }
  return true;
}
static_assert(slots_in_enum_order(), "kSlots lists the slots in Slot order");
static_assert(views_in_enum_order(),
              "kViews lists the views in ViewId order; centre tabs are in Slot::Centre");

}  // namespace

const SlotInfo& slot_info(Slot slot) {
  return kSlots[static_cast<std::size_t>(slot)];
}
std::string_view slot_name(Slot slot) {
  return slot_info(slot).name;
}

std::optional<Slot> parse_slot(std::string_view name) {
  for (const SlotInfo& row : kSlots)
    if (row.name == name) return row.slot;
  return std::nullopt;
}

bool user_may_name(Slot slot) {
  return slot != Slot::Lesson;
}

std::string user_slot_names(std::string_view separator) {
  std::string names;
  for (const SlotInfo& row : kSlots) {
    if (!user_may_name(row.slot)) continue;
    if (!names.empty()) names += separator;
    names += row.name;
  }
  return names;
}

const ViewInfo& view_info(ViewId id) {
  return kViews[static_cast<std::size_t>(id)];
}

std::optional<ViewId> parse_centre_view(std::string_view name) {
  for (const ViewInfo& row : kViews)
    if (row.centre_tab && row.name == name) return row.id;
  return std::nullopt;
}

std::string centre_view_names(std::string_view separator, std::string_view last_separator) {
  const auto tabs = std::count_if(kViews.begin(), kViews.end(),
                                  [](const ViewInfo& row) { return row.centre_tab; });
  std::string names;
  std::ptrdiff_t listed = 0;
  for (const ViewInfo& row : kViews) {
    if (!row.centre_tab) continue;
    if (listed > 0) names += listed + 1 == tabs ? last_separator : separator;
    names += row.name;
    ++listed;
  }
  return names;
}

std::array<Slot, kSlotCount> slots_in_drawing_order() {
  std::array<Slot, kSlotCount> order{};
  std::size_t count = 0;
  for (const ViewInfo& row : kViews)
    if (std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), row.slot) ==
        order.begin() + static_cast<std::ptrdiff_t>(count))
      order[count++] = row.slot;
  return order;  // every slot has a view (tests/core/figures/test_views.cpp)
}

bool slot_shows(Slot slot, Capabilities can) {
  for (const ViewInfo& row : kViews)
    if (row.slot == slot && view_shows(row, can)) return true;
  return false;
}

}  // namespace attnviz::view
