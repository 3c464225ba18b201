#include "app/platform/keys.hpp"

#include <imgui.h>

#include "app/platform/gl.hpp"

namespace attnviz::platform {

int imgui_key_index(Key key) {
  switch (key) {
    case Key::K:
      return GLFW_KEY_K;
    case Key::N:
      return GLFW_KEY_N;
    case Key::O:
      return GLFW_KEY_O;
    case Key::Q:
      return GLFW_KEY_Q;
    case Key::S:
      return GLFW_KEY_S;
    case Key::Y:
      return GLFW_KEY_Y;
    case Key::Z:
      return GLFW_KEY_Z;
    case Key::Zero:
      return GLFW_KEY_0;
    case Key::Minus:
      return GLFW_KEY_MINUS;
    case Key::Equal:
      return GLFW_KEY_EQUAL;
    case Key::KeypadSubtract:
      return GLFW_KEY_KP_SUBTRACT;
    case Key::KeypadAdd:
      return GLFW_KEY_KP_ADD;
    case Key::F1:
      return GLFW_KEY_F1;
    case Key::F5:
      return GLFW_KEY_F5;
    case Key::F11:
      return GLFW_KEY_F11;
    case Key::PageUp:
      return GLFW_KEY_PAGE_UP;
    case Key::PageDown:
      return GLFW_KEY_PAGE_DOWN;
    case Key::Left:
      return GLFW_KEY_LEFT;
    case Key::Right:
      return GLFW_KEY_RIGHT;
    case Key::Up:
      return GLFW_KEY_UP;
    case Key::Down:
      return GLFW_KEY_DOWN;
    case Key::Escape:
      return GLFW_KEY_ESCAPE;
    case Key::Enter:
      return GLFW_KEY_ENTER;
    case Key::KeypadEnter:
      return GLFW_KEY_KP_ENTER;
  }
  return -1;
}

bool key_pressed(Key key, bool repeat) {
  return ImGui::IsKeyPressed(imgui_key_index(key), repeat);
}

}  // namespace attnviz::platform
