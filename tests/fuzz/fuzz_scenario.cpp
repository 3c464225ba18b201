// Fuzz target: parse_scenario on arbitrary bytes. Invariants when the input parses:
//   - scenario_to_json's output parses again, without errors or warnings;
//   - writing that again gives the same text (the round trip is stable).
// Inputs whose weights would hold more than kMaxParameterCount numbers are skipped (see
// fuzz_common.hpp).
#include "core/document/scenario.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto root =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (attnviz::fuzz::parameter_count(root) > attnviz::fuzz::kMaxParameterCount) return 0;

  const attnviz::Result<attnviz::Scenario> first = attnviz::parse_scenario(text);
  FUZZ_CHECK(first.ok() == first.error().empty());
  if (!first.ok()) return 0;

  const std::string written = attnviz::scenario_to_json(*first);
  const attnviz::Result<attnviz::Scenario> second = attnviz::parse_scenario(written);
  if (!second.ok())
    std::fprintf(stderr, "re-read failed: %s\n--- written:\n%s\n", second.error().c_str(),
                 written.c_str());
  FUZZ_CHECK(second.ok());
  if (!second.warnings.empty())
    std::fprintf(stderr, "re-read warns: %s\n", second.warnings.front().c_str());
  FUZZ_CHECK(second.warnings.empty());
  const std::string rewritten = attnviz::scenario_to_json(*second);
  if (rewritten != written)
    std::fprintf(stderr, "--- written:\n%s\n--- rewritten:\n%s\n", written.c_str(),
                 rewritten.c_str());
  FUZZ_CHECK(rewritten == written);
  return 0;
}
