#include "core/pipeline/model_run.hpp"

#include "core/base/threads.hpp"
#include "core/figures/format.hpp"
#include "core/models/alignment.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

namespace attnviz {

namespace {

// Adapted layers' versions and run numbers, from process-wide counters: never the same twice,
// in any ModelRun. Versions start far above any AttentionEngine's (which count from 1 in each
// engine), so that a view's cache never mistakes a model layer for a one-layer result.
std::atomic<std::uint64_t> next_layer_version{std::uint64_t{1} << 48};

// Whether the model has every head the spec changes, each in its part (an encoder–decoder's
// encoder, decoder or cross-attention; a model without an encoder has only its own).
Status check_interventions(const ModelSpec& spec, const Transformer& transformer,
                           const std::string& name) {
  for (const ModelHeadChange& entry : spec.interventions) {
    const std::string where =
        (entry.part == ModelPart::Main ? std::string()
                                       : std::string(model_part_label(entry.part)) + ", ") +
        "layer " + std::to_string(entry.layer) + ", head " + std::to_string(entry.head);
    if (entry.part != ModelPart::Main && !transformer.encoder())
      return Status::error(where + ": " + name + " has no encoder (only an encoder–decoder has " +
                           std::string(model_part_label(entry.part)) + ")");
    const TransformerConfig& config =
        entry.part == ModelPart::Encoder ? transformer.encoder()->config() : transformer.config();
    if (entry.layer < 0 || entry.layer >= config.n_layers)
      return Status::error(where + ": " + name + " has " + std::to_string(config.n_layers) +
                           " layers (0 to " + std::to_string(config.n_layers - 1) + ")");
    if (entry.head < 0 || entry.head >= config.n_heads)
      return Status::error(where + ": " + name + " has " + std::to_string(config.n_heads) +
                           " heads per layer (0 to " + std::to_string(config.n_heads - 1) + ")");
    if (!std::isfinite(entry.change.output_scale))
      return Status::error(where + ": the scale is not a number");
    if (entry.part == ModelPart::Cross &&
        entry.change.pattern == HeadIntervention::Pattern::PreviousToken)
      return Status::error(where +
                           ": the previous token means nothing across two texts (a "
                           "cross-attention head can be uniform over the source, or scaled)");
  }
  return Status::success();
}

// Whether the model has every cell the spec edits (so that applying them cannot fail half-way).
Status check_edits(const ModelSpec& spec, const TransformerConfig& config,
                   const std::string& name) {
  for (const ModelWeightEdit& e : spec.weight_edits) {
    const bool shared = e.matrix == HeadMatrix::Key || e.matrix == HeadMatrix::Value;
    const int heads = shared ? config.n_kv_heads : config.n_heads;
    const int rows = e.matrix == HeadMatrix::Output ? config.d_head : config.d_model;
    const int cols = e.matrix == HeadMatrix::Output ? config.d_model : config.d_head;
    const std::string where = "layer " + std::to_string(e.layer) + ", " +
                              std::string(to_string(e.matrix)) + " of " +
                              (shared ? "key/value head " : "head ") + std::to_string(e.head);
    if (e.layer < 0 || e.layer >= config.n_layers)
      return Status::error(where + ": " + name + " has " + std::to_string(config.n_layers) +
                           " layers");
    if (e.head < 0 || e.head >= heads)
      return Status::error(where + ": " + name + " has " + std::to_string(heads) +
                           (shared ? " key/value heads" : " heads") + " per layer");
    if (e.row < 0 || e.row >= rows || e.col < 0 || e.col >= cols)
      return Status::error(where + ": cell [" + std::to_string(e.row) + ", " +
                           std::to_string(e.col) + "] is outside its " + std::to_string(rows) +
                           " × " + std::to_string(cols) + " matrix");
    if (!std::isfinite(e.value)) return Status::error(where + ": a weight is not a number");
  }
  for (const ModelEmbeddingEdit& e : spec.embedding_edits) {
    if (e.token < 0 || e.token >= config.vocab_size)
      return Status::error("embedding of token " + std::to_string(e.token) + ": " + name +
                           "'s vocabulary has " + std::to_string(config.vocab_size) + " tokens");
    if (e.dimension < 0 || e.dimension >= config.d_model)
      return Status::error("embedding of token " + std::to_string(e.token) + ": dimension " +
                           std::to_string(e.dimension) + " is not one of its " +
                           std::to_string(config.d_model));
    if (!std::isfinite(e.value))
      return Status::error("embedding of token " + std::to_string(e.token) + ": not a number");
  }
  return Status::success();
}

// The lowest layer whose weights differ between two sorted edit lists; n_layers when none.
int lowest_changed_layer(const std::vector<ModelWeightEdit>& a,
                         const std::vector<ModelWeightEdit>& b, int n_layers) {
  int lowest = n_layers;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].key() < b[j].key())) {
      lowest = std::min(lowest, a[i++].layer);
    } else if (i == a.size() || b[j].key() < a[i].key()) {
      lowest = std::min(lowest, b[j++].layer);
    } else {
      if (a[i].value != b[j].value) lowest = std::min(lowest, a[i].layer);
      ++i;
      ++j;
    }
  }
  return lowest;
}

// Whether every entry of `before` is in `after` (by cell): nothing was taken back.
template <typename Edit>
bool only_added(const std::vector<Edit>& before, const std::vector<Edit>& after) {
  std::size_t j = 0;
  for (const Edit& edit : before) {
    while (j < after.size() && after[j].key() < edit.key()) ++j;
    if (j == after.size() || !(after[j].key() == edit.key())) return false;
  }
  return true;
}

// The tokens at `positions`, as the views list them.
Tokenization as_tokenization(const std::vector<ModelToken>& tokens,
                             const std::vector<int>& positions, std::size_t total) {
  Tokenization out;
  out.tokens.reserve(positions.size());
  for (int position : positions) {
    const ModelToken& t = tokens[static_cast<std::size_t>(position)];
    Token token;
    token.text = t.shown;
    token.key = t.shown;
    token.byte_begin = static_cast<std::size_t>(t.byte_begin);
    token.byte_end = static_cast<std::size_t>(t.byte_end);
    token.kind = t.special ? TokenKind::Symbol : TokenKind::Word;
    out.tokens.push_back(std::move(token));
  }
  out.total_tokens = total;
  return out;
}

// The positions of `tokens` the views show: every one, or the others than the special ones (when
// there are others).
std::vector<int> visible_positions(const std::vector<ModelToken>& tokens, bool hide_special) {
  std::vector<int> shown;
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i)
    if (!hide_special || !tokens[static_cast<std::size_t>(i)].special) shown.push_back(i);
  if (shown.empty())  // nothing but special tokens: they are all there is to show
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) shown.push_back(i);
  return shown;
}

