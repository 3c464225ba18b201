// The keys the shell's shortcuts and dialogs ask about, by name: no platform key code appears
// outside app/platform/.
#pragma once

namespace attnviz::platform {

enum class Key {
  // With Ctrl: new, open, quit, save, redo, undo.
  K,
  N,
  O,
  Q,
  S,
  Y,
  Z,
  // With Ctrl: the text size.
  Zero,
  Minus,
  Equal,
  KeypadSubtract,
  KeypadAdd,
  // The shortcuts list; closing and answering.
  F1,
  Escape,
  Enter,
  KeypadEnter,
  // Presenter mode: in and out, full screen; and the keys a presentation clicker sends.
  F5,
  F11,
  PageUp,
  PageDown,
  Left,
  Right,
  Up,
  Down,
};

// ImGui 1.86's index of the key in io.KeysDown (ImGui::IsKeyPressed takes it): the GLFW key code,
// as ImGui's GLFW backend indexes keys.
int imgui_key_index(Key key);

// Whether the key went down this frame (`repeat`: or repeats, held down).
bool key_pressed(Key key, bool repeat = false);

}  // namespace attnviz::platform
