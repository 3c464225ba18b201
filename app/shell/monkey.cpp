#include "app/shell/monkey.hpp"

#include <imgui.h>
#include <imgui_internal.h>  // the windows and pop-ups the last frame showed
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/platform/keys.hpp"
#include "core/lessons/lesson.hpp"
#include "core/models/model_files.hpp"

namespace attnviz::app {
namespace {

// What is typed into a text field: scripts written right to left, combining marks, joiners,
// characters past U+FFFF, private-use characters (the app's own stand-ins for emoji), controls.
const std::array<std::u32string, 24> kTexts = {
    U"the cat sat on the mat",
    U"In the beginning God created the heaven and the earth.",
    U"Once upon a time",
    U"猫が座った 狗",
    U"مرحبا بالعالم",
    U"שָׁלוֹם",
    U"e\u0301\u0301\u0301\u0301",
    U"\U0001F469\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466",
    U"\U0001F1EB\U0001F1F7\U0001F600\u2764\uFE0F",
    U"\uFEFF\u200B\u200D\u200E\u202E",
    U"\u0085\u00A0\u2028\u2029",
    U"\U0010FFFF\U000E0001\U0001D400",
    U"\uE000\uE001\uF8FF\uE000",
    U"\uFFFD\uFFFE\uFFFF",
    U"\t\t",
    U"<|endoftext|>",
    U"'s 're 've   \t  ",
    U"1234567890 3.14 -0 NaN",
    U"\u0928\u092E\u0938\u094D\u0924\u0947",
    U"\u1100\u1161\u11A8",
    U"a",
    U" ",
    U"...,,,;;;!!!???",
    U"\u0627\u0644\u0652\u0639\u064E\u0631\u064E\u0628\u0650\u064A\u0651\u064E\u0629",
};

// What is typed into a matrix's cell.
const std::array<std::u32string, 26> kNumbers = {
    U"NaN",
    U"nan",
    U"inf",
    U"-inf",
    U"1e38",
    U"-1e38",
    U"3.4028235e38",
    U"1e39",
    U"1e-45",
    U"1e-310",
    U"0",
    U"-0",
    U"1,5",
    U"\u22122.5",
    U"",
    U"abc",
    U"99999999999999999999",
    U"0x1p3",
    U"1e",
    U"+",
    U"-",
    U".",
    U"\u0661\u0662",
    U"0.5",
    U"-7.25",
    U"1e-3",
};

constexpr std::uint64_t kFnvPrime = 1099511628211ull;

}  // namespace

Monkey::Monkey(Shell& shell, Commands& commands, std::uint64_t seed, int actions)
    : shell_(shell), commands_(commands), seed_(seed), state_(seed), actions_(actions) {
  trace_ = std::getenv("ATTNVIZ_MONKEY_TRACE") != nullptr;
}

Monkey::~Monkey() {
  if (folder_.empty()) return;
  std::error_code error;
  std::filesystem::current_path(std::filesystem::temp_directory_path(error), error);
  std::filesystem::remove_all(folder_, error);
}

std::uint64_t Monkey::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
int Monkey::below(int n) {
  return n <= 1 ? 0 : static_cast<int>(next() % static_cast<std::uint64_t>(n));
}
bool Monkey::chance(double p) {
  return static_cast<double>(next() >> 11) * 0x1.0p-53 < p;
}
float Monkey::between(float low, float high) {
  return low + static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-53) * (high - low);
}

Status Monkey::prepare() {
  std::error_code error;
  std::string pattern = (std::filesystem::temp_directory_path(error) / "attnviz-monkey-XXXXXX");
  if (!mkdtemp(pattern.data())) return Status::error("--monkey: cannot make a temporary folder");
  folder_ = pattern;
  shell_.write_folder = folder_;
  // What the app remembers between runs goes here too, not into the user's state folder.
  ::setenv("ATTNVIZ_STATE_DIR", (folder_ + "/state").c_str(), 1);
  std::filesystem::current_path(folder_, error);
  if (error) return Status::error("--monkey: cannot work in " + folder_);
  // Files for Open, Open recent and files dropped on the window: broken ones and lessons.
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(folder_ + "/" + name, std::ios::binary) << text;
  };
  write("not-json.json", "{\"format\": ");
  write("empty.json", "");
  write("model.safetensors", std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(next());
  write("bytes.json", bytes);
  const std::vector<BuiltinLesson>& lessons = builtin_lessons();
  for (int i = 0; i < 3 && !lessons.empty(); ++i) {
    const BuiltinLesson& lesson = lessons[static_cast<std::size_t>(below(int(lessons.size())))];
    write("lesson-" + std::string(lesson.id) + ".json", std::string(lesson.json));
  }
  std::fprintf(stderr, "attnviz: monkey: seed %llu, %d actions, in %s\n",
               static_cast<unsigned long long>(seed_), actions_, folder_.c_str());
  return Status::success();
}

