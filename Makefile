# AttnViz — the two set-up commands:
#   make run    install what is missing, build, open the app on the built-in scenario
#   make test   install what is missing, build, run every test through CTest, then the unit,
#               view and CLI tests again under ASan + UBSan, with a minute of the app driving
#               itself at random there (make test-asan: only those)
#   make bench  the engine's benchmarks: micro benchmarks, then AttnViz against PyTorch
#   make format format every C++ file with clang-format 14 (make test fails on one that is not)
#   make lint   clang-tidy 14 (.clang-tidy) on every translation unit; fails on any finding
#   make web    the browser build (WebAssembly, Emscripten): a folder of static files in
#               build-web/site/ that any web server can serve (docs/browser.md)
#   make web-serve  make web, then serve it on http://localhost:8000/ to try it
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps deps-test configure build run test test-asan asan-run valgrind clean fuzz monkey bench format lint \
        web web-build web-serve

all: build

deps:
	@third_party/install-deps.sh build

deps-test:
	@third_party/install-deps.sh test

configure:
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: deps configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/attnviz

test: deps-test configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@$(MAKE) --no-print-directory web-build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory asan-run

# The unit, view and CLI tests again, built with ASan + UBSan in $(ASAN_BUILD_DIR)/ (no GUI,
# allocation or PyTorch tests there: see tests/CMakeLists.txt), and the app, which the
# random-action test drives for a minute (tests/monkey/). Any sanitizer report fails.
# Debug (-O0, asserts and Eigen's index checks on): with the sanitizers it compiles in half the
# time of -O1, and the tests run about as fast. Compiled with clang (ASAN_CXX), which builds it
# two to three times as fast as GCC does with the sanitizers on; the main build stays GCC's, so
# the code is compiled by both.
ASAN_BUILD_DIR ?= build-asan
ASAN_CXX ?= clang++-14
ASAN_CONFIGURE = cmake -S . -B $(ASAN_BUILD_DIR) -DCMAKE_CXX_COMPILER=$(ASAN_CXX) \
                 -DATTNVIZ_SANITIZE=ON -DATTNVIZ_NATIVE=OFF -DCMAKE_BUILD_TYPE=Debug
test-asan: deps-test
	@$(MAKE) --no-print-directory asan-run

