// core/engine/workers.hpp: the engine's fork-join helper threads.
#include "core/engine/workers.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace attnviz {
namespace {

TEST_CASE("workers: every task of a run runs once and the run returns after the last") {
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    Workers workers(threads);
    CHECK(workers.threads() == threads);
    for (int count : {0, 1, 2, 5, 64}) {
      CAPTURE(count);
      std::vector<std::atomic<int>> calls(static_cast<std::size_t>(count));
      for (auto& c : calls) c = 0;
      auto task = [&](int i) {
        std::this_thread::sleep_for(std::chrono::microseconds(i % 3 == 0 ? 50 : 0));
        calls[static_cast<std::size_t>(i)].fetch_add(1);
      };
      workers.run(count, task);
      for (const auto& c : calls) CHECK(c.load() == 1);
    }
  }
}

TEST_CASE("workers: thousands of back-to-back runs each finish before the next") {
  Workers workers(2);
  std::vector<long> values(2, 0);
  for (long run = 1; run <= 5000; ++run) {
    // Each task adds one to its own value: a task of one run still going when the next starts,
    // or a task run twice, would show as a value out of step with the run.
    auto task = [&](int i) { values[static_cast<std::size_t>(i)] += 1; };
    workers.run(2, task);
    REQUIRE(values[0] == run);
    REQUIRE(values[1] == run);
  }
}

TEST_CASE("workers: a run after the helpers have gone to sleep still runs every task") {
  Workers workers(2);
  std::atomic<int> sum{0};
  auto task = [&](int i) { sum.fetch_add(i + 1); };
  workers.run(2, task);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the helpers' spin
  workers.run(2, task);
  CHECK(sum.load() == 6);
}

TEST_CASE("workers: the tasks of a run may run on different threads") {
  Workers workers(2);
  std::atomic<int> started{0};
  // Each task waits until both have started: this finishes only if two threads run them.
  auto task = [&](int) {
    started.fetch_add(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
  };
  workers.run(2, task);
  CHECK(started.load() == 2);
}

// A helper thread may start only after the first runs (done by the caller alone) or after the
// destructor has begun: it must still see that and end, or the destructor waits for ever.
TEST_CASE("workers: made, used and destroyed at once, again and again, ends every time") {
  for (int round = 0; round < 300; ++round) {
    Workers workers(3);
    int calls[3] = {0, 0, 0};
    auto task = [&](int i) { ++calls[i]; };
    if (round % 3 != 0) workers.run(3, task);
    if (round % 3 == 2) workers.run(3, task);
    for (int c : calls) REQUIRE(c == (round % 3 == 0 ? 0 : round % 3));
  }
}

}  // namespace
}  // namespace attnviz
