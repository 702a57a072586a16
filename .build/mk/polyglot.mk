# The polyglot proof (tests/polyglot/): one participant per language (Rust, C, C++, Go, Python,
# Node, Java) leasing node ids from ONE lease directory and minting at once; the coordinator
# checks the union (no duplicate, each node strictly increasing, node ids distinct). `make demo`
# is that run with a per-language report and a PNG of the merged stream. The participants are
# built by each language's mk file (build-polyglot-<lang>); the Rust one is a core example.
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

deps-polyglot: deps-python ## the coordinator's numpy and matplotlib in .venv
	$(call say,polyglot coordinator: $(POLYGLOT_PY_PACKAGES) in .venv)
	@$(B) pip-missing $(PY) $(POLYGLOT_PY_PACKAGES)
build-polyglot-rust: ## the uniqueness run's Rust participant (a core example)
	$(call say,polyglot: the Rust participant)
	$(CARGO) build --release -q -p polyflake --example participant

test-polyglot: ## [part] seven languages minting at once from one lease directory (2 s)
	$(call say,polyglot: seven languages minting at once from one lease directory)
	$(PY) tests/polyglot/run.py --seconds 2
demo-polyglot: ## the polyglot demo: seven languages into one merged stream, a per-language report and target/polyglot/merged.png
	$(call say,polyglot demo: seven languages minting from one lease directory into one merged stream)
	$(PY) tests/polyglot/run.py --seconds 3 --report --plot $(POLYGLOT_PLOT)

polyglot-uuidv7: ## [long] the seven languages minting UUIDv7s at once (no lease; POLYGLOT_SECONDS): no duplicate in the union, each strictly increasing, all version 7
	$(call say,polyglot: seven languages minting UUIDv7s at once ($(POLYGLOT_SECONDS) s))
	$(PY) tests/polyglot/run.py --format uuidv7 --seconds $(POLYGLOT_SECONDS)
test-polyglot-uuidv7: ## [part] polyglot-uuidv7 for 1 s
	$(call say,polyglot: seven languages minting UUIDv7s at once (short run))
	$(PY) tests/polyglot/run.py --format uuidv7 --seconds 1

# `lease inspect` of the CLI looks at the store after the run, hence build-cli.
polyglot-zookeeper: build-cli ## [long] the seven languages leasing node ids from ONE real ZooKeeper (POLYGLOT_SECONDS): no duplicate, seven distinct node ids, no slot znode left behind
	$(call say,polyglot: seven languages leasing from one real ZooKeeper ($(POLYGLOT_SECONDS) s))
	$(PY) tests/polyglot/run.py --zookeeper --seconds $(POLYGLOT_SECONDS)
test-polyglot-zookeeper: build-cli ## [part] polyglot-zookeeper for 1 s
	$(call say,polyglot: seven languages leasing from one real ZooKeeper (short run))
	$(PY) tests/polyglot/run.py --zookeeper --seconds 1
