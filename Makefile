# SPDX-License-Identifier: BSD-3-Clause
# The two commands of the README:
#   make demo   build, then run the demonstration on built-in data
#   make test   install what is missing, build, run every test (also under
#               address and undefined-behaviour sanitizers; concurrent
#               prediction under the thread sanitizer; a few tests and the
#               fuzz corpora under valgrind)
# and the others: make build, make bench, make docs, make install, make clean, and
# make fuzz (clang's libFuzzer on each fuzz/ target for FUZZ_SECONDS).

BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = fuzz_csv fuzz_npy fuzz_model_file fuzz_model_buffer fuzz_cli_args
JOBS ?= 2
PREFIX ?= /usr/local

.PHONY: all deps build build-asan build-tsan test test-fast fuzz demo bench docs install clean

all: build

deps:
	@sh scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRFX_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# The thread sanitizer's build: the library without OpenMP, and the test of
# concurrent predictions (tests/test_threads.c) only.
build-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRFX_TSAN=ON -DRFX_OPENMP=OFF >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_threads

# The release build's tests (with the valgrind ones and the replays of the
# fuzz corpora), then the same tests under the sanitizers, then the
# concurrent predictions under the thread sanitizer.
test: build build-asan build-tsan
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)
	@TSAN_OPTIONS=halt_on_error=1 ctest --test-dir $(TSAN_BUILD) --output-on-failure -R '^test_threads@'

test-fast: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# libFuzzer (clang) on each target of fuzz/ for FUZZ_SECONDS (fuzz/run.sh);
# not part of make test, which replays the checked-in corpora instead.
fuzz:
	@sh scripts/install-deps.sh clang
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release -DRFX_FUZZ=ON \
		-DRFX_OPENMP=OFF -DRFX_BUILD_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)
	@sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

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
	@rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) demo-out
