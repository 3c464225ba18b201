// The scenario file: AttnViz's document format (JSON, documented in docs/formats.md).
// A scenario holds the sentences, the attention settings, the seed, embedding overrides, every
// weight (those not in the file are drawn from the seed), an optional custom mask and the
// app's view state.
#pragma once

#include "core/base/status.hpp"
#include "core/base/types.hpp"
#include "core/engine/parameters.hpp"
#include "core/models/head_intervention.hpp"
#include "core/text/embedding.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace attnviz {

inline constexpr std::string_view kScenarioFormat = "attnviz-scenario";
inline constexpr int kScenarioVersion = 1;
// A file that names a real model is written as version 2, so that an AttnViz older than model
// mode refuses it ("written by a newer AttnViz") instead of opening a wrong one-layer scenario.
// Files without a model stay version 1, byte for byte.
inline constexpr int kModelScenarioVersion = 2;
inline constexpr std::size_t kMaxScenarioBytes = 64u << 20;  // 64 MiB

// Which attention of a model the views show. A model without an encoder has one kind, Main: its
// self-attention (a decoder's causal one, an encoder's both ways). An encoder–decoder (Marian,
// BART) has three: Main is its decoder's self-attention over the target, Encoder the encoder's
// over the source, Cross the decoder's cross-attention (the target's queries, the source's keys).
enum class ModelPart { Main, Encoder, Cross };
inline constexpr ModelPart kModelParts[] = {ModelPart::Encoder, ModelPart::Main, ModelPart::Cross};
// "main", "encoder", "cross": the scenario file's words.
std::string_view model_part_name(ModelPart part);
std::optional<ModelPart> model_part_named(std::string_view name);
// What a person reads, for an encoder–decoder: "encoder self-attention", "decoder
// self-attention", "cross-attention".
std::string_view model_part_label(ModelPart part);

// What a teacher did to one head of the model.
struct ModelHeadChange {
  ModelPart part = ModelPart::Main;  // an encoder–decoder's: which attention the head is in
  int layer = 0;                     // from 0, as in files and the CLI
  int head = 0;
  HeadIntervention change;
  bool operator==(const ModelHeadChange&) const = default;
  auto key() const { return std::tuple(part, layer, head); }
};

// One weight of a real model changed by hand: cell (row, col) of the block that `matrix` has for
// `head` of `layer` (Transformer::set_head_weight's blocks: W_Q, W_K, W_V (d_model, d_head);
// W_O (d_head, d_model)). For W_K and W_V, `head` is the key/value head, which every query head
// of its group reads (grouped-query attention); for W_Q and W_O, the query head.
struct ModelWeightEdit {
  int layer = 0;
  HeadMatrix matrix = HeadMatrix::Query;
  int head = 0;
  int row = 0, col = 0;
  float value = 0;
  bool operator==(const ModelWeightEdit&) const = default;
  // The order edits are kept in: a block's cells are together, row by row.
  auto key() const { return std::tuple(layer, matrix, head, row, col); }
};

// One number of a token's embedding changed by hand (the token by its id in the model's
// vocabulary; `dimension` < d_model).
struct ModelEmbeddingEdit {
  int token = 0;
  int dimension = 0;
  float value = 0;
  bool operator==(const ModelEmbeddingEdit&) const = default;
  auto key() const { return std::pair(token, dimension); }
};

// With a sentence pair, which attention the views show (BertViz's filter): every token's to
// every token, or from the tokens of one sentence (the queries) to those of one sentence (the
// keys). [CLS] and the first [SEP] belong to A, the last [SEP] to B.
enum class PairFilter { All, AToA, AToB, BToA, BToB };
inline constexpr PairFilter kPairFilters[] = {PairFilter::All, PairFilter::AToA, PairFilter::AToB,
                                              PairFilter::BToA, PairFilter::BToB};
// "all", "A->A", "A->B", "B->A", "B->B": the scenario file's words.
std::string_view pair_filter_name(PairFilter filter);
// What a person reads: "all", "A → A", ...
std::string_view pair_filter_label(PairFilter filter);
// The filter named `name`; nullopt when there is none of that name.
std::optional<PairFilter> pair_filter_named(std::string_view name);
// The sentence (0: A, 1: B) of the queries and of the keys; −1 with All.
int pair_filter_from(PairFilter filter);
int pair_filter_to(PairFilter filter);

