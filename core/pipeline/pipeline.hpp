// The whole computation for a scenario: the run of the family that claims it
// (core/pipeline/run.hpp: the one-layer scenario, a trained transformer, any family registered),
// kept between runs so that each skips what did not change. This is what the app calls on every
// edit and the CLI calls once. On error the previous run stays current, its result intact.
#pragma once

#include "core/base/status.hpp"
#include "core/document/scenario.hpp"
#include "core/pipeline/run.hpp"

#include <memory>
#include <vector>

namespace attnviz {

class Pipeline {
 public:
  Pipeline();
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  // Runs the scenario with the run of its family (made on first use and kept, so that undo
  // returns to a model without opening it again). Fails as that run fails: an empty sentence,
  // a bad shape, a model that cannot be opened, ...
  Status run(const Scenario& scenario);

  // The run of the last success (before any: an empty one-layer run, of no tokens).
  const Run& current() const { return *current_; }
  bool can(Capability capability) const { return current_->can(capability); }

  // The current run's, as views read them (core/pipeline/run.hpp says what each is).
  const Tokenization& target() const { return current_->target(); }
  const Tokenization& keys() const { return current_->keys(); }
  const Matrix& X_target() const { return current_->X_target(); }
  const Matrix& X_keys() const { return current_->X_keys(); }
  const Matrix& attention_input(int layer) const { return current_->attention_input(layer); }
  const Matrix& attention_input_keys(int layer) const {
    return current_->attention_input_keys(layer);
  }
  const std::vector<EmbeddingSource>& target_sources() const { return current_->target_sources(); }
  const std::vector<EmbeddingSource>& key_sources() const { return current_->key_sources(); }
  bool cross() const { return current_->cross(); }
  const MaskMatrix* mask() const { return current_->mask(); }
  int layer_count() const { return current_->layer_count(); }
  const AttentionResult& layer(int index) const { return current_->layer(index); }
  // The top layer's result: what the scenario's attention outputs.
  const AttentionResult& result() const { return layer(layer_count() - 1); }
  const std::vector<std::string>& warnings() const { return current_->warnings(); }
  // The engines' threads (AttentionEngine::set_threads); results do not depend on them.
  void set_threads(int threads);
  int threads() const { return threads_; }

 private:
  struct Kept {
    const RunFamily* family = nullptr;
    std::unique_ptr<Run> run;
  };
  Run& run_for(const RunFamily& family);

  std::vector<Kept> runs_;  // one per family used
  Run* current_ = nullptr;
  int threads_ = 1;
};

// The families every pipeline knows besides the registered ones: a scenario that names a model
// (a trained transformer, core/pipeline/model_run.hpp), else the one-layer scenario.
const RunFamily& transformer_family();
const RunFamily& one_layer_family();

}  // namespace attnviz
