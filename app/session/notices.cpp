#include "app/session/notices.hpp"

#include <utility>

namespace attnviz::app {

void NoticeBoard::succeeded(std::string text, double now) {
  done_ = std::move(text);
  done_until_ = now + kDoneSeconds;
  action_error_.clear();
}

void NoticeBoard::failed(std::string text, std::uint64_t edit_version) {
  action_error_ = std::move(text);
  action_error_version_ = edit_version;
  done_until_ = 0;  // an earlier success is old news
}

Notice NoticeBoard::choose(const NoticeSources& sources, double now) const {
  using Kind = Notice::Kind;
  using Dismiss = Notice::Dismiss;
  if (!sources.compute_error.empty())
    return {Kind::Error,
            sources.compute_error +
                (sources.has_result ? "  \xe2\x80\x94  showing the last good result" : ""),
            Dismiss::None, false};
  if (!action_error_.empty() && sources.edit_version == action_error_version_)
    return {Kind::Error, action_error_, Dismiss::ActionError, false};
  if (sources.exporting)
    return {Kind::Working, "exporting " + sources.export_path + "\xe2\x80\xa6", Dismiss::None,
            false};
  if (!done_.empty() && now < done_until_) return {Kind::Done, done_, Dismiss::None, false};
  if (sources.file_warnings && !sources.file_warnings->empty()) {
    const std::vector<std::string>& warnings = *sources.file_warnings;
    std::string text = warnings.front();
    if (warnings.size() > 1) text += "  (and " + std::to_string(warnings.size() - 1) + " more)";
    return {Kind::Warning, std::move(text), Dismiss::FileWarnings, warnings.size() > 1};
  }
  if (sources.pipeline_warnings && !sources.pipeline_warnings->empty())
    return {Kind::Warning, sources.pipeline_warnings->front(), Dismiss::None, false};
  if (!sources.font_error.empty())
    return {Kind::Warning, sources.font_error, Dismiss::FontError, false};
  if (!sources.autosave_error.empty())
    return {Kind::Warning, sources.autosave_error, Dismiss::AutosaveError, false};
  return {};
}

}  // namespace attnviz::app
