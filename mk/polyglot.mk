# The polyglot proof (tests/polyglot/): one participant per language (Rust, C, C++, Go, Python,
# Node, Java) leasing node ids from ONE lease directory and minting at once; the coordinator
# checks the union (no duplicate, each node strictly increasing, node ids distinct). `make demo`
# is that run with a per-language report and a PNG of the merged stream.
#
# The participants are built by each language's mk file (build-polyglot-c, -cpp, -go, -java, and
# the Python and Node ones run from .venv and node/); the Rust one is a core example.
#
#   make polyglot-uuidv7      the seven languages minting UUIDv7s at once (no lease): no duplicate in
#                             the union, each strictly increasing, all version 7
#   make polyglot-zookeeper   the seven languages leasing node ids from ONE real ZooKeeper (started on
#                             a free loopback port by tests/stores/with_zookeeper.sh): no duplicate,
#                             seven distinct node ids, no slot znode left behind
# `make test` runs a 1 s version of each (test-polyglot-uuidv7, test-polyglot-zookeeper).
#
# Decisions: over ZooKeeper each participant gets zk://HOST:PORT,.../PREFIX as its LEASE_DIR (a
# fresh random prefix per run, so runs never meet) and its language as identity; no /PREFIX is an
# error (one stderr line, exit 1), everything else is judged by the core. After they exit,
# `polyflake lease inspect --zookeeper` must show no held slot within 2 s: far below the 10 s
# session timeout, so a participant that exits without closing its session fails the run.

DEPS_TARGETS += deps-polyglot
BUILD_TARGETS += build-polyglot-rust
TEST_TARGETS += test-polyglot test-polyglot-uuidv7 test-polyglot-zookeeper
DEMO_TARGETS += demo-polyglot

POLYGLOT_PY_PACKAGES := numpy matplotlib
POLYGLOT_PLOT := $(CARGO_TARGET_DIR)/polyglot/merged.png

POLYGLOT_SECONDS ?= 3

.PHONY: deps-polyglot build-polyglot-rust test-polyglot demo-polyglot polyglot-uuidv7 \
	test-polyglot-uuidv7 polyglot-zookeeper test-polyglot-zookeeper

deps-polyglot: deps-python
	$(call say,polyglot coordinator: $(POLYGLOT_PY_PACKAGES) in .venv)
	$(call pip_missing,$(PY),$(POLYGLOT_PY_PACKAGES))

build-polyglot-rust:
	$(call say,polyglot: the Rust participant)
	$(CARGO) build --release -q -p polyflake --example participant

test-polyglot:
	$(call say,polyglot: seven languages minting at once from one lease directory)
	$(PY) tests/polyglot/run.py --seconds 2

demo-polyglot:
	$(call say,polyglot demo: seven languages minting from one lease directory into one merged stream)
	$(PY) tests/polyglot/run.py --seconds 3 --report --plot $(POLYGLOT_PLOT)

polyglot-uuidv7:
	$(call say,polyglot: seven languages minting UUIDv7s at once ($(POLYGLOT_SECONDS) s))
	$(PY) tests/polyglot/run.py --format uuidv7 --seconds $(POLYGLOT_SECONDS)

test-polyglot-uuidv7:
	$(call say,polyglot: seven languages minting UUIDv7s at once (short run))
	$(PY) tests/polyglot/run.py --format uuidv7 --seconds 1

# `lease inspect` of the CLI looks at the store after the run, hence build-cli.
polyglot-zookeeper: build-cli
	$(call say,polyglot: seven languages leasing from one real ZooKeeper ($(POLYGLOT_SECONDS) s))
	$(PY) tests/polyglot/run.py --zookeeper --seconds $(POLYGLOT_SECONDS)

test-polyglot-zookeeper: build-cli
	$(call say,polyglot: seven languages leasing from one real ZooKeeper (short run))
	$(PY) tests/polyglot/run.py --zookeeper --seconds 1
