# The lease protocol and the fork/registry rules as a Promela model, checked exhaustively by spin
# (model/): file, etcd and ZooKeeper leases with 3 holders and 2 slots under crashes,
# SIGSTOP past the TTL, store outages, late writes, restores and fences, deleted or overwritten
# slot files, clock steps and fork; never two IDs equal, no ID past R, nothing at or below a
# predecessor's possible R, IDs increasing; liveness under weak fairness. Each guard removed in
# turn must fail with a counterexample (kept in model/trails/). See docs/reliability.md.
#   spin      the model checker (Debian's 6.5.2); pan is compiled with gcc
#
#   make model        the full check: 3 holders, every configuration, the liveness checks, every
#                     mutation and finding (at most 10 minutes on the 2-core machine); work files
#                     in target/model/
#   make test-model   the bounded check (2 holders) and the mutations (part of make test)

# Debian packages (spin): mk/packages.mk.
TEST_TARGETS += test-model

.PHONY: model test-model

model:
	$(call say,spin: the lease protocol model at full bounds (3 holders and 2 slots) then the mutations that must fail)
	MODEL_OUT=$(CARGO_TARGET_DIR)/model model/check.sh full

test-model:
	$(call say,spin: the lease protocol model at small bounds (2 holders and 2 slots) then the mutations that must fail)
	MODEL_OUT=$(CARGO_TARGET_DIR)/model-test model/check.sh bounded
