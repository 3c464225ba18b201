// The notice bar shows one message at a time, the one that matters most (app/session/notices.hpp).
#include "app/session/notices.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {

namespace {

const std::vector<std::string> kNone;

NoticeSources quiet() {
  NoticeSources sources;
  sources.file_warnings = &kNone;
  sources.pipeline_warnings = &kNone;
  return sources;
}

}  // namespace

TEST_CASE("with nothing to say the bar shows nothing") {
  const NoticeBoard board;
  CHECK(board.choose(quiet(), 0.0).kind == Notice::Kind::None);
}

TEST_CASE("the engine's error comes before everything else") {
  NoticeBoard board;
  board.failed("cannot write the PNG", 0);
  NoticeSources sources = quiet();
  sources.compute_error = "the sentence is empty";
  sources.has_result = true;
  const Notice notice = board.choose(sources, 0.0);
  CHECK(notice.kind == Notice::Kind::Error);
  CHECK(notice.text.rfind("the sentence is empty", 0) == 0);
  CHECK(notice.text.find("showing the last good result") != std::string::npos);
  CHECK(notice.dismiss == Notice::Dismiss::None);  // it lasts as long as its cause
}

TEST_CASE("a failed action shows until it is dismissed") {
  NoticeBoard board;
  board.failed("cannot write the PNG to /read-only/x.png", 0);
  const Notice notice = board.choose(quiet(), 100.0);  // long after: still there
  CHECK(notice.kind == Notice::Kind::Error);
  CHECK(notice.text == "cannot write the PNG to /read-only/x.png");
  REQUIRE(notice.dismiss == Notice::Dismiss::ActionError);
  board.dismiss_action_error();
  CHECK(board.choose(quiet(), 100.0).kind == Notice::Kind::None);
}

TEST_CASE("a failed action's message goes once the scenario is edited") {
  NoticeBoard board;
  NoticeSources sources = quiet();
  sources.edit_version = 7;
  board.failed("not opened: /tmp/zero.json: target: the sentence has no tokens", 7);
  CHECK(board.choose(sources, 0.0).kind == Notice::Kind::Error);
  sources.edit_version = 8;  // a weight dragged since
  CHECK(board.choose(sources, 0.0).kind == Notice::Kind::None);
}

TEST_CASE("a success after a failure replaces it for good") {
  NoticeBoard board;
  board.failed("cannot write the PNG to /read-only/x.png", 0);
  board.succeeded("saved /home/t/a.json", 10.0);
  const Notice notice = board.choose(quiet(), 11.0);
  CHECK(notice.kind == Notice::Kind::Done);
  CHECK(notice.text == "saved /home/t/a.json");
  // When the success's message ends, the old failure does not come back.
  CHECK(board.choose(quiet(), 10.0 + NoticeBoard::kDoneSeconds + 0.1).kind == Notice::Kind::None);
}

TEST_CASE("a success shows for a few seconds over the file's warnings and then they return") {
  NoticeBoard board;
  const std::vector<std::string> warnings = {"view.colormap: unknown (ignored)"};
  NoticeSources sources = quiet();
  sources.file_warnings = &warnings;
  board.succeeded("opened /home/t/a.json", 0.0);
  CHECK(board.choose(sources, 1.0).kind == Notice::Kind::Done);
  CHECK(board.changes_at(1.0) == doctest::Approx(NoticeBoard::kDoneSeconds));
  const Notice later = board.choose(sources, NoticeBoard::kDoneSeconds + 0.1);
  CHECK(later.kind == Notice::Kind::Warning);
  CHECK(later.dismiss == Notice::Dismiss::FileWarnings);
}

TEST_CASE("several warnings of a file say how many more there are") {
  const NoticeBoard board;
  const std::vector<std::string> warnings = {"first", "second", "third"};
  NoticeSources sources = quiet();
  sources.file_warnings = &warnings;
  const Notice notice = board.choose(sources, 0.0);
  CHECK(notice.text == "first  (and 2 more)");
  CHECK(notice.lists_warnings);
}

TEST_CASE("a PNG being written is shown while it is") {
  NoticeBoard board;
  board.succeeded("saved a.json", 0.0);
  NoticeSources sources = quiet();
  sources.exporting = true;
  sources.export_path = "/home/t/slide.png";
  const Notice notice = board.choose(sources, 1.0);
  CHECK(notice.kind == Notice::Kind::Working);  // not yet done: no ✔
  CHECK(notice.text.rfind("exporting /home/t/slide.png", 0) == 0);
}

TEST_CASE("the engine's warnings cannot be dismissed but a font's can") {
  const NoticeBoard board;
  const std::vector<std::string> engine = {"the sentence was cut to 512 tokens"};
  NoticeSources sources = quiet();
  sources.pipeline_warnings = &engine;
  sources.font_error = "DejaVu Sans is not installed";
  CHECK(board.choose(sources, 0.0).dismiss == Notice::Dismiss::None);
  sources.pipeline_warnings = &kNone;
  CHECK(board.choose(sources, 0.0).dismiss == Notice::Dismiss::FontError);
}

}  // namespace attnviz::app
