#include "app/session/compute_worker.hpp"

#include <utility>

namespace attnviz::app {

ComputeWorker::ComputeWorker(int engine_threads) {
  back_.set_threads(engine_threads);
  thread_ = std::thread([this] { loop(); });
}

ComputeWorker::~ComputeWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ComputeWorker::request(const Scenario& scenario, std::uint64_t version) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (version == requested_) return;
    requested_ = version;
    next_ = Job{scenario, version};
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
  std::unique_lock<std::mutex> lock(mutex_);
  if (!finished_ && (running_ || next_))
    changed_.wait_for(lock, wait, [this] { return finished_.has_value(); });
  if (!finished_) return std::nullopt;
  Finished done = std::move(*finished_);
  finished_.reset();
  // The worker waits for finished_ to be collected before it starts again: back_ is idle here.
  if (done.status && done.version >= oldest) std::swap(front, back_);
  lock.unlock();
  changed_.notify_all();  // the next job may start
  return done;
}

void ComputeWorker::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || (next_ && !finished_); });
    if (stopping_) return;
    Job job = std::move(*next_);
    next_.reset();
    running_ = true;
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    Status status = back_.run(job.scenario);  // the long part, unlocked
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    lock.lock();
    running_ = false;
    finished_ = Finished{job.version, std::move(status), took.count()};
    changed_.notify_all();
  }
}

}  // namespace attnviz::app
