# polyflake: `make test` installs what is missing, builds everything and runs every test in every
# language; `make demo` builds what is missing and runs the main job. Both are idempotent.
#
# Each language adds itself from mk/<lang>.mk: it appends to DEPS_TARGETS, BUILD_TARGETS and
# TEST_TARGETS, so no two parts of the project edit the same lines. The Debian packages are one
# list (mk/packages.mk), the "install what is missing" helpers one each (below).
#
# Tiers, fastest first:
#   make check          fmt, clippy, the core's unit, property and doc tests (a one-line core edit)
#   make test-<lang>    one binding: test-rust, test-c, test-go, test-python, test-node, test-java,
#                       test-cli
#   make test           everything CI runs (the tests two targets at a time: TEST_JOBS=1 for one);
#                       ends with each target's wall time (target/timing/)
#   make test-flaky N=3 TARGET=test-c-lease   one target N times in a row; fails if any run fails
#   make test-loaded    make test with every core kept busy by stress-ng
#   long runs have their own targets: bench (bench-<lang>, e.g. bench-java), fuzz, nemesis, soak,
#                       simulate, bench-pg, model

SHELL := /bin/bash
.DEFAULT_GOAL := help

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
export CARGO_TARGET_DIR ?= $(ROOT)/target
CARGO ?= cargo
# Every cargo build names the host triple, as napi build and maturin --zig always do: then plain
# cargo, napi and maturin builds of one profile share one tree of compiled dependencies
# (target/<triple>/<profile>) instead of building it once with and once without --target.
HOST_TRIPLE := $(or $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p'),x86_64-unknown-linux-gnu)
export CARGO_BUILD_TARGET ?= $(HOST_TRIPLE)
# Where release binaries and libraries land; the test scripts read it too.
export POLYFLAKE_RELEASE_DIR := $(CARGO_TARGET_DIR)/$(CARGO_BUILD_TARGET)/release
# Each test target mints static node ids in a host-wide scope of its own, and keeps their marks
# (the restart guard) in a state directory of its own: the suites run side by side and all like
# node id 1 (docs/node-ids.md, "One claim per node id on a host").
# The state directories are fresh for each top-level make (a run killed half-way leaves marks a
# reserve ahead; they must not make the next run wait).
export POLYFLAKE_STATE_ROOT ?= $(shell mktemp -d "$${TMPDIR:-/tmp}/polyflake-state.XXXXXX")
test-%: export POLYFLAKE_HOST_SCOPE = $@
test-%: export POLYFLAKE_STATE_DIR = $(POLYFLAKE_STATE_ROOT)/$@

DEPS_TARGETS := deps-apt deps-rust
BUILD_TARGETS := build-rust
TEST_TARGETS := reset-scenario-coverage test-rust
DEMO_TARGETS := demo-rust

# Pinned Rust tools (cbindgen, cargo-fuzz) are installed once per machine into a cache of their
# own, one directory per tool and version, outside any checkout: like the Debian packages, a
# second clone finds them, and a user's own ~/.cargo/bin is never touched. Each is built in a
# throwaway target directory (not this checkout's, whose profiles and flags it does not share).
TOOLS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/polyflake/tools
# cargo_tool CRATE, VERSION, BINARY: install CRATE VERSION into $(TOOLS_CACHE)/CRATE-VERSION
# unless its BINARY is there and says so.
cargo_tool = @root=$(TOOLS_CACHE)/$(1)-$(2); \
	if [ -x $$root/bin/$(3) ] && $$root/bin/$(3) --version 2>/dev/null | grep -q " $(2)$$"; then \
	  echo "$(1) $(2) present in $$root"; \
	else echo "installing $(1) $(2) into $$root (once per machine)"; \
	  tmp=$$(mktemp -d); CARGO_TARGET_DIR=$$tmp $(CARGO) install $(1) --version $(2) --locked --root $$root; \
	  rc=$$?; rm -rf $$tmp; exit $$rc; fi

# Every recipe opens with $(call say,what it does). Under `make test` every recipe line runs
# through tests/build/timed-shell, which logs its time and target, so the run ends with a table
# of every target's wall time (tests/timing.py), also when targets run side by side.
TIMING_DIR := $(CARGO_TARGET_DIR)/timing
ifneq ($(filter test,$(MAKECMDGOALS)),)
export POLYFLAKE_TIMING_LOG ?= $(TIMING_DIR)/make-test.log
endif
ifneq ($(POLYFLAKE_TIMING_LOG),)
SHELL := $(ROOT)/tests/build/timed-shell
.SHELLFLAGS = $@ -c
endif
say = @printf '\n==> %s\n' "$(1)"

# pip_missing VENV_PYTHON, PACKAGES: pip-install those of PACKAGES (name or name==version) that
# VENV_PYTHON lacks, or that it has at another version than pinned. Prints what it does.
pip_missing = @missing=""; for p in $(2); do n=$${p%%==*}; n=$${n%%[[]*}; \
	  have=$$($(1) -m pip show $$n 2>/dev/null | sed -n 's/^Version: //p'); \
	  case "$$p" in *==*) [ "$$have" = "$${p\#\#*==}" ] || missing="$$missing $$p";; \
	    *) [ -n "$$have" ] || missing="$$missing $$p";; esac; done; \
	if [ -n "$$missing" ]; then echo "pip install$$missing"; \
	  $(1) -m pip install -q --disable-pip-version-check $$missing; \
	else echo "all present: $(strip $(2))"; fi

