// Fuzz target: parse_lesson on arbitrary bytes (no crash, no undefined behaviour). A lesson
// that loads is then used the way the app uses it: every step computes, its checks are
// evaluated, its text's placeholders are filled in and its token references are resolved.
// Short inputs are also looked up as a built-in lesson's name (attnviz --lesson NAME).
// Bounds (see fuzz_common.hpp): inputs whose scenario, merged step by step, would hold more
// than kMaxParameterCount weights in some step, or that have more than 32 steps, are skipped;
// steps whose sentences have more than kMaxTokensPerSentence tokens are not computed.
#include "core/lessons/lesson.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/text/tokenizer.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

constexpr std::size_t kMaxSteps = 32;

// True when some step's scenario (the lesson's, with the steps' merge patches applied in
// order, as parse_lesson does) asks for too many weights.
bool too_large(const nlohmann::json& root) {
  if (!root.is_object()) return false;
  const auto scenario = root.find("scenario");
  if (scenario == root.end() || !scenario->is_object()) return false;
  nlohmann::json merged = *scenario;
  const auto steps = root.find("steps");
  if (steps == root.end() || !steps->is_array()) return false;
  if (steps->size() > kMaxSteps) return true;
  for (const auto& step : *steps) {
    if (step.is_object()) {
      const auto patch = step.find("scenario");
      if (patch != step.end() && patch->is_object()) merged.merge_patch(*patch);
    }
    if (attnviz::fuzz::parameter_count(merged) > attnviz::fuzz::kMaxParameterCount) return true;
  }
  return false;
}

bool small_enough(const attnviz::Scenario& s) {
  const auto max_tokens = static_cast<std::size_t>(s.max_tokens);
  if (attnviz::tokenize(s.target, max_tokens).tokens.size() > attnviz::fuzz::kMaxTokensPerSentence)
    return false;
  return s.mode != attnviz::Mode::Cross || attnviz::tokenize(s.source, max_tokens).tokens.size() <=
                                               attnviz::fuzz::kMaxTokensPerSentence;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (size <= 64) (void)attnviz::find_builtin_lesson(text);
  const auto root =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (too_large(root)) return 0;

  const attnviz::Result<attnviz::Lesson> load = attnviz::parse_lesson(text, "fuzz");
  FUZZ_CHECK(load.ok() == load.error().empty());
  if (!load.ok()) return 0;
  FUZZ_CHECK(!load->steps.empty());

  // The step before, computed: what a student who changed this step into it would see.
  const attnviz::Scenario* previous = nullptr;
  attnviz::Pipeline previous_pipeline;
  for (const attnviz::LessonStep& step : load->steps) {
    if (!small_enough(step.scenario)) continue;
    if (step.scenario.model()) continue;  // parsed, not run: it would open the files it names
    attnviz::Pipeline pipeline;
    const attnviz::Status status = pipeline.run(step.scenario);
    if (!status) std::fprintf(stderr, "step does not compute: %s\n", status.message().c_str());
    FUZZ_CHECK(static_cast<bool>(status));
    (void)attnviz::failed_checks(step, pipeline);
    if (previous) {
      const attnviz::StudentChange change =
          attnviz::student_change(step, *previous, previous_pipeline);
      FUZZ_CHECK(change.message.empty() || !change.failures.empty());
    }
    previous = &step.scenario;
    (void)previous_pipeline.run(step.scenario);
    (void)attnviz::expand_lesson_text(step.text, pipeline);
    (void)attnviz::expand_lesson_text(step.title, pipeline);
    // Token references the lesson validated resolve to tokens the app can index.
    const auto n_query = static_cast<int>(pipeline.target().tokens.size());
    const auto n_key = static_cast<int>(pipeline.keys().tokens.size());
    if (!step.query.empty()) {
      const int q = attnviz::resolve_token(pipeline.target(), step.query);
      FUZZ_CHECK(q >= 0 && q < n_query);
    }
    if (!step.key.empty()) {
      const int k = attnviz::resolve_token(pipeline.keys(), step.key);
      FUZZ_CHECK(k >= 0 && k < n_key);
    }
    if (step.predict) {
      const int q = attnviz::resolve_token(pipeline.target(), step.predict->query);
      FUZZ_CHECK(q >= 0 && q < n_query);
      FUZZ_CHECK(step.predict->head >= 0 &&
                 step.predict->head < step.scenario.one_layer().config.heads);
    }
    if (step.head)
      FUZZ_CHECK(*step.head >= 0 && *step.head < step.scenario.one_layer().config.heads);
  }
  return 0;
}
