// The recent-files list: order, no duplicates, at most ten, kept across runs, and a missing or
// corrupt store read as an empty list; and where the app keeps its state.
#include "app/session/recent_files.hpp"

#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

using attnviz::testing::TempDir;
namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Sets an environment variable for one test and puts the old value back.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~EnvVar() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("recent files: most recent first, as absolute paths") {
  TempDir dir;
  RecentFiles recent((dir.path / "recent.json").string());
  recent.add("/data/a.json");
  recent.add("/data/b.json");
  recent.add("/data/sub/../c.json");
  CHECK(recent.entries() ==
        std::vector<std::string>{"/data/c.json", "/data/b.json", "/data/a.json"});
  recent.add("relative.json");
  REQUIRE(recent.entries().size() == 4);
  CHECK(recent.entries()[0] == (fs::current_path() / "relative.json").string());
  recent.add("");
  CHECK(recent.entries().size() == 4);
}

TEST_CASE("recent files: opening a file again moves it to the top, once") {
  TempDir dir;
  RecentFiles recent((dir.path / "recent.json").string());
  recent.add("/x/a.json");
  recent.add("/x/b.json");
  recent.add("/x/c.json");
  recent.add("/x/./a.json");
  CHECK(recent.entries() == std::vector<std::string>{"/x/a.json", "/x/c.json", "/x/b.json"});
}

TEST_CASE("recent files: at most ten, the oldest dropped") {
  TempDir dir;
  RecentFiles recent((dir.path / "recent.json").string());
  for (int i = 0; i < 15; ++i) recent.add("/f/" + std::to_string(i) + ".json");
  REQUIRE(recent.entries().size() == RecentFiles::kMaxEntries);
  CHECK(recent.entries().front() == "/f/14.json");
  CHECK(recent.entries().back() == "/f/5.json");
}

TEST_CASE("recent files: remove") {
  TempDir dir;
  RecentFiles recent((dir.path / "recent.json").string());
  recent.add("/f/a.json");
  recent.add("/f/b.json");
  recent.remove("/f/a.json");
  CHECK(recent.entries() == std::vector<std::string>{"/f/b.json"});
  recent.remove("/f/missing.json");
  CHECK(recent.entries().size() == 1);
  recent.clear();
  CHECK(recent.entries().empty());
}

TEST_CASE("recent files: kept across instances") {
  TempDir dir;
  const std::string store = (dir.path / "state" / "recent.json").string();
  {
    RecentFiles recent(store);
    recent.add("/f/a.json");
    recent.add("/f/b.json");
    CHECK(recent.save());
  }
  RecentFiles again(store);
  CHECK(again.entries().empty());  // nothing until load()
  again.load();
  CHECK(again.entries() == std::vector<std::string>{"/f/b.json", "/f/a.json"});
  again.remove("/f/b.json");
  CHECK(again.save());
  RecentFiles third(store);
  third.load();
  CHECK(third.entries() == std::vector<std::string>{"/f/a.json"});
  // Saved through a temporary file: nothing else is left in the folder.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path / "state")) ++files;
  CHECK(files == 1);
}

TEST_CASE("recent files: a missing or corrupt store is an empty list") {
  TempDir dir;
  const fs::path store = dir.path / "recent.json";
  RecentFiles recent(store.string());
  recent.add("/f/a.json");
  recent.load();  // no file yet
  CHECK(recent.entries().empty());
  for (const char* text : {"", "not json", "[\"/f/a.json\"", "{\"files\": []}", "42", "\xff\xfe",
                           "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]"}) {
    CAPTURE(text);
    write_text(store, text);
    recent.add("/f/a.json");
    recent.load();
    CHECK(recent.entries().empty());
  }
  write_text(store, std::string(200000, '[') + std::string(200000, ']'));
  recent.load();
  CHECK(recent.entries().empty());
  fs::remove(store);
  fs::create_directory(store);  // a folder where the file should be
  recent.load();
  CHECK(recent.entries().empty());
}

TEST_CASE("recent files: odd entries of a stored list are dropped") {
  TempDir dir;
  const fs::path store = dir.path / "recent.json";
  write_text(store,
             R"(["/f/a.json", 3, null, "relative.json", "", "/f/a.json", {"x": 1}, "/f/b.json"])");
  RecentFiles recent(store.string());
  recent.load();
  CHECK(recent.entries() == std::vector<std::string>{"/f/a.json", "/f/b.json"});
}

