# Go: the module at go/ (package polyflake, cgo over the C ABI, the library found with
# pkg-config), its tests and examples, the cross-language tests in tests/go that use it, and the
# Go participant of the polyglot run. The C library and polyflake.pc come from mk/c.mk (build-c).
#
#   make test-go    go vet, and go test of go/ (unit tests, runnable examples, a fixed node id's
#                   restart guard between processes (go/restart_test.go: handovers after Close,
#                   os.Exit and SIGKILL, restarts under faketime, a monotonic lead, lease and
#                   static, a user clock, the kernel's clock word under an adjtimex stand-in), the
#                   fuzz targets' seeds and testdata/fuzz, then a short fuzzing run of each
#                   target); the restarts under faketime again with -tags polyflake_static; and of
#                   tests/go (the layout and UUIDv7/ULID vectors, every scenario file on both clock
#                   sources, bad node sources, NULL checks of the C ABI, 8 goroutines, file leases,
#                   ZooKeeper leases against a real ZooKeeper from tests/stores/with_zookeeper.sh,
#                   health's JSON names against the core's source), then tests/go/link.sh: a small
#                   service built shared and with -tags polyflake_static against an SDK-shaped
#                   copy of the library, which is then moved and deleted (the static build still
#                   serves IDs, the shared one no longer starts; Go's build cache and the move)
#   make fuzz-go    each fuzz target of go/ for FUZZ_GO_TIME (default 60s); a failing input is
#                   written to go/testdata/fuzz/<target>/ and stays a regression case
#   make bench-go   NextID per call beside bwmarrin/snowflake and time.Now, with the floor under it
#                   (an empty cgo call, polyflake_next_id through cgo with no wrapper); the CPU
#                   per wall-second of a strict loop at 41/10/12's ceiling (also part of make bench-c)
#   make -s bench-check-go
#                   the Go rows of `make bench-check`: the tests/go benchmark binary's check mode,
#                   `target/go-bench/bench.test -check` (bench_test.go: each row's case and its
#                   reference, time.Now or bwmarrin's Generate or the raw cgo call, timed back to
#                   back in each of 201 rounds of ~1 ms, 21 rounds of ~20 ms where bwmarrin is
#                   capped; ratio = the median of the rounds' ratios); one JSON object a line on
#                   stdout, the binary's build on stderr; ~20 s warm
#   make build-polyglot-go  the polyglot participant: target/polyglot/participant_go
#
# Decisions: the go test -fuzz targets (go/fuzz_test.go) check the library's parsers against small
# models of the text rules written in Go (strconv for IDs, the 8-4-4-4-12 hex form for UUIDs,
# Crockford's alphabet with I/L/O for ULIDs) and by round trips, so a parser that accepts or reads
# differently fails, not only one that crashes. Go's fuzzer has no seed option: runs are
# reproduced from the inputs it saves in go/testdata/fuzz/, which go test replays.

DEPS_TARGETS += deps-go
BUILD_TARGETS += build-polyglot-go
TEST_TARGETS += test-go

.PHONY: deps-go test-go fuzz-go bench-go bench-go-binary bench-check-go build-polyglot-go

# The fuzz targets of go/fuzz_test.go (parsing: ID, UUID and ULID text, layout names,
# decode/compose), each against a model of the text rules written in Go.
GO_FUZZ_TARGETS := FuzzParseID FuzzParseUUID FuzzParseULID FuzzLayoutFromName FuzzDecodeCompose
# make test's short run counts executions, not seconds: with a few seconds, go test -fuzz can
# fail with "context deadline exceeded" when its baseline coverage pass outlasts the time on a
# busy machine.
GO_FUZZ_SHORT ?= 20000x
FUZZ_GO_TIME ?= 60s
# One fuzzing run per target (go test -fuzz takes one target at a time); one worker, as the
# machine is shared.
go_fuzz = cd go && for t in $(GO_FUZZ_TARGETS); do \
	  echo "--- $$t: -fuzztime $(1)"; \
	  $(C_ENV) go test -run '^$$' -fuzz "^$$t$$" -fuzztime $(1) -parallel 1 . 2>&1 | tail -n 4; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || exit 1; done

