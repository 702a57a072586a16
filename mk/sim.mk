# The fleet simulator (sim/, binary polyflake-sim): N real core generators (default 1,024) on
# simulated clocks through NTP steps, a leap second (stepped, smeared, mixed), VM freezes,
# crashes and restarts through the file lease's restart guard, and a blue-green deploy, in
# simulated time. Every ID is kept and checked: a duplicate fails the run. sim/plot.py draws
# the pictures from its results.json (matplotlib from .venv).
#
#   make simulate [SIM_NODES=1024] [SIM_HOURS=1] [SIM_SEED=19]   every scenario, both modes,
#                    into target/sim/ (report.md, results.json, leap.png, blue-green.png,
#                    availability.png); prints the simulated node-hours per second
#   make test-sim    its unit tests, then every scenario on 16 nodes for a simulated hour
#                    (part of make test)

TEST_TARGETS += test-sim

.PHONY: build-sim simulate test-sim

SIM_NODES ?= 1024
SIM_HOURS ?= 1
SIM_SEED ?= 19
SIM_BIN := $(POLYFLAKE_RELEASE_DIR)/polyflake-sim

build-sim:
	$(call say,building the fleet simulator)
	$(CARGO) build --release -p polyflake-sim

simulate: deps-polyglot build-sim
	$(call say,fleet simulation: $(SIM_NODES) nodes and $(SIM_HOURS) simulated h per scenario)
	$(SIM_BIN) --nodes $(SIM_NODES) --hours $(SIM_HOURS) --seed $(SIM_SEED) --out $(CARGO_TARGET_DIR)/sim \
	  --command "make simulate SIM_NODES=$(SIM_NODES) SIM_HOURS=$(SIM_HOURS) SIM_SEED=$(SIM_SEED)"
	$(PY) sim/plot.py $(CARGO_TARGET_DIR)/sim/results.json

test-sim: deps-polyglot build-sim
	$(call say,fleet simulator: unit tests then every scenario on 16 nodes for a simulated hour)
	$(CARGO) test --release -q -p polyflake-sim
	$(SIM_BIN) --nodes 16 --hours 1 --out $(CARGO_TARGET_DIR)/sim-test --command "make test-sim"
	$(PY) sim/plot.py $(CARGO_TARGET_DIR)/sim-test/results.json
