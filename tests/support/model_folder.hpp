// A model folder written by a test (config.json and model.safetensors, by the tests' own
// safetensors writer), and the helpers the readers' tests share.
#pragma once

#include "tests/support/safetensors_writer.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
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

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace attnviz::testing
