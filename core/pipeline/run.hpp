// A run: what one kind of model computed for a scenario, as every view reads it. The one-layer
// teaching scenario (OneLayerRun, core/pipeline/one_layer_run.hpp) and a real trained transformer
// (ModelRun, core/pipeline/model_run.hpp) are two implementations of this one interface; the
// one-layer toy is a degenerate model (one layer, no norm, no MLP), as nanoGPT describes every
// model by its config. Views ask what a run can do (capabilities()), never which kind it is.
//
// To add a family of models: implement Run in one file and register it (RunFamily below); every
// view then draws it. tests/app/session/test_random_family.cpp does exactly that with a toy.
//
// What a run offers:
//   - its stacks of attention: a decoder has one (causal self-attention); an encoder one
//     (self-attention both ways); an encoder–decoder three (encoder self, decoder self, cross).
//     The views show one stack at a time (shown_stack()): layer(i) and the tokens are its; the
//     Model view draws every stack's α side by side (stack_weights()).
//   - per layer an AttentionResult: every head's Q, K, V, scores, α, output (core/engine);
//   - the tokens on each side (queries: the target; keys: the target itself, or the source);
//   - the named stages of a block, each with how its cells were computed (block_stages): the
//     Pipeline view's tiles and its formulas come from this one table;
//   - optional parts, each behind a capability (next-token logits, head roles, the residual
//     stream, editable weights, ...).
#pragma once

#include "core/base/capabilities.hpp"
#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/engine/attention.hpp"
#include "core/engine/parameters.hpp"
#include "core/models/head_intervention.hpp"
#include "core/text/embedding.hpp"
#include "core/text/tokenizer.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

struct Scenario;
struct Model;
class TransformerForward;
struct HeadScores;
struct ModelToken;

// -----------------------------------------------------------------------------
// Stacks: the kinds of attention a run has
// -----------------------------------------------------------------------------
enum class TokenSide { Target, Source };  // the sentence queries come from; the source sentence

enum class StackKind {
  Self,        // every token sees every token of its sentence (an encoder)
  CausalSelf,  // a token sees itself and the tokens before it (a decoder)
  Cross,       // the target's tokens see the source's (an encoder–decoder's cross-attention)
};

struct AttentionStack {
  std::string name;  // "self-attention", "decoder self-attention", "cross-attention", ...
  StackKind kind = StackKind::Self;
  int first_layer = 0;  // its layers are first_layer .. first_layer + layers − 1
  int layers = 1;
  int heads = 1;
  TokenSide queries = TokenSide::Target, keys = TokenSide::Target;
};

// -----------------------------------------------------------------------------
// The stages of a block: the Pipeline view's tiles and formulas
// -----------------------------------------------------------------------------
enum class StageId {
  X,         // the embedded tokens (one-layer: the target's)
  XSource,   // the source's embedded tokens (one-layer cross-attention)
  Residual,  // x: the residual stream entering the layer
  Norm,      // n = norm₁(x): what Q, K and V are computed from
  Q,
  K,
  V,
  Scores,
  Scaled,
  Masked,
  Weights,
  HeadOutput,    // α·V
  Concat,        // every head's output side by side
  Output,        // · W_O (+ b)
  ResidualMid,   // x′ = x + the attention output (BERT: LayerNorm of AttentionSum)
  Mlp,           // m = MLP(norm₂(x′))
  ResidualOut,   // x″ = x′ + m: the layer's output (BERT: LayerNorm of MlpSum)
  AttentionSum,  // BERT: s = x + the attention output, before its norm
  MlpSum,        // BERT: s′ = x′ + m, before its norm
};
enum class StageAxis { Queries, Keys, Other };  // what a stage's rows or columns stand for
enum class StageJoin { Arrow, Gap, Space };     // before a tile: "→", a small gap, a wide gap