void Monkey::note(const std::string& action) {
  for (const char c : action) digest_ = (digest_ ^ static_cast<unsigned char>(c)) * kFnvPrime;
  if (trace_)
    std::fprintf(stderr, "monkey %d (frame %ld): %s\n", actions_done_, frame_count_,
                 action.c_str());
}

Monkey::FrameInput Monkey::idle() const {
  FrameInput frame;
  frame.x = last_.x;
  frame.y = last_.y;
  return frame;
}

// -----------------------------------------------------------------------------
// [SECTION] Frames
// -----------------------------------------------------------------------------

void Monkey::before_frame() {
  const AppState& state = shell_.state;
  model_frames_ += state.document.scenario().model() ? 1 : 0;
  lesson_frames_ += state.lesson.active() ? 1 : 0;
  popup_frames_ += GImGui->OpenPopupStack.Size > 0 ? 1 : 0;
  typing_frames_ += ImGui::GetIO().WantTextInput ? 1 : 0;
  if (frames_.empty() && actions_done_ < actions_) {
    act();
    ++actions_done_;
  }
}

void Monkey::give_input(std::vector<unsigned>& typed) {
  ImGuiIO& io = ImGui::GetIO();
  FrameInput frame = idle();
  if (!frames_.empty()) {
    frame = std::move(frames_.front());
    frames_.pop_front();
  }
  ++frame_count_;
  io.DeltaTime = 1.0f / 60.0f;
  io.MousePos = ImVec2(frame.x, frame.y);
  for (int i = 0; i < 3; ++i) io.MouseDown[i] = frame.down[i];
  io.MouseWheel = frame.wheel;
  for (const int key : held_) io.KeysDown[key] = false;
  held_ = frame.keys;
  for (const int key : held_) io.KeysDown[key] = true;
  io.KeyCtrl = frame.ctrl;
  io.KeyShift = frame.shift;
  io.KeyAlt = frame.alt;
  io.KeySuper = false;
  for (const char32_t c : frame.text) {
    io.AddInputCharacter(static_cast<unsigned>(c));
    typed.push_back(static_cast<unsigned>(c));
  }
  last_ = std::move(frame);
}

// -----------------------------------------------------------------------------
// [SECTION] Actions
// -----------------------------------------------------------------------------

void Monkey::pick_target(float& x, float& y) {
  const ImGuiContext& g = *GImGui;
  const ImVec2 display = g.IO.DisplaySize;
  const auto within = [&](float left, float top, float width, float height) {
    x = left + between(0, std::max(1.0f, width));
    y = top + between(0, std::max(1.0f, height));
  };
  // The menu, list or dialog open on top, mostly.
  if (g.OpenPopupStack.Size > 0 && chance(0.7)) {
    const ImGuiWindow* popup = g.OpenPopupStack.back().Window;
    if (popup && popup->Active)
      return within(popup->Pos.x, popup->Pos.y, popup->Size.x, popup->Size.y);
  }
  const FrameLayout& layout = shell_.state.frame.layout;
  switch (below(12)) {
    case 0:  // the menu bar
      return within(0, 0, display.x * 0.5f, g.FontSize + g.Style.FramePadding.y * 2);
    case 1:
      if (!layout.sentence_field.empty())
        return within(layout.sentence_field.x, layout.sentence_field.y, layout.sentence_field.w,
                      layout.sentence_field.h);
      break;
    case 2:
      if (layout.heatmap.rows > 0)
        return within(layout.heatmap.grid.x, layout.heatmap.grid.y, layout.heatmap.grid.w,
                      layout.heatmap.grid.h);
      break;
    case 3:
      if (const ModelGridGeometry& grid = layout.model_grid; grid.layers > 0)
        return within(grid.x + grid.column * static_cast<float>(below(grid.heads)),
                      grid.y + grid.row * static_cast<float>(below(grid.layers)), grid.tile,
                      grid.tile);
      break;
    case 4:
      if (!layout.tabs.empty()) {
        const FrameLayout::Tab& tab =
            layout.tabs[static_cast<std::size_t>(below(int(layout.tabs.size())))];
        return within(tab.x, tab.y, tab.w, tab.h);
      }
      break;
    case 5:  // anywhere, a little outside the window too
      return within(-20, -20, display.x + 40, display.y + 40);
    default:
      break;
  }
  // A window the last frame showed (child windows too: the lists and grids inside panels).
  std::vector<const ImGuiWindow*> shown;
  for (const ImGuiWindow* window : g.Windows)
    if (window->Active && !window->Hidden && window->Size.x > 1 && window->Size.y > 1)
      shown.push_back(window);
  if (shown.empty()) return within(0, 0, display.x, display.y);
  const ImGuiWindow* window = shown[static_cast<std::size_t>(below(int(shown.size())))];
  within(window->Pos.x, window->Pos.y, window->Size.x, window->Size.y);
}

