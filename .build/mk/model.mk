# The lease protocol and the fork/registry rules as a Promela model (verify/model/), checked exhaustively
# by spin (pan compiled with gcc); each guard removed in turn must fail with a counterexample
# (verify/model/trails/). What it covers: docs/reliability.md, "The lease protocol, model-checked".

TEST_TARGETS += test-model

model: ## [long] spin at full bounds: 3 holders, every configuration, the liveness checks, every mutation and finding (at most 10 minutes on 2 cores; work files in target/model/)
	$(call say,spin: the lease protocol model at full bounds (3 holders and 2 slots) then the mutations that must fail)
	MODEL_OUT=$(CARGO_TARGET_DIR)/model verify/model/check.sh full

test-model: ## [part] spin at small bounds (2 holders, 2 slots), then the mutations that must fail
	$(call say,spin: the lease protocol model at small bounds (2 holders and 2 slots) then the mutations that must fail)
	MODEL_OUT=$(CARGO_TARGET_DIR)/model-test verify/model/check.sh bounded
