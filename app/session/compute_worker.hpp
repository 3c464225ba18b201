// A real model's recompute, off the UI thread: the window never freezes while a long one runs
// (GPT-2 small on 256 tokens), and the views show the last result until the next arrives.
//
// The worker owns a second Pipeline, the back one, and computes requests on it; the views read
// the front one (ComputedState::pipeline). When a computation has finished, collect() swaps the
// two, on the UI thread, while the worker waits: so the front one is never written while a view
// reads it, and the back one never read while the worker writes it. The latest request wins: one
// made while another runs replaces any that has not started. Each pipeline keeps its own forward
// pass and cache over one shared model (core/pipeline/model_run.hpp, shared_model).
//
// Without a thread of its own (the browser build, core/base/threads.hpp) there is no worker:
// collect() computes the request itself, on the UI thread, and the catch-up below is skipped.
//
// After a swap the back pipeline is one computation behind: while nothing else is asked, the worker
// computes that one again on it, so that the next request computes only what it changes (a
// keystroke: its new position) rather than what the one before it changed too (a head knocked
// out: every position of every layer).
#pragma once

#include "core/base/status.hpp"
#include "core/base/threads.hpp"
#include "core/document/scenario.hpp"
#include "core/pipeline/pipeline.hpp"
#include "core/pipeline/product_workers.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace attnviz::app {

class ComputeWorker {
 public:
  // `own_thread` false (the default where no thread may start, core/base/threads.hpp): no
  // worker thread; collect() computes the request itself.
  explicit ComputeWorker(int engine_threads, bool own_thread = kHasThreads);
  ~ComputeWorker();  // waits for the computation in flight, then stops
  ComputeWorker(const ComputeWorker&) = delete;
  ComputeWorker& operator=(const ComputeWorker&) = delete;

  // Asks for `scenario` to be computed as the document's `version`, with layer `shown_layer` made
  // ready for the views (a model's layers are adapted on first use: this one is, off the UI
  // thread); nothing when that version is already asked for.
  void request(const Scenario& scenario, std::uint64_t version, int shown_layer);

  struct Finished {
    std::uint64_t version = 0;  // the document's version it computed
    Status status;              // on failure `front` was left as it was
  };
  // A finished computation, waiting up to `wait` for the one in flight: its pipeline swapped
  // into `front` (when it succeeded and computed `oldest` or a later version: an older one is
  // dropped, as `front` is newer). None when nothing has finished yet.
  std::optional<Finished> collect(Pipeline& front, std::chrono::nanoseconds wait,
                                  std::uint64_t oldest);
  // A request not yet collected.
  bool pending() const;
  // Waits until the worker has nothing to do (for tests).
  void wait_until_idle();

 private:
  struct Job {
    Scenario scenario;
    std::uint64_t version = 0;
    int shown_layer = 0;
  };
  void loop();
  void run_next();  // computes next_ (there is one) on back_; the mutex not held

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Pipeline back_;
  std::unique_ptr<ProductWorkers> products_;  // the worker's products' helpers (or none)
  std::optional<Job> next_;                   // asked for, not started
  bool running_ = false;                      // a job is being computed on back_
  std::optional<Finished> finished_;          // computed on back_, not collected
  Scenario last_computed_;                    // what the last finished job computed
  bool catch_up_ = false;                     // back_ is one behind: compute last_computed_ on it
  bool catching_up_ = false;
  std::uint64_t requested_ = 0;  // the version last asked for
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is ready (none without threads)
};

}  // namespace attnviz::app
