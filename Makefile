# AttnViz — the two set-up commands:
#   make run    install what is missing, build, open the app on the built-in scenario
#   make test   install what is missing, build, run every test through CTest
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps deps-test configure build run test clean

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
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