void Monkey::click(int button, int clicks) {
  float x = 0, y = 0;
  pick_target(x, y);
  const bool ctrl = chance(0.05), shift = chance(0.05);
  note("click " + std::to_string(button) + "x" + std::to_string(clicks) + " at " +
       std::to_string(int(x)) + "," + std::to_string(int(y)) + (ctrl ? " ctrl" : "") +
       (shift ? " shift" : ""));
  FrameInput move = idle();
  move.x = x;
  move.y = y;
  queue(move);
  for (int i = 0; i < clicks; ++i) {
    FrameInput press = move;
    press.down[button] = true;
    press.ctrl = ctrl;
    press.shift = shift;
    queue(press);
    FrameInput release = move;
    release.ctrl = ctrl;
    release.shift = shift;
    queue(release);
  }
}

void Monkey::drag() {
  float x = 0, y = 0;
  pick_target(x, y);
  const int steps = 2 + below(12);
  note("drag from " + std::to_string(int(x)) + "," + std::to_string(int(y)) + " in " +
       std::to_string(steps));
  FrameInput frame = idle();
  frame.x = x;
  frame.y = y;
  queue(frame);
  frame.down[0] = true;
  queue(frame);
  const float reach = chance(0.2) ? 600.0f : 60.0f;
  for (int i = 0; i < steps; ++i) {
    frame.x += between(-reach, reach);
    frame.y += between(-reach, reach);
    queue(frame);
  }
  frame.down[0] = false;
  queue(frame);
}

void Monkey::wheel() {
  float x = 0, y = 0;
  pick_target(x, y);
  note("wheel at " + std::to_string(int(x)) + "," + std::to_string(int(y)));
  FrameInput frame = idle();
  frame.x = x;
  frame.y = y;
  queue(frame);
  for (int i = 0, turns = 1 + below(4); i < turns; ++i) {
    frame.wheel = chance(0.5) ? between(-3, 3) : (chance(0.5) ? 1.0f : -1.0f);
    frame.shift = chance(0.2);  // across
    frame.ctrl = chance(0.1);
    queue(frame);
  }
}

void Monkey::press_key(int imgui_key, bool ctrl, bool shift, bool alt) {
  if (imgui_key < 0 || imgui_key >= IM_ARRAYSIZE(ImGui::GetIO().KeysDown)) return;
  FrameInput frame = idle();
  frame.keys = {imgui_key};
  frame.ctrl = ctrl;
  frame.shift = shift;
  frame.alt = alt;
  queue(frame);
  queue(idle());
}

