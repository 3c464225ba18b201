// A real trained model as the views see it: the model a ModelSpec names, opened once, its forward
// pass (core/models/transformer_forward.hpp) over the scenario's text, and each layer adapted to
// what the one-layer views read: an AttentionResult of its heads, the tokens as a Tokenization,
// and the layer's attention input. Pipeline::run uses it for a scenario in model mode.
//
// A layer is adapted when it is first asked for after a run, in passes, per head h reading the
// key/value head g (grouped-query attention: g = h / (n_heads / n_kv_heads)):
//   1. Q = queries[:, h], K = keys[:, g], V = values[:, g]         (n, d_head) each, after RoPE
//   2. raw_scores = Q · Kᵀ (every cell), scaled_scores = raw_scores / √d_head      (n, n)
//   3. masked_scores = scaled_scores, −inf where key j > query i (the causal mask)    (n, n)
//   4. weights = the attention the model used (the softmax, or an intervention's pattern)
//   5. output = weights · V, the head's weighted sum of the values                   (n, d_head)
// then concat = what each head added, side by side: its output × its intervention's scale (0 for
// a knocked-out head), and output = the attention output after W_O and its bias (n, d_model).
//
// An encoder–decoder (Marian, BART) shows one of its three kinds of attention at a time, the
// spec's part (ModelSpec::part): the encoder's self-attention over the source (the scenario's
// text), the decoder's causal self-attention over the target, or the cross-attention, whose
// queries are the target's (from the residual stream after self-attention) and whose keys and
// values are the source's (from the encoder's output), with no mask. The target is the spec's
// decoder_text after the start token, or, when it is empty, the model's greedy translation.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/document/scenario.hpp"
#include "core/engine/attention.hpp"
#include "core/models/encoder_decoder.hpp"
#include "core/models/model.hpp"
#include "core/models/transformer_forward.hpp"
#include "core/pipeline/run.hpp"
#include "core/text/tokenizer.hpp"

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace attnviz {

// A model as opened for the views: the model and its heads' roles, measured once. Two ModelRuns
// of one model (the app's front and back pipelines, app/session/compute_worker.hpp) share it:
// each has its own forward pass over the same weights, which neither changes.
struct OpenedModel {
  Model model;
  std::vector<HeadScores> roles;  // by layer, then head; empty when they could not be measured
  // An encoder–decoder's cross-attention heads, by layer then head, each with its alignment
  // precision (HeadRole::Alignment), measured on the sentence pairs of the model folder's
  // alignments.json when it has one (core/models/alignment.hpp). The measurement runs on a
  // thread of its own once the model is open (200 sentence pairs through the model: about a
  // second for marian-web-es, which the first frame need not wait for); invalid when there is
  // nothing to measure. Declared after `model`, which it reads: destroyed first, it waits for
  // the measurement to end.
  std::shared_future<std::vector<HeadScores>> cross_measured;

  // The cross heads' roles: empty while they are being measured, or when there are none.
  // Without threads (the browser) the measurement runs here, at the first call.
  std::span<const HeadScores> cross_roles() const;
  // Whether the cross heads' roles are still being measured.
  bool cross_roles_pending() const;
  // The cross heads' roles, waiting for the measurement (for a picture or a test that must
  // show them).
  std::span<const HeadScores> wait_for_cross_roles() const;
  // The roles of `part`'s heads: `roles` (a decoder's, or an encoder–decoder's decoder
  // self-attention), cross_roles(), or none (an encoder–decoder's encoder is not measured).
  std::span<const HeadScores> roles_of(ModelPart part) const;
};

// The file of aligned sentences a model folder may hold, beside its tokenizer.
inline constexpr const char* kAlignmentsFile = "alignments.json";
// How many of its sentence pairs are measured when the model opens.
inline constexpr int kAlignmentSentences = 200;

// The model `name` opened, shared while any holder keeps it (a process-wide cache of weak
// references, safe from any thread). Opened, and its roles measured, on the first request.
Result<std::shared_ptr<const OpenedModel>> shared_model(const std::string& name);

// A trained transformer as a Run: a scenario that names a model (Scenario::model).
class ModelRun final : public Run {
 public:
  ModelRun() = default;
  ~ModelRun() override;
  ModelRun(const ModelRun&) = delete;
  ModelRun& operator=(const ModelRun&) = delete;

  // Opens the model `spec` names when it is not the one open, sets its interventions, tokenizes
  // `text` (at most `max_tokens` tokens and the model's context; the rest is dropped with a
  // warning) and runs the forward pass (only what changed since the last run). An error, and
  // nothing changed, when the model cannot be opened, an intervention names a layer or head the
  // model lacks, or the text cannot be read.
  // The spec's weight and embedding edits are made in a copy of the model this run owns (opened
  // at the first edit; the shared one is never changed): only the cells that changed since the
  // last run, from the lowest layer they touch (every layer after an embedding edit).
  Status run(const ModelSpec& spec, const std::string& text, int max_tokens,
             std::vector<std::string>& warnings);
  // The same for a scenario in model mode (its text and max_tokens); the warnings kept.
  Status run(const Scenario& scenario) override;

  // --- Run ----------------------------------------------------------------------------------
  Capabilities capabilities() const override;
  // One stack, or an encoder–decoder's three in kModelParts' order (encoder, decoder, cross).
  std::span<const AttentionStack> stacks() const override { return stacks_; }
  int shown_stack() const override;
  const HeadScores* role_in(int stack, int layer, int head) const override;
  Matrix stack_weights(int stack, int layer, int head) const override;
  const Tokenization& target() const override { return tokenization_; }
  // The keys: the queries' tokens, but under a pair filter (ModelSpec::pair_filter) that shows
  // one sentence's attention to the other's, and in an encoder–decoder's cross-attention (the
  // source's tokens).
  const Tokenization& keys() const override {
    return separate_keys() ? key_tokenization_ : tokenization_;
  }
  bool cross() const override { return separate_keys(); }
  const Matrix& attention_input(int index) const override { return layer_input(index); }
  const Matrix& attention_input_keys(int index) const override;
  // The shown tokens' embeddings (+ positions, without RoPE).                 (n, d_model)
  const Matrix& X_target() const override { return X_; }
  const Matrix& X_keys() const override { return separate_keys() ? X_keys_ : X_; }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  const std::string& translation() const override { return translation_text_; }
  void block_stages(int layer, int head, std::vector<BlockStage>& stages) const override;
  void set_threads(int threads) override { threads_ = threads; }
  int threads() const override { return threads_; }
  std::span<const HeadScores> roles() const override {
    return opened_ ? opened_->roles_of(part_) : std::span<const HeadScores>();
  }
  bool roles_pending() const override { return opened_ && opened_->cross_roles_pending(); }
  void wait_for_roles() const override {
    if (opened_) opened_->wait_for_cross_roles();
  }
  // The change of head `head` of `layer` of the part shown.
  HeadIntervention intervention(int layer, int head) const override;
  const LayerStream* stream_of(int index) const override { return &stream(index); }
  std::size_t sequence_length() const override { return tokens_.size(); }

  // The model as the last run computed it: the shared one, or, once the spec has edited its
  // weights, this run's own copy with the edits (model().transformer.weights_on_disk() holds the
  // weights as the files have them).
  const Model& model() const { return own_ ? *own_ : opened_->model; }
  // The forward pass of the part shown (an encoder–decoder's encoder for its encoder part, its
  // decoder otherwise).
  const TransformerForward& forward() const { return shown_forward(); }
  const Model* trained_model() const override { return opened_ ? &model() : nullptr; }
  const TransformerForward* trained_forward() const override {
    return opened_ ? &shown_forward() : nullptr;
  }
  // An encoder–decoder's forward passes, after a run; null for another model.
  const EncoderDecoderForward* translation_forward() const { return translation_.get(); }
  // The part the last run showed (Main for a model without an encoder).
  ModelPart part() const { return part_; }
  // An encoder–decoder's source and target as its encoder and decoder read them (the target's
  // start token first); empty for another model.
  std::span<const ModelToken> source_tokens() const { return source_tokens_; }
  std::span<const ModelToken> target_tokens() const { return target_tokens_; }
  // The tokens as the model reads them, and as the views list them (`text` is how a person reads
  // the token: ␣ for a space, and so on; special tokens have an empty byte range).
  std::span<const ModelToken> model_tokens() const override { return tokens_; }
  // The tokens the attention views show: every one, or, with the spec's hide_special_tokens,
  // the others (when there are others). tokenization(), layer() and layer_input() count these.
  const Tokenization& tokenization() const { return tokenization_; }
  const std::vector<int>& shown_positions() const override { return shown_; }  // model positions
  bool hides_tokens() const override { return shown_.size() != tokens_.size(); }
  // The shown index of model position `position`; -1 when it is hidden.
  int shown_index(int position) const override;
  // The model positions of the keys the views show: shown_positions(), or under a pair filter
  // the other sentence's.
  const std::vector<int>& key_positions() const override {
    return separate_keys() ? key_shown_ : shown_;
  }
  // The pair filter the last run applied (All when the text has no second sentence).
  PairFilter pair_filter() const { return pair_filter_; }

  // Every head's detected role and scores (core/models/head_roles.hpp), measured when the model
  // was opened on default_role_text; by layer, then head. Empty when they could not be measured.
  const HeadScores* role_of(int layer, int head) const override;
  // The last run's number: new whenever anything the model computed may have changed, and never
  // the same in two ModelRuns (views key their caches on it).
  std::uint64_t run_count() const override { return run_count_; }

  // How long a full forward pass takes here, per token: measured on the last run that computed
  // every position of every layer (0 before one has). The app decides from it whether a
  // recompute can run on the UI thread.
  double full_run_ms_per_token() const override { return full_run_ms_per_token_; }

  int layer_count() const override;
  // Layer `index` (0 .. layer_count() − 1) as an AttentionResult, adapted on the first request
  // after a run. With tokens hidden, its rows and columns are the shown tokens' and each head's
  // output is the weighted sum of the shown values (the hidden ones' share left out, as the
  // Output view's arithmetic shows it); the layer's output stays the model's. Its version is new
  // whenever its numbers may have changed, and never repeats an AttentionEngine's (the views key
  // their caches on it).
  const AttentionResult& layer(int index) const override;
  // The layer's attention input: the normalized residual stream.                  (n, d_model)
  const Matrix& layer_input(int index) const;

  // The residual stream through layer `index`, the shown tokens' rows (the Pipeline view's
  // block), taken from the forward pass on the first request after a run:
  const LayerStream& stream(int index) const;

 private:
  struct AdaptedLayer {
    std::uint64_t run = 0;  // run_count_ when adapted; 0: never
    AttentionResult result;
    Matrix input;      // (n_query, d_model)
    Matrix key_input;  // (n_key, d_model); under a pair filter only
  };
  const AdaptedLayer& adapted(int index) const;

  // Makes the spec's weight and embedding edits in own_, opening it first (the forward pass then
  // reads it); says which layers must be computed again.
  Status apply_edits(const ModelSpec& spec);
  // Makes `opened` the model this run computes (named `as` in specs), nothing of the last one
  // kept: its forward passes, its edited copy.
  void commit(std::shared_ptr<const OpenedModel> opened, const std::string& as);
  // run() for an encoder–decoder: the source through the encoder, the typed or greedy target
  // through the decoder; `opened` when the spec names another model than the one open.
  Status run_translation(const ModelSpec& spec, const std::string& text, int max_tokens,
                         std::vector<std::string>& warnings,
                         std::shared_ptr<const OpenedModel> opened);
  // The shown tokens and keys of the part shown, after a run (hide_special_tokens, pair filter).
  void choose_shown(const ModelSpec& spec, std::size_t total, std::vector<std::string>& warnings);
  const TransformerForward& shown_forward() const;
  const TransformerConfig& shown_config() const;
  // The keys are not the queries: a pair filter, or cross-attention.
  bool separate_keys() const { return filtered() || part_ == ModelPart::Cross; }

  std::shared_ptr<const OpenedModel> opened_;
  std::unique_ptr<Model> own_;  // a copy that takes the spec's edits; null while there are none
  std::vector<ModelWeightEdit> applied_weights_;        // the edits own_ holds
  std::vector<ModelEmbeddingEdit> applied_embeddings_;  // likewise
  std::unique_ptr<TransformerForward> forward_;         // a model without an encoder
  std::unique_ptr<EncoderDecoderForward> translation_;  // an encoder–decoder
  ModelPart part_ = ModelPart::Main;
  std::vector<ModelToken> source_tokens_, target_tokens_;  // an encoder–decoder's
  std::string translation_text_;  // target_tokens_ after the start token, as text
  std::string opened_as_;
  std::vector<ModelToken> tokens_;  // the queries' side: the part's tokens
  Tokenization tokenization_;
  std::vector<int> shown_;  // the queries' model positions
  // Under a pair filter or in cross-attention: the keys' model positions (in the source, for
  // cross-attention), their tokens and embeddings.
  bool filtered() const { return pair_filter_ != PairFilter::All; }
  PairFilter pair_filter_ = PairFilter::All;
  std::vector<int> key_shown_;
  Tokenization key_tokenization_;
  Matrix X_keys_;  // (n_key, d_model)
  // The tokens key_shown_ counts in: the source's in cross-attention, else the queries'.
  const std::vector<ModelToken>& key_side() const {
    return part_ == ModelPart::Cross ? source_tokens_ : tokens_;
  }
  const Transformer& shown_transformer() const;
  std::uint64_t run_count_ = 0;
  double full_run_ms_per_token_ = 0;
  Matrix X_;  // the shown tokens' embeddings (n, d_model)
  std::vector<std::string> warnings_;
  std::vector<AttentionStack> stacks_{AttentionStack{"decoder self-attention",
                                                     StackKind::CausalSelf, 0, 0, 0,
                                                     TokenSide::Target, TokenSide::Target}};
  // An encoder–decoder's shown positions of each side (the other parts' grids in the Model view).
  std::vector<int> source_shown_, target_shown_;
  int threads_ = 1;
  // The selected head's weights the formulas read, copied from the model when first asked.
  struct HeadWeights {
    std::uint64_t run = 0;
    int layer = -1, head = -1;
    Matrix W_Q, W_K, W_V;  // (d_model, d_head): the head's block (W_K, W_V: its key/value head's)
    Matrix W_O;            // (n_heads · d_head, d_model)
    RowVector b_Q, b_K, b_V, b_O;  // empty without biases
  };
  const HeadWeights& head_weights(int layer, int head) const;
  mutable HeadWeights head_weights_;
  mutable std::vector<AdaptedLayer> layers_;
  struct KeptStream {
    std::uint64_t run = 0;  // run_count_ when taken; 0: never
    LayerStream stream;
  };
  mutable std::vector<KeptStream> streams_;
};

}  // namespace attnviz
