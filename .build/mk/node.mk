# The Node binding (node/): a napi-rs addon, its generated index.js/index.d.ts, and its tests.
# Each test file claims node ids in a host scope and a state directory of its own
# (test/helpers.js); tests/dist/node_guide.sh (make test-dist) runs docs/node.md again against the
# installed packages.

DEPS_TARGETS += deps-node
BUILD_TARGETS += build-node build-polyglot-node
TEST_TARGETS += test-node

NODE_DIR := $(ROOT)/node

deps-node: ## node, npm, and node/node_modules (npm ci when missing or when the lock file changed)
	$(call say,Node: node and npm and node/node_modules (npm ci when missing))
	@$(B) need node "install Node.js 18 or newer" && $(B) need npm "install npm"
	@echo "node $$(node --version), npm $$(npm --version)"
	@$(B) npm-missing $(NODE_DIR) "@napi-rs/cli typescript prom-client express" --ignore-scripts
# napi build runs cargo (release) and regenerates index.js and index.d.ts from the Rust source.
build-node: deps-node ## the addon: napi build --platform --release
	$(call say,Node: building the addon (napi build --platform --release))
	cd $(NODE_DIR) && ./node_modules/.bin/napi build --platform --release --features workspace-hack

check-node-generated: build-node ## index.js and index.d.ts as build-node just regenerated them are the committed ones (no drift from the Rust source)
	$(call say,Node: index.js and index.d.ts match the Rust source)
	@cd $(ROOT) && $(B) git-drift node/index.js node/index.d.ts

# with_zookeeper.sh appends the ensemble as the command's last argument: here it becomes sh's $1,
# unused (the tests read POLYFLAKE_TEST_ZOOKEEPER), so that node --test does not take it for a file.
test-node: check-node-generated ## [part] the generated files' drift, then node --test beside a real ZooKeeper: file leases across processes, a real etcd, the quiet faults, vectors and scenarios on both clocks, async forms, metrics, the Express example, README's and docs/node.md's snippets run and type-checked, the TypeScript types, the restart guard under faketime, the clock word
	$(call say,Node: node --test beside a real ZooKeeper (scenarios on both clocks; layout and format vectors; async; metrics; Express; workers; child processes; leases; etcd; ZooKeeper; quiet faults; the restart guard under faketime; clock synchronization; bad input; TypeScript types; docs))
	cd $(NODE_DIR) && $(ROOT)/tests/stores/with_zookeeper.sh sh -c 'exec node --test test/' node-tests

# The participant is plain JS over the addon: building it is building the addon, then a syntax check.
build-polyglot-node: build-node ## the uniqueness run's Node participant (node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH)
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

bench-node-ready: build-node $(NODE_FLOOR) ## what both benchmark modes need: the addon, the comparison packages (node/bench/node_modules), the floor probe
	@$(B) npm-missing $(NODE_DIR)/bench "@sapphire/snowflake uuid uuidv7"
bench-node: bench-node-ready ## [long] nextId() (precise and coarse, sync and async) beside Date.now, randomUUID and @sapphire/snowflake; uuid7() beside uuid's v7() and uuidv7's; the Node-API floor; CPU per wall-second at the 41/10/12 ceiling
	$(call say,Node benchmark (node --expose-gc bench/bench.js))
	cd $(NODE_DIR) && node --expose-gc bench/bench.js
# stdout carries the rows alone: the prerequisites are made by a sub-make writing to stderr.
bench-check-node: ## [long] the Node rows of make bench-check (make -s): node --expose-gc bench/bench.js --check (a row's case and its reference back to back in 301 rounds of ~1 ms; ratio = the median); ~12 s warm
	@$(MAKE) --no-print-directory bench-node-ready >&2
	@cd $(NODE_DIR) && node --expose-gc bench/bench.js --check