// A real trained model instead of the one-layer teaching model: the scenario's `target` is the
// text the model reads.
struct ModelSpec {
  // A shipped model's name ("stories260K") or the path of a model's folder or file, as
  // open_model (core/models/model.hpp) takes it.
  std::string model;
  // At most one per head, each changing something, sorted by (part, layer, head). Whether the
  // model has the layer and head is known only when it is opened: a change it cannot make is an
  // error then.
  std::vector<ModelHeadChange> interventions;
  // An encoder–decoder: the attention the views show (the layers and heads the app selects are
  // this part's), and the decoder's text. The scenario's `target` is the source the encoder reads;
  // decoder_text, when not empty, is the translation typed by hand, which the decoder reads after
  // its start token (teacher forcing: "where does tierra look?"); empty: the model's own greedy
  // translation. A model without an encoder refuses both.
  ModelPart part = ModelPart::Main;
  std::string decoder_text;
  // The attention views leave out special tokens (llama2.c's <s>, GPT-2's <|endoftext|>): they
  // soak up attention and hide the rest. The model still reads them.
  bool hide_special_tokens = false;
  // An encoder's second sentence (BERT's sentence B): the model reads [CLS] text [SEP] text_b
  // [SEP], token type 1 on the second part. Empty: the text alone. A decoder refuses one.
  std::string text_b;
  // With a pair, the attention shown (the model reads the pair whole: only the views change).
  PairFilter pair_filter = PairFilter::All;
  // The weights and embeddings changed by hand: the values that replace the model's, kept sorted
  // by key() with at most one entry per cell (the weights on disk are never written). Whether
  // the model has the cell is known only when it is opened, as for the interventions.
  std::vector<ModelWeightEdit> weight_edits;
  std::vector<ModelEmbeddingEdit> embedding_edits;
  bool operator==(const ModelSpec&) const = default;

  // The model `model` as it is, nothing changed.
  static ModelSpec named(std::string model) {
    ModelSpec spec;
    spec.model = std::move(model);
    return spec;
  }

  // The change of head (layer, head) of `part`: none (computed, scale 1) when there is none.
  HeadIntervention intervention_in(ModelPart in, int layer, int head) const;
  // Sets it, keeping `interventions` sorted; a change to nothing removes the entry.
  void set_intervention_in(ModelPart in, int layer, int head, const HeadIntervention& change);
  // The same in the part shown (`part`): the layers and heads the app selects are that part's.
  HeadIntervention intervention(int layer, int head) const {
    return intervention_in(part, layer, head);
  }
  void set_intervention(int layer, int head, const HeadIntervention& change) {
    set_intervention_in(part, layer, head, change);
  }

  bool weights_edited() const { return !weight_edits.empty() || !embedding_edits.empty(); }
  // Sets one cell's value (its entry added or replaced).
  void set_weight(const ModelWeightEdit& edit);
  // Replaces every edit of one block (`layer`, `matrix`, `head`) with `cells` (any order; one per
  // cell); no cells: the block as on disk.
  void set_weight_block(int layer, HeadMatrix matrix, int head, std::vector<ModelWeightEdit> cells);
  void set_embedding(const ModelEmbeddingEdit& edit);
  // Token `token`'s embedding back as on disk.
  void reset_embedding(int token);
};

// A sparse or local attention pattern as the scenario's mask (core/variants/sparse_masks.hpp):
// made for the sentences as they are, so that it follows the text as it is typed. Positions of
// global tokens count from 0; those past the sentence are left out until it reaches them.
struct MaskPattern {
  enum class Kind { Window, Dilated, Blocks };
  Kind kind = Kind::Window;
  int width = 3;     // window, dilated: the keys each query sees
  int dilation = 2;  // dilated: positions between them
  int block = 4;     // blocks: positions per block
  std::vector<int> global_tokens;
  bool operator==(const MaskPattern&) const = default;
};
// "window", "dilated", "blocks" (the names scenario files and the app use).
std::string_view to_string(MaskPattern::Kind kind);

// The one-layer teaching model: one layer of multi-head attention with the scenario's own
// settings and weights, over embeddings from the teaching lexicon.
struct OneLayerSpec {
  Mode mode = Mode::Self;
  std::string source;  // keys and values come from here in cross mode
  AttentionConfig config;
  Positional positional = Positional::None;
  std::uint64_t seed = 7;
  EmbeddingOverrides embeddings;  // token text -> d_model numbers
  Parameters parameters;          // complete: shapes always match config
  MaskMatrix mask;                // empty, or (n_target tokens, n_key tokens); 1 = allowed
  std::optional<MaskPattern> mask_pattern;  // a pattern instead of `mask` (never both)
  // What each embedding dimension stands for, as the views label it ("alice", "extension"):
  // at most d_model names; empty = the teaching lexicon's features (person, food, ...).
  std::vector<std::string> dimension_names;

