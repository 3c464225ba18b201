#include "app/render/gl_helpers.hpp"

#include "app/platform/gl.hpp"

#include <imgui.h>

namespace attnviz::render {

namespace {

// The platform's GLSL header (its #version line), then the source from shaders/.
Result<unsigned> compile(const char* what, GLenum kind, const char* source) {
  const unsigned shader = glCreateShader(kind);
  const char* const parts[] = {platform::kGlslHeader, source};
  glShaderSource(shader, 2, parts, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetShaderInfoLog(shader, sizeof log, nullptr, log);
    glDeleteShader(shader);
    return Status::error(std::string(what) + " shader does not compile: " + log);
  }
  return shader;
}

}  // namespace

Result<unsigned> link_program(const char* what, const char* vertex_source,
                              const char* fragment_source,
                              const std::vector<std::pair<unsigned, const char*>>& attributes) {
  const Result<unsigned> vertex = compile(what, GL_VERTEX_SHADER, vertex_source);
  if (!vertex) return vertex.status();
  const Result<unsigned> fragment = compile(what, GL_FRAGMENT_SHADER, fragment_source);
  if (!fragment) {
    glDeleteShader(*vertex);
    return fragment.status();
  }
  const unsigned program = glCreateProgram();
  glAttachShader(program, *vertex);
  glAttachShader(program, *fragment);
  for (const auto& [location, name] : attributes) glBindAttribLocation(program, location, name);
  glLinkProgram(program);
  glDeleteShader(*vertex);
  glDeleteShader(*fragment);
  GLint ok = 0;
  glGetProgramiv(program, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[1024] = {};
    glGetProgramInfoLog(program, sizeof log, nullptr, log);
    glDeleteProgram(program);
    return Status::error(std::string(what) + " shader does not link: " + log);
  }
  return program;
}

unsigned create_nearest_texture() {
  unsigned texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  return texture;
}

void ui_projection(const ImDrawData& draw_data, float projection[16]) {
  const float left = draw_data.DisplayPos.x, right = left + draw_data.DisplaySize.x;
  const float top = draw_data.DisplayPos.y, bottom = top + draw_data.DisplaySize.y;
  const float matrix[16] = {2.0f / (right - left),
                            0,
                            0,
                            0,
                            0,
                            2.0f / (top - bottom),
                            0,
                            0,
                            0,
                            0,
                            -1,
                            0,
                            (right + left) / (left - right),
                            (top + bottom) / (bottom - top),
                            0,
                            1};
  for (int i = 0; i < 16; ++i) projection[i] = matrix[i];
}

}  // namespace attnviz::render
