# The benchmark gate: every language's per-call figures as ratios to a reference measured in the
# same run, compared with the committed baseline (verify/bench/baseline.json: the machine, the date, a
# ratio per row, the tolerance). Not part of `make test` (speed is never asserted in tests); run
# it before resolving any change that touches a hot path. Each language's rows: bench-check-<lang>.

BENCH_CHECK_FLAGS = $(if $(UPDATE),--update) $(if $(ONLY),--only $(ONLY))

bench-check: build-cli ## [long] every language's check mode (at most 5 minutes warm), then the table; fails when a ratio is worse than verify/bench/baseline.json's by more than the tolerance (verify/bench/check.py). UPDATE=1: rewrite the baseline from this run, on purpose (say why in the commit); ONLY=rust,go: some sources only
	$(call say,bench-check: every language's per-call ratios against verify/bench/baseline.json)
	python3 verify/bench/check.py $(BENCH_CHECK_FLAGS)

bench-check-service: build-cli ## [long] the service's rows alone (cli/bench/check.py: one keep-alive client minting against the same client decoding)
	@python3 cli/bench/check.py $(CLI_BIN) 2 3
