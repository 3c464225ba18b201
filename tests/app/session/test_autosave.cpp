// Autosave and recovery: the unsaved work, and the file it belongs to, survive a crash.
#include "app/session/autosave.hpp"
#include "tests/support/builtin_state.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

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
  CHECK(recovered->scenario.one_layer().parameters.heads[0].W_Q(0, 0) == 0.75f);
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
  CHECK(recovered->scenario.one_layer().parameters.heads[0].W_Q(0, 0) == 0.5f);
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
  CHECK(recovered->scenario.one_layer().parameters.heads[0].W_Q(0, 0) == 0.25f);
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

namespace {

// The state folder's files: the work an earlier run set aside under its number.
std::filesystem::path offered_file(const testing::TempDir& dir, int number) {
  return dir.path / ("recovery-offered-" + std::to_string(number) + ".json");
}

float first_weight(const Scenario& scenario) {
  return scenario.one_layer().parameters.heads[0].W_Q(0, 0);
}

float first_weight_in(const std::filesystem::path& file) {
  Result<Scenario> load = load_scenario_file(file.string());
  REQUIRE_MESSAGE(load.ok(), load.error());
  return first_weight(*load);
}

// One run of the app on a state folder, started as app.cpp starts it: the earlier runs' work set
// aside, the oldest offered. It ends by crashing (nothing is done at its end) unless told.
struct Run {
  Autosave autosave;
  AppState state;
  std::optional<Autosave::Recovered> offer;
  double now = 0;

  explicit Run(const testing::TempDir& dir, bool headless = false) : autosave(dir.path.string()) {
    autosave.set_read_only(headless);
    REQUIRE(autosave.keep_earlier_work());
    next_offer();
    testing::load_builtin_scenario(state, "");
    autosave.observe(state, now += 60);
  }
  void open(const std::string& path) {
    testing::load_builtin_scenario(state, path);
    autosave.observe(state, now += 60);
  }
  void edit(float value) {
    state.document.set_weight(ParameterName::W_Q, 0, 0, 0, value);
    autosave.observe(state, now += 60);
  }
  // The offer's buttons, as Commands does them.
  void restore() {
    REQUIRE(offer);
    Autosave::Recovered recovered = std::move(*offer);
    state.load(std::move(recovered.scenario), recovered.path, {});
    state.document.mark_never_saved();
    autosave.restored(recovered.file, state);
    next_offer();
  }
  void decline() {
    REQUIRE(offer);
    autosave.declined(offer->file);
    next_offer();
  }
  void next_offer() {  // none when none can be read (what cannot be read is not offered)
    Result<std::optional<Autosave::Recovered>> recovered = autosave.recoverable();
    offer = recovered.ok() ? std::move(*recovered) : std::nullopt;
  }
};

}  // namespace

// Issue 36: while the offer waited, autosave was paused, so the new work was unprotected until
// the offer was answered. It is protected now, in recovery.json, and the earlier work waits apart.
TEST_CASE("work done while the recovery offer waits is autosaved, and the offered work is kept") {
  testing::TempDir dir;
  {
    Run first(dir);
    first.open("/home/teacher/week3.json");
    first.edit(0.75f);
  }  // killed
  {
    Run second(dir);
    REQUIRE(second.offer);
    CHECK(first_weight(second.offer->scenario) == 0.75f);
    CHECK(second.offer->path == "/home/teacher/week3.json");
    CHECK(second.offer->more == 0);
    second.edit(0.25f);  // the offer not answered yet
    CHECK(first_weight_in(second.autosave.path()) == 0.25f);
    CHECK(first_weight_in(second.offer->file) == 0.75f);  // not written over
  }  // killed again before the offer was answered
  // Nothing is lost: both are offered, the oldest first, one at a time.
  Run third(dir);
  REQUIRE(third.offer);
  CHECK(first_weight(third.offer->scenario) == 0.75f);
  CHECK(third.offer->path == "/home/teacher/week3.json");
  CHECK(third.offer->more == 1);
  third.decline();
  REQUIRE(third.offer);
  CHECK(first_weight(third.offer->scenario) == 0.25f);
  CHECK(third.offer->path.empty());
  CHECK(third.offer->more == 0);
  third.decline();
  CHECK_FALSE(third.offer);
  CHECK_FALSE(Run(dir).offer);
}

