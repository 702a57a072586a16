# Coverage-guided fuzzing: cargo fuzz (libFuzzer, AddressSanitizer, debug assertions;
# nightly) on the targets in fuzz/fuzz_targets/:
#   parse_id        decimal ID text (polyflake::parse_id), id_from_i128, check_id
#   layout_name     layout names: presets and T/N/S (Layout::from_name), Layout::new
#   decode_compose  decode/compose round trips on every layout and epoch; IDs sort like fields
#   service_body    the service's body, test-clock body and {id} parsing (polyflake_cli::request)
#   service_router  the service's router in process: any method, target, query, type and body
#   lease_records   the lease stores' records: file slot records, remote marks, owner slots and
#                   slot tokens, ID-space records, slot names (polyflake::lease_records, the
#                   core's hidden `fuzzing` feature): accepted bytes re-encode to themselves
#
#   make fuzz           every target for FUZZ_SECONDS (default 300) each from seed FUZZ_SEED, on a
#                       corpus kept in $(CARGO_TARGET_DIR)/fuzz/corpus (grown from fuzz/corpus);
#                       executions per target go to $(CARGO_TARGET_DIR)/fuzz/report.txt
#   make fuzz-one FUZZ_TARGET=parse_id   one target, the same way
#   make test-fuzz      (part of `make test`) each target replays its checked-in corpus
#                       (fuzz/corpus/<t>) and regressions (fuzz/regressions/<t>), then runs
#                       FUZZ_SHORT_RUNS more executions from seed FUZZ_SEED: a fixed number of
#                       runs from a fixed seed on a fixed corpus is the same run every time
#   make fuzz-cmin      minimise the grown corpora into fuzz/corpus (to check in)
#
# A crash stops the run and leaves its input in fuzz/artifacts/<t>/ (not checked in): fix the
# defect, then move the input into fuzz/regressions/<t>/ so every `make test` replays it.
# Replay one input: $(CARGO_TARGET_DIR)/nightly/<host triple>/release/<t> FILE

DEPS_TARGETS += deps-fuzz
TEST_TARGETS += test-fuzz

.PHONY: deps-fuzz build-fuzz fuzz fuzz-one test-fuzz fuzz-short-one fuzz-cmin

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
# share (mk/sanitize.mk); fuzz/ takes the core and the CLI without the remote stores.
FUZZ_CARGO := PATH="$(FUZZ_TOOLS)/bin:$$PATH" $(CARGO) +$(FUZZ_TOOLCHAIN) fuzz
FUZZ_BUILD_FLAGS := --target-dir $(CARGO_TARGET_DIR)/nightly

deps-fuzz: deps-sanitize
	$(call say,fuzzing: cargo-fuzz $(CARGO_FUZZ_VERSION) (pinned) in $(FUZZ_TOOLS))
	$(call cargo_tool,cargo-fuzz,$(CARGO_FUZZ_VERSION),cargo-fuzz)

build-fuzz: deps-fuzz
	$(warm_now)
	$(call say,building the fuzz targets (cargo fuzz build; target dir $(CARGO_TARGET_DIR)/nightly))
	$(FUZZ_CARGO) build $(FUZZ_BUILD_FLAGS)

# $(1): target; $(2): libFuzzer options; $(3): the corpus directory libFuzzer adds to (the
# checked-in corpus and regressions are read, never written).
define fuzz_run
	@mkdir -p $(FUZZ_DIR)/logs; \
	regress=""; [ -d fuzz/regressions/$(1) ] && regress=fuzz/regressions/$(1); \
	echo "--- $(1): $(2)"; \
	$(FUZZ_CARGO) run $(FUZZ_BUILD_FLAGS) $(1) $(3) fuzz/corpus/$(1) $$regress -- $(2) -print_final_stats=1 \
	  > $(FUZZ_DIR)/logs/$(1).log 2>&1; rc=$$?; \
	execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/logs/$(1).log | tail -n 1); \
	rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_DIR)/logs/$(1).log | tail -n 1); \
	cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_DIR)/logs/$(1).log | tail -n 1); \
	echo "$(1): $${execs:-?} executions ($${rate:-?}/s), $${cov:-cov: ?}, exit $$rc"; \
	if [ $$rc -ne 0 ]; then grep -A4 'panicked at' $(FUZZ_DIR)/logs/$(1).log | head -n 20; \
	  grep 'ERROR: \|SUMMARY: \|Test unit written\|No such file\|^Error' $(FUZZ_DIR)/logs/$(1).log | head -n 10; \
	  echo "$(1) failed: the input is in fuzz/artifacts/$(1)/ (log: $(FUZZ_DIR)/logs/$(1).log)"; exit 1; fi
