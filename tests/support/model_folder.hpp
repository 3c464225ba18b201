// A model folder written by a test (config.json and model.safetensors, by the tests' own
// safetensors writer), and the helpers the readers' tests share.
#pragma once

#include "core/base/status.hpp"
#include "tests/support/safetensors_writer.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace attnviz::testing {

// The tensor of that name (a test failure when there is none).
inline TestTensor& named(std::vector<TestTensor>& tensors, const std::string& name) {
  for (TestTensor& t : tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return tensors.front();
}

// DIR/name/config.json and DIR/name/model.safetensors; returns the folder.
inline std::filesystem::path write_model(const TempDir& dir, const nlohmann::json& config,
                                         const std::vector<TestTensor>& tensors,
                                         const std::string& name = "model") {
  const std::filesystem::path folder = dir.path / name;
  std::filesystem::create_directories(folder);
  write_file(folder / "config.json", config.dump(2));
  write_file(folder / "model.safetensors", safetensors_file(tensors));
  return folder;
}

// What a reader returned, which must have loaded (a test failure naming its error otherwise).
template <typename Loaded>
Loaded loaded(Result<Loaded> result) {
  REQUIRE_MESSAGE(result.ok(), result.error());
  return std::move(*result);
}

// The error a reader returned, which must have refused (a test failure when it loaded).
template <typename Loaded>
std::string error_of(const Result<Loaded>& result) {
  REQUIRE_FALSE(result.ok());
  return result.error();
}

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace attnviz::testing
