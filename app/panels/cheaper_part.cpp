#include "app/panels/cheaper_part.hpp"

#include "app/panels/widgets.hpp"

#include <imgui.h>

namespace attnviz::app {

void CheaperPart::draw_error() const {
  ImGui::Spacing();
  text_wrapped_at_spaces(error_, ImGui::GetContentRegionAvail().x, true);
}

}  // namespace attnviz::app
