#pragma once

#include <atomic>

namespace attnviz::testing {

extern std::atomic<long> g_allocation_count;

// Heap allocations made while running fn.
template <typename Fn>
long count_allocations(Fn&& fn) {
  const long before = g_allocation_count.load();
  fn();
  return g_allocation_count.load() - before;
}

}  // namespace attnviz::testing