void Monkey::key() {
  static constexpr std::array<ImGuiKey, 20> kKeys = {
      ImGuiKey_Tab,       ImGuiKey_LeftArrow, ImGuiKey_RightArrow,  ImGuiKey_UpArrow,
      ImGuiKey_DownArrow, ImGuiKey_PageUp,    ImGuiKey_PageDown,    ImGuiKey_Home,
      ImGuiKey_End,       ImGuiKey_Delete,    ImGuiKey_Backspace,   ImGuiKey_Space,
      ImGuiKey_Enter,     ImGuiKey_Escape,    ImGuiKey_KeyPadEnter, ImGuiKey_A,
      ImGuiKey_C,         ImGuiKey_V,         ImGuiKey_X,           ImGuiKey_Insert};
  const ImGuiKey key = kKeys[static_cast<std::size_t>(below(int(kKeys.size())))];
  const bool ctrl = chance(0.3), shift = chance(0.2), alt = chance(0.05);
  note("key " + std::to_string(key) + (ctrl ? " ctrl" : "") + (shift ? " shift" : "") +
       (alt ? " alt" : ""));
  for (int i = 0, times = chance(0.2) ? 2 + below(6) : 1; i < times; ++i)
    press_key(ImGui::GetIO().KeyMap[key], ctrl, shift, alt);
}

void Monkey::shortcut() {
  using platform::Key;
  struct Shortcut {
    Key key;
    bool ctrl, shift;
  };
  static constexpr std::array<Shortcut, 20> kShortcuts = {{
      {Key::Z, true, false},       {Key::Z, true, true},        {Key::Y, true, false},
      {Key::K, true, false},       {Key::S, true, false},       {Key::S, true, true},
      {Key::N, true, false},       {Key::O, true, false},       {Key::Equal, true, false},
      {Key::Minus, true, false},   {Key::Zero, true, false},    {Key::Q, true, false},
      {Key::F1, false, false},     {Key::F5, false, false},     {Key::PageDown, false, false},
      {Key::PageUp, false, false}, {Key::Escape, false, false}, {Key::Enter, false, false},
      {Key::Right, false, false},  {Key::Left, false, false},
  }};
  const Shortcut& s = kShortcuts[static_cast<std::size_t>(below(int(kShortcuts.size())))];
  note("shortcut " + std::to_string(static_cast<int>(s.key)) + (s.ctrl ? " ctrl" : "") +
       (s.shift ? " shift" : ""));
  if (s.key == Key::K && s.ctrl) ++knock_outs_;
  if (s.key == Key::PageDown || s.key == Key::PageUp) ++lesson_steps_;
  press_key(platform::imgui_key_index(s.key), s.ctrl, s.shift, false);
}

void Monkey::type(const std::u32string& text) {
  // A few characters a frame, as a quick typist's arrive.
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t count = std::min<std::size_t>(text.size() - at, 1 + below(6));
    FrameInput frame = idle();
    frame.text = text.substr(at, count);
    queue(frame);
    at += count;
  }
}

void Monkey::type_text() {
  const FrameLayout& layout = shell_.state.frame.layout;
  if (!layout.sentence_field.empty() && chance(0.6)) {  // into the sentence
    FrameInput frame = idle();
    frame.x = layout.sentence_field.x + between(0, layout.sentence_field.w);
    frame.y = layout.sentence_field.y + between(0, layout.sentence_field.h);
    queue(frame);
    frame.down[0] = true;
    queue(frame);
    frame.down[0] = false;
    queue(frame);
  }
  std::u32string text;
  if (chance(0.7)) {
    text = kTexts[static_cast<std::size_t>(below(int(kTexts.size())))];
    if (chance(0.1))  // long
      for (int i = 0; i < 4; ++i) text += text;
  } else {  // code points from every plane's busy parts
    static constexpr std::array<std::pair<char32_t, char32_t>, 7> kRanges = {{{0x20, 0x7E},
                                                                              {0xA0, 0x2FFF},
                                                                              {0x3000, 0x9FFF},
                                                                              {0xE000, 0xF8FF},
                                                                              {0xFB00, 0xFFFF},
                                                                              {0x10000, 0x1FFFF},
                                                                              {0xE0000, 0xE007F}}};
    for (int i = 0, n = 1 + below(12); i < n; ++i) {
      const auto& [low, high] = kRanges[static_cast<std::size_t>(below(int(kRanges.size())))];
      text += static_cast<char32_t>(low + static_cast<char32_t>(below(int(high - low + 1))));
    }
  }
  if (chance(0.15)) text.clear();  // the field emptied
  note("type " + std::to_string(text.size()) + " characters, first U+" +
       std::to_string(static_cast<unsigned>(text.empty() ? 0 : text[0])));
  if (chance(0.3) || text.empty()) press_key(ImGui::GetIO().KeyMap[ImGuiKey_A], true, false, false);
  if (text.empty()) press_key(ImGui::GetIO().KeyMap[ImGuiKey_Backspace], false, false, false);
  type(text);
  if (chance(0.3)) press_key(ImGui::GetIO().KeyMap[ImGuiKey_Enter], false, false, false);
  if (chance(0.2))
    for (int i = 0, n = 1 + below(8); i < n; ++i)
      press_key(ImGui::GetIO().KeyMap[ImGuiKey_Backspace], chance(0.3), false, false);
}

