// The whole computation for a scenario: sentences -> tokens -> embeddings (X) -> attention.
// This is what the app calls on every edit and the CLI calls once. Work is skipped where its
// inputs did not change (tokenization), and buffers are reused, so a recompute with unchanged
// shapes allocates nothing. On error the previous state is kept intact.
#pragma once

#include "core/base/status.hpp"
#include "core/document/scenario.hpp"
#include "core/engine/attention.hpp"
#include "core/pipeline/model_run.hpp"
#include "core/text/embedding.hpp"
#include "core/text/tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

// A scenario in model mode (Scenario::model) runs a real trained model instead (ModelRun): the
// same accessors then give the model's tokens and, per layer, its attention as an
// AttentionResult; there are no embedding sources, no cross mode and no custom mask.
class Pipeline {
 public:
  // Fails on an empty sentence, a bad shape, or a causal mask in cross mode (kCausalOffInCross);
  // in model mode, on a model that cannot be opened or a change it cannot make.
  Status run(const Scenario& scenario);

  // The last successful run was of a real model (model() holds it).
  bool model_mode() const { return model_mode_; }
  const ModelRun* model() const { return model_mode_ ? model_.get() : nullptr; }

  const Tokenization& target() const {
    return model_mode_ ? model_->tokenization() : target_.tokenization;
  }
  // The key/value sentence: the source in cross mode, the target itself in self mode.
  const Tokenization& keys() const { return cross_ ? source_.tokenization : target(); }
  // The embedded tokens, with positions.  (n_target, d_model)
  const Matrix& X_target() const { return X_target_; }
  const Matrix& X_keys() const { return cross_ ? X_source_ : X_target_; }  // (n_key, d_model)
  // What layer `layer`'s W_Q and W_K, W_V multiply: X_target / X_keys in the one-layer scenario;
  // in a model, the layer's normalized residual stream.       (n_target or n_key, d_model)
  const Matrix& attention_input(int layer) const {
    return model_mode_ ? model_->layer_input(layer) : X_target_;
  }
  const Matrix& attention_input_keys(int layer) const {
    return model_mode_ ? model_->layer_input(layer) : X_keys();
  }
  const std::vector<EmbeddingSource>& target_sources() const { return target_sources_; }
  const std::vector<EmbeddingSource>& key_sources() const {
    return cross_ ? source_sources_ : target_sources_;
  }
  bool cross() const { return cross_; }
  // The mask the last one-layer run used besides the causal one: the custom mask fitted to the
  // sentences, or the mask pattern's (Scenario::mask_pattern); null when none.  (n_query, n_key)
  const MaskMatrix* mask() const { return !model_mode_ && has_mask_ ? &mask_ : nullptr; }
  // The computed layers, a stack: a scenario is one layer of attention today; a model with many
  // layers gives one result per layer, bottom first.
  int layer_count() const {
    return model_mode_ ? model_->layer_count() : static_cast<int>(layers_.size());
  }
  const AttentionResult& layer(int index) const {
    return model_mode_ ? model_->layer(index) : layers_[static_cast<std::size_t>(index)].result();
  }
  // The top layer's result: what the scenario's attention outputs.
  const AttentionResult& result() const { return layer(layer_count() - 1); }
  // The engines' threads (AttentionEngine::set_threads); results do not depend on them.
  void set_threads(int threads) {
    for (AttentionEngine& engine : layers_) engine.set_threads(threads);
  }
  int threads() const { return layers_.front().threads(); }
  // Truncation, invalid UTF-8, mask fitting, fully masked rows, overflow.
  const std::vector<std::string>& warnings() const { return warnings_; }

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
  static void embed_cached(const CachedTokens& tokens, const Scenario& scenario, EmbeddedFrom& from,
                           Matrix& X, std::vector<EmbeddingSource>& sources);
  static void commit_tokens(const CachedTokens& cache, CommittedTokens& committed);
  void collect_warnings(const Scenario& scenario);
  Status run_model(const Scenario& scenario);

  // One engine per layer, each keeping its result and buffers between runs (no allocation when
  // the shapes stay). A stack of one today.
  std::vector<AttentionEngine> layers_ = std::vector<AttentionEngine>(1);
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
  std::vector<std::string> warnings_;
  // Model mode: the model (kept when the scenario leaves model mode, so that undo returns to it
  // without opening it again).
  std::unique_ptr<ModelRun> model_;
  bool model_mode_ = false;
};

}  // namespace attnviz
