# Coverage-guided fuzzing: cargo fuzz (libFuzzer, AddressSanitizer, debug assertions; nightly) on
# the targets in verify/fuzz/fuzz_targets/ (FUZZ_TARGETS; what each checks: docs/reliability.md,
# "Fuzzing"). A crash stops the run and leaves its input in verify/fuzz/artifacts/<t>/ (not checked in):
# fix the defect, then move the input into verify/fuzz/regressions/<t>/ so every `make test` replays it.
# Replay one input: $(CARGO_TARGET_DIR)/nightly/<host triple>/release/<t> FILE

DEPS_TARGETS += deps-fuzz
TEST_TARGETS += test-fuzz

CARGO_FUZZ_VERSION := 0.13.2
FUZZ_TOOLS := $(TOOLS_CACHE)/cargo-fuzz-$(CARGO_FUZZ_VERSION)
FUZZ_TOOLCHAIN ?= nightly
FUZZ_TARGETS := parse_id layout_name decode_compose service_body service_router lease_records
FUZZ_DIR := $(CARGO_TARGET_DIR)/fuzz
FUZZ_SEED ?= 14
FUZZ_SECONDS ?= 300
FUZZ_SHORT_RUNS ?= 20000
FUZZ_TARGET ?= parse_id
# cargo fuzz from our tools dir, building into the nightly target directory the sanitizer builds
# share (.build/mk/sanitize.mk); verify/fuzz/ takes the core and the service (service/) without the remote stores.
FUZZ_CARGO := PATH="$(FUZZ_TOOLS)/bin:$$PATH" $(CARGO) +$(FUZZ_TOOLCHAIN) fuzz
FUZZ_BUILD_FLAGS := --fuzz-dir verify/fuzz --target-dir $(CARGO_TARGET_DIR)/nightly
# $(1): target; $(2): the corpus directory libFuzzer adds to; $(3): libFuzzer options; $(4): --report.
fuzz_run = @$(B) fuzz-run $(4) $(FUZZ_DIR)/logs '$(FUZZ_CARGO) run $(FUZZ_BUILD_FLAGS)' $(1) $(2) $(3)

deps-fuzz: deps-sanitize ## cargo-fuzz 0.13.2, pinned, once per machine
	$(call say,fuzzing: cargo-fuzz $(CARGO_FUZZ_VERSION) (pinned) in $(FUZZ_TOOLS))
	@CARGO="$(CARGO)" $(B) cargo-tool $(TOOLS_CACHE) cargo-fuzz $(CARGO_FUZZ_VERSION) cargo-fuzz

build-fuzz: deps-fuzz ## the fuzz targets (cargo fuzz build into target/nightly)
	$(warm_now)
	$(call say,building the fuzz targets (cargo fuzz build; target dir $(CARGO_TARGET_DIR)/nightly))
	$(FUZZ_CARGO) build $(FUZZ_BUILD_FLAGS)

test-fuzz: build-fuzz ## [part] each target replays verify/fuzz/corpus/<t> and verify/fuzz/regressions/<t>, then FUZZ_SHORT_RUNS (20000) more executions from seed FUZZ_SEED
	$(call say,fuzzing (short): replay verify/fuzz/corpus and verify/fuzz/regressions then $(FUZZ_SHORT_RUNS) runs per target from seed $(FUZZ_SEED))
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-short-one FUZZ_TARGET=$$t || exit 1; done

# The short run adds what it finds to a scratch directory, never to the checked-in corpus.
fuzz-short-one: ## test-fuzz's run of FUZZ_TARGET
	@rm -rf $(FUZZ_DIR)/short/$(FUZZ_TARGET) && mkdir -p $(FUZZ_DIR)/short/$(FUZZ_TARGET)
	$(call fuzz_run,$(FUZZ_TARGET),$(FUZZ_DIR)/short/$(FUZZ_TARGET),-seed=$(FUZZ_SEED) -runs=$(FUZZ_SHORT_RUNS))

fuzz: build-fuzz ## [long] every target for FUZZ_SECONDS (300) each from seed FUZZ_SEED, on a corpus kept in target/fuzz/corpus (grown from verify/fuzz/corpus); executions per target in target/fuzz/report.txt
	$(call say,fuzzing: $(FUZZ_SECONDS) s per target from seed $(FUZZ_SEED); report in $(FUZZ_DIR)/report.txt)
	@mkdir -p $(FUZZ_DIR) && : > $(FUZZ_DIR)/report.txt
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-one FUZZ_TARGET=$$t || exit 1; done
	@cat $(FUZZ_DIR)/report.txt

fuzz-one: build-fuzz ## [long] one target the same way: make fuzz-one FUZZ_TARGET=parse_id
	@mkdir -p $(FUZZ_DIR)/corpus/$(FUZZ_TARGET)
	$(call fuzz_run,$(FUZZ_TARGET),$(FUZZ_DIR)/corpus/$(FUZZ_TARGET),-seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS),--report $(FUZZ_DIR)/report.txt $(FUZZ_SECONDS) $(FUZZ_SEED))

fuzz-cmin: build-fuzz ## [tool] minimise the grown corpora (target/fuzz/corpus) with verify/fuzz/corpus into verify/fuzz/corpus, to check in
	$(call say,minimising $(FUZZ_DIR)/corpus/<t> with verify/fuzz/corpus/<t> into verify/fuzz/corpus/<t>)
	@$(B) fuzz-cmin $(FUZZ_DIR)/logs '$(FUZZ_CARGO) run $(FUZZ_BUILD_FLAGS)' $(FUZZ_DIR)/corpus $(FUZZ_TARGETS)
