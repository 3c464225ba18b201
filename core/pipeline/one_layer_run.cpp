#include "core/pipeline/one_layer_run.hpp"

#include "core/variants/sparse_masks.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace attnviz {

Capabilities OneLayerRun::capabilities() const {
  return {Capability::EditableParameters, Capability::LexiconEmbeddings,
          Capability::SourceSentence};
}

void OneLayerRun::tokenize_cached(const std::string& text, std::size_t max_tokens,
                                  CachedTokens& cache) {
  if (cache.version > 0 && cache.max_tokens == max_tokens && cache.text == text) return;
  cache.tokenization = tokenize(text, max_tokens);
  cache.text = text;
  cache.max_tokens = max_tokens;
  ++cache.version;
}

void OneLayerRun::embed_cached(const CachedTokens& tokens, const OneLayerSpec& spec,
                               EmbeddedFrom& from, Matrix& X,
                               std::vector<EmbeddingSource>& sources) {
  const AttentionConfig& config = spec.config;
  if (from.tokens_version == tokens.version && from.d_model == config.d_model &&
      from.positional == spec.positional && from.overrides == spec.embeddings)
    return;
  embed_tokens(tokens.tokenization.tokens, config.d_model, spec.embeddings, spec.positional, X,
               &sources);
  from.tokens_version = tokens.version;
  from.d_model = config.d_model;
  from.positional = spec.positional;
  if (from.overrides != spec.embeddings) from.overrides = spec.embeddings;
}

void OneLayerRun::commit_tokens(const CachedTokens& cache, CommittedTokens& committed) {
  if (committed.version == cache.version) return;
  committed.tokenization = cache.tokenization;
  committed.version = cache.version;
}

