# The docs' links: every relative link and #anchor in README.md, docs/*.md,
# sdk/README-C.md, CHANGELOG.md and BENCHMARKS.md resolves (the file exists, the anchor is a
# heading by GitHub's slug rules); external http(s) links are checked for form only, never
# fetched. Python's standard library only.
#
#   make test-docs-links   the checker's own test (it must name file:line of each broken link),
#                          then the check of the project's Markdown (part of make test)

TEST_TARGETS += test-docs-links

.PHONY: test-docs-links

test-docs-links:
	$(call say,docs: the link checker's own test; then every relative link and anchor of README.md docs/*.md sdk/README-C.md CHANGELOG.md BENCHMARKS.md)
	python3 tests/docs/test_check_links.py
	python3 tests/docs/check_links.py

# The shared generator settings' defaults: every statement of one in the docs, the C
# header, the Go docs, the Python stubs and signatures and the Node types states the core's
# figure (`Settings::default()`, printed by the settings_defaults example).
#
#   make test-docs-defaults   the checker's own test (a wrong figure fails with file:line), then
#                             the check of every statement against the core

TEST_TARGETS += test-docs-defaults

.PHONY: test-docs-defaults

test-docs-defaults:
	$(call say,docs: the defaults checker's own test; then every stated default of a shared generator setting against the core's Settings::default())
	python3 tests/docs/test_check_defaults.py
	$(CARGO) run --release -q -p polyflake --example settings_defaults > $(CARGO_TARGET_DIR)/settings-defaults.json
	python3 tests/docs/check_defaults.py --defaults $(CARGO_TARGET_DIR)/settings-defaults.json

# Facts the docs restate from the code: the lease record's size (RECORD_LEN and the previous
# version's RECORD_LEN_V0, core/src/lease/record.rs), the default reserve (DEFAULT_RESERVE_MS,
# core/src/lease/options.rs) and the name of a fixed node id's mark (core/src/lease/host/mark.rs),
# read from the source (no build), against every statement of them in the docs, the module docs,
# the header, the Go docs, the stubs and the Makefile's headers.
#
#   make test-docs-facts   the checker's own test (a wrong figure fails with file:line), then the
#                          check of every statement against the code (part of make test)

TEST_TARGETS += test-docs-facts

.PHONY: test-docs-facts

test-docs-facts:
	$(call say,docs: the facts checker's own test; then every stated lease record size and default reserve and mark name against the code)
	python3 tests/docs/test_check_facts.py
	python3 tests/docs/check_facts.py
