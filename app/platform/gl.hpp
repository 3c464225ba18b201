// OpenGL 3.3 core without a loader: libglvnd's libOpenGL exports every core function, so the
// prototypes from glcorearb.h (GL_GLEXT_PROTOTYPES) link directly. GLFW is told not to include
// a legacy GL header.
#pragma once

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#define GLFW_INCLUDE_GLCOREARB
#include <GLFW/glfw3.h>
