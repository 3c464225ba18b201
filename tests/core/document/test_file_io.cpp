#include "core/document/file_io.hpp"

#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnviz {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

std::string slurp(const fs::path& path) {
  return testing::read_whole_file(path);
}

}  // namespace

TEST_CASE("write_file_atomic creates a file with the contents") {
  TempDir dir;
  REQUIRE(write_file_atomic((dir.path / "a.json").string(), "hello"));
  CHECK(slurp(dir.path / "a.json") == "hello");
}

TEST_CASE("write_file_atomic replaces a file and leaves no temporary file") {
  TempDir dir;
  std::ofstream(dir.path / "a.json") << "old contents";
  REQUIRE(write_file_atomic((dir.path / "a.json").string(), "new"));
  CHECK(slurp(dir.path / "a.json") == "new");
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("write_file_atomic into a missing folder fails and says why") {
  TempDir dir;
  const Status status = write_file_atomic((dir.path / "nope" / "a.json").string(), "x");
  CHECK_FALSE(status);
  CHECK(status.message().find("No such file or directory") != std::string::npos);
}

TEST_CASE("read_file reads what was written") {
  TempDir dir;
  std::ofstream(dir.path / "b.txt") << "abc\n";
  const Result<std::string> contents = read_file((dir.path / "b.txt").string(), 100);
  REQUIRE(contents.ok());
  CHECK(*contents == "abc\n");
}

TEST_CASE("read_file refuses a file over the size limit") {
  TempDir dir;
  std::ofstream(dir.path / "big.txt") << std::string(1000, 'x');
  const Result<std::string> contents = read_file((dir.path / "big.txt").string(), 100);
  CHECK_FALSE(contents.ok());
  CHECK(contents.error().find("limit") != std::string::npos);
}

TEST_CASE("read_file of a missing file names it") {
  const Result<std::string> contents = read_file("/nonexistent/attnviz.json", 100);
  CHECK(contents.error().find("/nonexistent/attnviz.json") != std::string::npos);
}

}  // namespace attnviz
