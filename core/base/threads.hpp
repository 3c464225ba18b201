// Whether this build may start threads. The browser build (issue 27) may not: WebAssembly's
// threads need SharedArrayBuffer, which a page has only when its server sends cross-origin
// isolation headers, and AttnViz must run from any static web server or a folder. There every
// computation runs on the calling thread: the engine's workers with one thread, the app's
// model recompute when its result is collected, a picture's compression when it is waited for.
// CMake's ATTNVIZ_THREADS=OFF (the web build's default) defines ATTNVIZ_NO_THREADS; a native
// build with it runs the same single-threaded paths, so the tests can cover them.
#pragma once

#include <future>

namespace attnviz {

#ifdef ATTNVIZ_NO_THREADS
inline constexpr bool kHasThreads = false;
#else
inline constexpr bool kHasThreads = true;
#endif

// How work handed to std::async runs: on a thread of its own, or (without threads) when its
// result is asked for. A caller that polls must treat future_status::deferred as "run it now".
inline constexpr std::launch kAsyncLaunch =
    kHasThreads ? std::launch::async : std::launch::deferred;

}  // namespace attnviz