# npm_missing DIR, PACKAGES: `npm ci` in DIR (from its package-lock.json) unless every one of
# PACKAGES is in DIR/node_modules and the lock file is the one installed. EXTRA: npm ci flags.
npm_missing = @ok=1; for p in $(2); do [ -d $(1)/node_modules/$$p ] || ok=""; done; \
	cmp -s $(1)/package-lock.json $(1)/node_modules/.package-lock.json.polyflake || ok=""; \
	if [ -n "$$ok" ]; then echo "$(1)/node_modules present: $(strip $(2))"; \
	else echo "npm ci in $(1)"; (cd $(1) && CI=true npm ci --no-audit --no-fund --loglevel=error $(3)) && \
	  cp $(1)/package-lock.json $(1)/node_modules/.package-lock.json.polyflake; fi

include $(sort $(wildcard mk/*.mk))

.PHONY: help test demo deps build reset-scenario-coverage deps-apt deps-rust build-rust test-rust lint-rust loom \
	demo-rust bench-rust clean check test-flaky test-loaded timing-start warm-start warm-trees

help:
	@echo "make demo    build what is missing, then mint, decode and fault-inject IDs"
	@echo "make test    install what is missing, build everything, run every test (a timing table at the end)"
	@echo "make check   fmt, clippy and the core's unit, property and doc tests (the inner loop)"
	@echo "make test-rust|test-c|test-go|test-python|test-node|test-java|test-cli   one binding"
	@echo "make test-flaky N=3 TARGET=test-c-lease   one target N times in a row"
	@echo "make bench   run the benchmarks (not part of test); one language: bench-rust|bench-c|bench-go|bench-python|bench-node|bench-java|bench-cli"

deps: $(DEPS_TARGETS)
build: deps $(BUILD_TARGETS)
# The test phase runs TEST_JOBS targets at a time (output kept whole per target), with every
# install and build target assumed done (-o: the serial phase above built them, and a rebuild
# beside a running test would replace files under it); then the targets that must run alone
# (TEST_LAST: the dist targets link the release library again with an soname).
TEST_JOBS ?= 2
TEST_LAST := test-dist
ASSUME_BUILT = $(foreach t,$(sort $(DEPS_TARGETS) $(BUILD_TARGETS)),-o $(t))
test: timing-start deps warm-start build
	@$(MAKE) --no-print-directory reset-scenario-coverage
	@rc=0; $(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target $(ASSUME_BUILT) \
	  $(filter-out reset-scenario-coverage $(TEST_LAST),$(TEST_TARGETS)) || rc=1; \
	$(MAKE) --no-print-directory $(ASSUME_BUILT) $(TEST_LAST) || rc=1; exit $$rc
	$(call say,scenario coverage: every runner ran every scenario file)
	python3 tests/vectors/check_coverage.py $(SCENARIO_COVERAGE)
	@printf '%s %s\n' "$$(date +%s.%N)" "(end)" >> "$$POLYFLAKE_TIMING_LOG"
	@python3 tests/timing.py $$POLYFLAKE_TIMING_LOG $(TIMING_DIR)/make-test.md
	@printf '(the background warm-up: %s)\n' "$$(tail -n 1 $(WARM_LOG))"
	$(call say,all tests passed)
demo: build $(DEMO_TARGETS)

# The timing log starts empty with each `make test`; the previous run's log is kept beside it.
timing-start:
	@mkdir -p $(TIMING_DIR); [ ! -s "$$POLYFLAKE_TIMING_LOG" ] || mv -f "$$POLYFLAKE_TIMING_LOG" "$$POLYFLAKE_TIMING_LOG.previous"
	@printf '%s %s\n' "$$(date +%s.%N)" "(start)" > "$$POLYFLAKE_TIMING_LOG"

# The trees of their own (the wheel's zig build, the nightly fuzz and sanitizer builds, loom's)
# share nothing with the main release tree, so `make test` compiles them in the background at
# low priority (nice 10) from its start: the main build and the tests keep the CPU they want, and
# the idle time of tests that wait (leases, stores, valgrind's single thread) goes to these
# builds. It only warms the caches: each target still runs its own build when its turn comes
# (cargo then finds it done, or waits for the lock), so a failure shows there, in order. A target
# that needs one of these trees first raises the warm-up back to normal priority (warm_now): on
# a machine kept busy by others, nice 10 would starve the build that target now waits for. The
# warm-up runs in a process group of its own (setsid) and stops between steps once make is
# gone; its log: target/timing/warm.log.
WARM_LOG := $(TIMING_DIR)/warm.log
WARM_PGID := $(TIMING_DIR)/warm.pgid
warm-start: deps
	@mkdir -p $(TIMING_DIR); printf '\n==> warm-up: the wheel, nightly and loom trees build in the background (log: %s)\n' $(WARM_LOG); \
	setsid nice -n 10 bash -c 'env -u POLYFLAKE_TIMING_LOG $(MAKE) --no-print-directory warm-trees WARM_PARENT=$$1 \
	  > $(WARM_LOG) 2>&1 && echo "warm-up done" >> $(WARM_LOG) || echo "warm-up failed (each target builds for itself)" >> $(WARM_LOG); \
	  rm -f $(WARM_PGID)' warm-trees $$PPID & echo $$! > $(WARM_PGID)

# As a target's first recipe line: the warm-up (if it still runs) back to normal priority.
warm_now = @pg=$$(cat $(WARM_PGID) 2>/dev/null); if [ -n "$$pg" ] && grep -q warm-trees /proc/$$pg/cmdline 2>/dev/null; then \
	renice -n 0 -g $$pg >/dev/null 2>&1 || true; fi

WARM_PARENT ?= $$PPID
warm_step = kill -0 $(WARM_PARENT) 2>/dev/null || { echo "make is gone: warm-up stops"; exit 0; }; echo "--- $(1)"; date +%s;
warm-trees:
	-@$(call warm_step,loom) $(LOOM_TEST) --no-run
	-@$(call warm_step,the wheel) $(WHEEL_BUILD) $(CARGO_TARGET_DIR)/warm-wheel
	-@$(call warm_step,cargo fuzz build) $(FUZZ_CARGO) build $(FUZZ_BUILD_FLAGS)
	-@$(call warm_step,AddressSanitizer) $(call san_cargo,address)
	-@$(call warm_step,ThreadSanitizer) $(call san_cargo,thread)

# One target N times in a row, each from the top (its prerequisites are idempotent), counting.
N ?= 3
TARGET ?= test-c-lease
test-flaky:
	@pass=0; fail=0; for i in $$(seq 1 $(N)); do \
	  printf '\n==> test-flaky: run %s of %s: make %s\n' $$i $(N) $(TARGET); \
	  if $(MAKE) --no-print-directory $(TARGET); then pass=$$((pass + 1)); else fail=$$((fail + 1)); fi; done; \
	printf '\n==> test-flaky: %s: %s passed, %s failed\n' $(TARGET) $$pass $$fail; [ $$fail -eq 0 ]

# `make test` with both cores kept busy by a CPU hog (stress-ng, one worker per core, at normal
# priority), started before and stopped after, however the run ends: the timing-sensitive tests
# must pass on a loaded machine too. The table lands in target/timing/make-test.md as usual.
test-loaded: deps-apt
	@stress-ng --cpu $$(nproc) --timeout 0 --quiet & hog=$$!; trap 'kill $$hog 2>/dev/null; wait $$hog 2>/dev/null' EXIT; \
	printf '\n==> test-loaded: stress-ng --cpu %s (pid %s) keeps every core busy during make test\n' $$(nproc) $$hog; \
	$(MAKE) --no-print-directory test

# The inner loop for a core edit (warm: well under 3 minutes): no other crate, no store started.
check:
	$(call say,check: cargo fmt --check; clippy of the core (all targets and -D warnings); its unit and property and scenario and vector and doc tests)
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy -p polyflake --all-targets --release -- -D warnings
	$(CARGO) test --release -p polyflake --lib --test properties --test scenarios --test vectors
	$(CARGO) test --release -p polyflake --doc

# Each scenario runner writes $(SCENARIO_COVERAGE)/<lang>.txt; `make test` starts it empty.
SCENARIO_COVERAGE := $(CARGO_TARGET_DIR)/scenario-coverage
reset-scenario-coverage:
	$(call say,scenario coverage: emptying $(SCENARIO_COVERAGE))
	rm -rf $(SCENARIO_COVERAGE) && mkdir -p $(SCENARIO_COVERAGE)

# Debian packages the project needs (mk/packages.mk), installed only when missing (apt-get update
# runs once, first).
deps-apt:
	$(call say,Debian packages: $(if $(strip $(APT_PACKAGES)),$(APT_PACKAGES),none needed))
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "all present"; fi

deps-rust:
	$(call say,Rust toolchain)
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust with rustup first"; exit 1; }
	@$(CARGO) --version
	@rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt

# The Python and Node crates are built by maturin and napi (build-python, build-node), in the
# same tree with the same features (hack/); the benchmarks by make bench. clippy checks all.
build-rust:
	$(call say,building the Rust workspace: libraries and binaries and tests and examples (the Python and Node crates: build-python and build-node))
	$(CARGO) build --release --workspace --lib --bins --tests --examples --exclude polyflake-python --exclude polyflake-node

lint-rust:
	$(call say,cargo fmt --check and clippy -D warnings; every package selection has the workspace's features)
	python3 tests/build/check_unified.py
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) clippy -p polyflake --no-default-features --all-targets --release -- -D warnings

# The CAS step model-checked with loom, in a target dir of its own (--cfg loom rebuilds deps),
# from a crate of its own (loom/: only the core and loom are compiled again, not the core's
# dev-dependencies). Interleavings are explored exhaustively up to 3 preemptions per execution
# (loom's usual bound).
LOOM_TEST = LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" $(CARGO) test -p polyflake-loom --test loom --release \
	--target-dir $(CARGO_TARGET_DIR)/loom
loom:
	$(warm_now)
	$(call say,loom model of the compare-and-swap step)
	$(LOOM_TEST)

test-rust: lint-rust loom
	$(call say,Rust tests: unit; doc; scenarios; vectors; properties; threads; fork; leases)
	$(CARGO) test --release -p polyflake

demo-rust:
	$(call say,Rust demo: mint and decode; a refused rewind; a monotonic borrow)
	$(CARGO) run --release -q -p polyflake --example demo

bench: bench-rust
bench-rust:
	$(CARGO) bench -p polyflake

clean:
	$(CARGO) clean
