#include "app/session/compute_worker.hpp"

#include <utility>

namespace attnviz::app {

ComputeWorker::ComputeWorker(int engine_threads, bool own_thread) {
  back_.set_threads(engine_threads);
  // The worker's weight products split as its engine's steps do (its thread, on a machine with
  // cores to spare for it: default_engine_threads()).
  if (own_thread && engine_threads > 1)
    products_ = std::make_unique<ProductWorkers>(engine_threads);
  if (own_thread) thread_ = std::thread([this] { loop(); });
}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ComputeWorker::request(const Scenario& scenario, std::uint64_t version, int shown_layer) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (version == requested_) return;
    requested_ = version;
    next_ = Job{scenario, version, shown_layer};
  }
  changed_.notify_all();
}

bool ComputeWorker::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_.has_value() || running_ || finished_.has_value();
}

std::optional<ComputeWorker::Finished> ComputeWorker::collect(Pipeline& front,
                                                              std::chrono::nanoseconds wait,
                                                              std::uint64_t oldest) {
  if (!thread_.joinable()) {  // no worker: the request is computed here, now
    (void)wait;
    if (next_ && !finished_) run_next();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (!finished_ && (running_ || next_))
    changed_.wait_for(lock, wait, [this] { return finished_.has_value(); });
  if (!finished_) return std::nullopt;
  Finished done = std::move(*finished_);
  finished_.reset();
  // The worker waits for finished_ to be collected before it starts again: back_ is idle here.
  if (done.status && done.version >= oldest) {
    std::swap(front, back_);
    catch_up_ = true;
  }
  lock.unlock();
  changed_.notify_all();  // the next job may start
  return done;
}

void ComputeWorker::wait_until_idle() {
  if (!thread_.joinable()) return;  // nothing runs but on the caller's own thread
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(
      lock, [this] { return !running_ && !catching_up_ && (finished_ || (!next_ && !catch_up_)); });
}

void ComputeWorker::loop() {
  const blas::SplitProducts split(products_.get());  // this thread's products
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || (!finished_ && (next_ || catch_up_)); });
    if (stopping_) return;
    if (!next_) {  // nothing asked: bring back_ up to what the views show
      catch_up_ = false;
      catching_up_ = true;
      const Scenario scenario = last_computed_;
      lock.unlock();
      static_cast<void>(back_.run(scenario));
      lock.lock();
      catching_up_ = false;
      changed_.notify_all();
      continue;
    }
    lock.unlock();
    run_next();
    lock.lock();
  }
}

void ComputeWorker::run_next() {
  std::unique_lock<std::mutex> lock(mutex_);
  Job job = std::move(*next_);
  next_.reset();
  catch_up_ = false;  // the job computes it all
  running_ = true;
  lock.unlock();
  Status status = back_.run(job.scenario);  // the long part, unlocked
  if (status && job.shown_layer >= 0 && job.shown_layer < back_.layer_count())
    static_cast<void>(back_.layer(job.shown_layer));
  lock.lock();
  running_ = false;
  if (status) last_computed_ = std::move(job.scenario);
  finished_ = Finished{job.version, std::move(status)};
  changed_.notify_all();
}

}  // namespace attnviz::app
