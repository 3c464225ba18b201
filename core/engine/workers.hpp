// A fixed set of helper threads for the engine's fork-join steps. run(count, task) calls task(i)
// for every i in [0, count), spread over the calling thread and the helpers, and returns when
// every call has returned; the calling thread takes tasks too, so a helper that is slow to wake
// delays nothing but its own share.
//
// A classroom recompute takes microseconds, less than waking a sleeping thread, so a helper
// spins for a while after each run (about 100 µs: while a slider moves, the next run comes
// within a frame) before it sleeps on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace attnviz {

class Workers {
 public:
  // threads >= 1: the calling thread and threads - 1 helpers.
  explicit Workers(int threads);
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }

  // task(i) for i in [0, count); returns when all have returned. Not reentrant: one run at a
  // time, from one thread.
  template <typename Task>
  void run(int count, Task& task) {
    run_erased(count, &task, [](void* erased, int i) { (*static_cast<Task*>(erased))(i); });
  }

 private:
  using Call = void (*)(void*, int);
  void run_erased(int count, void* task, Call call);
  void helper_loop();
  // The tasks of the current run: claimed by next_, counted down by remaining_.
  void work();
  void open_generation(std::uint32_t step);

  std::vector<std::thread> helpers_;
  // Odd while a run is open. A helper joins a run by counting itself in users_ and then seeing
  // the same generation; run() returns only once it is closed and users_ is 0, so no helper
  // touches count_, task_ or call_ of a run that has returned.
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<int> users_{0};
  std::atomic<int> next_{0};
  std::atomic<int> remaining_{0};
  std::atomic<bool> stopping_{false};
  // Sleeping helpers: one counts itself in sleepers_ before it looks at the generation a last time
  // and waits; run() looks at sleepers_ after it changes the generation, so one of them sees the
  // other (both sequentially consistent) and no wake-up is lost.
  std::atomic<int> sleepers_{0};
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  int count_ = 0;
  void* task_ = nullptr;
  Call call_ = nullptr;
};

}  // namespace attnviz
