# The nemesis run (verify/nemesis/; docs/reliability.md, "Nemesis runs"): six holders (Python,
# Node and the service over HTTP on etcd; six services on ZooKeeper) lease from one real store and
# mint while a seeded scheduler injects faults; the checker fails on any duplicate, any unordered
# process and any ID past its holder's R. Every ID is logged (to a directory under TMPDIR, removed
# when the run passes): about 1 GB per 20 s on etcd on the 2-core development machine.
#
# Decisions: ZooKeeper's nemesis uses six services (polyflake serve --zookeeper). Its faults: SIGSTOP
# past the session timeout (the server expires the session: the forced expiry, since a session's
# password never leaves its client), SIGKILL and restart, ZooKeeper restarted on the same data, a
# held slot znode deleted (ZooKeeper's counterpart of revoking an etcd lease) and the test clock
# stepped back. Znodes are deleted by a small client of the run's own (verify/nemesis/zookeeper.py,
# the jute framing of five requests), not a library or a JVM per fault. A service whose lease is
# lost answers 503 for good, so both runs restart it, as an orchestrator's health check would.

TEST_TARGETS += test-nemesis

NEMESIS_SECONDS ?= 180
NEMESIS_SEED ?= 1

deps-nemesis: deps-python ## numpy in .venv (the checker reads the ID logs with it)
	@$(B) pip-missing $(PY) numpy

test-nemesis: build-cli build-python build-node deps-nemesis ## [part] the 20-second version on each store (seed 7)
	$(call say,nemesis: 20 s of faults over six holders in three languages on one etcd)
	$(PY) verify/nemesis/nemesis.py --store etcd --seconds 20 --seed 7
	$(call say,nemesis: 20 s of faults over six services on one ZooKeeper)
	$(PY) verify/nemesis/nemesis.py --store zookeeper --seconds 20 --seed 7

nemesis: build-cli build-python build-node deps-nemesis ## [long] each store for NEMESIS_SECONDS (180) with NEMESIS_SEED (1); reports in target/nemesis-etcd.json and nemesis-zookeeper.json (a 180 s etcd run needs about 10 GB free)
	$(call say,nemesis: $(NEMESIS_SECONDS) s with seed $(NEMESIS_SEED))
	$(PY) verify/nemesis/nemesis.py --store etcd --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis-etcd.json
	$(PY) verify/nemesis/nemesis.py --store zookeeper --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis-zookeeper.json
