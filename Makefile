# Makefile - a thin wrapper over CMake, so that two commands work on a fresh
# Debian 12 machine:
#
#   make demo    install missing build packages, build, profile a demo program
#                and print its report
#   make test    install missing build packages, build, run every test
#
# Other targets: build (the default), deps, install PREFIX=..., clean, help.
# Variables: WERROR=1 (warnings are errors, as in CI), BUILD_TYPE (default
# RelWithDebInfo), BUILD_DIR (default build), PREFIX (default /usr/local),
# JOBS (default: the number of CPUs), CTEST_ARGS (extra ctest arguments,
# e.g. CTEST_ARGS='-L e2e').

BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE      ?= cmake
CTEST      ?= ctest
CTEST_ARGS ?=
WERROR     ?=

# Debian packages the build and the tests need: the build's libraries
# (protobuf-c and zlib: the pprof export), valgrind (cross-checks, massif's
# ms_print), binutils (strip), protobuf-compiler (protoc --decode checks
# pprof files), chromium (the HTML report is loaded in a real browser),
# clang and its runtime (libFuzzer, sanitizers), the allocators `heapscope
# bench` compares (and jemalloc's header: a test program uses its own API),
# heaptrack (side-by-side checks), gdb (gcore for the core
# walker's tests), zstd (the format tests inflate a profile's records and
# make hostile ones), and real programs the reliability tests profile.
DEB_PACKAGES := build-essential cmake pkg-config libunwind-dev libdw-dev \
                libelf-dev libzstd-dev libxxhash-dev libprotobuf-c-dev protobuf-c-compiler \
                zlib1g-dev valgrind python3 binutils protobuf-compiler \
                chromium clang libclang-rt-14-dev llvm-14 libjemalloc2 \
                libjemalloc-dev libgoogle-perftools4 libmimalloc2.0 heaptrack gdb sqlite3 \
                xz-utils pigz zstd

CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
ifneq ($(filter 1 ON on yes YES true TRUE,$(WERROR)),)
CMAKE_FLAGS += -DHEAPSCOPE_WERROR=ON
else
CMAKE_FLAGS += -DHEAPSCOPE_WERROR=OFF
endif

# Targets run their prerequisites in order (deps before build before test);
# the build itself is parallel through cmake --build -j.
.NOTPARALLEL:
.PHONY: all build configure deps demo test install clean help check-sanitize check-tsan

all: build

help:
	@sed -n '1,14s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

configure:
	$(CMAKE) -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)

build: configure
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

# Install with apt-get only what dpkg says is missing (apt-get update first,
# only then); sudo only when not root.
deps:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "make deps: no dpkg here; install by hand: $(DEB_PACKAGES)"; exit 0; \
	fi; \
	missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' \
	    || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "make deps: all build packages are installed"; exit 0; fi; \
	echo "make deps: installing$$missing"; \
	sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing

demo: deps build
	$(BUILD_DIR)/bin/heapscope run -o $(BUILD_DIR)/demo.hsp -- $(BUILD_DIR)/bin/hs-demo
	$(BUILD_DIR)/bin/heapscope report $(BUILD_DIR)/demo.hsp

test: deps build
	cd $(BUILD_DIR) && $(CTEST) --output-on-failure -j 2 $(CTEST_ARGS)

# check-sanitize: everything built with AddressSanitizer and UBSan in
# build-asan, then the tests that can run there: unit tests and the replay
# of the fuzz corpus (the reader and every report on hostile profiles).
# The e2e tests are not registered under HEAPSCOPE_SANITIZE (the ASan
# runtime cannot be preloaded into uninstrumented programs).
check-sanitize: deps
	$(CMAKE) -S . -B build-asan $(CMAKE_FLAGS) -DHEAPSCOPE_SANITIZE=ON -DHEAPSCOPE_BUILD_BENCH=OFF
	$(CMAKE) --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(CTEST) --output-on-failure -j 2 -L 'unit|fuzz-replay'

# check-tsan: the ThreadSanitizer tests of the collector (tests/tsan, also
# in `make test`), the pipeline test at 4 times its size.
check-tsan: build
	cd $(BUILD_DIR) && TSAN_OPTIONS=halt_on_error=1 ./bin/tsan_collector && \
	  TSAN_OPTIONS=halt_on_error=1 ./bin/tsan_pipeline 4 && \
	  TSAN_OPTIONS=halt_on_error=1 ./bin/tsan_pipeline_narrow 4

# DESTDIR=... is honoured by cmake --install (for packaging).
install: build
	$(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR)
