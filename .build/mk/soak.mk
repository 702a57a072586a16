# The soak (verify/soak/; docs/reliability.md, "Soak"): `polyflake serve` on a file lease under
# wrk and the six-language polyglot run (round after round, on the same lease directory) at
# once; RSS and open descriptors of every process sampled every second must be flat after
# warm-up, and the lease directory must hold exactly what the live holders hold.
#
# The RSS bound, 1 MB/min after warm-up: a leak of one allocation per request would grow the
# service by tens of MB/min at the thousands of requests per second wrk drives, while the
# allocator's own drift stays well under it. The short run's window is 20 s, where the same
# noise extrapolates to more per minute: its bound is 6 MB/min. Descriptors must not grow at all.
#
# Decisions: the soak watches slopes, not levels (the bounds below). The polyglot participants live
# one round (1 s of minting) each, so their per-round peaks are compared over the rounds instead.
# The lease directory is checked after every round (only the service's slot held; slot files never
# more than the service's, the round's and those of rounds that ended within the 5 s reserve before
# it, whose slots may still be guarded) and at the end (no slot held).

TEST_TARGETS += test-soak

SOAK_SECONDS ?= 600
SOAK_WARMUP ?= 60

soak-prereqs: build-cli build-polyglot-rust build-polyglot-c build-polyglot-cpp build-polyglot-go build-polyglot-python build-polyglot-node ## the service and the polyglot participants the soak runs

test-soak: soak-prereqs ## [part] the 30-second soak (10 s warm-up; RSS slope bound 6 MB/min)
	$(call say,soak (short): 30 s of wrk on the service and polyglot rounds on one lease directory)
	$(PY) verify/soak/soak.py --seconds 30 --warmup 10 --max-rss-slope 6

soak: soak-prereqs ## [long] SOAK_SECONDS (600) after SOAK_WARMUP (60) s of wrk on the service and polyglot rounds on one lease directory; report in target/soak.json (figures in docs/reliability.md)
	$(call say,soak: $(SOAK_SECONDS) s of wrk on the service and polyglot rounds; report in $(CARGO_TARGET_DIR)/soak.json)
	$(PY) verify/soak/soak.py --seconds $(SOAK_SECONDS) --warmup $(SOAK_WARMUP) --report $(CARGO_TARGET_DIR)/soak.json