asan-run:
	@$(ASAN_CONFIGURE) >/dev/null
	@cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	cd $(ASAN_BUILD_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# libFuzzer targets (clang, ASan + UBSan) built in build-fuzz/, each run for FUZZ_SECONDS
# (default 60); then the random-action test at length: the app of $(ASAN_BUILD_DIR)/ driving itself
# (--monkey) for MONKEY_ACTIONS actions from each of MONKEY_SEEDS (5 to 10 minutes a seed). Fails
# on any finding. Not part of `make test` (which runs the random-action test for a minute).
MONKEY_SEEDS ?= 11 12 13 14
MONKEY_ACTIONS ?= 3000
fuzz:
	@third_party/install-deps.sh fuzz
	@FUZZ_SECONDS="$(FUZZ_SECONDS)" tests/fuzz/run.sh
	@$(MAKE) --no-print-directory monkey

monkey: deps-test
	@$(ASAN_CONFIGURE) >/dev/null
	@cmake --build $(ASAN_BUILD_DIR) -j $(JOBS) --target attnviz
	tests/monkey/run_monkey.sh $(ASAN_BUILD_DIR)/attnviz $(MONKEY_ACTIONS) $(MONKEY_SEEDS)

# The app headless under valgrind memcheck (a portable build: valgrind lacks AVX-512). Slow:
# about a minute per run; not part of `make test`.
valgrind: deps-test
	@cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_NATIVE=OFF -DBUILD_TESTING=OFF >/dev/null
	@cmake --build build-valgrind -j $(JOBS) --target attnviz
	tests/valgrind/run.sh build-valgrind

# Benchmarks, not part of `make test` (docs/performance.md): installs Google Benchmark and
# PyTorch if missing, builds attnviz-cli and the micro benchmarks (Release), runs the micro
# benchmarks, then times the same attention in AttnViz and in torch on the same shapes
# (tests/bench/torch_compare.py), BENCH_THREADS threads each (default 1), keeping each side's
# best median of BENCH_ROUNDS alternating rounds (default 3, as in docs/performance.md), then a
# GPT-2-small-shaped model's forward pass against torch's, one thread each, at the best OpenBLAS
# core type (tests/bench/model_compare.py; writes a 500 MB model into BUILD_DIR once), and a
# bert-base-shaped encoder's (tests/bench/bert_compare.py; a 440 MB model), and an opus-mt-shaped
# encoder–decoder's (tests/bench/marian_compare.py; a 300 MB model). About twenty minutes.
BENCH_THREADS ?= 1
BENCH_ROUNDS ?= 3
bench:
	@third_party/install-deps.sh bench
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target attnviz-cli attnviz_micro_benchmarks
	$(BUILD_DIR)/attnviz_micro_benchmarks --benchmark_min_time=0.2
	/usr/bin/python3 tests/bench/torch_compare.py --cli $(BUILD_DIR)/attnviz-cli --threads $(BENCH_THREADS) --rounds $(BENCH_ROUNDS)
	/usr/bin/python3 tests/bench/model_compare.py --cli $(BUILD_DIR)/attnviz-cli --build-dir $(BUILD_DIR) --rounds $(BENCH_ROUNDS)
	/usr/bin/python3 tests/bench/bert_compare.py --cli $(BUILD_DIR)/attnviz-cli --build-dir $(BUILD_DIR) --rounds $(BENCH_ROUNDS)
	/usr/bin/python3 tests/bench/marian_compare.py --cli $(BUILD_DIR)/attnviz-cli --build-dir $(BUILD_DIR) --rounds $(BENCH_ROUNDS)
	/usr/bin/python3 tests/bench/train_compare.py --cli $(BUILD_DIR)/attnviz-cli --build-dir $(BUILD_DIR) --rounds $(BENCH_ROUNDS)

# Style. The check is a test of `make test` (tests/tools/check_format.sh); this formats in place.
format:
	@third_party/install-deps.sh test
	@tests/tools/check_format.sh --fix

# clang-tidy over the project's own sources: not the generated ones in $(BUILD_DIR), nor
# cli/allocation_counter.cpp, which defines malloc and free over glibc's declarations of them.
lint:
	@third_party/install-deps.sh lint
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	run-clang-tidy-14 -p $(BUILD_DIR) -quiet -j $(JOBS) \
	    '^$(CURDIR)/(?!cli/allocation_counter\.cpp)(core|app|cli|tests)/'

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(WEB_BUILD_DIR)

# The browser build (issue 27): the same sources compiled to WebAssembly by Debian's Emscripten,
# in $(WEB_BUILD_DIR)/ (the site in $(WEB_BUILD_DIR)/site/; attnviz-cli.js for Node beside it, which
# the tests compare with the native engine). web.cmake downloads Dear ImGui's sources from
# Debian's archive once. `make test` builds it and tests it in headless Chromium.
WEB_BUILD_DIR ?= build-web
WEB_PORT ?= 8000
web:
	@third_party/install-deps.sh web
	@$(MAKE) --no-print-directory web-build
	@echo "The browser build is in $(WEB_BUILD_DIR)/site/: copy that folder to any web server (make web-serve tries it)."

web-build:
	@emcmake cmake -S . -B $(WEB_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(WEB_BUILD_DIR) -j $(JOBS)

web-serve: web
	@echo "AttnViz on http://localhost:$(WEB_PORT)/ (Ctrl+C stops it)"
	python3 -m http.server $(WEB_PORT) --bind 127.0.0.1 --directory $(WEB_BUILD_DIR)/site
