# The nemesis run (issue 14, tests/nemesis/): six holders in three languages (Python, Node, and
# the Rust service over HTTP) lease from one real etcd and mint while a seeded scheduler
# SIGSTOPs holders past their TTL, SIGKILLs and restarts them, restarts etcd, revokes leases and
# steps a service's test clock back; the checker fails on any duplicate, any unordered process
# and any ID past its holder's R. The ZooKeeper variant (--store zookeeper): six services on one
# real ZooKeeper, with SIGSTOP past the session timeout (the server expires the session),
# ZooKeeper restarts and slot znodes deleted under their holders instead.
#
#   make nemesis        each store for NEMESIS_SECONDS (default 180) with NEMESIS_SEED (default
#                       1); the reports go to target/nemesis-etcd.json and nemesis-zookeeper.json
#   make test-nemesis   the 20-second version of each (part of make test)
#
# Every ID is logged (to a directory under TMPDIR, removed when the run passes): on etcd the
# Python and Node holders mint at full speed, about 1 GB of log per 20 s on the 2-core
# development machine, so a 180 s etcd run needs about 10 GB free there.

# Debian packages: mk/packages.mk.
TEST_TARGETS += test-nemesis

.PHONY: nemesis test-nemesis

NEMESIS_SECONDS ?= 180
NEMESIS_SEED ?= 1

test-nemesis: build-cli build-python build-node
	$(call say,nemesis: 20 s of faults over six holders in three languages on one etcd)
	$(PY) tests/nemesis/nemesis.py --store etcd --seconds 20 --seed 7
	$(call say,nemesis: 20 s of faults over six services on one ZooKeeper)
	$(PY) tests/nemesis/nemesis.py --store zookeeper --seconds 20 --seed 7

nemesis: build-cli build-python build-node
	$(call say,nemesis: $(NEMESIS_SECONDS) s with seed $(NEMESIS_SEED))
	$(PY) tests/nemesis/nemesis.py --store etcd --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis-etcd.json
	$(PY) tests/nemesis/nemesis.py --store zookeeper --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis-zookeeper.json
