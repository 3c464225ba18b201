// The GL of each platform, without a loader.
//   Desktop: OpenGL 3.3 core. libglvnd's libOpenGL exports every core function, so the
//            prototypes from glcorearb.h (GL_GLEXT_PROTOTYPES) link directly. GLFW is told not
//            to include a legacy GL header.
//   Browser: WebGL 2 through Emscripten's OpenGL ES 3.0 (GLFW_INCLUDE_ES3), whose GLFW is at
//            GLFW 3.2's level. The differences the renderers see are the constants below.
#pragma once

#include "app/platform/platform.hpp"

#ifdef __EMSCRIPTEN__
#define GLFW_INCLUDE_ES3
#include <GLFW/glfw3.h>
#else
#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#define GLFW_INCLUDE_GLCOREARB
#include <GLFW/glfw3.h>
#endif

namespace attnviz::platform {

// The GLSL dialect this platform's GL takes, as the first lines of every shader (shaders/ hold
// none): GLSL 3.30 core on the desktop's OpenGL 3.3, GLSL ES 3.00 with default precisions on
// WebGL 2 (tests/tools/check_shaders.py compiles every shader in both). ImGui's own backend takes
// the version line alone (kGlslVersion).
inline constexpr const char* kGlslEsHeader =
    "#version 300 es\nprecision highp float;\nprecision highp int;\nprecision highp sampler2D;\n";
#ifdef __EMSCRIPTEN__
inline constexpr const char* kGlslVersion = "#version 300 es";
inline constexpr const char* kGlslHeader = kGlslEsHeader;
// A texture's layout in memory when it is allocated: OpenGL keeps BGRA (which llvmpipe copies
// into the frame without a shader); OpenGL ES has no BGRA. Texels are uploaded as RGBA on both.
inline constexpr unsigned kTextureLayout = GL_RGBA;
#else
inline constexpr const char* kGlslVersion = "#version 330 core";
inline constexpr const char* kGlslHeader = "#version 330 core\n";
inline constexpr unsigned kTextureLayout = GL_BGRA;
#endif

}  // namespace attnviz::platform
