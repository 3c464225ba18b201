// The allocation counter of attnviz-cli (see allocation_counter.hpp).
//
// Normal builds interpose malloc and friends (glibc exports the real ones as __libc_*), so the
// count covers operator new (libstdc++'s calls malloc) and Eigen's aligned buffers. Under
// AddressSanitizer, which owns malloc, and under Emscripten, whose libc has no __libc_* entry
// points, the global operator new and delete are replaced instead.
// Counting is off except between start and stop.
#include "cli/allocation_counter.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__EMSCRIPTEN__)
#define ATTNVIZ_CLI_COUNT_NEW_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNVIZ_CLI_COUNT_NEW_ONLY 1
#endif
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

inline void count_one() {
  if (g_counting.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

namespace attnviz::cli {

void start_counting_allocations() {
  g_allocations.store(0);
  g_counting.store(true);
}

long stop_counting_allocations() {
  g_counting.store(false);
  return g_allocations.load();
}

const char* allocation_counting_scope() {
#ifdef ATTNVIZ_CLI_COUNT_NEW_ONLY
  return "operator new";
#else
  return "malloc";
#endif
}

}  // namespace attnviz::cli

#ifndef ATTNVIZ_CLI_COUNT_NEW_ONLY

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* pointer, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* pointer);

void* malloc(std::size_t size) {
  count_one();
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  count_one();
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, std::size_t size) {
  count_one();
  return __libc_realloc(pointer, size);
}
void* memalign(std::size_t alignment, std::size_t size) {
  count_one();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  return memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  void* pointer = memalign(alignment, size);
  if (!pointer) return 12;  // ENOMEM; *out is left alone, as POSIX asks
  *out = pointer;
  return 0;
}
void free(void* pointer) {
  __libc_free(pointer);
}
}

#else  // sanitizer build: count operator new (every form), keep malloc to ASan

namespace {
void* counted_new(std::size_t size) {
  count_one();
  if (void* pointer = std::malloc(size ? size : 1)) return pointer;
  throw std::bad_alloc();
}
void* counted_new_aligned(std::size_t size, std::align_val_t alignment) {
  count_one();
  const auto align = static_cast<std::size_t>(alignment);
  if (void* pointer = std::aligned_alloc(align, (size + align - 1) / align * align)) return pointer;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) {
  return counted_new(size);
}
void* operator new[](std::size_t size) {
  return counted_new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return counted_new_aligned(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return counted_new_aligned(size, alignment);
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return counted_new_aligned(size, alignment);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return counted_new_aligned(size, alignment);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* pointer) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::size_t) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, std::size_t) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::size_t, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, std::size_t, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(pointer);
}
void operator delete[](void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(pointer);
}

#endif
