#include "app/shell/file_dialog.hpp"

#include <imgui.h>
#include <imgui_stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace attnviz::app {
namespace fs = std::filesystem;
namespace {

constexpr ImU32 kErrorColour = IM_COL32(210, 50, 50, 255);

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// True when the name ends with the extension (case-insensitive); never for an empty extension.
bool has_extension(const std::string& name, std::string_view extension) {
  if (extension.empty() || name.size() <= extension.size()) return false;
  return std::equal(extension.begin(), extension.end(),
                    name.end() - static_cast<std::ptrdiff_t>(extension.size()),
                    [](char a, char b) { return a == lower(b); });
}

// Case-insensitive order, ties broken byte by byte (so the order is total).
bool name_less(const std::string& a, const std::string& b) {
  const auto folded = std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) { return lower(x) < lower(y); });
  const auto reversed = std::lexicographical_compare(
      b.begin(), b.end(), a.begin(), a.end(), [](char x, char y) { return lower(x) < lower(y); });
  return folded || (!reversed && a < b);
}

// Absolute, without "." or "..", without a trailing slash ("" when impossible).
fs::path normal_absolute(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return {};
  absolute = absolute.lexically_normal();
  if (!absolute.has_filename() && absolute.has_relative_path()) absolute = absolute.parent_path();
  return absolute;
}

bool is_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

fs::path working_folder() {
  std::error_code error;
  fs::path folder = fs::current_path(error);
  return error ? fs::path("/") : folder;
}

bool key_pressed(ImGuiKey key, bool repeat = false) {
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), repeat);
}

void error_text(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, kErrorColour);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

}  // namespace

void FileDialog::open_for_open(std::string title, const std::string& start_folder) {
  extension_ = ".json";
  start(Mode::Open, std::move(title), start_folder, {});
}

void FileDialog::open_for_model(std::string title, const std::string& start_folder) {
  extension_ = ".bin";  // and .safetensors (rescan)
  start(Mode::Model, std::move(title), start_folder, {});
}

void FileDialog::open_for_save(std::string title, const std::string& start_folder,
                               std::string file_name, std::string extension) {
  extension_ = std::move(extension);  // before start(): it filters the first scan
  start(Mode::Save, std::move(title), start_folder, std::move(file_name));
}

void FileDialog::start(Mode mode, std::string title, const std::string& start_folder,
                       std::string file_name) {
  mode_ = mode;
  title_ = std::move(title);
  pending_open_ = true;
  focus_name_ = mode == Mode::Save;
  name_field_ = std::move(file_name);
  message_.clear();
  confirm_replace_.reset();
  result_.reset();

  std::string select_name;
  fs::path folder = start_folder.empty() ? folder_ : fs::path(start_folder);
  if (!folder.empty() && !is_folder(folder)) {
    std::error_code error;
    if (fs::is_regular_file(folder, error)) select_name = folder.filename().string();
    folder = folder.parent_path();
  }
  if (folder.empty() || !is_folder(folder)) folder = working_folder();
  if (!navigate(folder)) navigate("/");
  const std::string proposed = name_field_;
  for (std::size_t i = 0; i < entries_.size() && !select_name.empty(); ++i)
    if (!entries_[i].folder && entries_[i].name == select_name) select(static_cast<int>(i));
  if (!proposed.empty()) name_field_ = proposed;  // the caller's name wins over the selection
}

bool FileDialog::navigate(const fs::path& folder) {
  const fs::path target = normal_absolute(folder);
  if (target.empty() || !is_folder(target)) {
    message_ = "'" + folder.string() + "' is not a folder.";
    return false;
  }
  folder_ = target;
  folder_field_ = folder_.string();
  message_.clear();
  rescan();
  return true;
}

