// The shipped models the Models menu lists (core/models/model_files.hpp): a folder holding a
// model, or one whose files are still to come (the browser build's .download), never an empty
// or hidden one.
#include "core/models/model_files.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnviz {

TEST_CASE("the shipped models listed: folders with a model or with files still to come") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir.path / "empty");
  fs::create_directories(dir.path / "coming");
  std::ofstream(dir.path / "coming" / ".download") << R"(["stories260K.bin", "tok512.bin"])";
  fs::create_directories(dir.path / ".hidden");
  std::ofstream(dir.path / ".hidden" / ".download") << "[]";
  const char* before = std::getenv("ATTNVIZ_MODELS_DIR");
  const std::string kept = before ? before : "";
  setenv("ATTNVIZ_MODELS_DIR", dir.path.c_str(), 1);
  const std::vector<std::string> names = shipped_model_names();
  if (before)
    setenv("ATTNVIZ_MODELS_DIR", kept.c_str(), 1);
  else
    unsetenv("ATTNVIZ_MODELS_DIR");
  const auto listed = [&](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  CHECK(listed("coming"));
  CHECK_FALSE(listed("empty"));
  CHECK_FALSE(listed(".hidden"));
  CHECK(listed("stories260K"));  // the source tree's, found after the folder named
  // The models that read words first, gpt2-web then bert-web, then the translation model; the
  // others sorted after them.
  REQUIRE(names.size() >= 4);
  CHECK(names[0] == "gpt2-web");
  CHECK(names[1] == "bert-web");
  CHECK(names[2] == "marian-web-es");
  CHECK(std::is_sorted(names.begin() + 3, names.end()));
  CHECK(model_kind_words("gpt2-web") == "decoder, GPT-2");
  CHECK(model_kind_words("bert-web") == "encoder, BERT");
  CHECK(model_kind_words("stories260K") == "decoder, llama2.c");
  CHECK(model_kind_words("no-such-model").empty());
}

}  // namespace attnviz
