# The docs checked against the project, with Python's standard library only; each checker's own
# test first (it must fail with file:line on a planted mistake), then the check itself.

TEST_TARGETS += test-docs-links test-docs-defaults test-docs-facts

test-docs-links: ## [part] every relative link and #anchor of README.md, docs/*.md, ffi-c/sdk/README-C.md, CHANGELOG.md and BENCHMARKS.md resolves (GitHub's slug rules); external links checked for form only, never fetched
	$(call say,docs: the link checker's own test; then every relative link and anchor of README.md docs/*.md ffi-c/sdk/README-C.md CHANGELOG.md BENCHMARKS.md)
	python3 tests/docs/test_check_links.py
	python3 tests/docs/check_links.py

test-docs-defaults: ## [part] every statement of a shared generator setting's default (docs, the C header, the Go docs, the Python stubs and signatures, the Node types) states the core's Settings::default()
	$(call say,docs: the defaults checker's own test; then every stated default of a shared generator setting against the core's Settings::default())
	python3 tests/docs/test_check_defaults.py
	$(CARGO) run --release -q -p polyflake --example settings_defaults > $(CARGO_TARGET_DIR)/settings-defaults.json
	python3 tests/docs/check_defaults.py --defaults $(CARGO_TARGET_DIR)/settings-defaults.json

# The facts are read from the source (no build): RECORD_LEN and RECORD_LEN_V0
# (core/src/lease/record.rs), DEFAULT_RESERVE_MS (core/src/lease/options.rs) and the mark's name
# (core/src/lease/host/mark.rs), against the docs, module docs, header, Go docs, stubs and makefiles.
test-docs-facts: ## [part] every statement of the lease record's size, the default reserve and a fixed node id's mark name states what the code defines
	$(call say,docs: the facts checker's own test; then every stated lease record size and default reserve and mark name against the code)
	python3 tests/docs/test_check_facts.py
	python3 tests/docs/check_facts.py
