# The B-tree benchmark (verify/bench/pg/btree.py): polyflake bigint keys against UUIDv4 and UUIDv7 as
# primary keys of a real PostgreSQL 15 (Debian's) on a free loopback port in a temporary data
# directory: index size, leaf density and splits (pgstatindex/pgstattuple), insert rate with a
# small shared_buffers, the ratios beside the claims they test, and pictures against row count.
#
# Decisions: a throwaway PostgreSQL 15 (as the postgres user when run as root) with
# shared_buffers=32MB so the indexes outgrow the buffer pool, synchronous_commit=off (the index is
# measured, not the disk's flush) and autovacuum off (insert-only tables would be vacuumed at times
# that depend on the machine). Five tables: bigint-1node (one generator), bigint-fleet (16
# generators on a simulated clock at 50,000 rows/s, each row delayed by up to 2 ms), bigint-bulk
# (four writers at full speed, 256-ID chunks round-robin), uuidv7-fleet (the same fleet with RFC
# 9562 UUIDv7, method 1 counters, written in the benchmark) and uuidv4. Leaf splits are
# leaf_pages - 1 (PostgreSQL 15 has no split counter; in an insert-only index every leaf but the
# first came from a split).

DEPS_TARGETS += deps-bench-pg
TEST_TARGETS += test-bench-pg

ROWS ?= 5000000
PG_SHARED_BUFFERS ?= 32MB
BENCH_PG_OUT := $(CARGO_TARGET_DIR)/bench-pg
BENCH_PG_PY_PACKAGES := psycopg psycopg-binary

deps-bench-pg: deps-polyglot ## psycopg (the PostgreSQL driver) in .venv
	$(call say,B-tree benchmark: psycopg (PostgreSQL driver) in .venv)
	@$(B) pip-missing $(PY) $(BENCH_PG_PY_PACKAGES)

bench-pg: deps-apt deps-bench-pg build-python ## [long] the full run (minutes; ROWS=5000000 PG_SHARED_BUFFERS=32MB) into target/bench-pg/: report.md, results.json, btree.png
	$(call say,B-tree benchmark: $(ROWS) rows per key kind in a throwaway PostgreSQL (long))
	BENCH_PG_COMMAND="make bench-pg ROWS=$(ROWS)" $(PY) verify/bench/pg/btree.py --rows $(ROWS) \
	  --shared-buffers $(PG_SHARED_BUFFERS) --out $(BENCH_PG_OUT)

# --fleet-rate 100: the fleets' 10,000 rows span 100 s of simulated time, past the core's 60 s
# forward-step check, as the full run's 5 million rows do.
test-bench-pg: deps-apt deps-bench-pg build-python ## [part] the B-tree benchmark on 10,000 rows, to keep it working (the figures are make bench-pg's)
	$(call say,B-tree benchmark on 10000 rows (keeps it working; the figures are make bench-pg's))
	BENCH_PG_COMMAND="make test-bench-pg" $(PY) verify/bench/pg/btree.py --rows 10000 --batch 1000 \
	  --fleet-rate 100 --out $(CARGO_TARGET_DIR)/bench-pg-test --check
