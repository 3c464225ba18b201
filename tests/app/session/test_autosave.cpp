// Autosave and recovery: the unsaved work, and the file it belongs to, survive a crash.
#include "app/session/autosave.hpp"
#include "tests/support/builtin_state.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

namespace attnviz::app {
namespace {

// A run of the app writing its recovery file into a folder of its own.
struct Session {
  testing::TempDir dir;
  Autosave autosave{dir.path.string()};
  AppState state;
  double now = 0;

  // A scenario loaded (a file opened, or New: no file), as the app loads it.
  void load(const std::string& path) {
    testing::load_builtin_scenario(state, path);
    autosave.observe(state, now += 60);  // just loaded: nothing to recover yet
  }
  // An edit, written as a few seconds' editing would write it.
  void edit(float value) {
    state.document.set_weight(ParameterName::W_Q, 0, 0, 0, value);
    autosave.observe(state, now += 60);
  }
  // What the next start finds.
  std::optional<Autosave::Recovered> next_start() const {
    Result<std::optional<Autosave::Recovered>> recovered =
        Autosave(dir.path.string()).recoverable();
    CHECK_MESSAGE(recovered.ok(), recovered.error());
    return recovered.ok() ? std::move(*recovered) : std::nullopt;
  }
};

}  // namespace

TEST_CASE("recovered work keeps the file it was opened from") {
  Session s;
  s.load("/home/teacher/lessons/apple pie.json");
  s.edit(0.75f);
  const std::optional<Autosave::Recovered> recovered = s.next_start();
  REQUIRE(recovered);
  CHECK(recovered->path == "/home/teacher/lessons/apple pie.json");
  CHECK(recovered->scenario.parameters.heads[0].W_Q(0, 0) == 0.75f);
}

// A save soon after an edit, before the autosave's interval has passed: the edit is saved, and
// the recovery file the save removed is not written again (the next start offered it back).
TEST_CASE("work saved within the autosave's interval leaves nothing to recover") {
  Session s;
  s.load("/home/teacher/lessons/apple pie.json");
  s.edit(0.25f);  // written
  s.state.document.set_weight(ParameterName::W_Q, 0, 0, 0, 0.75f);
  s.autosave.observe(s.state, s.now += 0.5);  // within the interval: not written yet
  s.state.document.mark_saved();              // Ctrl+S
  s.autosave.discard();
  s.autosave.observe(s.state, s.now += Autosave::kInterval + 1);
  CHECK_FALSE(s.next_start());
  s.edit(0.5f);  // the next edit is recovered again
  const std::optional<Autosave::Recovered> recovered = s.next_start();
  REQUIRE(recovered);
  CHECK(recovered->scenario.parameters.heads[0].W_Q(0, 0) == 0.5f);
}

TEST_CASE("recovered work that was in no file has no path") {
  Session s;
  s.load("/tmp/old.json");
  s.edit(0.5f);
  s.load("");  // the same run went on with New, then edited
  s.edit(0.25f);
  const std::optional<Autosave::Recovered> recovered = s.next_start();
  REQUIRE(recovered);
  CHECK(recovered->path.empty());
  CHECK(recovered->scenario.parameters.heads[0].W_Q(0, 0) == 0.25f);
}

TEST_CASE("discarding the recovered work forgets its path too") {
  Session s;
  s.load("/tmp/a.json");
  s.edit(0.5f);
  s.autosave.discard();
  CHECK_FALSE(std::filesystem::exists(s.dir.path / "recovery.json"));
  CHECK_FALSE(std::filesystem::exists(s.dir.path / "recovery-path.txt"));
  CHECK_FALSE(s.next_start());
}

}  // namespace attnviz::app
