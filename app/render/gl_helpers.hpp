// Small OpenGL helpers shared by the renderers: programs, textures, the UI's projection.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/status.hpp"

struct ImDrawData;

namespace attnviz::render {

// The program, or why there is none ("<what> shader does not compile: <log>").
// `attributes` binds vertex attribute names to locations before linking.
Result<unsigned> link_program(const char* what, const char* vertex_source,
                              const char* fragment_source,
                              const std::vector<std::pair<unsigned, const char*>>& attributes);

// A 2-D texture sampled at texel centres: no filtering, no wrapping. Left bound.
unsigned create_nearest_texture();

// The orthographic projection from ImGui's display coordinates (top-left origin) to clip space,
// column-major for glUniformMatrix4fv.
void ui_projection(const ImDrawData& draw_data, float projection[16]);

}  // namespace attnviz::render
