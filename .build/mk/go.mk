# Go: the module at go/ (package polyflake, cgo over the C ABI, the library found with
# pkg-config: build-c), its tests and examples, the cross-language tests in tests/go that use it,
# and the Go participant of the polyglot run.
#
# Decisions: the go test -fuzz targets (go/fuzz_test.go) check the library's parsers against small
# models of the text rules written in Go (strconv for IDs, the 8-4-4-4-12 hex form for UUIDs,
# Crockford's alphabet with I/L/O for ULIDs) and by round trips, so a parser that accepts or reads
# differently fails, not only one that crashes. Go's fuzzer has no seed option: runs are
# reproduced from the inputs it saves in go/testdata/fuzz/, which go test replays.

DEPS_TARGETS += deps-go
BUILD_TARGETS += build-polyglot-go
TEST_TARGETS += test-go

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

deps-go: ## the Go toolchain (1.21 or newer) and tests/go's modules (bwmarrin/snowflake, for the benchmark; go/ itself needs only the standard library)
	$(call say,Go: the toolchain and the modules tests/go needs)
	@$(B) need go "install Go 1.21 or newer" && go version
	cd tests/go && go mod download
build-polyglot-go: build-c ## the uniqueness run's Go participant: target/polyglot/participant_go
	$(call say,Go participant: $(POLYGLOT_DIR)/participant_go)
	@mkdir -p $(POLYGLOT_DIR)
	cd tests/polyglot/go && $(C_ENV) go vet . && $(C_ENV) go build -o $(POLYGLOT_DIR)/participant_go .

test-go: build-c ## [part] Go: gofmt, go vet; go/'s tests and examples (the restart guard between processes, under faketime and an adjtimex stand-in, also linked static), the fuzz targets' seeds, a short fuzzing run of each; tests/go (vectors, scenarios on both clocks, leases, a real ZooKeeper, 8 goroutines); a service linked shared and static against a moved, then deleted SDK (tests/go/link.sh)
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

fuzz-go: build-c ## [long] each fuzz target of go/ for FUZZ_GO_TIME (60s); a failing input is written to go/testdata/fuzz/<target>/ and stays a regression case
	$(call say,Go: each fuzz target for $(FUZZ_GO_TIME))
	$(call go_fuzz,$(FUZZ_GO_TIME))

GO_BENCH_BIN := $(CARGO_TARGET_DIR)/go-bench/bench.test
GO_BENCH_ROUNDS ?= 7
bench-go-binary: build-c ## the benchmark binary of tests/go (bench_test.go, floor.go; go test -c, cached by Go): target/go-bench/bench.test
	@mkdir -p $(dir $(GO_BENCH_BIN))
	cd tests/go && $(C_ENV) go test -c -o $(GO_BENCH_BIN) .
bench-go: bench-go-binary ## [long] NextID per call beside bwmarrin/snowflake and time.Now, in interleaved rounds (tests/go/bench.py: medians, ratios), with the floor under it (an empty cgo call; polyflake_next_id through cgo with no wrapper); the CPU per wall-second at 41/10/12's ceiling (also part of bench-c)
	$(call say,Go: NextID per call beside bwmarrin/snowflake (both where neither can exhaust its ms) and time.Now; the cgo floor; the ceiling's CPU)
	cd tests/go && python3 bench.py $(GO_BENCH_ROUNDS) 1s $(GO_BENCH_BIN)
# stdout carries the rows alone: the binary is made by a sub-make writing to stderr.
bench-check-go: ## [long] the Go rows of make bench-check (make -s): bench.test -check (each row's case and its reference back to back in 201 rounds of ~1 ms, 21 of ~20 ms where bwmarrin is capped; ratio = the median); ~20 s warm
	@$(MAKE) --no-print-directory bench-go-binary >&2
	@$(GO_BENCH_BIN) -check
