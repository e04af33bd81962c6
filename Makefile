# The two commands of the README:
#   make demo   build, then run the demonstration on built-in data
#   make test   install what is missing, build, run every test (also under
#               address and undefined-behaviour sanitizers)
# and the others: make build, make bench, make docs, make install, make clean.

BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
PREFIX ?= /usr/local

.PHONY: all deps build build-asan test test-fast demo bench docs install clean

all: build

deps:
	@sh scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRFX_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# The release build's tests, then the same tests under the sanitizers.
test: build build-asan
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

test-fast: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

demo: build
	@sh examples/demo.sh $(BUILD)/rfx demo-out

bench: build
	@sh bench/run.sh $(BUILD)

# The API reference: doxygen over include/ into $(BUILD)/docs/html, and the
# Python package's pydoc pages into $(BUILD)/docs/python.
docs: build
	@cmake --build $(BUILD) --target docs

install: build
	@cmake --install $(BUILD)

clean:
	@rm -rf $(BUILD) $(ASAN_BUILD) demo-out
