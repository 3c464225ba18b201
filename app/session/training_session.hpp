// Training in the app (the Training view): a Trainer (core/training/trainer.hpp) run step by
// step off the UI thread, so that frames stay within their budget while a model learns, and a
// timeline of what it was: every `score_every` steps a frame with each head's attention on the
// probe and the weights then, to scrub back to ("what did layer 2, head 1 look like at step
// 300?") and to use or save.
//
// The worker owns the trainer. After each step (at most every 30 ms, and whenever it pauses or
// stops) it publishes an immutable TrainingProgress, which the panel takes with progress(): the
// panel never reads the trainer, and the worker never waits on the panel.
// Without a thread of its own (the browser build, core/base/threads.hpp) the panel calls pump()
// each frame, which runs steps for the time it is given.
#pragma once

#include "core/base/status.hpp"
#include "core/base/threads.hpp"
#include "core/base/types.hpp"
#include "core/training/trainer.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace attnviz::app {

// One point of the timeline.
struct TrainingFrame {
  int step = 0;
  std::vector<Matrix> attention;  // (layers · heads) of (n_probe, n_probe): the probe's
  std::shared_ptr<const ParameterBuffer> weights;
};

// What the panel reads: a copy, published whole.
struct TrainingProgress {
  TrainingSettings settings;
  TransformerConfig config;
  int steps_taken = 0;
  bool running = false;  // stepping now (not paused, not done)
  bool done = false;
  std::string error;  // the step that failed and why ("" while all is well)
  std::vector<float> losses;
  std::vector<HeadScoresAt> scores;
  std::optional<int> phase_change;
  std::vector<int> probe;
  std::vector<std::shared_ptr<const TrainingFrame>> frames;  // by step, at most kMostFrames
  double seconds = 0.0;                                      // spent stepping
};

class TrainingSession {
 public:
  // Frames kept: past it every other one is let go (the first and last stay).
  static constexpr std::size_t kMostFrames = 120;

  explicit TrainingSession(bool own_thread = kHasThreads);
  ~TrainingSession();
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  // A new run (the last one, running or not, is dropped): a model from scratch, or a copy of
  // `from` (a GPT-2). Paused at step 0, its first frame published. An error (nothing changed)
  // for settings the trainer refuses.
  Status begin(const TrainingSettings& settings, const Model* from = nullptr);
  bool has_run() const;
  // Stepping on and off; one step while paused; how long to wait between steps (0: none, as
  // fast as it goes; a class watches at 20 steps a second, say).
  void resume();
  void pause();
  void step_once();
  void set_delay(std::chrono::milliseconds delay);

  // The last published progress (null before the first begin), and a number new whenever it
  // changes.
  std::shared_ptr<const TrainingProgress> progress() const;
  std::uint64_t version() const;

  // Without a thread: runs steps on the caller's thread for up to `budget` (once a frame).
  // With one: nothing.
  void pump(std::chrono::milliseconds budget);

  // Saves frame `frame` of the current run as a model folder (trainer.hpp's
  // save_gpt2_folder), its train.json the record so far.
  Status save(const std::string& folder, const TrainingFrame& frame) const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  bool own_thread_;
};

}  // namespace attnviz::app
