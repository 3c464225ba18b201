# Initial cache of the fuzzing build (cmake -C tests/fuzz/cache.cmake, in build-fuzz/): every
# translation unit, the engine included, is built by clang with libFuzzer's coverage
# instrumentation, AddressSanitizer and UndefinedBehaviorSanitizer; any UB aborts. Debug keeps
# assert() and Eigen's index checks on; -O1 keeps the targets fast.
set(ATTNVIZ_FUZZ ON CACHE BOOL "Build the libFuzzer targets of tests/fuzz/")
set(ATTNVIZ_NATIVE OFF CACHE BOOL "Optimize for the CPU of the machine that builds (-march=native)")
set(BUILD_TESTING OFF CACHE BOOL "Build the tests")
set(CMAKE_BUILD_TYPE Debug CACHE STRING "Build type")
set(CMAKE_CXX_FLAGS
    "-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    CACHE STRING "Flags of every C++ compilation and link")
set(CMAKE_CXX_FLAGS_DEBUG "-g -O1" CACHE STRING "Flags of Debug builds")
