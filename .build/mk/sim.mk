# The fleet simulator (verify/sim/, binary polyflake-sim): N real core generators (default 1,024) on
# simulated clocks through NTP steps, a leap second (stepped, smeared, mixed), VM freezes,
# crashes and restarts through the file lease's restart guard, and a blue-green deploy, in
# simulated time. Every ID is kept and checked: a duplicate fails the run. verify/sim/plot.py draws
# the pictures from its results.json (matplotlib from .venv).
#
# Decisions:
# - Real generators, simulated time: every node is a real core Generator on its own ManualClock;
#   nothing sleeps. Whole elapsed milliseconds move it with elapse (wall and boot clocks
#   together), whatever the clock model adds (drift, slew, smear, steps) with advance, a step of
#   the wall clock alone, so the core's forward-step check sees what a real host would show it.
# - The clock model: per node an initial error of +-2 ms and a drift of +-20 ppm, slewed out by an
#   NTP poll every 64 s (at most 500 ppm). A step back corrects a clock that was ahead: an
#   excursion puts it 1 to 500 ms ahead (log-uniform) and the next poll steps it back. The
#   (hypothetical) leap second is at 2027-01-01T00:00:00Z: a step sets every stepping node back
#   1 s at once; a smear slews 1 s over the 24 h from noon to noon; the mixed fleet steps on even
#   node indexes and smears on odd ones. VM freezes (0.1 to 30 s) serve nothing (requests then are
#   unserved, not refused); on resume both clocks jump over the pause and the lease renews at once.
# - Strict waits are simulated, not slept: calls use try_next_id and a call that would sleep is
#   retried at the next simulated millisecond (counted as waited); a burst's monotonic calls take
#   one next_ids reservation.
# - Availability is measured on the generator: after every refusal, step, restart and resume the
#   simulator asks health() and asks again when the health says the cause should be over; frozen
#   and down node-time is counted apart from refusing. Every ID of a run is kept and radix-sorted:
#   any repeat fails the run. A cross-node inversion is an ID smaller than one issued before it
#   by a millisecond or more of its timestamp (within a millisecond IDs sort by node id).
# - Leases are real file leases (on /dev/shm when it exists), renewed by the simulator every
#   reserve / 5 of simulated time (Generator::renew_lease: the core's thread runs on real time,
#   which a simulation outruns). A crash is Generator::abandon; the restart (0.5 to 30 s later)
#   has the same identity; a generator that cannot be built is retried with Kubernetes' crash-loop
#   back-off (10 s doubling to 5 min). The blue-green deploy on 41/10/12 with 1,024 nodes per
#   colour shows the ceiling of docs/node-ids.md (green cannot lease until blue is gone).
# - Deterministic from the seed: each node has its own random streams, so the strict and
#   monotonic runs see identical requests and faults. One exception: the core's renewal thread
#   also renews R on real time, so now and then a crashed holder's successor waits a little longer
#   (two IDs in ten million differed between two runs of crash-restart).

TEST_TARGETS += test-sim

SIM_NODES ?= 1024
SIM_HOURS ?= 1
SIM_SEED ?= 19
SIM_BIN := $(POLYFLAKE_RELEASE_DIR)/polyflake-sim

build-sim: ## the fleet simulator, target/<host triple>/release/polyflake-sim
	$(call say,building the fleet simulator)
	$(CARGO) build --release -p polyflake-sim

simulate: deps-polyglot build-sim ## [long] every scenario, both modes (SIM_NODES=1024 SIM_HOURS=1 SIM_SEED=19), into target/sim/: report.md, results.json, leap.png, blue-green.png, availability.png; prints the simulated node-hours per second
	$(call say,fleet simulation: $(SIM_NODES) nodes and $(SIM_HOURS) simulated h per scenario)
	$(SIM_BIN) --nodes $(SIM_NODES) --hours $(SIM_HOURS) --seed $(SIM_SEED) --out $(CARGO_TARGET_DIR)/sim \
	  --command "make simulate SIM_NODES=$(SIM_NODES) SIM_HOURS=$(SIM_HOURS) SIM_SEED=$(SIM_SEED)"
	$(PY) verify/sim/plot.py $(CARGO_TARGET_DIR)/sim/results.json

test-sim: deps-polyglot build-sim ## [part] the simulator's unit tests, then every scenario on 16 nodes for a simulated hour
	$(call say,fleet simulator: unit tests then every scenario on 16 nodes for a simulated hour)
	$(CARGO) test --release -q -p polyflake-sim
	$(SIM_BIN) --nodes 16 --hours 1 --out $(CARGO_TARGET_DIR)/sim-test --command "make test-sim"
	$(PY) verify/sim/plot.py $(CARGO_TARGET_DIR)/sim-test/results.json
