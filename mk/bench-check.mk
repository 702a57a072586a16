# The benchmark gate: every language's per-call figures as ratios to a reference measured in the
# same run, compared with the committed baseline (bench/baseline.json: the machine, the date, a
# ratio per row, the tolerance). Not part of `make test` (speed is never asserted in tests); run
# it before resolving any change that touches a hot path.
#
#   make bench-check            every language's check mode (at most 5 minutes warm), then the
#                               table; fails when a ratio is worse than its baseline by more than
#                               the tolerance (bench/check.py)
#   make bench-check UPDATE=1   rewrite the baseline from this run, on purpose (say why in the
#                               commit)
#   make bench-check ONLY=rust,go   some sources only
#   make bench-check-service    the service's rows alone (cli/bench/check.py: one keep-alive
#                               client minting against the same client decoding)

.PHONY: bench-check bench-check-service

BENCH_CHECK_FLAGS = $(if $(UPDATE),--update) $(if $(ONLY),--only $(ONLY))

bench-check: build-cli
	$(call say,bench-check: every language's per-call ratios against bench/baseline.json)
	python3 bench/check.py $(BENCH_CHECK_FLAGS)

bench-check-service: build-cli
	@python3 cli/bench/check.py $(CLI_BIN) 2 3
