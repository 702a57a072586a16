# polyflake: `make test` installs what is missing, builds everything and runs every test in every
# language; `make demo` builds what is missing and runs the main job. Both are idempotent.
#
# Each language adds itself from mk/<lang>.mk: it appends to APT_PACKAGES, DEPS_TARGETS,
# BUILD_TARGETS and TEST_TARGETS, so no two parts of the project edit the same lines.

SHELL := /bin/bash
.DEFAULT_GOAL := help

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
export CARGO_TARGET_DIR ?= $(ROOT)/target
CARGO ?= cargo

APT_PACKAGES :=
DEPS_TARGETS := deps-apt deps-rust
BUILD_TARGETS := build-rust
TEST_TARGETS := reset-scenario-coverage test-rust
DEMO_TARGETS := demo-rust

say = @printf '\n==> %s\n' "$(1)"

include $(sort $(wildcard mk/*.mk))

.PHONY: help test demo deps build reset-scenario-coverage deps-apt deps-rust build-rust test-rust lint-rust loom demo-rust bench-rust clean

help:
	@echo "make demo   build what is missing, then mint, decode and fault-inject IDs"
	@echo "make test   install what is missing, build everything, run every test"
	@echo "make bench  run the benchmarks (not part of test)"

deps: $(DEPS_TARGETS)
build: deps $(BUILD_TARGETS)
test: build $(TEST_TARGETS)
	$(call say,scenario coverage: every runner ran every scenario file)
	python3 tests/vectors/check_coverage.py $(SCENARIO_COVERAGE)
	$(call say,all tests passed)
demo: build $(DEMO_TARGETS)

# Each scenario runner writes $(SCENARIO_COVERAGE)/<lang>.txt; `make test` starts it empty.
SCENARIO_COVERAGE := $(CARGO_TARGET_DIR)/scenario-coverage
reset-scenario-coverage:
	$(call say,scenario coverage: emptying $(SCENARIO_COVERAGE))
	rm -rf $(SCENARIO_COVERAGE) && mkdir -p $(SCENARIO_COVERAGE)

# Debian packages the project needs, installed only when missing (apt-get update runs once, first).
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

build-rust:
	$(call say,building the Rust workspace)
	$(CARGO) build --release --workspace --all-targets

lint-rust:
	$(call say,cargo fmt --check and clippy -D warnings)
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) clippy -p polyflake --no-default-features --all-targets --release -- -D warnings

# The CAS step model-checked with loom, in a target dir of its own (--cfg loom rebuilds deps).
# Interleavings are explored exhaustively up to 3 preemptions per execution (loom's usual bound).
loom:
	$(call say,loom model of the compare-and-swap step)
	LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" $(CARGO) test -p polyflake --test loom --release --target-dir $(CARGO_TARGET_DIR)/loom

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
