# The nemesis run (issue 14, tests/nemesis/): six holders in three languages (Python, Node, and
# the Rust service over HTTP) lease from one real etcd and mint while a seeded scheduler
# SIGSTOPs holders past their TTL, SIGKILLs and restarts them, restarts etcd, revokes leases and
# steps a service's test clock back; the checker fails on any duplicate, any unordered process
# and any ID past its holder's R.
#
#   make nemesis        NEMESIS_SECONDS (default 180) with NEMESIS_SEED (default 1); the report
#                       goes to target/nemesis.json
#   make test-nemesis   the 20-second version (part of make test)

APT_PACKAGES += etcd-server etcd-client
TEST_TARGETS += test-nemesis

.PHONY: nemesis test-nemesis

NEMESIS_SECONDS ?= 180
NEMESIS_SEED ?= 1

test-nemesis: build-cli build-python build-node
	$(call say,nemesis: 20 s of faults over six holders in three languages on one etcd)
	$(PY) tests/nemesis/nemesis.py --seconds 20 --seed 7

nemesis: build-cli build-python build-node
	$(call say,nemesis: $(NEMESIS_SECONDS) s with seed $(NEMESIS_SEED))
	$(PY) tests/nemesis/nemesis.py --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) --report $(CARGO_TARGET_DIR)/nemesis.json