# The module's own test programs use nothing outside the standard library; tests/go's benchmark
# compares with github.com/bwmarrin/snowflake (from the Go module proxy).
deps-go:
	$(call say,Go: the toolchain and the modules tests/go needs)
	@command -v go >/dev/null || { echo "go not found: install Go 1.21 or newer"; exit 1; }
	@go version
	cd tests/go && go mod download

build-polyglot-go: build-c
	$(call say,Go participant: $(POLYGLOT_DIR)/participant_go)
	@mkdir -p $(POLYGLOT_DIR)
	cd tests/polyglot/go && $(C_ENV) go vet . && $(C_ENV) go build -o $(POLYGLOT_DIR)/participant_go .

test-go: build-c
	$(call say,Go: go vet and gofmt; the go/ module's tests and runnable examples)
	@unformatted=$$(gofmt -l go tests/go tests/polyglot/go); \
	  [ -z "$$unformatted" ] || { echo "gofmt -l: $$unformatted"; exit 1; }
	cd go && $(C_ENV) go vet ./... && go vet -tags polyflake_static ./... && $(C_ENV) go test -count=1 -v ./... 2>&1 | grep -v -e '^=== RUN' -e '--- PASS'; exit $${PIPESTATUS[0]}
	$(call say,Go linked static (-tags polyflake_static): a restart with the clock stepped back (faketime))
	cd go && $(C_ENV) go test -count=1 -v -tags polyflake_static -run '^TestRestartWithTheClockSteppedBack$$' . 2>&1 | grep -v '^=== RUN'; exit $${PIPESTATUS[0]}
	$(call say,Go: a short fuzzing run of each parser (-fuzztime $(GO_FUZZ_SHORT) per target))
	$(call go_fuzz,$(GO_FUZZ_SHORT))
	$(call say,Go through the go/ module: vectors and scenarios on both clock sources and leases and goroutines)
	cd tests/go && $(C_ENV) go vet ./... && go vet -tags polyflake_static ./... && \
	  ../stores/with_zookeeper.sh bash -c 'go test -count=1 -v ./... 2>&1 | grep -v -e "^=== RUN" -e "--- PASS"; exit $${PIPESTATUS[0]}'
	$(call say,Go: a service linked shared and static (-tags polyflake_static); the SDK moved and then deleted)
	bash tests/go/link.sh $(ROOT) $(C_LIBDIR)

fuzz-go: build-c
	$(call say,Go: each fuzz target for $(FUZZ_GO_TIME))
	$(call go_fuzz,$(FUZZ_GO_TIME))

# The benchmark binary of tests/go (bench_test.go and floor.go; go test -c, cached by Go).
GO_BENCH_BIN := $(CARGO_TARGET_DIR)/go-bench/bench.test
bench-go-binary: build-c
	@mkdir -p $(dir $(GO_BENCH_BIN))
	cd tests/go && $(C_ENV) go test -c -o $(GO_BENCH_BIN) .

# Interleaved rounds of every benchmark (tests/go/bench.py), medians and ratios to bwmarrin and
# time.Now; then the ceiling.
GO_BENCH_ROUNDS ?= 7
bench-go: bench-go-binary
	$(call say,Go: NextID per call beside bwmarrin/snowflake (both where neither can exhaust its ms) and time.Now; the cgo floor; the ceiling's CPU)
	cd tests/go && python3 bench.py $(GO_BENCH_ROUNDS) 1s $(GO_BENCH_BIN)

# stdout carries the rows alone: the binary is made by a sub-make writing to stderr.
bench-check-go:
	@$(MAKE) --no-print-directory bench-go-binary >&2
	@$(GO_BENCH_BIN) -check