TEST_CASE("restored work is this run's recovery file before the offered file goes") {
  testing::TempDir dir;
  {
    Run first(dir);
    first.open("/tmp/a.json");
    first.edit(0.75f);
  }
  {
    Run second(dir);
    second.edit(0.25f);  // lost by choice: restoring replaces it (the app asks first)
    second.restore();
    CHECK_FALSE(second.offer);
    CHECK(first_weight(second.state.document.scenario()) == 0.75f);
    CHECK_FALSE(std::filesystem::exists(offered_file(dir, 1)));
    CHECK(first_weight_in(second.autosave.path()) == 0.75f);  // no edit needed to write it
  }                                                           // killed before another edit
  Run third(dir);
  REQUIRE(third.offer);
  CHECK(first_weight(third.offer->scenario) == 0.75f);
  CHECK(third.offer->path == "/tmp/a.json");
  CHECK(third.offer->more == 0);
}

TEST_CASE("declining the offer removes only the offered work") {
  testing::TempDir dir;
  {
    Run first(dir);
    first.open("/tmp/a.json");
    first.edit(0.75f);
  }
  {
    Run second(dir);
    second.edit(0.25f);
    second.decline();
    CHECK_FALSE(second.offer);
    CHECK_FALSE(std::filesystem::exists(offered_file(dir, 1)));
    CHECK_FALSE(std::filesystem::exists(dir.path / "recovery-offered-1-path.txt"));
    CHECK(first_weight_in(second.autosave.path()) == 0.25f);
  }
  Run third(dir);
  REQUIRE(third.offer);
  CHECK(first_weight(third.offer->scenario) == 0.25f);
}

// Quitting with nothing unsaved removes this run's recovery file, not the work still offered.
TEST_CASE("an offer left unanswered is offered again after a clean exit") {
  testing::TempDir dir;
  {
    Run first(dir);
    first.edit(0.75f);
  }
  {
    Run second(dir);
    REQUIRE(second.offer);
    second.autosave.discard();  // a clean exit, nothing unsaved
  }
  Run third(dir);
  REQUIRE(third.offer);
  CHECK(first_weight(third.offer->scenario) == 0.75f);
}

TEST_CASE("headless runs read the earlier work and write, move or remove nothing") {
  testing::TempDir dir;
  {
    Run first(dir);
    first.edit(0.75f);
  }
  const std::string before = testing::read_whole_file(dir.path / "recovery.json");
  {
    Run screenshot(dir, true);  // --recover --screenshot
    REQUIRE(screenshot.offer);
    CHECK(screenshot.offer->file == screenshot.autosave.path());
    screenshot.edit(0.25f);
    screenshot.restore();
    screenshot.autosave.discard();
  }
  CHECK(testing::read_whole_file(dir.path / "recovery.json") == before);
  CHECK_FALSE(std::filesystem::exists(offered_file(dir, 1)));
  Run next(dir);
  REQUIRE(next.offer);
  CHECK(first_weight(next.offer->scenario) == 0.75f);
}

TEST_CASE("earlier work that cannot be read is skipped and kept") {
  testing::TempDir dir;
  std::ofstream(offered_file(dir, 1)) << "{ not a scenario";
  {
    Run first(dir);
    first.edit(0.75f);
  }
  Run second(dir);  // the readable work is offered, set aside after the unreadable one
  REQUIRE(second.offer);
  CHECK(second.offer->file == offered_file(dir, 2).string());
  CHECK(first_weight(second.offer->scenario) == 0.75f);
  second.decline();
  CHECK_FALSE(second.offer);
  CHECK(std::filesystem::exists(offered_file(dir, 1)));
  // Nothing readable: --recover says why.
  const Result<std::optional<Autosave::Recovered>> none = second.autosave.recoverable();
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().find("recovery-offered-1.json could not be read") != std::string::npos);
}

}  // namespace attnviz::app