// How the cells of a stage were computed: what the formula of one cell reads. Pointers are into
// the run and stay valid until its next run(); a null operand means the formula cannot be shown.
struct StageRecipe {
  enum class Kind {
    None,
    Embedding,         // a token's embedding (+ its position)
    Residual,          // the residual stream: the embedding, or the layer below's output
    Norm,              // LayerNorm or RMSNorm of `input`'s row
    Projection,        // input · weight (+ bias), then (rotary) turned by position
    Scores,            // compat(q, k)
    Scaling,           // / √d_k, / T
    Mask,              // −∞ where masked
    Softmax,           // of the masked row
    Hardmax,           // one-hot on the largest masked score
    SetPattern,        // α set by hand (an intervention's pattern)
    WeightedSum,       // α · V
    Concat,            // heads side by side, each × its scale
    OutputProjection,  // concat · W_O (+ b)
    Sum,               // input + other (the residual additions)
    Mlp,               // the MLP of norm₂(x′)
  };
  Kind kind = Kind::None;
  // The layer headings name (shown from 1); −1 in a run of one layer, whose headings name none.
  int layer = -1;
  int head = 0;
  // K and V under grouped-query attention: the key/value head they come from; −1 when each head
  // has its own.
  int kv_head = -1;
  TokenSide side = TokenSide::Target;  // whose tokens the rows are (Embedding, Projection)

  // Operands (by kind):
  const Matrix* input = nullptr;    // Projection: X, X_src or n; Norm, Sum: the left one
  const Matrix* other = nullptr;    // Sum: the right one; OutputProjection: concat
  const Matrix* weight = nullptr;   // Projection: W_Q, W_K or W_V; OutputProjection: W_O
  const RowVector* bias = nullptr;  // Projection, OutputProjection: null or empty without
  std::string_view result_name, input_name, weight_name, other_name;
  // Embedding:
  const std::vector<EmbeddingSource>* sources = nullptr;
  bool with_position = false;
  // Residual: whether positions enter through RoPE rather than the embedding.
  bool rotary = false;
  // Residual, Mlp: the norms after each sublayer (BERT): layer 0's x is the LayerNorm of the
  // embeddings' sum, and the MLP reads x′ as it is.
  bool norms_after = false;
  // Norm:
  bool layer_norm = true;
  const float* gamma = nullptr;  // d_model entries
  const float* beta = nullptr;   // null for RMSNorm
  float epsilon = 0;
  // Projection under RoPE: turned pairs by each row's position.
  float rope_theta = 0;
  const std::vector<int>* positions = nullptr;  // row → position in the model's sequence
  // Scores, Scaling, Mask, Softmax, Hardmax, WeightedSum:
  const AttentionConfig* config = nullptr;
  const HeadResult* head_result = nullptr;
  const HeadParameters* parameters = nullptr;  // Scores (general, additive): the head's W_a, ...
  // SetPattern:
  HeadIntervention::Pattern pattern = HeadIntervention::Pattern::Computed;
  // Concat: each head's width and output scale (empty: every scale 1).
  int d_v = 0;
  std::vector<float> head_scales;
  // Mlp:
  int d_ff = 0, d_model = 0;
  bool swiglu = false;
};

struct BlockStage {
  StageId id = StageId::X;
  std::string title;  // "Q = XW_Q", "n = LayerNorm(x)", ...
  const Matrix* matrix = nullptr;
  StageAxis rows = StageAxis::Other, cols = StageAxis::Other;
  StageJoin join = StageJoin::Arrow;
  bool probabilities = false;  // α: on [0, 1]; otherwise signed values
  StageRecipe recipe;
};

// Appends a block's stages to `stages`, each with the head's part of its recipe filled in: the
// layer headings name (−1: none, a run of one layer), the head, the result's config and the
// head's intermediates. What a run's block_stages builds its list with.
class StageList {
 public:
  // Room for kMostStages: a stage a builder holds stays where it is while it adds the next (more
  // stages than that move the ones before, as a vector does).
  static constexpr std::size_t kMostStages = 24;
  StageList(std::vector<BlockStage>& stages, int layer, int head, const AttentionResult& result)
      : stages_(stages), layer_(layer), head_(head), result_(result) {
    stages_.clear();
    stages_.reserve(kMostStages);
  }
  BlockStage& add(StageId id, std::string title, const Matrix& matrix, StageAxis rows,
                  StageAxis cols, StageJoin join = StageJoin::Arrow);