// A double click on a cell (a matrix's, where the weights are) opens a field for its number; the
// number is typed and entered (or the field left some other way).
void Monkey::type_number() {
  click(0, 2);
  const std::u32string& number = kNumbers[static_cast<std::size_t>(below(int(kNumbers.size())))];
  note("number " + std::to_string(number.size()) + " characters");
  ++weight_edits_;
  press_key(ImGui::GetIO().KeyMap[ImGuiKey_A], true, false, false);
  type(number);
  const int end = below(10);
  if (end < 7)
    press_key(ImGui::GetIO().KeyMap[ImGuiKey_Enter], false, false, false);
  else if (end == 7)
    press_key(ImGui::GetIO().KeyMap[ImGuiKey_Escape], false, false, false);
  else if (end == 8)
    press_key(ImGui::GetIO().KeyMap[ImGuiKey_Tab], false, false, false);
}

void Monkey::command() {
  AppState& state = shell_.state;
  const std::vector<std::string> models = shipped_model_names();
  const int which = below(30);
  note("command " + std::to_string(which));
  switch (which) {
    case 0:
    case 1:
    case 2:  // a model: the two shipped ones, in turn and at random
      if (!models.empty()) {
        commands_.open_model_named(models[static_cast<std::size_t>(below(int(models.size())))]);
        ++model_switches_;
      }
      break;
    case 3:
    case 4:  // back to the one-layer scenario
      commands_.leave_model();
      ++model_switches_;
      break;
    case 5:  // a model that does not open: a name, a folder of other files, a broken file
      commands_.open_model_named(
          chance(0.5) ? "no-such-model" : (chance(0.5) ? folder_ : folder_ + "/model.safetensors"));
      break;
    case 6:
    case 7:
      if (!shell_.lesson_titles.empty()) {
        const auto& [id, title] =
            shell_.lesson_titles[static_cast<std::size_t>(below(int(shell_.lesson_titles.size())))];
        commands_.start_lesson(id, title);
      }
      break;
    case 8:
    case 9:
      for (int i = 0, n = 1 + below(4); i < n; ++i)
        commands_.step_presentation(chance(0.7) ? 1 : -1);
      ++lesson_steps_;
      break;
    case 10:
      if (state.lesson.active()) state.go_to_lesson_step(below(40) - 5);
      ++lesson_steps_;
      break;
    case 11:
      commands_.leave_lesson();
      break;
    case 12:
    case 13: {  // a head knocked out (or back)
      state.selection.layer = below(8);
      state.selection.head = below(12);
      state.recompute_if_needed();
      commands_.toggle_knock_out();
      ++knock_outs_;
      break;
    }
    case 14: {  // anything selected, in range or not (as --layer, --head, --query may ask)
      state.selection.layer = chance(0.9) ? below(8) : below(100000);
      state.selection.head = chance(0.9) ? below(12) : below(100000);
      state.selection.query = chance(0.9) ? below(40) : below(100000);
      state.selection.key = below(40) - 1;
      break;
    }
    case 15:
    case 16:
      for (int i = 0, n = 1 + below(5); i < n; ++i) commands_.undo();
      break;
    case 17:
      for (int i = 0, n = 1 + below(3); i < n; ++i) commands_.redo();
      break;
    case 18:
      commands_.new_scenario();
      break;
    case 19: {  // a file of the folder: opened, or dropped with others (and folders)
      std::vector<std::string> files;
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator(folder_, error))
        files.push_back(entry.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) break;
      if (chance(0.5)) {
        commands_.open_file(files[static_cast<std::size_t>(below(int(files.size())))]);
      } else {
        std::vector<std::string> dropped;
        for (int i = 0, n = 1 + below(3); i < n; ++i)
          dropped.push_back(files[static_cast<std::size_t>(below(int(files.size())))]);
        const std::vector<std::string> model_folders = shipped_model_folders();
        if (chance(0.2) && !model_folders.empty() && !models.empty())
          dropped.push_back(model_folders.front() + "/" +
                            models[static_cast<std::size_t>(below(int(models.size())))]);
        commands_.open_dropped_files(dropped);
      }
      break;
    }
    case 20:
      commands_.save();
      break;
    case 21:
      commands_.save_as();
      break;
    case 22:
      commands_.export_file(static_cast<ExportFormat>(below(5)));
      break;
    case 23:
      if (chance(0.5)) {
        commands_.export_png({});
      } else {
        const ImVec2 display = ImGui::GetIO().DisplaySize;
        commands_.export_png({between(0, display.x / 2), between(0, display.y / 2),
                              between(1, display.x / 2), between(1, display.y / 2)});
      }
      break;
    case 24: {
      const int size = below(4);
      if (size == 0) commands_.larger_text();
      if (size == 1) commands_.smaller_text();
      if (size == 2) commands_.reset_text_size();
      if (size == 3) commands_.set_text_size(between(4, 120));
      break;
    }
    case 25:
      if (chance(0.7))
        commands_.toggle_presenter();
      else
        commands_.toggle_shortcuts();
      break;
    case 26: {  // a centre view, panels, theme, colormap
      std::vector<CenterView> centre;
      for (const view::ViewInfo& info : view::kViews)
        if (parse_center_view(info.name)) centre.push_back(info.id);
      if (!centre.empty())
        state.ui.center_view = centre[static_cast<std::size_t>(below(int(centre.size())))];
      if (chance(0.3))
        for (bool& shown : state.ui.visible) shown = chance(0.7);
      if (chance(0.2)) state.ui.theme = chance(0.5) ? Theme::Light : Theme::Dark;
      if (chance(0.2))
        state.ui.colormap =
            chance(0.5) ? view::ColormapId::Sequential : view::ColormapId::ColorBlindSafe;
      break;
    }
    case 27:
      commands_.quit();
      break;
    case 28:
      if (shell_.recovery_offer) {
        if (chance(0.5))
          commands_.restore_offered();
        else
          commands_.discard_offered();
      } else if (chance(0.1)) {
        commands_.toggle_fullscreen();
      } else {  // the window resized: tiny, usual, large
        const int width = chance(0.3) ? 200 + below(500) : 640 + below(1300);
        const int height = chance(0.3) ? 200 + below(300) : 420 + below(560);
        note("window " + std::to_string(width) + "x" + std::to_string(height));
        shell_.backend.set_window_size(width, height);
      }
      shell_.png.scale = 1 + below(4);  // File > Export's PNG scale
      break;
    default:
      commands_.open();
      break;
  }
  queue(idle());
}

