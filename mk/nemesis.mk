# The nemesis run (tests/nemesis/): six holders in three languages (Python, Node, and
# the Rust service over HTTP) lease from one real etcd and mint while a seeded scheduler
# SIGSTOPs holders past their TTL, SIGKILLs and restarts them, restarts etcd, revokes leases and
# steps a service's test clock back; the checker fails on any duplicate, any unordered process
# and any ID past its holder's R. The ZooKeeper variant (--store zookeeper): six services on one
# real ZooKeeper, with SIGSTOP past the session timeout (the server expires the session),
# ZooKeeper restarts and slot znodes deleted under their holders instead. On both: a
# restore from an older backup, fenced (`polyflake lease fence`) before any holder reaches the
# store again (every live holder must report its lease lost; zero duplicates across the whole
# run), and 1.5-2.5 s stalls of a holder's link through a relay (ambiguous writes: a holder that
# loses its lease in a stall with no other fault on it fails the run). One backup and restore
# per 60 s (one in the 20 s run); the report counts both per kind.
#
#   make nemesis        each store for NEMESIS_SECONDS (default 180) with NEMESIS_SEED (default
#                       1); the reports go to target/nemesis-etcd.json and nemesis-zookeeper.json
#   make test-nemesis   the 20-second version of each (part of make test)
#
# Every ID is logged (to a directory under TMPDIR, removed when the run passes): on etcd the
# Python and Node holders mint at full speed, about 1 GB of log per 20 s on the 2-core
# development machine, so a 180 s etcd run needs about 10 GB free there.
#
# Decisions: ZooKeeper's nemesis uses six services (polyflake serve --zookeeper). Its faults: SIGSTOP
# past the session timeout (the server expires the session: the forced expiry, since a session's
# password never leaves its client), SIGKILL and restart, ZooKeeper restarted on the same data, a
# held slot znode deleted (ZooKeeper's counterpart of revoking an etcd lease) and the test clock
# stepped back. Znodes are deleted by a small client of the run's own (tests/nemesis/zookeeper.py,
# the jute framing of five requests), not a library or a JVM per fault. A service whose lease is
# lost answers 503 for good, so both runs restart it, as an orchestrator's health check would.

# Debian packages: mk/packages.mk.
TEST_TARGETS += test-nemesis

.PHONY: nemesis test-nemesis deps-nemesis

NEMESIS_SECONDS ?= 180
NEMESIS_SEED ?= 1

# The checker reads the ID logs with numpy (in .venv; deps-polyglot installs it too).
deps-nemesis: deps-python
	$(call pip_missing,$(PY),numpy)

test-nemesis: build-cli build-python build-node deps-nemesis
	$(call say,nemesis: 20 s of faults over six holders in three languages on one etcd)
	$(PY) tests/nemesis/nemesis.py --store etcd --seconds 20 --seed 7
	$(call say,nemesis: 20 s of faults over six services on one ZooKeeper)
	$(PY) tests/nemesis/nemesis.py --store zookeeper --seconds 20 --seed 7

nemesis: build-cli build-python build-node deps-nemesis
	$(call say,nemesis: $(NEMESIS_SECONDS) s with seed $(NEMESIS_SEED))
	$(PY) tests/nemesis/nemesis.py --store etcd --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis-etcd.json
	$(PY) tests/nemesis/nemesis.py --store zookeeper --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis-zookeeper.json