 private:
  std::vector<BlockStage>& stages_;
  int layer_, head_;
  const AttentionResult& result_;
};

// The residual stream through one layer of a block with an MLP (ResidualStream). With the norms
// after each sublayer (BERT), the sums before them too: residual_mid = norm₁(attention_sum),
// residual_out = norm₂(mlp_sum).
struct LayerStream {
  Matrix residual_in;   // (n, d_model): what enters the layer (layer 0: embeddings + positions)
  Matrix residual_mid;  // (n, d_model): residual_in + the attention output (BERT: normed)
  Matrix mlp_output;    // (n, d_model): the MLP of norm₂(residual_mid) (BERT: of residual_mid)
  Matrix residual_out;  // (n, d_model): residual_mid + mlp_output (BERT: normed), the next input
  bool norms_after = false;
  Matrix attention_sum;  // (n, d_model): residual_in + the attention output; norms after only
  Matrix mlp_sum;        // (n, d_model): what the MLP's norm took (residual_mid + mlp_output, or
                         // residual_cross + mlp_output); norms after only
  // An encoder–decoder's decoder, its self-attention shown: the cross-attention sub-block between
  // residual_mid and the MLP, which reads residual_cross. Empty otherwise.
  Matrix cross_output;    // (n, d_model): the cross-attention's output, after W_Oc
  Matrix cross_sum;       // (n, d_model): residual_mid + cross_output
  Matrix residual_cross;  // (n, d_model): norm_c(cross_sum), what the MLP reads
};

// -----------------------------------------------------------------------------
// The run
// -----------------------------------------------------------------------------
class Run {
 public:
  virtual ~Run() = default;

  // Computes the scenario; on error, one line and the last good result kept intact.
  virtual Status run(const Scenario& scenario) = 0;

  virtual Capabilities capabilities() const = 0;
  bool can(Capability capability) const { return capabilities().has(capability); }
  // At least one.
  virtual std::span<const AttentionStack> stacks() const = 0;
  // The stack whose layers layer() counts and whose tokens target() and keys() are (an index into
  // stacks()).
  virtual int shown_stack() const { return 0; }
  // Head `head` of layer `layer` of stack `stack`: its α over the tokens that stack shows
  // (n_query, n_key), for any stack; the shown one's is layer(layer)'s. Empty when there is no
  // such head.
  virtual Matrix stack_weights(int stack, int layer, int head) const;
  // HeadRoles: head `head` of layer `layer` of stack `stack`'s role, for any stack (the shown
  // one's is role_of's); null when not measured.
  virtual const HeadScores* role_in(int stack, int layer, int head) const {
    return stack == shown_stack() ? role_of(layer, head) : nullptr;
  }

  // The tokens as the attention views list them.
  virtual const Tokenization& target() const = 0;
  // The key/value sentence: the source with cross-attention, else the target itself.
  virtual const Tokenization& keys() const = 0;
  // The last run attended from the target to a second sentence (the keys are not the queries).
  virtual bool cross() const { return false; }

  // The computed layers, bottom first, each an AttentionResult of its heads.
  virtual int layer_count() const = 0;
  virtual const AttentionResult& layer(int index) const = 0;
  // What layer `index`'s W_Q, and W_K, W_V, multiply: X in a run of one layer; a model's
  // normalized residual stream.                              (n_query or n_key, d_model)
  virtual const Matrix& attention_input(int index) const = 0;
  virtual const Matrix& attention_input_keys(int index) const { return attention_input(index); }
  // The embedded tokens.                                     (n_query or n_key, d_model)
  virtual const Matrix& X_target() const = 0;
  virtual const Matrix& X_keys() const { return X_target(); }
  // Where each row of X came from (LexiconEmbeddings); empty otherwise.
  virtual const std::vector<EmbeddingSource>& target_sources() const;
  virtual const std::vector<EmbeddingSource>& key_sources() const { return target_sources(); }
  // A mask besides the causal one, fitted to the tokens; null when none. (n_query, n_key)
  virtual const MaskMatrix* mask() const { return nullptr; }
  // Truncation, invalid UTF-8, fully masked rows, overflow, ...
  virtual const std::vector<std::string>& warnings() const = 0;

