// The notice bar at the foot of the window: one message at a time, the one that matters most.
//
// In order: the engine's error (the views keep the last good result); why the last action failed
// (an export, a save, a file that would not open), until it is dismissed, another action goes
// well or the scenario is edited (the user has moved on, and an old "not opened: ... has no
// tokens" would read as news about the current sentence); a PNG being written; what just went well,
// for a few seconds; the warnings of the file opened (until dismissed or another file is opened);
// the engine's warnings (as long as their cause); a missing font; a failed autosave. A later
// success never hides behind an earlier failure, and an old failure never comes back after a
// success.
//
// No ImGui here: the app draws what choose() says (app.cpp, draw_notice_bar).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attnviz::app {

// What the bar may show besides what the board keeps: the app's live state, this frame.
struct NoticeSources {
  std::uint64_t edit_version = 0;  // AppState::edit_version: a failure shows until it changes
  std::string compute_error;       // "" when the result is current
  bool has_result = false;         // a last good result is shown meanwhile
  bool exporting = false;          // a PNG is being compressed and written
  std::string export_path;
  const std::vector<std::string>* file_warnings = nullptr;      // of the file opened
  const std::vector<std::string>* pipeline_warnings = nullptr;  // of the engine
  std::string font_error;
  std::string autosave_error;
};

struct Notice {
  enum class Kind { None, Error, Working, Done, Warning };  // Working: under way (not yet done)
  // What "Dismiss" clears, if the notice has the button.
  enum class Dismiss { None, ActionError, FileWarnings, FontError, AutosaveError };
  Kind kind = Kind::None;
  std::string text;
  Dismiss dismiss = Dismiss::None;
  bool lists_warnings = false;  // the file has several warnings: the text names the first
};

class NoticeBoard {
 public:
  static constexpr double kDoneSeconds = 4.0;  // how long "saved ..." and the like stay

  void succeeded(std::string text, double now);  // and the last failure is forgotten
  void failed(std::string text, std::uint64_t edit_version);
  void dismiss_action_error() { action_error_.clear(); }
  // When the bar next changes by itself (a success's message ends); infinity if it does not.
  double changes_at(double now) const {
    return done_until_ > now ? done_until_ : std::numeric_limits<double>::infinity();
  }

  Notice choose(const NoticeSources& sources, double now) const;

 private:
  std::string done_;
  double done_until_ = 0;
  std::string action_error_;
  std::uint64_t action_error_version_ = 0;  // the edit_version when the action failed
};

}  // namespace attnviz::app
