// The one-layer teaching scenario as a Run: sentences → tokens → X → one layer of multi-head
// attention (core/engine), with the scenario's own weights and settings. A degenerate model: one
// layer, no norm, no MLP, X from the teaching lexicon. Work is skipped where its inputs did not
// change (tokenization, embedding), and buffers are reused, so a recompute with unchanged shapes
// allocates nothing. On error the previous result is kept intact.
#pragma once

#include "core/document/scenario.hpp"
#include "core/pipeline/run.hpp"

#include <array>

namespace attnviz {

class OneLayerRun final : public Run {
 public:
  // Fails on an empty sentence, a bad shape, or a causal mask in cross mode (kCausalOffInCross).
  Status run(const Scenario& scenario) override;

  Capabilities capabilities() const override;
  std::span<const AttentionStack> stacks() const override { return {&stack_, 1}; }
  const Tokenization& target() const override { return target_.tokenization; }
  const Tokenization& keys() const override {
    return cross_ ? source_.tokenization : target_.tokenization;
  }
  bool cross() const override { return cross_; }
  int layer_count() const override { return 1; }
  const AttentionResult& layer(int) const override { return engine_.result(); }
  const Matrix& attention_input(int) const override { return X_target_; }
  const Matrix& attention_input_keys(int) const override { return X_keys(); }
  const Matrix& X_target() const override { return X_target_; }
  const Matrix& X_keys() const override { return cross_ ? X_source_ : X_target_; }
  const std::vector<EmbeddingSource>& target_sources() const override { return target_sources_; }
  const std::vector<EmbeddingSource>& key_sources() const override {
    return cross_ ? source_sources_ : target_sources_;
  }
  // The custom mask fitted to the sentences, or the mask pattern's (Scenario::mask_pattern).
  const MaskMatrix* mask() const override { return has_mask_ ? &mask_ : nullptr; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  void block_stages(int layer, int head, std::vector<BlockStage>& stages) const override;
  void set_threads(int threads) override { engine_.set_threads(threads); }
  int threads() const override { return engine_.threads(); }
  std::uint64_t run_count() const override { return run_count_; }

 private:
  struct CachedTokens {  // the latest text's tokens, good or not
    std::string text;
    std::size_t max_tokens = 0;
    std::uint64_t version = 0;
    Tokenization tokenization;
  };
  struct CommittedTokens {  // the tokens of the last successful run
    std::uint64_t version = 0;
    Tokenization tokenization;
  };
  // What X was last embedded from: a sentence's tokens are embedded again only when they, d_model,
  // the positional encoding or the embedding overrides change (not when a weight is edited).
  struct EmbeddedFrom {
    std::uint64_t tokens_version = 0;  // 0: nothing embedded yet
    int d_model = 0;
    Positional positional = Positional::None;
    EmbeddingOverrides overrides;
  };
  static void tokenize_cached(const std::string& text, std::size_t max_tokens, CachedTokens& cache);
  static void embed_cached(const CachedTokens& tokens, const OneLayerSpec& spec, EmbeddedFrom& from,
                           Matrix& X, std::vector<EmbeddingSource>& sources);
  static void commit_tokens(const CachedTokens& cache, CommittedTokens& committed);
  void collect_warnings(const Scenario& scenario);

  // The engine keeps its result and buffers between runs (no allocation when the shapes stay).
  AttentionEngine engine_;
  CachedTokens target_cache_, source_cache_;
  CommittedTokens target_, source_;
  bool cross_ = false;
  Matrix X_target_, X_source_;            // the last good inputs
  Matrix X_target_next_, X_source_next_;  // staged; copied in on success
  std::vector<EmbeddingSource> target_sources_, source_sources_;
  std::vector<EmbeddingSource> target_sources_next_, source_sources_next_;
  EmbeddedFrom target_embedded_, source_embedded_;  // what the staged X_*_next_ hold
  MaskMatrix mask_;        // the custom mask fitted to the current token counts, or the pattern's
  bool has_mask_ = false;  // the last run used mask_
  // The weights and settings the last good result was computed with (the formulas read them):
  // copied on success, into buffers of the same shapes.
  Parameters parameters_;
  Positional positional_ = Positional::None;
  AttentionStack stack_{"self-attention",  StackKind::Self,  0, 1, 1,
                        TokenSide::Target, TokenSide::Target};
  std::vector<std::string> warnings_;
  std::uint64_t run_count_ = 0;
};

}  // namespace attnviz
