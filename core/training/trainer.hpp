// Training a decoder in GPT-2's layout, step by step, and saving it as a model folder the app
// and the CLI open (config.json, model.safetensors, vocab.json, merges.txt) with train.json, the
// record of the run: the loss of every step, and every `score_every` steps each head's induction
// and previous-token scores (the engine's detectors, head_roles.hpp) on a probe text made of
// the task's tokens: 24 different ones in a random order, written twice, after the start token.
//
// A model made from scratch reads bytes: its vocabulary is GPT-2's 256 byte tokens (id = the
// byte) and <|endoftext|> (256), with no merges, so a class's text is read letter by letter and
// the tasks draw from the letters a–z. A model trained `from` another keeps its tokenizer and
// draws from its vocabulary (past its first 3 ids).
//
// No clock: the same settings, seed and threads give the same weights, bit for bit.
#pragma once

#include "core/base/status.hpp"
#include "core/models/model.hpp"
#include "core/training/optimizer.hpp"
#include "core/training/parameters.hpp"
#include "core/training/tasks.hpp"
#include "core/training/training_pass.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

struct TrainingSettings {
  TrainingTaskKind task = TrainingTaskKind::Induction;
  std::string text;  // the text task's text (UTF-8)
  std::uint64_t seed = 1;
  int steps = 4000;
  // The model made from scratch (ignored when trained from another), and the spread of its
  // first weights: Q, K and V five times GPT-2's, W_O 0.05 (GPT-2's 0.01 at two layers). With
  // these and a long warm-up (1000 steps) the induction task forms one clean induction head on
  // every seed tried (1 to 12, near step 800); with GPT-2's own spreads or a short warm-up the
  // copying spreads over heads, or shifts by a few tokens (a head looking k back, another
  // attending k after the earlier copy).
  int layers = 2;
  int heads = 4;
  int d_model = 32;
  bool attention_only = true;  // no MLP (GPT-2's layout with its MLP weights 0)
  InitialScales initial{.matrices = 0.02f, .attention = 0.1f, .projection = 0.05f};
  int texts = 16;   // per batch
  int length = 32;  // tokens per text
  AdamWSettings optimizer{.learning_rate = 3e-3f, .warmup_steps = 1000, .total_steps = 4000};
  int score_every = 25;  // steps between two measures of the heads' scores
  // Threads a step runs on (data-parallel: the batch's texts split among them, each part's
  // gradient on its own thread, then combined in thread order). The same seed, settings and
  // threads give the same weights bit for bit; another count of threads adds the same numbers in
  // another order (the weights then differ by rounding).
  int threads = 1;
};

// Each head's scores at one step.
struct HeadScoresAt {
  int step = 0;
  std::vector<float> induction;       // (layers · heads), layer by layer
  std::vector<float> previous_token;  // (layers · heads)
};

class Trainer {
 public:
  // A model made from scratch (seeded), or a copy of `from` (a GPT-2 the engine opened: its
  // weights, its tokenizer); an error for settings out of range, a model not in GPT-2's layout,
  // or a text too short to train on.
  static Result<Trainer> make(const TrainingSettings& settings, const Model* from = nullptr);

  // One step: a batch, the loss and its gradient, AdamW. Returns the loss. An error (the weights
  // unchanged) when the loss is not a finite number.
  Result<float> step();
  bool done() const { return step_ >= settings_.steps; }
  int steps_taken() const { return step_; }

  const TrainingSettings& settings() const { return settings_; }
  const TransformerConfig& config() const { return config_; }
  const ParameterTable& table() const { return table_; }
  const ParameterBuffer& values() const { return values_; }
  TransformerWeights weights() const { return gpt2_weights_of(config_, table_, values_.data()); }
  const std::vector<float>& losses() const { return losses_; }
  const std::vector<HeadScoresAt>& scores() const { return scores_; }
  // The first step at which a head's induction score reached role_threshold(Induction); 0 for a
  // model that had such a head before training (one trained elsewhere).
  std::optional<int> phase_change_step() const { return phase_change_; }
  // The probe text the scores are measured on (ids).
  const std::vector<int>& probe() const { return probe_; }
  // Measures every head's scores on the probe now (also done every score_every steps).
  HeadScoresAt measure_heads();
  // Every head's attention on the probe now, layer by layer: (layers · heads) matrices
  // (n, n), rows the queries, later keys 0 (measure_heads keeps them: measured again only when
  // the weights have moved since).
  std::vector<Matrix> probe_attention();
  // The tokenizer's files the saved folder gets, and the model trained from ("" from scratch).
  const std::string& vocab_json() const { return vocab_json_; }
  const std::string& merges_txt() const { return merges_txt_; }
  const std::string& from() const { return from_; }

  // train.json: the settings, the model's shape, the loss of every step, the scores, the phase
  // change.
  std::string record_json() const;
  // Saves the model folder `folder` (made when missing; each file written whole, then renamed).
  Status save(const std::string& folder) const;

 private:
  // The batch's loss, its gradient into gradient_ (zeroed first): on this thread, or split
  // among settings_.threads.
  Result<float> loss_and_gradient(const TrainingBatch& batch);

  TrainingSettings settings_;
  TransformerConfig config_;
  ParameterTable table_;
  ParameterBuffer values_, gradient_;
  std::vector<bool> frozen_;  // per tensor: the MLP of an attention-only model
  std::optional<TrainingPass> pass_;
  // With more than one thread: the other threads' passes and gradients.
  std::vector<TrainingPass> helper_passes_;
  std::vector<ParameterBuffer> helper_gradients_;
  std::optional<AdamW> optimizer_;
  TrainingTask task_;
  std::vector<int> probe_;
  int step_ = 0;
  std::vector<float> losses_;
  std::vector<HeadScoresAt> scores_;
  std::optional<int> phase_change_;
  std::vector<Matrix> probe_attention_;  // the probe's, from the last measure_heads
  int probe_attention_step_ = -1;        // ... and its step
  std::string vocab_json_, merges_txt_;  // the tokenizer's files
  std::string from_;                     // the model trained from ("" from scratch)
};

// A GPT-2 model folder: config.json (made by the trainer when `made_here`: its start and end
// token <|endoftext|>), model.safetensors (`values` as `table` lays them out), vocab.json,
// merges.txt and train.json. The folder is made when missing; each file is written whole, then
// renamed into place.
Status save_gpt2_folder(const std::string& folder, const TransformerConfig& config,
                        const ParameterTable& table, const float* values,
                        const std::string& vocab_json, const std::string& merges_txt,
                        const std::string& record_json, bool made_here);

// GPT-2's byte-level vocabulary with no merges: id b is byte b (as GPT-2's bytes_to_unicode
// writes it), 256 is <|endoftext|>. vocab.json's text.
std::string byte_vocabulary_json();

// A safetensors file of `values` laid out by `table` (F32, little-endian), names and shapes as
// the table's, with `metadata` in the header's "__metadata__".
std::string safetensors_bytes(
    const ParameterTable& table, const float* values,
    const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace attnviz