// The interventions `spec` asks for in `part` made the forward pass's, only those that differ
// (each one changed marks its layer to compute again); `cross`: the decoder's cross-attention
// heads rather than its self-attention ones.
Status apply_interventions(TransformerForward& forward, const ModelSpec& spec, ModelPart part,
                           bool cross) {
  const TransformerConfig& config = forward.model().config();
  for (int layer = 0; layer < config.n_layers; ++layer)
    for (int head = 0; head < config.n_heads; ++head) {
      const HeadIntervention wanted = spec.intervention_in(part, layer, head);
      const HeadIntervention& current =
          cross ? forward.cross_intervention(layer, head) : forward.intervention(layer, head);
      if (current == wanted) continue;
      if (Status status = cross ? forward.set_cross_intervention(layer, head, wanted)
                                : forward.set_intervention(layer, head, wanted);
          !status)
        return status;
    }
  return Status::success();
}

// Each cross head's role from its alignment precision on `sentences` (none when it cannot be
// measured).
std::vector<HeadScores> cross_alignment_roles(const Model& model,
                                              const std::vector<AlignedSentences>& sentences) {
  std::vector<HeadScores> roles;
  const Result<CrossAlignment> measured = measure_cross_alignment(model, sentences);
  if (!measured) return roles;
  for (int layer = 0; layer < measured->layers; ++layer)
    for (int head = 0; head < measured->heads; ++head) {
      HeadScores& scores = roles.emplace_back();
      scores.layer = layer;
      scores.head = head;
      scores.scores[static_cast<std::size_t>(HeadRole::Alignment)] = measured->at(layer, head);
      scores.role = measured->at(layer, head) >= role_threshold(HeadRole::Alignment)
                        ? HeadRole::Alignment
                        : HeadRole::Mixed;
    }
  return roles;
}

}  // namespace

std::span<const HeadScores> OpenedModel::cross_roles() const {
  if (!cross_measured.valid()) return {};
  const std::future_status status = cross_measured.wait_for(std::chrono::seconds(0));
  if (status == std::future_status::timeout) return {};
  return cross_measured.get();  // ready, or deferred: computed now (no threads)
}

bool OpenedModel::cross_roles_pending() const {
  return cross_measured.valid() &&
         cross_measured.wait_for(std::chrono::seconds(0)) == std::future_status::timeout;
}

std::span<const HeadScores> OpenedModel::wait_for_cross_roles() const {
  if (!cross_measured.valid()) return {};
  return cross_measured.get();
}

std::span<const HeadScores> OpenedModel::roles_of(ModelPart part) const {
  switch (part) {
    case ModelPart::Main:
      return roles;
    case ModelPart::Cross:
      return cross_roles();
    case ModelPart::Encoder:
      break;
  }
  return {};
}

Result<std::shared_ptr<const OpenedModel>> shared_model(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const OpenedModel>> opened;
  std::lock_guard<std::mutex> lock(mutex);  // one model opened at a time
  if (std::shared_ptr<const OpenedModel> kept = opened[name].lock()) return kept;
  Result<Model> model = open_model(name);
  if (!model) return model.status();
  auto made = std::make_shared<OpenedModel>(OpenedModel{std::move(*model), {}, {}});
  // Each head's role, measured once on the model as trained (its own passes, no interventions).
  if (Result<HeadRoleProbe> probe = role_probe(made->model, default_role_text(made->model)); probe)
    if (Result<std::vector<HeadScores>> roles = detect_head_roles(made->model.transformer, *probe);
        roles)
      made->roles = std::move(*roles);
  // An encoder–decoder's cross heads: their alignment precision on the folder's aligned
  // sentences, measured on a thread of its own (a model without them has none measured).
  if (made->model.transformer.encoder()) {
    const std::string path = made->model.location.folder + "/" + kAlignmentsFile;
    if (std::error_code error; std::filesystem::is_regular_file(path, error))
      if (Result<std::vector<AlignedSentences>> sentences = load_aligned_sentences(path);
          sentences) {
        if (sentences->size() > static_cast<std::size_t>(kAlignmentSentences))
          sentences->resize(static_cast<std::size_t>(kAlignmentSentences));
        const Model* measured_model = &made->model;  // outlived by the measurement (above)
        auto measure = [measured_model, pairs = std::move(*sentences)] {
          return cross_alignment_roles(*measured_model, pairs);
        };
        try {
          made->cross_measured = std::async(kAsyncLaunch, measure).share();
        } catch (const std::system_error&) {  // no thread to be had: measured when first asked
          made->cross_measured = std::async(std::launch::deferred, measure).share();
        }
      }
  }
  opened[name] = made;
  return std::shared_ptr<const OpenedModel>(std::move(made));
}

ModelRun::~ModelRun() = default;

void ModelRun::commit(std::shared_ptr<const OpenedModel> opened, const std::string& as) {
  forward_.reset();
  translation_.reset();
  own_.reset();
  applied_weights_.clear();
  applied_embeddings_.clear();
  opened_ = std::move(opened);
  opened_as_ = as;
}