Status OneLayerRun::run(const Scenario& scenario) {
  const OneLayerSpec& one = scenario.one_layer();
  const bool cross = one.mode == Mode::Cross;
  const auto max_tokens = static_cast<std::size_t>(scenario.max_tokens);
  if (scenario.max_tokens < 1 || scenario.max_tokens > Limits::kMaxTokens)
    return Status::error("max_tokens must be between 1 and " + std::to_string(Limits::kMaxTokens));
  if (Status status = validate(one.config); !status) return status;
  if (cross && one.config.causal)  // parse_scenario and the app's edits never make this
    return Status::error(
        "the causal mask is for self-attention: cross mode has none (turn causal off)");

  // 1. Tokens, staged in a cache keyed by the text (tokenized only when a sentence changed).
  tokenize_cached(scenario.target, max_tokens, target_cache_);
  if (target_cache_.tokenization.tokens.empty())
    return Status::error(cross ? "the target sentence has no tokens: type a word"
                               : "the sentence has no tokens: type a word");
  if (cross) {
    tokenize_cached(one.source, max_tokens, source_cache_);
    if (source_cache_.tokenization.tokens.empty())
      return Status::error("the source sentence has no tokens: type a word (cross mode)");
  }

  // 2. Embeddings and positions, staged (embedded again only when their inputs changed).
  embed_cached(target_cache_, one, target_embedded_, X_target_next_, target_sources_next_);
  if (cross)
    embed_cached(source_cache_, one, source_embedded_, X_source_next_, source_sources_next_);
  const Matrix& X_keys_next = cross ? X_source_next_ : X_target_next_;

  // 3. The custom mask, fitted to the token counts: cells past the mask's edge are allowed; or
  //    the mask pattern, made for them.
  const MaskMatrix* mask = nullptr;
  if (one.mask_pattern) {
    const MaskPattern& p = *one.mask_pattern;
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
  } else if (one.mask.size() > 0) {
    mask_.resize(X_target_next_.rows(), X_keys_next.rows());
    mask_.setOnes();
    const Eigen::Index rows = std::min(mask_.rows(), one.mask.rows());
    const Eigen::Index cols = std::min(mask_.cols(), one.mask.cols());
    mask_.topLeftCorner(rows, cols) = one.mask.topLeftCorner(rows, cols);
    mask = &mask_;
  }

  // 4. Attention: the one layer.
  if (Status status =
          engine_.compute(X_target_next_, X_keys_next, one.parameters, one.config, mask);
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
  has_mask_ = mask != nullptr;
  parameters_ = one.parameters;
  positional_ = one.positional;
  stack_.heads = one.config.heads;
  stack_.kind = cross               ? StackKind::Cross
                : one.config.causal ? StackKind::CausalSelf
                                    : StackKind::Self;
  stack_.name = cross ? "cross-attention" : "self-attention";
  stack_.keys = cross ? TokenSide::Source : TokenSide::Target;
  run_count_ = next_run_number();
  collect_warnings(scenario);
  return Status::success();
}

void OneLayerRun::collect_warnings(const Scenario& scenario) {
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
  const AttentionResult& r = engine_.result();
  if (scenario.one_layer().mask.size() > 0 && (scenario.one_layer().mask.rows() != r.n_query ||
                                               scenario.one_layer().mask.cols() != r.n_key))
    warnings_.push_back("the custom mask is " + std::to_string(scenario.one_layer().mask.rows()) +
                        "x" + std::to_string(scenario.one_layer().mask.cols()) +
                        " but attention is " + std::to_string(r.n_query) + "x" +
                        std::to_string(r.n_key) + ": cells outside the mask are allowed");
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

// The chain of one head: X → Q K V → S → scaled → masked → α → α·V → concat → ·W_O.
// Self: X → Q K V. Cross: X target → Q, then X source → K V.
void OneLayerRun::block_stages(int /*layer*/, int head, std::vector<BlockStage>& stages) const {
  stages.clear();
  const AttentionResult& r = engine_.result();
  if (head < 0 || static_cast<std::size_t>(head) >= r.heads.size()) return;
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  const AttentionConfig& c = r.config;
  const auto weights_of = [&](int of) -> const HeadParameters* {
    return static_cast<std::size_t>(of) < parameters_.heads.size()
               ? &parameters_.heads[static_cast<std::size_t>(of)]
               : nullptr;
  };
  const HeadParameters* p = weights_of(head);
  // K and V come from the W_K and W_V of the head's key/value group (itself without groups).
  const HeadParameters* kv = weights_of(kv_source_head(c, head));
  StageList list(stages, -1, head, r);  // a run of one layer: headings name no layer
  const auto embedding = [&](BlockStage& stage, TokenSide side) {
    stage.recipe.kind = StageRecipe::Kind::Embedding;
    stage.recipe.side = side;
    stage.recipe.sources = side == TokenSide::Source ? &source_sources_ : &target_sources_;
    stage.recipe.with_position = positional_ == Positional::Sinusoidal;
  };
  const auto projection = [&](BlockStage& stage, const Matrix& input, const Matrix* weight,
                              std::string_view result, std::string_view input_name,
                              std::string_view weight_name) {
    stage.recipe.kind = StageRecipe::Kind::Projection;
    stage.recipe.input = &input;
    stage.recipe.weight = weight;
    stage.recipe.result_name = result;
    stage.recipe.input_name = input_name;
    stage.recipe.weight_name = weight_name;
  };

  embedding(list.add(StageId::X, cross_ ? "X target" : "X", X_target_, StageAxis::Queries,
                     StageAxis::Other, StageJoin::Arrow),
            TokenSide::Target);
  BlockStage& q =
      list.add(StageId::Q, "Q = XW_Q", h.Q, StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
  projection(q, X_target_, p ? &p->W_Q : nullptr, "Q", "X", "W_Q");
  q.recipe.side = TokenSide::Target;
  if (cross_)
    embedding(list.add(StageId::XSource, "X source", X_source_, StageAxis::Keys, StageAxis::Other,
                       StageJoin::Space),
              TokenSide::Source);
  // Under grouped-query attention K and V are the group's: "K = XW_K (kv 1)", as for a model.
  std::string group;
  if (shares_keys(c))
    group = " (kv " + std::to_string(head / (c.heads / kv_group_count(c)) + 1) + ")";
  const std::string_view x_name = cross_ ? "X_src" : "X";
  const Matrix& X_keys = cross_ ? X_source_ : X_target_;
  const TokenSide key_side = cross_ ? TokenSide::Source : TokenSide::Target;
  BlockStage& k = list.add(StageId::K, "K = XW_K" + group, h.K, StageAxis::Keys, StageAxis::Other,
                           cross_ ? StageJoin::Arrow : StageJoin::Gap);
  projection(k, X_keys, kv ? &kv->W_K : nullptr, "K", x_name, "W_K");
  k.recipe.side = key_side;
  BlockStage& v = list.add(StageId::V, "V = XW_V" + group, h.V, StageAxis::Keys, StageAxis::Other,
                           StageJoin::Gap);
  projection(v, X_keys, kv ? &kv->W_V : nullptr, "V", x_name, "W_V");
  v.recipe.side = key_side;

  const char* score_title = "S = QK\xe2\x8a\xa4";
  switch (c.compatibility) {
    case Compatibility::Dot:
    case Compatibility::ScaledDot:
      break;
    case Compatibility::General:
      score_title = "S = QW_aK\xe2\x8a\xa4";
      break;
    case Compatibility::Additive:
      score_title = "S additive";
      break;
    case Compatibility::Cosine:
      score_title = "S = cosine";
      break;
  }
  BlockStage& scores = list.add(StageId::Scores, score_title, h.raw_scores, StageAxis::Queries,
                                StageAxis::Keys, StageJoin::Arrow);
  scores.recipe.kind = StageRecipe::Kind::Scores;
  scores.recipe.parameters = p;
  list.add(StageId::Scaled, std::string(scaling_stage_name(c.compatibility, c.temperature)),
           h.scaled_scores, StageAxis::Queries, StageAxis::Keys, StageJoin::Arrow)
      .recipe.kind = StageRecipe::Kind::Scaling;
  const bool custom_mask = has_mask_;  // a file's, or a pattern's
  list.add(StageId::Masked,
           c.causal ? (custom_mask ? "mask: causal+custom" : "causal mask")
                    : (custom_mask ? "custom mask" : "mask: none"),
           h.masked_scores, StageAxis::Queries, StageAxis::Keys, StageJoin::Arrow)
      .recipe.kind = StageRecipe::Kind::Mask;
  BlockStage& weights =
      list.add(StageId::Weights, c.hard ? "\xce\xb1 = argmax" : "\xce\xb1 = softmax", h.weights,
               StageAxis::Queries, StageAxis::Keys, StageJoin::Arrow);
  weights.probabilities = true;
  weights.recipe.kind = c.hard ? StageRecipe::Kind::Hardmax : StageRecipe::Kind::Softmax;
  list.add(StageId::HeadOutput, "\xce\xb1\xc2\xb7V", h.output, StageAxis::Queries, StageAxis::Other,
           StageJoin::Arrow)
      .recipe.kind = StageRecipe::Kind::WeightedSum;
  BlockStage& concat = list.add(StageId::Concat, "concat", r.concat, StageAxis::Queries,
                                StageAxis::Other, StageJoin::Arrow);
  concat.recipe.kind = StageRecipe::Kind::Concat;
  concat.recipe.d_v = c.d_v;
  BlockStage& output = list.add(StageId::Output, "\xc2\xb7W_O = output", r.output,
                                StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
  output.recipe.kind = StageRecipe::Kind::OutputProjection;
  output.recipe.other = &r.concat;
  output.recipe.weight =
      parameters_.W_O.rows() == r.concat.cols() && parameters_.W_O.cols() == r.output.cols()
          ? &parameters_.W_O
          : nullptr;
}

}  // namespace attnviz
