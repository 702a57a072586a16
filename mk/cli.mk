# The polyflake command line and HTTP service (cli/, binary `polyflake`).
#
#   make build-cli   target/release/polyflake (install with: cargo install --path cli)
#   make test-cli    commands and the running service on 127.0.0.1: IDs as strings and unique,
#                    503 during a rewind (hidden --test-clock), metrics, bad input, a seeded fuzz
#                    run, file leases, the restart guard, a real etcd lease, SIGTERM; the README
#                    session
#   make demo-cli    decode the design text's literal, list the layouts, mint three IDs
#   make bench-cli   load benchmark of `serve` from loopback with wrk (count=1 and count=100)

# protoc: the core's etcd lease (etcd-client) needs it to build; etcd-server: the service's etcd
# lease test runs a real one on loopback; curl: the load benchmark's request check.
APT_PACKAGES += protobuf-compiler etcd-server curl
BUILD_TARGETS += build-cli
TEST_TARGETS += test-cli
DEMO_TARGETS += demo-cli

.PHONY: build-cli test-cli demo-cli bench-cli deps-bench-cli

CLI_BIN := $(CARGO_TARGET_DIR)/release/polyflake
CLI_BENCH_SECONDS ?= 10

build-cli:
	$(call say,building the polyflake CLI and service)
	$(CARGO) build --release -p polyflake-cli

test-cli: build-cli
	$(call say,CLI and service tests against the running binary on 127.0.0.1)
	$(CARGO) test --release -p polyflake-cli

demo-cli: build-cli
	$(call say,CLI demo: decode the design literal then list layouts then mint three IDs on node 37)
	$(CLI_BIN) decode 141264821508263936
	$(CLI_BIN) layouts
	$(CLI_BIN) next -n 3 --node-id 37

deps-bench-cli:
	$(call say,load generator: wrk (Debian))
	@if command -v wrk >/dev/null; then echo "wrk present"; else \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk; fi

bench: bench-cli
bench-cli: build-cli deps-bench-cli
	$(call say,benchmark: polyflake serve under wrk from loopback ($(CLI_BENCH_SECONDS) s per run))
	cli/bench/load.sh $(CLI_BIN) $(CLI_BENCH_SECONDS)
