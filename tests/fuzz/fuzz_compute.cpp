// Fuzz target: parse_scenario, then Pipeline::run. Invariants when the input parses:
//   - it computes (a scenario that loads can be computed);
//   - every weight is finite and in [0, 1];
//   - every row of weights sums to 1 (within 1e-3), or is all 0 and flagged as fully masked;
//   - with hard attention every row that is not fully masked is one-hot;
//   - masked cells (causal: key after query; custom mask 0) have weight 0;
//   - the shapes match the token counts and the configuration.
// Scenarios that name a real model are parsed, not run (their readers have their own targets).
// Bounds, so that runs stay fast: inputs whose weights would hold more than 65,536 numbers
// (kMaxParameterCount) or whose sentences have more than 64 tokens (kMaxTokensPerSentence) are
// skipped.
#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/text/tokenizer.hpp"

#include "tests/fuzz/fuzz_common.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

using attnviz::fuzz::kMaxTokensPerSentence;

bool too_many_tokens(const attnviz::Scenario& s) {
  const auto max_tokens = static_cast<std::size_t>(s.max_tokens);
  if (attnviz::tokenize(s.target, max_tokens).tokens.size() > kMaxTokensPerSentence) return true;
  return s.mode == attnviz::Mode::Cross &&
         attnviz::tokenize(s.source, max_tokens).tokens.size() > kMaxTokensPerSentence;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto root =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (attnviz::fuzz::parameter_count(root) > attnviz::fuzz::kMaxParameterCount) return 0;

  const attnviz::Result<attnviz::Scenario> load = attnviz::parse_scenario(text);
  if (!load.ok()) return 0;
  const attnviz::Scenario& s = *load;
  if (too_many_tokens(s)) return 0;
  // A scenario naming a real model would open the files the input names: the model readers and
  // tokenizers have targets of their own (fuzz_safetensors, fuzz_llama2c, ...).
  if (s.model) return 0;

  attnviz::Pipeline pipeline;
  const attnviz::Status status = pipeline.run(s);
  if (!status) std::fprintf(stderr, "run failed: %s\n", status.message().c_str());
  FUZZ_CHECK(static_cast<bool>(status));

  const attnviz::AttentionResult& r = pipeline.result();
  const auto n_query = static_cast<Eigen::Index>(pipeline.target().tokens.size());
  const auto n_key = static_cast<Eigen::Index>(pipeline.keys().tokens.size());
  FUZZ_CHECK(r.n_query == n_query && r.n_key == n_key);
  FUZZ_CHECK(r.heads.size() == static_cast<std::size_t>(s.config.heads));
  FUZZ_CHECK(r.output.rows() == n_query && r.output.cols() == s.config.d_model);
  for (const attnviz::HeadResult& head : r.heads) {
    FUZZ_CHECK(head.weights.rows() == n_query && head.weights.cols() == n_key);
    FUZZ_CHECK(head.fully_masked_rows.size() == n_query);
    FUZZ_CHECK(head.weights.allFinite());
    FUZZ_CHECK((head.weights.array() >= 0.0f).all() && (head.weights.array() <= 1.0f).all());
    for (Eigen::Index i = 0; i < n_query; ++i) {
      const double sum = static_cast<double>(head.weights.row(i).sum());
      if (head.fully_masked_rows[i]) {
        FUZZ_CHECK(head.weights.row(i).isZero(0.0f));
      } else {
        FUZZ_CHECK(std::fabs(sum - 1.0) <= 1e-3);
        if (s.config.hard) FUZZ_CHECK(head.weights.row(i).maxCoeff() == 1.0f && sum == 1.0);
      }
      for (Eigen::Index j = 0; j < n_key; ++j) {
        const bool causal_hidden = s.config.causal && j > i;
        const bool mask_hidden = i < s.mask.rows() && j < s.mask.cols() && s.mask(i, j) == 0;
        if (causal_hidden || mask_hidden) FUZZ_CHECK(head.weights(i, j) == 0.0f);
      }
    }
  }
  return 0;
}