  // The stages of `layer`'s block for `head`, in the order the Pipeline view chains them.
  virtual void block_stages(int layer, int head, std::vector<BlockStage>& stages) const = 0;

  // The engines' threads; results do not depend on them.
  virtual void set_threads(int threads) = 0;
  virtual int threads() const = 0;

  // --- Behind capabilities (each empty or null in a run without it) -------------------------
  // TrainedWeights: the model as the last run computed it (with the scenario's edits), its
  // forward pass, and every token it read (ids; the special ones too).
  virtual const Model* trained_model() const { return nullptr; }
  virtual const TransformerForward* trained_forward() const { return nullptr; }
  virtual std::span<const ModelToken> model_tokens() const { return {}; }
  // The model position of each shown token, and back (−1: hidden). Without hidden tokens, the
  // identity.
  virtual const std::vector<int>& shown_positions() const;
  virtual int shown_index(int position) const { return position; }
  // The model positions of the keys shown: shown_positions(), but under a pair filter.
  virtual const std::vector<int>& key_positions() const { return shown_positions(); }
  virtual bool hides_tokens() const { return false; }
  // HeadRoles: by layer, then head; empty when they could not be measured, or while they are
  // being measured (roles_pending).
  virtual std::span<const HeadScores> roles() const { return {}; }
  // Whether some roles are still being measured, off the caller's thread (a view that shows
  // them draws again soon); wait_for_roles() waits for them (a picture, a test).
  virtual bool roles_pending() const { return false; }
  virtual void wait_for_roles() const {}
  virtual const HeadScores* role_of(int /*layer*/, int /*head*/) const { return nullptr; }
  // ResidualStream: the residual stream through layer `index`, the shown tokens' rows.
  virtual const LayerStream* stream_of(int /*index*/) const { return nullptr; }
  // HeadInterventions: the change the last run made to a head.
  virtual HeadIntervention intervention(int /*layer*/, int /*head*/) const { return {}; }
  // A number new whenever anything computed may have changed (views key caches on it), and
  // never the same in two runs of any kind.
  virtual std::uint64_t run_count() const = 0;
  // How long a full recompute takes here, per token (0 when quick or not measured): the app
  // decides from it whether a recompute runs on the UI thread.
  virtual double full_run_ms_per_token() const { return 0; }
  // The tokens the model read, the hidden ones too.
  virtual std::size_t sequence_length() const { return target().tokens.size(); }
  // SourceAndTarget: the target the decoder read, as text (its greedy translation, or the one
  // typed), without its start token.
  virtual const std::string& translation() const;

 private:
  mutable std::vector<int> identity_positions_;  // shown_positions() without hidden tokens
};

// -----------------------------------------------------------------------------
// Families: which implementation a scenario needs
// -----------------------------------------------------------------------------
// A family claims the scenarios it computes and makes a run for them. Pipeline::run asks the
// registered families first (newest first), then the built-in ones: the trained transformers
// (a scenario naming a model) and the one-layer scenario.
struct RunFamily {
  std::string name;  // "one-layer", "transformer", ...
  std::function<bool(const Scenario&)> claims;
  std::function<std::unique_ptr<Run>()> make;
};
// Adds a family for every Pipeline made afterwards and those running now (on their next run).
void register_run_family(RunFamily family);
// The newest registered family that claims `scenario`; null when none does (asked on every run:
// it copies nothing).
const RunFamily* registered_family_for(const Scenario& scenario);

// The numbers runs key caches on: process-wide, never the same twice.
std::uint64_t next_run_number();

}  // namespace attnviz