void FileDialog::rescan() {
  entries_.clear();
  scan_error_.clear();
  selected_ = -1;
  scroll_to_selection_ = true;
  std::vector<Entry> folders, files;
  std::error_code error;
  fs::directory_iterator it(folder_, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.empty() || (!show_hidden_ && name.front() == '.')) continue;
    std::error_code ignored;
    if (it->is_directory(ignored))
      folders.push_back({std::move(name), true});
    else if (it->is_regular_file(ignored) &&
             (has_extension(name, extension_) ||
              (mode_ == Mode::Model && has_extension(name, ".safetensors"))))
      files.push_back({std::move(name), false});
  }
  if (error) scan_error_ = "Cannot read this folder: " + error.message();
  const auto by_name = [](const Entry& a, const Entry& b) { return name_less(a.name, b.name); };
  std::sort(folders.begin(), folders.end(), by_name);
  std::sort(files.begin(), files.end(), by_name);
  if (folder_.has_relative_path()) entries_.push_back({"..", true});
  entries_.insert(entries_.end(), folders.begin(), folders.end());
  entries_.insert(entries_.end(), files.begin(), files.end());
}

void FileDialog::select(int index) {
  selected_ = index;
  scroll_to_selection_ = true;
  if (index < 0 || index >= static_cast<int>(entries_.size())) return;
  const Entry& entry = entries_[static_cast<std::size_t>(index)];
  if (!entry.folder) name_field_ = entry.name;
}

void FileDialog::activate(int index) {
  if (index < 0 || index >= static_cast<int>(entries_.size())) return;
  const Entry& entry = entries_[static_cast<std::size_t>(index)];
  if (!entry.folder) {
    name_field_ = entry.name;
    accept();
  } else if (entry.name == "..") {
    const std::string child = folder_.filename().string();
    if (navigate(folder_.parent_path())) {
      // Land on the folder just left, as file managers do.
      for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].folder && entries_[i].name == child) select(static_cast<int>(i));
    }
  } else {
    navigate(folder_ / entry.name);
  }
}

void FileDialog::accept() {
  message_.clear();
  std::string name = name_field_;
  const auto not_space = [](char c) { return !std::isspace(static_cast<unsigned char>(c)); };
  name.erase(name.begin(), std::find_if(name.begin(), name.end(), not_space));
  name.erase(std::find_if(name.rbegin(), name.rend(), not_space).base(), name.end());
  if (name.empty()) {
    if (selected_ >= 0 && entries_[static_cast<std::size_t>(selected_)].folder)
      return activate(selected_);
    message_ = mode_ == Mode::Save ? "Type a file name." : "Choose a file.";
    return;
  }
  // A typed name may be a path, relative to the folder shown or absolute.
  const fs::path typed = normal_absolute(folder_ / name);
  if (typed.empty()) {
    message_ = "'" + name + "' is not a usable path.";
    return;
  }
  if (is_folder(typed)) {  // a folder typed or chosen: go there
    if (navigate(typed)) name_field_.clear();
    return;
  }
  std::error_code error;
  if (mode_ != Mode::Save) {
    if (!fs::is_regular_file(typed, error)) {
      message_ = "There is no file '" + typed.string() + "'.";
      return;
    }
    return finish(typed);
  }
  fs::path path = typed;
  if (!extension_.empty() && !has_extension(path.filename().string(), extension_))
    path += extension_;
  const fs::path parent = path.parent_path();
  if (!is_folder(parent)) {
    message_ = "There is no folder '" + parent.string() + "'.";
    return;
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    message_ = "Cannot write in '" + parent.string() + "'.";
    return;
  }
  if (is_folder(path)) {
    message_ = "'" + path.string() + "' is a folder.";
    return;
  }
  if (fs::exists(fs::symlink_status(path, error))) {
    confirm_replace_ = path;
    return;
  }
  finish(path);
}

void FileDialog::finish(const fs::path& path) {
  result_ = path.string();
  close();
}

void FileDialog::close() {
  open_ = false;
  pending_open_ = false;
  confirm_replace_.reset();
  ImGui::CloseCurrentPopup();
}

