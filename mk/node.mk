# The Node binding (node/): a napi-rs addon, its generated index.js/index.d.ts, and its tests.
#
#   make build-node   npm ci in node/ when node_modules is missing, then napi build --release
#   make test-node    fail if index.js/index.d.ts drift from the Rust source (and node/types.d.ts,
#                     the TypeScript-only types napi build puts first), then node --test beside a
#                     real ZooKeeper (tests/stores/with_zookeeper.sh: fromZooKeeper's tests) (incl.
#                     file leases across child processes, an etcd lease on a real etcd started by
#                     the test: Debian's etcd-server and etcd-client, the quiet faults: slot files
#                     deleted under a live holder, forward clock steps, the same-input table; the
#                     UUIDv7/ULID vectors and scenarios on both clock sources; the async forms;
#                     collectMetrics scraped; the Express example run and hit over HTTP; every
#                     snippet of README.md's Node section and docs/node.md run and type-checked;
#                     the TypeScript unions against the core's lists, isPolyflakeError, tsc --strict
#                     refusing a wrong literal: test/types.test.js; a fixed node id's restart guard
#                     with real processes, the clock stepped back under faketime:
#                     test/static-guard.test.js; maxClockErrorMs under an LD_PRELOAD adjtimex built
#                     with cc: test/clock-sync.test.js). Each test file claims node ids in a host
#                     scope and a state directory of its own (test/helpers.js). tests/dist/node_guide.sh
#                     (make test-dist) runs docs/node.md again against the installed packages
#   make build-polyglot-node
#                     the uniqueness run's Node participant, run as
#                     `node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH` (needs the addon)
#   make bench-node   nextId() (precise and coarse clock, sync and async) beside Date.now,
#                     randomUUID and @sapphire/snowflake; uuid7() beside uuid's v7() and uuidv7's;
#                     the Node-API floor (node/bench/floor.c); CPU per wall-second at the 41/10/12
#                     ceiling (benchmark-only packages go into node/bench/node_modules)
#   make -s bench-check-node
#                     the Node rows of `make bench-check`: `node --expose-gc bench/bench.js --check`
#                     in node/, one JSON object a line on stdout ({"row", "ns", "reference",
#                     "reference_ns", "ratio"}; a row's case and its reference timed back to back in
#                     each of 301 rounds of ~1 ms timings, ratio = the median of the rounds'
#                     ratios); the prerequisites are made first, their output on stderr; ~12 s warm

# Debian packages: mk/packages.mk.
DEPS_TARGETS += deps-node
BUILD_TARGETS += build-node build-polyglot-node
TEST_TARGETS += test-node

.PHONY: deps-node build-node check-node-generated test-node bench-node bench-node-ready \
	bench-check-node build-polyglot-node

NODE_DIR := $(ROOT)/node

deps-node:
	$(call say,Node: node and npm and node/node_modules (npm ci when missing))
	@command -v node >/dev/null || { echo "node not found: install Node.js 18 or newer"; exit 1; }
	@command -v npm >/dev/null || { echo "npm not found: install npm"; exit 1; }
	@echo "node $$(node --version), npm $$(npm --version)"
	$(call npm_missing,$(NODE_DIR),@napi-rs/cli typescript prom-client express,--ignore-scripts)

# napi build runs cargo (release) and regenerates index.js and index.d.ts from the Rust source.
build-node: deps-node
	$(call say,Node: building the addon (napi build --platform --release))
	cd $(NODE_DIR) && ./node_modules/.bin/napi build --platform --release --features workspace-hack

# Like rustls-ffi's header check: the build just regenerated the files; any diff is drift.
check-node-generated: build-node
	$(call say,Node: index.js and index.d.ts match the Rust source)
	@if git -C $(ROOT) rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  if ! git -C $(ROOT) diff --exit-code --stat -- node/index.js node/index.d.ts; then \
	    echo "node/index.js or node/index.d.ts changed when regenerated: commit the regenerated files"; \
	    exit 1; \
	  fi; \
	  echo "no drift"; \
	else echo "not a git checkout: drift check skipped"; fi

# with_zookeeper.sh appends the ensemble as the command's last argument: here it becomes sh's $1,
# unused (the tests read POLYFLAKE_TEST_ZOOKEEPER), so that node --test does not take it for a file.
test-node: check-node-generated
	$(call say,Node: node --test beside a real ZooKeeper (scenarios on both clocks; layout and format vectors; async; metrics; Express; workers; child processes; leases; etcd; ZooKeeper; quiet faults; the restart guard under faketime; clock synchronization; bad input; TypeScript types; docs))
	cd $(NODE_DIR) && $(ROOT)/tests/stores/with_zookeeper.sh sh -c 'exec node --test test/' node-tests

# The participant is plain JS over the addon: building it is building the addon, then a syntax check.
build-polyglot-node: build-node
	$(call say,polyglot: the Node participant (node tests/polyglot/participant.js))
	node --check $(ROOT)/tests/polyglot/participant.js

# The floor probe (node/bench/floor.c): two Node-API functions that return a constant ID, built
# with cc against the running node's own headers (every Node.js build ships include/node).
NODE_FLOOR := $(CARGO_TARGET_DIR)/node-bench/floor.node
NODE_INCLUDE = $(shell node -p "require('path').join(process.execPath, '..', '..', 'include', 'node')")

$(NODE_FLOOR): $(NODE_DIR)/bench/floor.c
	@test -f $(NODE_INCLUDE)/node_api.h || { echo "node_api.h not found in $(NODE_INCLUDE)"; exit 1; }
	@mkdir -p $(dir $@)
	cc -O2 -Wall -shared -fPIC -I$(NODE_INCLUDE) -o $@ $<

# What both benchmark modes need: the addon, the comparison packages (not part of test), the probe.
bench-node-ready: build-node $(NODE_FLOOR)
	$(call npm_missing,$(NODE_DIR)/bench,@sapphire/snowflake uuid uuidv7)

bench-node: bench-node-ready
	$(call say,Node benchmark (node --expose-gc bench/bench.js))
	cd $(NODE_DIR) && node --expose-gc bench/bench.js

# stdout carries the rows alone: the prerequisites are made by a sub-make writing to stderr.
bench-check-node:
	@$(MAKE) --no-print-directory bench-node-ready >&2
	@cd $(NODE_DIR) && node --expose-gc bench/bench.js --check
