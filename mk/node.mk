# The Node binding (node/): a napi-rs addon, its generated index.js/index.d.ts, and its tests.
#
#   make build-node   npm ci in node/ when node_modules is missing, then napi build --release
#   make test-node    fail if index.js/index.d.ts drift from the Rust source (and node/types.d.ts,
#                     the TypeScript-only types napi build puts first), then node --test (incl. file
#                     leases across child processes, an etcd lease on a real etcd started by the
#                     test: Debian's etcd-server and etcd-client, and the quiet faults: slot files
#                     deleted under a live holder, forward clock steps, the same-input table)
#   make build-polyglot-node
#                     the uniqueness run's Node participant, run as
#                     `node tests/polyglot/participant.js LEASE_DIR SECONDS OUT_PATH` (needs the addon)
#   make bench-node   nextId() beside Date.now, randomUUID, @sapphire/snowflake and uuid v7
#                     (benchmark-only packages go into node/bench/node_modules)

# protoc: the core's etcd lease (etcd-client) needs it to build; etcd-server and etcd-client: the
# lease test starts a real etcd.
APT_PACKAGES += protobuf-compiler etcd-server etcd-client
DEPS_TARGETS += deps-node
BUILD_TARGETS += build-node build-polyglot-node
TEST_TARGETS += test-node

.PHONY: deps-node build-node check-node-generated test-node bench-node build-polyglot-node

NODE_DIR := $(ROOT)/node

deps-node:
	$(call say,Node: node and npm and node/node_modules (npm ci when missing))
	@command -v node >/dev/null || { echo "node not found: install Node.js 18 or newer"; exit 1; }
	@command -v npm >/dev/null || { echo "npm not found: install npm"; exit 1; }
	@echo "node $$(node --version), npm $$(npm --version)"
	@if [ -x $(NODE_DIR)/node_modules/.bin/napi ] && [ -d $(NODE_DIR)/node_modules/typescript ]; then \
	  echo "node/node_modules present"; \
	else \
	  echo "installing node/node_modules (npm ci; the addon is built by build-node)"; \
	  cd $(NODE_DIR) && CI=true npm ci --ignore-scripts --no-audit --no-fund; \
	fi

# napi build runs cargo (release) and regenerates index.js and index.d.ts from the Rust source.
build-node: deps-node
	$(call say,Node: building the addon (napi build --platform --release))
	cd $(NODE_DIR) && ./node_modules/.bin/napi build --platform --release

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

test-node: check-node-generated
	$(call say,Node: node --test (scenarios; layout vectors; workers; child processes; leases; etcd; quiet faults; bad input; same-input table; README))
	cd $(NODE_DIR) && node --test test/

# The participant is plain JS over the addon: building it is building the addon, then a syntax check.
build-polyglot-node: build-node
	$(call say,polyglot: the Node participant (node tests/polyglot/participant.js))
	node --check $(ROOT)/tests/polyglot/participant.js

bench-node: build-node
	$(call say,Node benchmark: installing its packages into node/bench (not part of test))
	@if [ -d $(NODE_DIR)/bench/node_modules/@sapphire/snowflake ] && [ -d $(NODE_DIR)/bench/node_modules/uuid ]; then \
	  echo "node/bench/node_modules present"; \
	else cd $(NODE_DIR)/bench && CI=true npm ci --no-audit --no-fund; fi
	cd $(NODE_DIR) && node --expose-gc bench/bench.js
