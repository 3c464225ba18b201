// Heap allocations made while running a function, counted by the allocation counter that
// attnviz-cli's `bench` uses (cli/allocation_counter.hpp: malloc and friends replaced).
#pragma once

#include "cli/allocation_counter.hpp"

namespace attnviz::testing {

template <typename Fn>
long count_allocations(Fn&& fn) {
  cli::start_counting_allocations();
  fn();
  return cli::stop_counting_allocations();
}

}  // namespace attnviz::testing
