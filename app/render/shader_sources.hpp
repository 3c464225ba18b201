// GLSL sources from shaders/, compiled into the binary by CMake.
#pragma once

namespace attnviz::render {
extern const char* const kHeatmapVertexShader;
extern const char* const kHeatmapFragmentShader;
extern const char* const kUiVertexShader;
extern const char* const kUiFragmentShader;
extern const char* const kPictureVertexShader;
extern const char* const kPictureFragmentShader;
}  // namespace attnviz::render
