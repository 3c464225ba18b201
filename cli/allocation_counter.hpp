// Counts the heap allocations of the process while counting is switched on: `bench` and the
// allocation tests check that a recompute with unchanged shapes allocates nothing. Linked into
// attnviz-cli and the allocation tests only (it replaces malloc).
#pragma once

namespace attnviz::cli {

void start_counting_allocations();
// Stops counting; returns the allocations made since start_counting_allocations().
long stop_counting_allocations();
// What the count covers: "malloc" (every heap allocation of the process, operator new and
// Eigen's included) or "operator new" (sanitizer builds, where ASan owns malloc).
const char* allocation_counting_scope();

}  // namespace attnviz::cli
