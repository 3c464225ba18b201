#include "core/pipeline/pipeline.hpp"

#include "core/variants/sparse_masks.hpp"

#include <utility>

namespace attnviz {

void Pipeline::tokenize_cached(const std::string& text, std::size_t max_tokens,
                               CachedTokens& cache) {
  if (cache.version > 0 && cache.max_tokens == max_tokens && cache.text == text) return;
  cache.tokenization = tokenize(text, max_tokens);
  cache.text = text;
  cache.max_tokens = max_tokens;
  ++cache.version;
}

void Pipeline::embed_cached(const CachedTokens& tokens, const Scenario& scenario,
                            EmbeddedFrom& from, Matrix& X, std::vector<EmbeddingSource>& sources) {
  const AttentionConfig& config = scenario.config;
  if (from.tokens_version == tokens.version && from.d_model == config.d_model &&
      from.positional == scenario.positional && from.overrides == scenario.embeddings)
    return;
  embed_tokens(tokens.tokenization.tokens, config.d_model, scenario.embeddings, scenario.positional,
               X, &sources);
  from.tokens_version = tokens.version;
  from.d_model = config.d_model;
  from.positional = scenario.positional;
  if (from.overrides != scenario.embeddings) from.overrides = scenario.embeddings;
}

void Pipeline::commit_tokens(const CachedTokens& cache, CommittedTokens& committed) {
  if (committed.version == cache.version) return;
  committed.tokenization = cache.tokenization;
  committed.version = cache.version;
}

Status Pipeline::run_model(const Scenario& scenario) {
  if (scenario.max_tokens < 1 || scenario.max_tokens > Limits::kMaxTokens)
    return Status::error("max_tokens must be between 1 and " + std::to_string(Limits::kMaxTokens));
  if (!model_) model_ = std::make_unique<ModelRun>();
  std::vector<std::string> warnings;
  if (Status status = model_->run(*scenario.model, scenario.target, scenario.max_tokens, warnings);
      !status)
    return status;
  model_mode_ = true;
  cross_ = false;
  const RowMatrix& embedded = model_->forward().embedded();
  X_target_ = embedded.matrix()(model_->shown_positions(), Eigen::all);  // (n shown, d_model)
  target_sources_.clear();
  warnings_ = std::move(warnings);
  return Status::ok();
}

Status Pipeline::run(const Scenario& scenario) {
  if (scenario.model) return run_model(scenario);
  const bool cross = scenario.mode == Mode::Cross;
  const auto max_tokens = static_cast<std::size_t>(scenario.max_tokens);
  if (scenario.max_tokens < 1 || scenario.max_tokens > Limits::kMaxTokens)
    return Status::error("max_tokens must be between 1 and " + std::to_string(Limits::kMaxTokens));
  if (Status status = validate(scenario.config); !status) return status;
  if (cross && scenario.config.causal)  // parse_scenario and the app's edits never make this
    return Status::error(
        "the causal mask is for self-attention: cross mode has none (turn causal off)");

  // 1. Tokens, staged in a cache keyed by the text (tokenized only when a sentence changed).
  tokenize_cached(scenario.target, max_tokens, target_cache_);
  if (target_cache_.tokenization.tokens.empty())
    return Status::error(cross ? "the target sentence has no tokens: type a word"
                               : "the sentence has no tokens: type a word");
  if (cross) {
    tokenize_cached(scenario.source, max_tokens, source_cache_);
    if (source_cache_.tokenization.tokens.empty())
      return Status::error("the source sentence has no tokens: type a word (cross mode)");
  }

  // 2. Embeddings and positions, staged (embedded again only when their inputs changed).
  embed_cached(target_cache_, scenario, target_embedded_, X_target_next_, target_sources_next_);
  if (cross)
    embed_cached(source_cache_, scenario, source_embedded_, X_source_next_, source_sources_next_);
  const Matrix& X_keys_next = cross ? X_source_next_ : X_target_next_;

  // 3. The custom mask, fitted to the token counts: cells past the mask's edge are allowed; or
  //    the mask pattern, made for them.
  const MaskMatrix* mask = nullptr;
  if (scenario.mask_pattern) {
    const MaskPattern& p = *scenario.mask_pattern;
    const int n_query = static_cast<int>(X_target_next_.rows());
    const int n_key = static_cast<int>(X_keys_next.rows());
    Result<MaskMatrix> made =
        p.kind == MaskPattern::Kind::Blocks   ? block_mask(n_query, n_key, p.block)
        : p.kind == MaskPattern::Kind::Window ? window_mask(n_query, n_key, p.width)
                                              : dilated_mask(n_query, n_key, p.width, p.dilation);
    std::vector<int> present;  // the global tokens the sentences reach
    for (const int token : p.global_tokens)
      if (token < std::max(n_query, n_key)) present.push_back(token);
    if (made && !present.empty()) made = with_global_tokens(std::move(*made), present);
    if (!made) return Status::error("mask_pattern: " + made.error());
    mask_ = std::move(*made);
    mask = &mask_;
  } else if (scenario.mask.size() > 0) {
    mask_.resize(X_target_next_.rows(), X_keys_next.rows());
    mask_.setOnes();
    const Eigen::Index rows = std::min(mask_.rows(), scenario.mask.rows());
    const Eigen::Index cols = std::min(mask_.cols(), scenario.mask.cols());
    mask_.topLeftCorner(rows, cols) = scenario.mask.topLeftCorner(rows, cols);
    mask = &mask_;
  }

  // 4. Attention, layer by layer (one layer today).
  if (Status status = layers_.front().compute(X_target_next_, X_keys_next, scenario.parameters,
                                              scenario.config, mask);
      !status)
    return status;
  // Commit. Copies into buffers of the same shape allocate nothing; tokens are copied only when
  // a sentence changed.
  X_target_ = X_target_next_;
  target_sources_ = target_sources_next_;
  commit_tokens(target_cache_, target_);
  if (cross) {
    X_source_ = X_source_next_;
    source_sources_ = source_sources_next_;
    commit_tokens(source_cache_, source_);
  }
  cross_ = cross;
  model_mode_ = false;
  has_mask_ = mask != nullptr;
  collect_warnings(scenario);
  return Status::ok();
}

void Pipeline::collect_warnings(const Scenario& scenario) {
  warnings_.clear();
  const auto about = [&](const char* name, const Tokenization& t) {
    if (t.truncated())
      warnings_.push_back(std::string(name) + " sentence has " + std::to_string(t.total_tokens) +
                          " tokens; only the first " + std::to_string(t.tokens.size()) +
                          " are used (\"max_tokens\" in the scenario file sets how many, up to " +
                          std::to_string(Limits::kMaxTokens) + ")");
    if (t.invalid_utf8_bytes > 0)
      warnings_.push_back(std::string(name) + " sentence: " + std::to_string(t.invalid_utf8_bytes) +
                          " invalid UTF-8 byte(s) shown as U+FFFD");
  };
  about("the target", target());
  if (cross_) about("the source", keys());
  const AttentionResult& r = result();
  if (scenario.mask.size() > 0 &&
      (scenario.mask.rows() != r.n_query || scenario.mask.cols() != r.n_key))
    warnings_.push_back("the custom mask is " + std::to_string(scenario.mask.rows()) + "x" +
                        std::to_string(scenario.mask.cols()) + " but attention is " +
                        std::to_string(r.n_query) + "x" + std::to_string(r.n_key) +
                        ": cells outside the mask are allowed");
  // Heads and queries counted from 1, as the app shows them.
  bool head_overflow = false;
  for (std::size_t h = 0; h < r.heads.size(); ++h) {
    const HeadResult& head = r.heads[h];
    for (Eigen::Index i = 0; i < head.fully_masked_rows.size(); ++i)
      if (head.fully_masked_rows[i])
        warnings_.push_back(
            "head " + std::to_string(h + 1) + ": query " + std::to_string(i + 1) + " \"" +
            target().tokens[static_cast<std::size_t>(i)].text +
            "\" may attend to no key (every key is masked): its weights and output are 0");
    head_overflow = head_overflow || head.overflow;
    if (head.overflow)
      warnings_.push_back(
          "head " + std::to_string(h + 1) +
          ": some numbers exceed the float range (about ±3.4e38); they are shown as "
          "overflow and the scores were clamped before the softmax");
  }
  if (r.overflow && !head_overflow)
    warnings_.push_back("the output exceeds the float range (about ±3.4e38)");
}

}  // namespace attnviz