void Monkey::act() {
  const int kind = below(100);
  if (kind < 24)
    click(0, 1);
  else if (kind < 28)
    click(1, 1);
  else if (kind < 33)
    click(0, 2);
  else if (kind < 41)
    drag();
  else if (kind < 45)
    wheel();
  else if (kind < 47) {  // the pointer rests: tooltips
    float x = 0, y = 0;
    pick_target(x, y);
    note("hover");
    FrameInput frame = idle();
    frame.x = x;
    frame.y = y;
    for (int i = 0, n = 5 + below(40); i < n; ++i) queue(frame);
  } else if (kind < 57)
    key();
  else if (kind < 65)
    shortcut();
  else if (kind < 72)
    type_text();
  else if (kind < 78)
    type_number();
  else
    command();
}

std::string Monkey::summary() const {
  char digest[32];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(digest_));
  return "attnviz: monkey: seed " + std::to_string(seed_) + ", " + std::to_string(actions_done_) +
         " actions in " + std::to_string(frame_count_) + " frames (" +
         std::to_string(model_switches_) + " model switches, " + std::to_string(lesson_steps_) +
         " lesson steps, " + std::to_string(knock_outs_) + " knock-outs, " +
         std::to_string(weight_edits_) + " numbers typed after double clicks, " +
         std::to_string(quits_) + " quits agreed; frames in model mode " +
         std::to_string(model_frames_) + ", in a lesson " + std::to_string(lesson_frames_) +
         ", with a menu or dialog open " + std::to_string(popup_frames_) + ", typing " +
         std::to_string(typing_frames_) + "), digest " + digest;
}

}  // namespace attnviz::app
