#include "core/engine/workers.hpp"

#include "core/base/threads.hpp"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace attnviz {
namespace {

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a helper spins for the next run before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(100);

}  // namespace

Workers::Workers(int threads) {
  if (!kHasThreads) threads = 1;  // every run on the calling thread
  for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { helper_loop(); });
}

Workers::~Workers() {
  stopping_.store(true);
  open_generation(2);  // wakes the helpers; opens no run (the parity stays)
  for (std::thread& helper : helpers_) helper.join();
}

void Workers::open_generation(std::uint32_t step) {
  generation_.fetch_add(step);  // sequentially consistent, as is the load of sleepers_
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    wake_.notify_all();
  }
}

void Workers::work() {
  for (;;) {
    const int i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_) return;
    call_(task_, i);
    remaining_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void Workers::run_erased(int count, void* task, Call call) {
  if (count <= 0) return;
  if (helpers_.empty() || count == 1) {
    for (int i = 0; i < count; ++i) call(task, i);
    return;
  }
  count_ = count;
  task_ = task;
  call_ = call;
  next_.store(0, std::memory_order_relaxed);
  remaining_.store(count, std::memory_order_relaxed);
  open_generation(1);  // open: odd
  work();
  while (remaining_.load(std::memory_order_acquire) > 0) pause();
  generation_.fetch_add(1, std::memory_order_acq_rel);  // closed: even
  while (users_.load(std::memory_order_acquire) > 0) pause();
}

void Workers::helper_loop() {
  // The generation at construction: a helper that starts late (after runs, or after the
  // destructor has begun) sees the change at once.
  std::uint32_t seen = 0;
  for (;;) {
    // Wait for a change of generation: spin, then sleep.
    const auto spin_end = std::chrono::steady_clock::now() + kSpin;
    for (int spins = 1; generation_.load(std::memory_order_acquire) == seen; ++spins) {
      if (spins % 256 != 0 || std::chrono::steady_clock::now() < spin_end) {
        pause();
        continue;
      }
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleepers_.fetch_add(1);  // before the last look (open_generation())
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      sleepers_.fetch_sub(1);
    }
    const std::uint32_t now = generation_.load(std::memory_order_acquire);
    seen = now;
    if (stopping_.load()) return;
    if ((now & 1u) == 0) continue;  // a run that has closed already
    users_.fetch_add(1, std::memory_order_acq_rel);
    if (generation_.load(std::memory_order_acquire) == now) work();
    users_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace attnviz
