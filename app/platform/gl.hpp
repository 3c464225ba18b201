// OpenGL 3.3 core without a loader: libglvnd's libOpenGL exports every core function, so the
// prototypes from glcorearb.h (GL_GLEXT_PROTOTYPES) link directly. GLFW is told not to include
// a legacy GL header.
#pragma once

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#define GLFW_INCLUDE_GLCOREARB
#include <GLFW/glfw3.h>

namespace attnviz::platform {

// The GLSL dialect this platform's GL takes, as the first lines of every shader (shaders/ hold
// none): GLSL 3.30 core on the desktop's OpenGL 3.3. The browser's WebGL 2 takes GLSL ES 3.00
// with default precisions, kGlslEsHeader (tests/tools/check_shaders.sh compiles every shader in
// both). ImGui's own backend takes the version line alone (kGlslVersion).
inline constexpr const char* kGlslVersion = "#version 330 core";
inline constexpr const char* kGlslHeader = "#version 330 core\n";
inline constexpr const char* kGlslEsHeader =
    "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;\n";

}  // namespace attnviz::platform