TEST_CASE("recent files: a store of more than ten keeps the first ten") {
  TempDir dir;
  const fs::path store = dir.path / "recent.json";
  std::string text = "[";
  for (int i = 0; i < 12; ++i)
    text += std::string(i ? "," : "") + "\"/f/" + std::to_string(i) + ".json\"";
  write_text(store, text + "]");
  RecentFiles recent(store.string());
  recent.load();
  REQUIRE(recent.entries().size() == 10);
  CHECK(recent.entries().back() == "/f/9.json");
}

TEST_CASE("recent files: saving without a store, or into an unwritable one, says why") {
  RecentFiles memory_only("");
  memory_only.add("/f/a.json");
  memory_only.load();
  CHECK(memory_only.entries().empty());
  CHECK_FALSE(memory_only.save());

  TempDir dir;
  fs::create_directory(dir.path / "locked");
  fs::permissions(dir.path / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  RecentFiles locked((dir.path / "locked" / "recent.json").string());
  locked.add("/f/a.json");
  if (::geteuid() != 0) {  // root writes anywhere
    const Status status = locked.save();
    CHECK_FALSE(status);
    CHECK_FALSE(status.message().empty());
  }
}

TEST_CASE("app_state_dir: ATTNVIZ_STATE_DIR, then XDG_STATE_HOME, then HOME, created on demand") {
  TempDir dir;
  const std::string own = (dir.path / "own" / "deeper").string();
  const std::string xdg = (dir.path / "xdg").string();
  const std::string home = (dir.path / "home").string();
  {
    EnvVar a("ATTNVIZ_STATE_DIR", own.c_str()), x("XDG_STATE_HOME", xdg.c_str()),
        h("HOME", home.c_str());
    CHECK(app_state_dir() == own);
    CHECK(fs::is_directory(own));
    CHECK(default_recent_files_path() == own + "/recent-files.json");
  }
  {
    EnvVar a("ATTNVIZ_STATE_DIR", ""), x("XDG_STATE_HOME", xdg.c_str()), h("HOME", home.c_str());
    CHECK(app_state_dir() == xdg + "/attnviz");
    CHECK(fs::is_directory(xdg + "/attnviz"));
  }
  {
    EnvVar a("ATTNVIZ_STATE_DIR", nullptr), x("XDG_STATE_HOME", "relative/state"),
        h("HOME", home.c_str());
    CHECK(app_state_dir() == home + "/.local/state/attnviz");  // a relative XDG path is ignored
    CHECK(fs::is_directory(home + "/.local/state/attnviz"));
  }
  {
    EnvVar a("ATTNVIZ_STATE_DIR", nullptr), x("XDG_STATE_HOME", nullptr), h("HOME", nullptr);
    CHECK(app_state_dir().empty());
    CHECK(default_recent_files_path().empty());
  }
  {
    write_text(dir.path / "a-file", "x");
    const std::string blocked = (dir.path / "a-file" / "state").string();
    EnvVar a("ATTNVIZ_STATE_DIR", blocked.c_str());
    CHECK(app_state_dir().empty());  // cannot be created
  }
}

TEST_CASE("a recent-files list kept behind a symbolic link is written through it") {
  // A teacher's dotfiles often link the state files into a folder of their own (issue 36).
  TempDir dir;
  fs::create_directory(dir.path / "dotfiles");
  write_text(dir.path / "dotfiles" / "recent-files.json", "[]\n");
  fs::create_symlink(dir.path / "dotfiles" / "recent-files.json", dir.path / "recent-files.json");
  RecentFiles recent((dir.path / "recent-files.json").string());
  recent.add("/home/teacher/week1.json");
  REQUIRE(recent.save());
  CHECK(fs::is_symlink(dir.path / "recent-files.json"));
  RecentFiles reread((dir.path / "dotfiles" / "recent-files.json").string());
  reread.load();
  CHECK(reread.entries() == std::vector<std::string>{"/home/teacher/week1.json"});
}

}  // namespace attnviz::app
