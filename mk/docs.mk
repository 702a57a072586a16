# The docs' links (issue 27): every relative link and #anchor in README.md, docs/*.md,
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