std::optional<std::string> FileDialog::draw() {
  // The title changes between uses: the part after ### is the popup's identity (and its
  // window's name, which must differ between dialogs).
  char identity[48];
  std::snprintf(identity, sizeof identity, "###file dialog %p", static_cast<const void*>(this));
  if (pending_open_) {
    ImGui::OpenPopup(identity);
    pending_open_ = false;
    open_ = true;
  }
  const float font = ImGui::GetFontSize();
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(font * 42.0f, viewport->WorkSize.x * 0.9f),
                                  std::min(font * 30.0f, viewport->WorkSize.y * 0.9f)),
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowSizeConstraints(ImVec2(font * 20.0f, font * 14.0f), ImVec2(FLT_MAX, FLT_MAX));
  const std::string label = title_ + identity;
  bool keep_open = true;  // false once the title bar's x is clicked
  if (ImGui::BeginPopupModal(label.c_str(), &keep_open, ImGuiWindowFlags_NoSavedSettings)) {
    handle_keys();
    if (open_) {
      draw_folder_bar();
      const ImGuiStyle& style = ImGui::GetStyle();
      const float footer = ImGui::GetFrameHeightWithSpacing() * 2.0f +
                           (message_.empty() ? 0.0f : ImGui::GetTextLineHeightWithSpacing()) +
                           style.ItemSpacing.y;
      draw_list(std::max(font * 4.0f, ImGui::GetContentRegionAvail().y - footer));
      draw_footer();
    }
    ImGui::EndPopup();
  } else {
    open_ = false;  // cancelled with the x, or closed by another popup
  }
  std::optional<std::string> result;
  result.swap(result_);
  return result;
}

void FileDialog::handle_keys() {
  if (key_pressed(ImGuiKey_Escape)) {
    if (confirm_replace_)
      confirm_replace_.reset();
    else
      close();
    return;
  }
  if (ImGui::IsAnyItemActive()) return;  // a field is being typed in: it handles Enter
  const bool enter = key_pressed(ImGuiKey_Enter) || key_pressed(ImGuiKey_KeyPadEnter);
  if (confirm_replace_) {
    if (enter) finish(*confirm_replace_);
    return;
  }
  const int count = static_cast<int>(entries_.size());
  if (count > 0 && key_pressed(ImGuiKey_DownArrow, true))
    select(std::min(selected_ + 1, count - 1));
  if (count > 0 && key_pressed(ImGuiKey_UpArrow, true)) select(std::max(selected_ - 1, 0));
  if (!enter) return;
  if (selected_ >= 0 && entries_[static_cast<std::size_t>(selected_)].folder)
    activate(selected_);
  else
    accept();
}

void FileDialog::draw_folder_bar() {
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Folder");
  ImGui::SameLine();
  const float buttons = ImGui::CalcTextSize("Up").x + ImGui::CalcTextSize("Home").x +
                        style.FramePadding.x * 4.0f + style.ItemSpacing.x * 2.0f;
  ImGui::SetNextItemWidth(-buttons);
  const bool entered =
      ImGui::InputText("##folder", &folder_field_, ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
    ImGui::SetTooltip("Type a folder and press Enter (~ is your home folder)");
  if (entered) {
    std::string typed = folder_field_;
    if (const char* home = std::getenv("HOME"); home && (typed == "~" || typed.rfind("~/", 0) == 0))
      typed = home + typed.substr(1);
    navigate(typed);  // on failure the typed text stays, to be corrected
  } else if (ImGui::IsItemDeactivated()) {
    folder_field_ = folder_.string();  // left without Enter: show where we are
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!folder_.has_relative_path());
  if (ImGui::Button("Up")) {
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].name == "..") activate(static_cast<int>(i));
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the folder above");
  ImGui::SameLine();
  const char* home = std::getenv("HOME");
  ImGui::BeginDisabled(!home || !*home);
  if (ImGui::Button("Home") && home) navigate(home);
  ImGui::EndDisabled();
}