endef

test-fuzz: build-fuzz
	$(call say,fuzzing (short): replay fuzz/corpus and fuzz/regressions then $(FUZZ_SHORT_RUNS) runs per target from seed $(FUZZ_SEED))
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-short-one FUZZ_TARGET=$$t || exit 1; done

# The short run adds what it finds to a scratch directory, never to the checked-in corpus.
fuzz-short-one:
	@rm -rf $(FUZZ_DIR)/short/$(FUZZ_TARGET) && mkdir -p $(FUZZ_DIR)/short/$(FUZZ_TARGET)
	$(call fuzz_run,$(FUZZ_TARGET),-seed=$(FUZZ_SEED) -runs=$(FUZZ_SHORT_RUNS),$(FUZZ_DIR)/short/$(FUZZ_TARGET))

fuzz: build-fuzz
	$(call say,fuzzing: $(FUZZ_SECONDS) s per target from seed $(FUZZ_SEED); report in $(FUZZ_DIR)/report.txt)
	@mkdir -p $(FUZZ_DIR) && : > $(FUZZ_DIR)/report.txt
	@for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-one FUZZ_TARGET=$$t || exit 1; done
	@cat $(FUZZ_DIR)/report.txt

fuzz-one: build-fuzz
	@mkdir -p $(FUZZ_DIR)/corpus/$(FUZZ_TARGET)
	$(call fuzz_run,$(FUZZ_TARGET),-seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS),$(FUZZ_DIR)/corpus/$(FUZZ_TARGET))
	@execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/logs/$(FUZZ_TARGET).log | tail -n 1); \
	rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_DIR)/logs/$(FUZZ_TARGET).log | tail -n 1); \
	echo "$(FUZZ_TARGET) seconds=$(FUZZ_SECONDS) seed=$(FUZZ_SEED) executions=$$execs exec/s=$$rate corpus=$$(ls $(FUZZ_DIR)/corpus/$(FUZZ_TARGET) | wc -l)" \
	  >> $(FUZZ_DIR)/report.txt

fuzz-cmin: build-fuzz
	$(call say,minimising $(FUZZ_DIR)/corpus/<t> with fuzz/corpus/<t> into fuzz/corpus/<t>)
	@mkdir -p $(FUZZ_DIR)/logs; for t in $(FUZZ_TARGETS); do \
	  rm -rf $(FUZZ_DIR)/cmin/$$t; mkdir -p $(FUZZ_DIR)/cmin/$$t $(FUZZ_DIR)/corpus/$$t fuzz/corpus/$$t; \
	  $(FUZZ_CARGO) run $(FUZZ_BUILD_FLAGS) $$t $(FUZZ_DIR)/cmin/$$t fuzz/corpus/$$t $(FUZZ_DIR)/corpus/$$t -- -merge=1 \
	    > $(FUZZ_DIR)/logs/cmin-$$t.log 2>&1 || { tail -n 20 $(FUZZ_DIR)/logs/cmin-$$t.log; exit 1; }; \
	  rm -f fuzz/corpus/$$t/*; cp $(FUZZ_DIR)/cmin/$$t/* fuzz/corpus/$$t/; \
	  echo "$$t: $$(ls fuzz/corpus/$$t | wc -l) inputs"; done