Status ModelRun::run(const ModelSpec& spec, const std::string& text, int max_tokens,
                     std::vector<std::string>& warnings) {
  // 1. The model: opened again only when the spec names another one.
  std::shared_ptr<const OpenedModel> opened;
  if (!opened_ || opened_as_ != spec.model) {
    Result<std::shared_ptr<const OpenedModel>> shared = shared_model(spec.model);
    if (!shared)
      return Status::error("the model \"" + spec.model + "\": " + shared.status().message());
    opened = std::move(*shared);
  }
  const Model& model = opened ? opened->model : opened_->model;
  const TransformerConfig& config = model.transformer.config();
  if (Status status = check_interventions(spec, model.transformer, model.name); !status)
    return status;
  if (model.transformer.encoder())
    return run_translation(spec, text, max_tokens, warnings, std::move(opened));
  if (spec.part != ModelPart::Main || !spec.decoder_text.empty())
    return Status::error(model.name +
                         " has no encoder: the attention to show (part) and a decoder's text are "
                         "an encoder–decoder's (a translation model)");
  if (Status status = check_edits(spec, config, model.name); !status) return status;

  // 2. The tokens (an encoder's pair with the spec's second text), at most max_tokens and the
  // model's context.
  if (!spec.text_b.empty() && !model.tokenizer.reads_pairs())
    return Status::error(model.name +
                         " is a decoder: it reads one text, not a pair (text_b is "
                         "for an encoder, BERT)");
  Result<std::vector<ModelToken>> tokens =
      read_text(model, text,
                spec.text_b.empty() ? std::optional<std::string_view>()
                                    : std::optional<std::string_view>(spec.text_b));
  if (!tokens) return tokens.status();
  const std::size_t total = tokens->size();
  const std::size_t limit =
      static_cast<std::size_t>(std::max(1, std::min(max_tokens, config.context)));
  if (total > limit) {
    tokens->resize(limit);
    warnings.push_back("the text has " + std::to_string(total) + " tokens: " + model.name +
                       " reads the first " + std::to_string(limit) +
                       (limit == static_cast<std::size_t>(config.context) ? " (its context)" : ""));
  }

  // 3. Commit the model, then the interventions that differ, then run.
  if (opened) {
    commit(std::move(opened), spec.model);
    forward_ = std::make_unique<TransformerForward>(opened_->model.transformer);
    layers_.assign(static_cast<std::size_t>(config.n_layers), AdaptedLayer{});
    streams_.assign(static_cast<std::size_t>(config.n_layers), KeptStream{});
  }
  part_ = ModelPart::Main;
  source_tokens_.clear();
  target_tokens_.clear();
  translation_text_.clear();
  if (Status status = apply_edits(spec); !status) return status;
  if (Status status = apply_interventions(*forward_, spec, spec.part, /*cross=*/false); !status)
    return status;
  std::vector<int> ids(tokens->size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = (*tokens)[i].id;
  const auto start = std::chrono::steady_clock::now();
  if (Status status = forward_->run(ids, token_types(*tokens)); !status) return status;
  const TransformerForward::Work& work = forward_->last_work();
  if ((work.first_layer_redone == 0 || work.first_position == 0) && !ids.empty()) {  // all of it
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    full_run_ms_per_token_ = took.count() / static_cast<double>(ids.size());
  }
  tokens_ = std::move(*tokens);
  choose_shown(spec, total, warnings);
  run_count_ = next_run_number();
  stacks_.assign(1, AttentionStack{});
  stacks_[0].name = config.causal() ? "decoder self-attention" : "self-attention (both ways)";
  stacks_[0].kind = config.causal() ? StackKind::CausalSelf : StackKind::Self;
  stacks_[0].layers = config.n_layers;
  stacks_[0].heads = config.n_heads;
  return Status::success();
}

void ModelRun::choose_shown(const ModelSpec& spec, std::size_t total,
                            std::vector<std::string>& warnings) {
  const auto shown_of = [&](const std::vector<ModelToken>& tokens) {
    return visible_positions(tokens, spec.hide_special_tokens);
  };
  source_shown_ = shown_of(source_tokens_);
  target_shown_ = shown_of(target_tokens_);
  shown_ = shown_of(tokens_);
  pair_filter_ = PairFilter::All;
  key_shown_.clear();
  if (part_ == ModelPart::Cross) {  // the keys: the source's tokens
    key_shown_ = source_shown_;
  } else if (spec.pair_filter != PairFilter::All) {
    // A pair filter: the queries from one sentence, the keys from one (the model has read the
    // pair whole; only what the views show changes).
    std::vector<int> from, to;
    for (const int position : shown_) {
      const int sentence = tokens_[static_cast<std::size_t>(position)].sentence;
      if (sentence == pair_filter_from(spec.pair_filter)) from.push_back(position);
      if (sentence == pair_filter_to(spec.pair_filter)) to.push_back(position);
    }
    const bool has_b = std::any_of(tokens_.begin(), tokens_.end(),
                                   [](const ModelToken& token) { return token.sentence == 1; });
    if (!has_b)
      warnings.push_back("the filter " + std::string(pair_filter_label(spec.pair_filter)) +
                         " needs a second sentence (B): all the attention is shown");
    else if (from.empty() || to.empty())
      warnings.push_back("the filter " + std::string(pair_filter_label(spec.pair_filter)) +
                         " leaves no tokens to show: all the attention is shown");
    else {
      shown_ = std::move(from);
      key_shown_ = std::move(to);
      pair_filter_ = spec.pair_filter;
    }
  }
  tokenization_ = as_tokenization(tokens_, shown_, total - (tokens_.size() - shown_.size()));
  if (separate_keys())
    key_tokenization_ = as_tokenization(key_side(), key_shown_, key_shown_.size());
}

Status ModelRun::run_translation(const ModelSpec& spec, const std::string& text, int max_tokens,
                                 std::vector<std::string>& warnings,
                                 std::shared_ptr<const OpenedModel> opened) {
  const Model& model = opened ? opened->model : opened_->model;
  const Transformer& decoder = model.transformer;
  const Transformer& encoder = *decoder.encoder();
  if (!spec.text_b.empty())
    return Status::error(model.name +
                         " is an encoder–decoder: it reads a source and a target, not a pair "
                         "(text_b is for an encoder, BERT)");
  if (spec.weights_edited())
    return Status::error("weights changed by hand: not yet for an encoder–decoder (" + model.name +
                         ")");
  if (spec.pair_filter != PairFilter::All)
    return Status::error("a pair filter is for an encoder's sentence pair; " + model.name +
                         " is an encoder–decoder");

  // 1. The source (the scenario's text), at most max_tokens and the encoder's context; its end
  // token kept when it is cut.
  Result<std::vector<ModelToken>> source = read_text(model, text);
  if (!source) return source.status();
  const std::size_t source_total = source->size();
  const std::size_t source_limit =
      static_cast<std::size_t>(std::max(2, std::min(max_tokens, encoder.config().context)));
  if (source->size() > source_limit) {
    const ModelToken end = source->back();
    source->resize(source_limit - 1);
    if (end.special) source->push_back(end);
    warnings.push_back("the source has " + std::to_string(source_total) + " tokens: " + model.name +
                       " reads the first " + std::to_string(source_limit));
  }
  // 2. The target typed by hand (teacher forcing), at most the decoder's context.
  std::optional<std::vector<ModelToken>> typed;
  if (!spec.decoder_text.empty()) {
    Result<std::vector<ModelToken>> target = read_target(model, spec.decoder_text);
    if (!target) return target.status();
    const std::size_t limit = static_cast<std::size_t>(decoder.config().context);
    if (target->size() > limit) {
      warnings.push_back("the translation has " + std::to_string(target->size()) +
                         " tokens: " + model.name + " reads the first " + std::to_string(limit));
      target->resize(limit);
    }
    typed = std::move(*target);
  }

  // 3. Commit the model, then the interventions that differ, then run.
  if (opened) {
    commit(std::move(opened), spec.model);
    translation_ = std::make_unique<EncoderDecoderForward>(opened_->model.transformer);
  }
  for (const ModelPart part : kModelParts)
    if (Status status = apply_interventions(
            part == ModelPart::Encoder ? translation_->encoder() : translation_->decoder(), spec,
            part, /*cross=*/part == ModelPart::Cross);
        !status)
      return status;
  std::vector<int> source_ids(source->size());
  for (std::size_t i = 0; i < source_ids.size(); ++i) source_ids[i] = (*source)[i].id;
  const auto start = std::chrono::steady_clock::now();
  std::vector<ModelToken> target;
  if (typed) {
    std::vector<int> target_ids(typed->size());
    for (std::size_t i = 0; i < target_ids.size(); ++i) target_ids[i] = (*typed)[i].id;
    if (Status status = translation_->run(source_ids, target_ids); !status) return status;
    target = std::move(*typed);
  } else {
    // The greedy translation: at most twice the source and ten more (a translation runs about as
    // long as its source), within the decoder's context.
    const int limit =
        std::min(2 * static_cast<int>(source_ids.size()) + 10, decoder.config().context - 1);
    Result<std::vector<int>> ids =
        greedy_translation(*translation_, source_ids, model.tokenizer.start_token(),
                           model.tokenizer.stop_token(), limit);
    if (!ids) return ids.status();
    target = target_tokens_of(model, *ids);
  }
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  full_run_ms_per_token_ = took.count() / static_cast<double>(source->size() + target.size());

  // 4. The part shown: its tokens, its keys.
  part_ = spec.part;
  source_tokens_ = std::move(*source);
  target_tokens_ = std::move(target);
  translation_text_.clear();
  for (std::size_t i = 1; i < target_tokens_.size(); ++i)
    translation_text_ += model.tokenizer.text_of(target_tokens_[i - 1].id, target_tokens_[i].id);
  tokens_ = part_ == ModelPart::Encoder ? source_tokens_ : target_tokens_;
  const std::size_t total = part_ == ModelPart::Encoder ? source_total : tokens_.size();
  const TransformerConfig& config = shown_config();
  if (layers_.size() != static_cast<std::size_t>(config.n_layers)) {
    layers_.assign(static_cast<std::size_t>(config.n_layers), AdaptedLayer{});
    streams_.assign(static_cast<std::size_t>(config.n_layers), KeptStream{});
  }
  choose_shown(spec, total, warnings);
  run_count_ = next_run_number();
  stacks_.clear();
  for (const ModelPart part : kModelParts) {
    const TransformerConfig& c = part == ModelPart::Encoder ? encoder.config() : decoder.config();
    AttentionStack& stack = stacks_.emplace_back();
    stack.name = std::string(model_part_label(part));
    stack.kind = part == ModelPart::Encoder ? StackKind::Self
                 : part == ModelPart::Cross ? StackKind::Cross
                                            : StackKind::CausalSelf;
    stack.layers = c.n_layers;
    stack.heads = c.n_heads;
    stack.queries = part == ModelPart::Encoder ? TokenSide::Source : TokenSide::Target;
    stack.keys = part == ModelPart::Main ? TokenSide::Target : TokenSide::Source;
  }
  return Status::success();
}

const Transformer& ModelRun::shown_transformer() const {
  const Transformer& main = model().transformer;
  return part_ == ModelPart::Encoder && main.encoder() ? *main.encoder() : main;
}

const TransformerConfig& ModelRun::shown_config() const {
  return shown_transformer().config();
}

const TransformerForward& ModelRun::shown_forward() const {
  if (!translation_) return *forward_;
  return part_ == ModelPart::Encoder ? translation_->encoder() : translation_->decoder();
}

int ModelRun::shown_stack() const {
  if (!translation_) return 0;
  return static_cast<int>(std::find(std::begin(kModelParts), std::end(kModelParts), part_) -
                          std::begin(kModelParts));
}

Matrix ModelRun::stack_weights(int stack, int layer, int head) const {
  if (!translation_ || stack == shown_stack()) return Run::stack_weights(stack, layer, head);
  if (stack < 0 || stack >= static_cast<int>(stacks_.size())) return {};
  const AttentionStack& s = stacks_[static_cast<std::size_t>(stack)];
  if (layer < 0 || layer >= s.layers || head < 0 || head >= s.heads) return {};
  const ModelPart part = kModelParts[static_cast<std::size_t>(stack)];
  const std::vector<int>& source = source_shown_;
  const std::vector<int>& target = target_shown_;
  switch (part) {
    case ModelPart::Encoder:  // (n_source, n_source)
      return translation_->encoder().attention(layer, head)(source, source);
    case ModelPart::Main:  // (n_target, n_target)
      return translation_->decoder().attention(layer, head)(target, target);
    case ModelPart::Cross:  // (n_target, n_source)
      return translation_->decoder().cross_attention(layer, head)(target, source);
  }
  return {};
}

const HeadScores* ModelRun::role_in(int stack, int layer, int head) const {
  if (!translation_) return Run::role_in(stack, layer, head);
  if (!opened_ || stack < 0 || stack >= static_cast<int>(stacks_.size())) return nullptr;
  const std::span<const HeadScores> roles =
      opened_->roles_of(kModelParts[static_cast<std::size_t>(stack)]);
  const int heads = stacks_[static_cast<std::size_t>(stack)].heads;
  const std::size_t at = static_cast<std::size_t>(layer) * static_cast<std::size_t>(heads) +
                         static_cast<std::size_t>(head);
  return layer >= 0 && head >= 0 && head < heads && at < roles.size() && roles[at].layer == layer &&
                 roles[at].head == head
             ? &roles[at]
             : nullptr;
}

HeadIntervention ModelRun::intervention(int layer, int head) const {
  if (!opened_) return {};
  if (part_ == ModelPart::Cross) return shown_forward().cross_intervention(layer, head);
  return shown_forward().intervention(layer, head);
}

Status ModelRun::run(const Scenario& scenario) {
  if (scenario.max_tokens < 1 || scenario.max_tokens > Limits::kMaxTokens)
    return Status::error("max_tokens must be between 1 and " + std::to_string(Limits::kMaxTokens));
  if (!scenario.model()) return Status::error("the scenario names no model");
  std::vector<std::string> warnings;
  if (Status status = run(*scenario.model(), scenario.target, scenario.max_tokens, warnings);
      !status)
    return status;
  X_ = shown_forward().embedded().matrix()(shown_, Eigen::all);  // (n shown, d_model)
  if (part_ == ModelPart::Cross)  // the source's embeddings (the encoder's)
    X_keys_ = translation_->encoder().embedded().matrix()(key_shown_, Eigen::all);  // (n_key, d)
  else if (filtered())
    X_keys_ = forward_->embedded().matrix()(key_shown_, Eigen::all);  // (n_key, d_model)
  else
    X_keys_.resize(0, 0);
  warnings_ = std::move(warnings);
  return Status::success();
}

Capabilities ModelRun::capabilities() const {
  const Capabilities decoder{Capability::TrainedWeights,     Capability::EditableModelWeights,
                             Capability::HeadInterventions,  Capability::PredictsNextToken,
                             Capability::ResidualStream,     Capability::HeadRoles,
                             Capability::HidesSpecialTokens, Capability::ReadsOutTokens};
  if (translation_) {  // an encoder–decoder: its attention, its stream, its heads' changes
    if (!opened_->cross_measured.valid() && opened_->roles.empty())
      return {Capability::TrainedWeights, Capability::HeadInterventions, Capability::ResidualStream,
              Capability::HidesSpecialTokens, Capability::SourceAndTarget};
    return {Capability::TrainedWeights,  Capability::HeadInterventions,
            Capability::ResidualStream,  Capability::HidesSpecialTokens,
            Capability::SourceAndTarget, Capability::HeadRoles};
  }
  if (!opened_ || model().transformer.config().causal()) return decoder;
  // An encoder: no next token; its MLM head (when it has one) fills a mask; pairs.
  if (model().transformer.predicts_tokens())
    return {Capability::TrainedWeights,     Capability::EditableModelWeights,
            Capability::HeadInterventions,  Capability::FillsMask,
            Capability::ResidualStream,     Capability::HeadRoles,
            Capability::HidesSpecialTokens, Capability::SentencePairs,
            Capability::ReadsOutTokens};
  return {Capability::TrainedWeights,    Capability::EditableModelWeights,
          Capability::HeadInterventions, Capability::ResidualStream,
          Capability::HeadRoles,         Capability::HidesSpecialTokens,
          Capability::SentencePairs};
}

Status ModelRun::apply_edits(const ModelSpec& spec) {
  if (!own_ && !spec.weights_edited()) return Status::success();  // the shared model, as on disk
  if (!own_) {  // the first edit: a copy of the model of our own, read from the files again
    Result<Model> copy = open_model(spec.model);
    if (!copy) return Status::error("the model \"" + spec.model + "\": " + copy.status().message());
    own_ = std::make_unique<Model>(std::move(*copy));
    forward_ = std::make_unique<TransformerForward>(own_->transformer);
  }
  Transformer& transformer = own_->transformer;
  const int n_layers = transformer.config().n_layers;
  const int lowest = lowest_changed_layer(applied_weights_, spec.weight_edits, n_layers);
  const bool embeddings_differ = applied_embeddings_ != spec.embedding_edits;
  if (lowest == n_layers && !embeddings_differ) return Status::success();
  // Cells only set: set the new values. A cell taken back: every weight as on disk, then the
  // spec's edits again (the cells check_edits has checked, so none fails).
  const bool reset = !only_added(applied_weights_, spec.weight_edits) ||
                     !only_added(applied_embeddings_, spec.embedding_edits);
  if (reset) transformer.reset_weights();
  const auto shared = [](HeadMatrix m) { return m == HeadMatrix::Key || m == HeadMatrix::Value; };
  const int per_kv_head = transformer.config().queries_per_kv_head();
  std::size_t j = 0;
  for (const ModelWeightEdit& e : spec.weight_edits) {
    if (!reset) {  // skip the cells that hold this value already
      while (j < applied_weights_.size() && applied_weights_[j].key() < e.key()) ++j;
      if (j < applied_weights_.size() && applied_weights_[j] == e) continue;
    }
    // set_head_weight takes a query head: the first of the key/value head's group.
    const int head = shared(e.matrix) ? e.head * per_kv_head : e.head;
    if (Status status = transformer.set_head_weight(e.layer, head, e.matrix, e.row, e.col, e.value);
        !status)
      return status;
  }
  if (reset || embeddings_differ)
    for (const ModelEmbeddingEdit& e : spec.embedding_edits)
      if (Status status = transformer.set_token_embedding(e.token, e.dimension, e.value); !status)
        return status;
  applied_weights_ = spec.weight_edits;
  applied_embeddings_ = spec.embedding_edits;
  if (embeddings_differ) forward_->embeddings_changed();
  if (lowest < n_layers) forward_->weights_changed(lowest);
  return Status::success();
}

const HeadScores* ModelRun::role_of(int layer, int head) const {
  if (!opened_) return nullptr;
  const std::span<const HeadScores> roles = opened_->roles_of(part_);
  const std::size_t at = static_cast<std::size_t>(layer) *
                             static_cast<std::size_t>(model().transformer.config().n_heads) +
                         static_cast<std::size_t>(head);
  return at < roles.size() && roles[at].layer == layer && roles[at].head == head ? &roles[at]
                                                                                 : nullptr;
}

int ModelRun::shown_index(int position) const {
  const auto it = std::lower_bound(shown_.begin(), shown_.end(), position);
  return it != shown_.end() && *it == position ? static_cast<int>(it - shown_.begin()) : -1;
}

int ModelRun::layer_count() const {
  return opened_ ? shown_config().n_layers : 0;
}

const AttentionResult& ModelRun::layer(int index) const {
  return adapted(index).result;
}

const Matrix& ModelRun::layer_input(int index) const {
  return adapted(index).input;
}

const Matrix& ModelRun::attention_input_keys(int index) const {
  const AdaptedLayer& layer = adapted(index);
  return separate_keys() ? layer.key_input : layer.input;
}

const LayerStream& ModelRun::stream(int index) const {
  KeptStream& kept = streams_[static_cast<std::size_t>(index)];
  if (kept.run == run_count_) return kept.stream;
  const TransformerForward& forward = shown_forward();
  const LayerActivations& activations = forward.layer(index);
  const RowMatrix& input = index == 0 ? forward.embedded() : forward.layer(index - 1).residual_out;
  const bool with_cross = shown_config().cross_attention;  // an encoder–decoder's decoder
  LayerStream& s = kept.stream;
  const auto rows = [&](const RowMatrix& m) -> Matrix { return m.matrix()(shown_, Eigen::all); };
  if (part_ == ModelPart::Cross) {  // the cross sub-block: from x′ to the residual after it
    s.residual_in = rows(activations.residual_mid);     // (n, d_model): x′
    s.residual_mid = rows(activations.residual_cross);  // (n, d_model): x″ = norm(x′ + cross)
  } else {
    s.residual_in = rows(input);                      // (n, d_model)
    s.residual_mid = rows(activations.residual_mid);  // (n, d_model)
  }
  s.mlp_output = rows(activations.mlp_output);      // (n, d_model)
  s.residual_out = rows(activations.residual_out);  // (n, d_model)
  s.norms_after = shown_config().norm_after();
  if (with_cross && part_ == ModelPart::Main) {
    s.cross_output = rows(activations.cross_attention_output);  // (n, d_model)
    s.cross_sum = s.residual_mid + s.cross_output;              // (n, d_model)
    s.residual_cross = rows(activations.residual_cross);        // (n, d_model)
  } else {
    s.cross_output.resize(0, 0);
    s.cross_sum.resize(0, 0);
    s.residual_cross.resize(0, 0);
  }
  if (s.norms_after) {  // the sums the norms took, as the forward pass added them
    s.attention_sum =
        s.residual_in + rows(part_ == ModelPart::Cross ? activations.cross_attention_output
                                                       : activations.attention_output);
    // The MLP reads the stream after cross-attention in a decoder that has it.
    s.mlp_sum = (with_cross ? rows(activations.residual_cross) : s.residual_mid) + s.mlp_output;
  } else {
    s.attention_sum.resize(0, 0);
    s.mlp_sum.resize(0, 0);
  }
  kept.run = run_count_;
  return kept.stream;
}

const ModelRun::AdaptedLayer& ModelRun::adapted(int index) const {
  AdaptedLayer& out = layers_[static_cast<std::size_t>(index)];
  if (out.run == run_count_) return out;
  const TransformerConfig& config = shown_config();
  const TransformerForward& forward = shown_forward();
  const LayerActivations& activations = forward.layer(index);
  // Cross-attention: the decoder's queries (from the residual stream after its self-attention),
  // the keys and values of the encoder's output; no mask.
  const bool cross = part_ == ModelPart::Cross;
  // The shown queries and keys: every token, unless some are hidden or a pair filter picks one
  // sentence's queries and one sentence's keys.
  const std::vector<int>& key_rows = key_positions();
  const int n = static_cast<int>(shown_.size());             // n_query
  const int n_key = static_cast<int>(key_rows.size());       // n_key
  const bool hiding = key_rows.size() != key_side().size();  // a row's keys not all shown
  const bool causal = config.causal() && !cross;
  const int d_head = config.d_head;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_head));

  AttentionResult& r = out.result;
  r.n_query = n;
  r.n_key = n_key;
  r.config.d_model = config.d_model;
  r.config.heads = config.n_heads;
  r.config.d_k = r.config.d_v = r.config.d_att = d_head;
  r.config.compatibility = Compatibility::ScaledDot;
  r.config.temperature = 1.0f;
  r.config.hard = false;
  r.config.causal = causal;
  r.heads.resize(static_cast<std::size_t>(config.n_heads));
  r.fully_masked_row_count = 0;
  r.overflow = false;
  // The shown rows of everything kept.
  const Matrix queries = (cross ? activations.cross_queries : activations.queries)
                             .matrix()(shown_, Eigen::all);  // (n, n_heads · d_head)
  const Matrix keys = (cross ? activations.cross_keys : activations.keys)
                          .matrix()(key_rows, Eigen::all);  // (n_key, n_kv_heads · d_head)
  const Matrix values = (cross ? activations.cross_values : activations.values)
                            .matrix()(key_rows, Eigen::all);  // (n_key, n_kv_heads · d_head)
  r.concat = (cross ? activations.cross_head_outputs : activations.head_outputs)
                 .matrix()(shown_, Eigen::all);  // (n, n_heads · d_head)
  for (int h = 0; h < config.n_heads; ++h) {
    HeadResult& head = r.heads[static_cast<std::size_t>(h)];
    const int g = config.kv_head_of(h);
    // 1. This head's queries, and the keys and values of the key/value head it reads.
    head.Q = queries.middleCols(h * d_head, d_head);  // (n, d_head)
    head.K = keys.middleCols(g * d_head, d_head);     // (n_key, d_head)
    head.V = values.middleCols(g * d_head, d_head);   // (n_key, d_head)
    // 2. Every score, the masked ones too (the views show what the mask hides).
    head.raw_scores.noalias() = head.Q * head.K.transpose();  // (n, n_key)
    head.scaled_scores = head.raw_scores * scale;             // (n, n_key)
    // 3. A decoder's causal mask (a key later in the text than the query); an encoder masks
    //    nothing.
    head.masked_scores = head.scaled_scores;
    if (causal)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n_key; ++j)
          if (key_rows[static_cast<std::size_t>(j)] > shown_[static_cast<std::size_t>(i)])
            head.masked_scores(i, j) = -std::numeric_limits<float>::infinity();
    // 4. The attention the model used.
    head.weights = (cross ? forward.cross_attention(index, h) : forward.attention(index, h))(
        shown_, key_rows);  // (n, n_key), masked: 0
    // 5. The head's output: the weighted sum of the values, as the Output view adds it up (with
    //    tokens hidden, of the shown values alone). A knocked-out or scaled head's contribution
    //    is its output × its scale: that is what concat holds, and W_O reads.
    head.output.noalias() = head.weights * head.V;  // (n, d_head)
    if (hiding)
      r.concat.middleCols(h * d_head, d_head) =
          head.output *
          (cross ? forward.cross_intervention(index, h) : forward.intervention(index, h))
              .output_scale;
    head.fully_masked_rows = RowFlags::Zero(n);
    head.overflow = !head.raw_scores.allFinite();
    r.overflow = r.overflow || head.overflow;
  }
  r.output = (cross ? activations.cross_attention_output : activations.attention_output)
                 .matrix()(shown_, Eigen::all);  // (n, d_model)
  r.version = next_layer_version++;
  if (cross) {  // Marian and BART put the norms after: the queries read x′ itself
    out.input = activations.residual_mid.matrix()(shown_, Eigen::all);  // (n, d_model)
    out.key_input = forward.memory().matrix()(key_rows, Eigen::all);    // (n_key, d_model)
  } else {
    out.input = activations.normalized.matrix()(shown_, Eigen::all);  // (n, d_model)
    if (filtered())
      out.key_input = activations.normalized.matrix()(key_rows, Eigen::all);  // (n_key, d_model)
    else
      out.key_input.resize(0, 0);
  }
  out.run = run_count_;
  return out;
}

}  // namespace attnviz