  // The settings of `config` with every weight drawn from `seed` (what a file without weights
  // gives).
  static OneLayerSpec seeded(const AttentionConfig& config, std::uint64_t seed);
};

// A scenario: the sentence and what reads it, which is either the one-layer teaching model
// (OneLayerSpec) or a real trained model (ModelSpec), never both.
struct Scenario {
  std::string title;  // "" for an untitled scenario: its title is its sentence (scenario_title)
  std::string description;
  std::string target;  // the sentence the queries come from (a model's text)
  int max_tokens = Limits::kDefaultMaxTokens;
  std::string view_json;  // the app's "view" object as JSON text ("" when none)
  std::variant<OneLayerSpec, ModelSpec> spec = OneLayerSpec::seeded(AttentionConfig{}, 7);

  bool has_model() const { return std::holds_alternative<ModelSpec>(spec); }
  // The model a scenario in model mode names, and what was done to it; null otherwise.
  const ModelSpec* model() const { return std::get_if<ModelSpec>(&spec); }
  ModelSpec* edit_model() { return std::get_if<ModelSpec>(&spec); }
  // The one-layer model's settings and weights. A scenario in model mode has none: it reads as
  // the defaults (no_one_layer()), and edit_one_layer() is null.
  const OneLayerSpec& one_layer() const;
  OneLayerSpec* edit_one_layer() { return std::get_if<OneLayerSpec>(&spec); }
};

// What a scenario in model mode reads as its one-layer part: the defaults, weights drawn from 7.
const OneLayerSpec& no_one_layer();

// The title a scenario is shown under (the app's window and Input panel, the name Save As proposes,
// the CLI's headings): its own, or, for an untitled one, its target sentence with its spaces run
// together and a capital first letter, cut at a space with "…" past 60 characters. So an
// untitled scenario's title follows its sentence as it is typed, until the user names it. ""
// only when the sentence is empty too. Untitled scenarios are saved with no "title".
inline constexpr std::size_t kMaxSentenceTitleLength = 60;  // characters, before the "…"
std::string scenario_title(const Scenario& scenario);

// The causal mask belongs to self-attention: a word may not look at the words after it in its
// own sentence (a decoder has not written them yet). In cross-attention the keys are the source
// sentence, written whole before the first query: none of it lies ahead, so cross mode has no
// causal mask. A file that asks for both is read with the mask off and this warning; the app's
// checkbox is unavailable in cross mode; the pipeline refuses the two together.
inline constexpr std::string_view kCausalOffInCross =
    "causal: turned off, as cross-attention has no causal mask (it hides the later words of a "
    "sentence from its own words; the source is written whole)";

// Keeps "cross mode has no causal mask": turns the mask off in cross mode; true when it did.
bool turn_off_causal_in_cross(OneLayerSpec& spec);
// Self or cross attention, as the app's switch does it: cross starts with `target` as its source
// when it has none, and has no causal mask (true when the mask was on and is now off).
bool set_mode(OneLayerSpec& spec, Mode mode, const std::string& target);

// The scenario, or one line naming the key that is wrong; the warnings are unknown keys and
// other non-fatal findings (a causal mask asked for in cross mode: kCausalOffInCross).
Result<Scenario> parse_scenario(std::string_view json_text);
// `path` may be "-" for standard input. Errors are prefixed with the path.
Result<Scenario> load_scenario_file(const std::string& path);

// A scenario with the given sentence and settings and every weight drawn from the seed.
Scenario make_scenario(std::string target, const AttentionConfig& config, std::uint64_t seed);

// Changes the shapes (d_model, heads, d_k, d_v, d_att) and settings to `config`, keeping every
// existing weight and embedding-override value whose cell still exists; new cells are drawn from
// the seed (weights) or from the word's default embedding (overrides).
void apply_config(OneLayerSpec& spec, const AttentionConfig& config);

// The label of embedding dimension `index` (0 .. d_model - 1): the scenario's own name, else (when
// the scenario names none) the teaching lexicon's feature; "" when neither names it (label it by
// its number).
std::string_view dimension_name(const OneLayerSpec& spec, int index);

// The complete scenario as JSON (every weight written; rows on one line each).
std::string scenario_to_json(const Scenario& scenario);
Status save_scenario_file(const std::string& path, const Scenario& scenario);

// The scenarios built into the binary (from assets/scenarios/).
std::string_view builtin_scenario_json();

}  // namespace attnviz