void FileDialog::draw_list(float height) {
  int activated = -1;
  ImGui::BeginChild("##entries", ImVec2(0, height), true);
  if (!scan_error_.empty()) error_text(scan_error_);
  const float row = ImGui::GetTextLineHeightWithSpacing();
  const float list_top = ImGui::GetCursorPosY();
  if (scroll_to_selection_) {
    scroll_to_selection_ = false;
    const float padding = ImGui::GetStyle().WindowPadding.y;
    const float top = list_top + static_cast<float>(selected_) * row;
    if (selected_ < 0)
      ImGui::SetScrollY(0);
    else if (top - padding < ImGui::GetScrollY())
      ImGui::SetScrollY(top - padding);
    else if (top + row + padding > ImGui::GetScrollY() + ImGui::GetWindowHeight())
      ImGui::SetScrollY(top + row + padding - ImGui::GetWindowHeight());
  }
  const ImU32 text_colour = ImGui::GetColorU32(ImGuiCol_Text);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(entries_.size()), row);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const Entry& entry = entries_[static_cast<std::size_t>(i)];
      ImGui::PushID(i);
      // The name is drawn as text, not as the label, so that "##" in a file name is shown.
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (ImGui::Selectable(
              "##entry", selected_ == i,
              ImGuiSelectableFlags_AllowDoubleClick | ImGuiSelectableFlags_DontClosePopups)) {
        select(i);
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) activated = i;
      }
      const std::string text = entry.folder ? entry.name + "/" : entry.name;
      ImGui::GetWindowDrawList()->AddText(at, text_colour, text.c_str(),
                                          text.c_str() + text.size());
      ImGui::PopID();
    }
  }
  const bool only_up = entries_.empty() || (entries_.size() == 1 && entries_.front().name == "..");
  if (only_up && scan_error_.empty())
    ImGui::TextDisabled(extension_.empty() ? "No folders here."
                                           : "No folders or matching files here.");
  ImGui::EndChild();
  if (activated >= 0) activate(activated);  // after the loop: it may read another folder
}

void FileDialog::draw_footer() {
  const ImGuiStyle& style = ImGui::GetStyle();
  if (!message_.empty()) error_text(message_);
  const char* ok_label = mode_ == Mode::Save ? "Save" : "Open";
  const char* cancel_label = "Cancel";
  if (confirm_replace_) {
    ok_label = "Replace";
    cancel_label = "Keep it";
    ImGui::AlignTextToFramePadding();
    ImGui::Text("'%s' already exists. Replace it?", confirm_replace_->filename().c_str());
  } else {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(mode_ == Mode::Save ? "Save as" : "File");
    ImGui::SameLine();
    if (focus_name_) {
      ImGui::SetKeyboardFocusHere();
      focus_name_ = false;
    }
    ImGui::SetNextItemWidth(-FLT_MIN);
    const char* hint = mode_ == Mode::Save ? "name" : "choose a file above, or type its name";
    if (ImGui::InputTextWithHint(
            "##name", hint, &name_field_,
            ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll))
      accept();
  }

  if (!confirm_replace_ && ImGui::Checkbox("Show hidden", &show_hidden_)) rescan();
  if (mode_ == Mode::Model) {
    ImGui::SameLine();
    if (ImGui::Button("Open this folder")) finish(folder_);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "A Hugging Face GPT-2 model's folder (config.json, model.safetensors,\n"
          "vocab.json, merges.txt), or a llama2.c model's folder");
  }
  const float button =
      std::max({ImGui::CalcTextSize(ok_label).x, ImGui::CalcTextSize(cancel_label).x,
                ImGui::GetFontSize() * 4.0f}) +
      style.FramePadding.x * 2.0f;
  const float right = ImGui::GetWindowContentRegionMax().x;
  if (!confirm_replace_) ImGui::SameLine();
  ImGui::SetCursorPosX(
      std::max(ImGui::GetCursorPosX(), right - button * 2.0f - style.ItemSpacing.x));
  if (ImGui::Button(cancel_label, ImVec2(button, 0))) {
    if (confirm_replace_)
      confirm_replace_.reset();
    else
      close();
  }
  ImGui::SameLine();
  const bool blank = name_field_.find_first_not_of(" \t") == std::string::npos;
  ImGui::BeginDisabled(blank && !confirm_replace_ &&
                       !(selected_ >= 0 && entries_[static_cast<std::size_t>(selected_)].folder));
  // The button Return presses is drawn as the default.
  ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  const bool ok = ImGui::Button(ok_label, ImVec2(button, 0));
  ImGui::PopStyleColor();
  if (ok) {
    if (confirm_replace_)
      finish(*confirm_replace_);
    else if (blank)
      activate(selected_);
    else
      accept();
  }
  ImGui::EndDisabled();
}

}  // namespace attnviz::app