namespace attnviz {

const ModelRun::HeadWeights& ModelRun::head_weights(int layer, int head) const {
  HeadWeights& w = head_weights_;
  if (w.run == run_count_ && w.layer == layer && w.head == head) return w;
  const TransformerConfig& config = shown_config();
  const TransformerLayer& l = shown_transformer().weights().layers[static_cast<std::size_t>(layer)];
  const int d = config.d_head, q0 = head * d, kv0 = config.kv_head_of(head) * d;
  const bool cross = part_ == ModelPart::Cross;  // the cross-attention's weights
  const auto block = [&](const MatrixView& m, int row0, int col0, int rows, int cols) {
    Matrix out(rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) out(r, c) = m.at(row0 + r, col0 + c);
    return out;
  };
  const auto slice = [](const VectorView& v, int first, int count) {
    RowVector out;
    if (!v.empty()) out = Eigen::Map<const RowVector>(v.data + first, count);
    return out;
  };
  const MatrixView& W_O = cross ? l.cross_output : l.output;
  w.W_Q = block(cross ? l.cross_query : l.query, 0, q0, config.d_model, d);
  w.W_K = block(cross ? l.cross_key : l.key, 0, kv0, config.d_model, d);
  w.W_V = block(cross ? l.cross_value : l.value, 0, kv0, config.d_model, d);
  w.W_O = block(W_O, 0, 0, W_O.rows, W_O.cols);
  w.b_Q = slice(cross ? l.cross_query_bias : l.query_bias, q0, d);
  w.b_K = slice(cross ? l.cross_key_bias : l.key_bias, kv0, d);
  w.b_V = slice(cross ? l.cross_value_bias : l.value_bias, kv0, d);
  w.b_O = slice(cross ? l.cross_output_bias : l.output_bias, 0, config.d_model);
  w.run = run_count_;
  w.layer = layer;
  w.head = head;
  return w;
}

// The whole block of a layer around the head's chain, a decoder's:
//   x → n = norm₁(x) → Q K V (RoPE; the shared key/value head) → S → scaled → masked → α → α·V
//     → concat → ·W_O + b → x′ = x + attn → m = MLP(norm₂(x′)) → x″ = x′ + m
// and an encoder's (BERT: no mask, the norms after each sublayer):
//   x → Q K V → S → scaled → α → α·V → concat → ·W_O + b → s = x + attn → x′ = LayerNorm(s)
//     → m = MLP(x′) → s′ = x′ + m → x″ = LayerNorm(s′)
void ModelRun::block_stages(int layer, int head, std::vector<BlockStage>& stages) const {
  stages.clear();  // (also when the layer or head is not there)
  if (!opened_ || layer < 0 || layer >= layer_count()) return;
  const AttentionResult& r = this->layer(layer);
  if (head < 0 || static_cast<std::size_t>(head) >= r.heads.size()) return;
  const TransformerConfig& config = shown_config();
  const TransformerLayer& weights =
      shown_transformer().weights().layers[static_cast<std::size_t>(layer)];
  const LayerStream& s = stream(layer);
  const bool rotary = config.positions == PositionKind::Rotary;
  const bool cross = part_ == ModelPart::Cross;  // the decoder's cross sub-block
  const bool biases = !(cross ? weights.cross_query_bias : weights.query_bias).empty();
  const HeadIntervention change = intervention(layer, head);
  const HeadResult& h = r.heads[static_cast<std::size_t>(head)];
  const HeadWeights& w = head_weights(layer, head);
  StageList list(stages, layer, head, r);
  const auto n = [](int index) { return std::to_string(index + 1); };  // as the app counts

  const bool after = config.norm_after();  // BERT, Marian: the norms after each sublayer
  const bool embedding_norm = !shown_transformer().weights().embedding_norm_weight.empty();
  BlockStage& x = list.add(StageId::Residual,
                           cross       ? "x\xe2\x80\xb2 (after self-attention)"
                           : layer > 0 ? "x (layer " + n(layer - 1) + "'s output)"
                           : after && embedding_norm
                               ? (config.token_types > 0 ? "x = LayerNorm(embed + position + type)"
                                                         : "x = LayerNorm(embed + position)")
                           : rotary                         ? "x = embedding"
                           : config.embedding_scale != 1.0f ? "x = \xe2\x88\x9a"
                                                              "d\xc2\xb7"
                                                              "embed + position"
                                                            : "x = embed + position",
                           s.residual_in, StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
  x.recipe.kind = cross ? StageRecipe::Kind::None : StageRecipe::Kind::Residual;
  x.recipe.rotary = rotary;
  x.recipe.norms_after = after;
  if (cross)  // the keys' and values' input: the encoder's output over the source
    list.add(StageId::XSource, "m = the encoder's output", attention_input_keys(layer),
             StageAxis::Keys, StageAxis::Other, StageJoin::Gap);
  const bool layer_norm = config.norm == NormKind::LayerNorm;
  // A norm stage: `result` = norm(`input`), with the given parameters.
  const auto add_norm = [&](StageId id, const std::string& title, const Matrix& result,
                            const Matrix& input, const VectorView& gamma, const VectorView& beta) {
    BlockStage& norm =
        list.add(id, title, result, StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
    norm.recipe.kind = StageRecipe::Kind::Norm;
    norm.recipe.input = &input;
    norm.recipe.layer_norm = layer_norm;
    norm.recipe.gamma = gamma.data;
    norm.recipe.beta = beta.empty() ? nullptr : beta.data;
    norm.recipe.epsilon = config.norm_epsilon;
  };
  if (!after)
    add_norm(StageId::Norm, std::string("n = ") + (layer_norm ? "LayerNorm" : "RMSNorm") + "(x)",
             layer_input(layer), s.residual_in, weights.attention_norm_weight,
             weights.attention_norm_bias);

  // What W_Q, and W_K and W_V, multiply.
  const char* projected = cross ? "x\xe2\x80\xb2" : after ? "x" : "n";
  const char* projected_keys = cross ? "m" : projected;
  const auto form = [&](const char* m, bool turned) {
    return std::string(turned ? "RoPE(" : "") + (*m == 'Q' ? projected : projected_keys) + "W_" +
           m + (turned ? ")" : (biases ? " + b" : ""));
  };
  // Under grouped-query attention K and V are the key/value head's, which its group shares.
  const bool grouped = config.n_kv_heads != config.n_heads;
  const std::string shared = grouped ? " (kv " + n(config.kv_head_of(head)) + ")" : "";
  const auto projection = [&](BlockStage& stage, const Matrix& W, const RowVector& bias,
                              std::string_view result, std::string_view weight, bool turned) {
    stage.recipe.kind = StageRecipe::Kind::Projection;
    stage.recipe.input = &layer_input(layer);
    stage.recipe.weight = &W;
    stage.recipe.bias = &bias;
    stage.recipe.result_name = result;
    stage.recipe.input_name = projected;
    stage.recipe.weight_name = weight;
    stage.recipe.rotary = turned;
    stage.recipe.rope_theta = config.rope_theta;
    stage.recipe.positions = &shown_;
  };
  projection(list.add(StageId::Q, "Q = " + form("Q", rotary), h.Q, StageAxis::Queries,
                      StageAxis::Other, StageJoin::Arrow),
             w.W_Q, w.b_Q, "Q", "W_Q", rotary);
  BlockStage& k = list.add(StageId::K, "K = " + form("K", rotary) + shared, h.K, StageAxis::Keys,
                           StageAxis::Other, StageJoin::Gap);
  projection(k, w.W_K, w.b_K, "K", "W_K", rotary);
  k.recipe.input = &attention_input_keys(layer);  // a pair filter's other sentence; the memory
  k.recipe.input_name = projected_keys;
  k.recipe.positions = &key_positions();
  const int kv_head = grouped ? config.kv_head_of(head) : -1;
  k.recipe.kv_head = kv_head;
  BlockStage& v = list.add(StageId::V, "V = " + form("V", false) + shared, h.V, StageAxis::Keys,
                           StageAxis::Other, StageJoin::Gap);  // V is not turned
  projection(v, w.W_V, w.b_V, "V", "W_V", false);
  v.recipe.input = &attention_input_keys(layer);
  v.recipe.input_name = projected_keys;
  v.recipe.positions = &key_positions();
  v.recipe.kv_head = kv_head;

  list.add(StageId::Scores, "S = QK\xe2\x8a\xa4", h.raw_scores, StageAxis::Queries, StageAxis::Keys,
           StageJoin::Arrow)
      .recipe.kind = StageRecipe::Kind::Scores;
  list.add(StageId::Scaled,
           std::string(scaling_stage_name(r.config.compatibility, r.config.temperature)),
           h.scaled_scores, StageAxis::Queries, StageAxis::Keys, StageJoin::Arrow)
      .recipe.kind = StageRecipe::Kind::Scaling;
  if (config.causal() && !cross)  // an encoder and cross-attention mask nothing
    list.add(StageId::Masked, "causal mask", h.masked_scores, StageAxis::Queries, StageAxis::Keys,
             StageJoin::Arrow)
        .recipe.kind = StageRecipe::Kind::Mask;
  BlockStage& alpha = list.add(
      StageId::Weights,
      change.pattern == HeadIntervention::Pattern::Uniform         ? "\xce\xb1 = uniform (set)"
      : change.pattern == HeadIntervention::Pattern::PreviousToken ? "\xce\xb1 = previous (set)"
                                                                   : "\xce\xb1 = softmax",
      h.weights, StageAxis::Queries, StageAxis::Keys, StageJoin::Arrow);
  alpha.probabilities = true;
  alpha.recipe.kind = change.pattern == HeadIntervention::Pattern::Computed
                          ? StageRecipe::Kind::Softmax
                          : StageRecipe::Kind::SetPattern;
  alpha.recipe.pattern = change.pattern;
  list.add(StageId::HeadOutput, "\xce\xb1\xc2\xb7V", h.output, StageAxis::Queries, StageAxis::Other,
           StageJoin::Arrow)
      .recipe.kind = StageRecipe::Kind::WeightedSum;
  std::string concat_title = "concat";
  if (change.output_scale != 1.0f) {
    concat_title = "concat (\xc3\x97" + view::format_number(change.output_scale, 2) + ")";
  }
  BlockStage& concat = list.add(StageId::Concat, concat_title, r.concat, StageAxis::Queries,
                                StageAxis::Other, StageJoin::Arrow);
  concat.recipe.kind = StageRecipe::Kind::Concat;
  concat.recipe.d_v = config.d_head;
  for (int of = 0; of < config.n_heads; ++of)
    concat.recipe.head_scales.push_back(intervention(layer, of).output_scale);
  BlockStage& output =
      list.add(StageId::Output, biases ? "attn = \xc2\xb7W_O + b" : "attn = \xc2\xb7W_O", r.output,
               StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
  output.recipe.kind = StageRecipe::Kind::OutputProjection;
  output.recipe.other = &r.concat;
  output.recipe.weight = &w.W_O;
  output.recipe.bias = &w.b_O;
  // A sum stage: `result` = `input` + `other`, named for the formula.
  const auto add_sum = [&](StageId id, const std::string& title, const Matrix& result,
                           const Matrix& input, const Matrix& other, std::string_view result_name,
                           std::string_view input_name, std::string_view other_name) {
    BlockStage& sum =
        list.add(id, title, result, StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
    sum.recipe.kind = StageRecipe::Kind::Sum;
    sum.recipe.input = &input;
    sum.recipe.other = &other;
    sum.recipe.result_name = result_name;
    sum.recipe.input_name = input_name;
    sum.recipe.other_name = other_name;
  };
  const auto add_mlp = [&](const std::string& title) {
    BlockStage& mlp = list.add(StageId::Mlp, title, s.mlp_output, StageAxis::Queries,
                               StageAxis::Other, StageJoin::Arrow);
    mlp.recipe.kind = StageRecipe::Kind::Mlp;
    mlp.recipe.d_ff = config.d_ff;
    mlp.recipe.d_model = config.d_model;
    mlp.recipe.swiglu = config.feed_forward == FeedForwardKind::SwiGLU;
    mlp.recipe.norms_after = after;
  };
  // With the norms after: the MLP reading `in` (the stream after the last norm), the sum and the
  // layer's output, `out` = LayerNorm(s′). The names are literals (the recipes keep views).
  const auto add_mlp_after = [&](const Matrix& read, const char* in, const char* out) {
    add_mlp(std::string("m = MLP(") + in + ")");
    add_sum(StageId::MlpSum, std::string("s\xe2\x80\xb2 = ") + in + " + m", s.mlp_sum, read,
            s.mlp_output, "s\xe2\x80\xb2", in, "m");
    add_norm(StageId::ResidualOut, std::string(out) + " = LayerNorm(s\xe2\x80\xb2)", s.residual_out,
             s.mlp_sum, weights.mlp_norm_weight, weights.mlp_norm_bias);
  };
  if (cross) {  // Marian, BART: x″ = LayerNorm(x′ + cross), then the MLP reads x″
    add_sum(StageId::AttentionSum, "s = x\xe2\x80\xb2 + cross", s.attention_sum, s.residual_in,
            r.output, "s", "x\xe2\x80\xb2", "cross");
    add_norm(StageId::ResidualMid, "x\xe2\x80\xb3 = LayerNorm(s)", s.residual_mid, s.attention_sum,
             weights.cross_norm_weight, weights.cross_norm_bias);
    add_mlp_after(s.residual_mid, "x\xe2\x80\xb3", "x\xe2\x80\xb4");
    return;
  }
  if (after) {  // BERT, Marian: each sum, then its LayerNorm
    add_sum(StageId::AttentionSum, "s = x + attn", s.attention_sum, s.residual_in, r.output, "s",
            "x", "attn");
    add_norm(StageId::ResidualMid, "x\xe2\x80\xb2 = LayerNorm(s)", s.residual_mid, s.attention_sum,
             weights.attention_norm_weight, weights.attention_norm_bias);
    if (s.residual_cross.size() == 0) {  // BERT: the MLP reads x′
      add_mlp_after(s.residual_mid, "x\xe2\x80\xb2", "x\xe2\x80\xb3");
      return;
    }
    // A decoder with its cross sub-block after x′: c, then x″ = LayerNorm(x′ + c) for the MLP.
    list.add(StageId::Output, "c = cross-attention(x\xe2\x80\xb2, m)", s.cross_output,
             StageAxis::Queries, StageAxis::Other, StageJoin::Arrow);
    add_sum(StageId::AttentionSum, "s\xe2\x80\xb3 = x\xe2\x80\xb2 + c", s.cross_sum, s.residual_mid,
            s.cross_output, "s\xe2\x80\xb3", "x\xe2\x80\xb2", "c");
    add_norm(StageId::ResidualMid, "x\xe2\x80\xb3 = LayerNorm(s\xe2\x80\xb3)", s.residual_cross,
             s.cross_sum, weights.cross_norm_weight, weights.cross_norm_bias);
    add_mlp_after(s.residual_cross, "x\xe2\x80\xb3", "x\xe2\x80\xb4");
    return;
  }
  add_sum(StageId::ResidualMid, "x\xe2\x80\xb2 = x + attn", s.residual_mid, s.residual_in, r.output,
          "x\xe2\x80\xb2", "x", "attn");
  add_mlp("m = MLP(norm\xe2\x82\x82(x\xe2\x80\xb2))");
  add_sum(StageId::ResidualOut, "x\xe2\x80\xb3 = x\xe2\x80\xb2 + m", s.residual_out, s.residual_mid,
          s.mlp_output, "x\xe2\x80\xb3", "x\xe2\x80\xb2", "m");
}

}  // namespace attnviz
