# The polyflake command line (cli/, binary `polyflake`; install with `cargo install --path cli`)
# and the HTTP service it runs (service/, the crate polyflake-service). Both are built and tested
# in one selection, so they compile the workspace's one set of features.

DEPS_TARGETS += deps-cli-py
BUILD_TARGETS += build-cli
TEST_TARGETS += test-cli
DEMO_TARGETS += demo-cli

CLI_BIN := $(POLYFLAKE_RELEASE_DIR)/polyflake
CLI_BENCH_SECONDS ?= 10
CLI_PY_PACKAGES := schemathesis==4.32.5 prometheus-client==0.26.0
# schemathesis: examples per API operation, and the seed (a failure replays from it). 300 from
# seed 14 is 682 requests over the 5 operations, about 10 s.
ST_MAX_EXAMPLES ?= 300
ST_SEED ?= 14

deps-cli-py: deps-python ## the service's Python test tools, pinned, in .venv: schemathesis, prometheus-client
	$(call say,service test tools in .venv: $(CLI_PY_PACKAGES))
	@$(B) pip-missing $(PY) $(CLI_PY_PACKAGES)
build-cli: ## the CLI and service: target/<host triple>/release/polyflake
	$(call say,building the polyflake CLI and service)
	$(CARGO) build --release -p polyflake-cli -p polyflake-service

test-cli: test-cli-rust test-cli-py ## [part] the CLI and the service: test-cli-rust, then test-cli-py
test-cli-rust: build-cli deps-cli-py ## [part] the service crate's unit and doc tests; commands and the running service on 127.0.0.1: IDs as strings and unique, 503 during a rewind, metrics, bad input, a seeded fuzz run, file leases, the restart guard, a real etcd lease, SIGTERM; the README session; hostile clients; cli/openapi.json against the code
	$(call say,CLI and service tests against the running binary on 127.0.0.1)
	$(CARGO) test --release -p polyflake-cli -p polyflake-service
test-cli-py: build-cli deps-cli-py ## [part] schemathesis --checks all on every operation of the live service's OpenAPI document (ST_MAX_EXAMPLES, ST_SEED; about 10 s), then /metrics parsed with prometheus_client
	$(call say,service: schemathesis --checks all on every operation of GET /openapi.json ($(ST_MAX_EXAMPLES) examples per operation and seed $(ST_SEED)) then /metrics through prometheus_client's parser)
	cd cli/tests/py && POLYFLAKE_BIN=$(CLI_BIN) ST_MAX_EXAMPLES=$(ST_MAX_EXAMPLES) ST_SEED=$(ST_SEED) \
	  $(PY) -m pytest -p no:cacheprovider -q .

openapi-cli: build-cli ## [tool] regenerate cli/openapi.json (OpenAPI 3.1) from the code
	$(call say,regenerating cli/openapi.json from the code (polyflake openapi))
	$(CLI_BIN) openapi > cli/openapi.json
demo-cli: build-cli ## CLI demo: decode the reference literal, list the layouts, mint three IDs
	$(call say,CLI demo: decode the design literal then list layouts then mint three IDs on node 37)
	$(CLI_BIN) decode 141264821508263936
	$(CLI_BIN) layouts
	$(CLI_BIN) next -n 3 --node-id 37

deps-bench-cli: deps-apt ## wrk and curl (Debian packages)
bench: bench-cli
bench-cli: build-cli deps-bench-cli ## [long] load benchmark of polyflake serve from loopback with wrk (count=1 and count=100; CLI_BENCH_SECONDS per run)
	$(call say,benchmark: polyflake serve under wrk from loopback ($(CLI_BENCH_SECONDS) s per run))
	cli/bench/load.sh $(CLI_BIN) $(CLI_BENCH_SECONDS)
