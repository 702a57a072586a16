# The Python binding (python/): a PyO3 module built by maturin into an abi3 wheel, installed into
# the project venv (.venv) and tested there, never from the source tree.
#
#   make build-python   build the wheel (target/wheels-python/) and install it into .venv
#   make test-python    stubs checked with mypy.stubtest (the same keywords, types and defaults as
#                       the signatures help() shows), then pytest against the installed wheel
#                       (with a real etcd, a real PostgreSQL 15, the FastAPI example on uvicorn,
#                       and a real ZooKeeper: pytest runs inside tests/stores/with_zookeeper.sh;
#                       docs/python.md's snippets and the example also under mypy --strict; the
#                       restart guard's holder processes, some under faketime, and the kernel's
#                       clock word through core/tests/support/fake_adjtimex.c built with cc:
#                       both from mk/packages.mk)
#
# The guide against the published wheel (installed from a package index, no Rust) is
# tests/dist/python_guide.sh, run by `make test-dist` (mk/dist.mk).
#   make bench-python   next_id beside time.time_ns, uuid4, uuid_utils.uuid7, snowflake-id; the
#                       coarse clock, the async fast path, uuid7() beside uuid_utils; a strict
#                       tight loop at the layout's ceiling (CPU-s per wall-s) beside snowflake-id
#   make bench-check-python   the benchmark gate's rows (make bench-check, mk/bench-check.mk):
#                       JSON lines on stdout, about 5 s after the wheel's build; underneath,
#                       from python/tests: ../../.venv/bin/python ../bench/bench.py --check
#   make bench-python-floor   what a call costs with nothing behind it (PyO3's #[pymethods] and
#                       the METH_NOARGS function next_id() is) beside time.time_ns and next_id:
#                       python/bench/floor.py on the module python/bench/floor/ (built here, not
#                       shipped)
#   make build-polyglot-python   the uniqueness run's Python participant (tests/polyglot/
#                       participant.py, run with .venv/bin/python against the installed wheel)

# Debian packages: mk/packages.mk.
DEPS_TARGETS += deps-python
BUILD_TARGETS += build-python build-polyglot-python
TEST_TARGETS += test-python

.PHONY: deps-python build-python test-python bench-python bench-check-python bench-python-floor
.PHONY: build-polyglot-python

PY_VENV := $(ROOT)/.venv
PY := $(PY_VENV)/bin/python
PY_WHEELS := $(CARGO_TARGET_DIR)/wheels-python
PY_TOOLS := maturin pytest mypy hypothesis
# What the tests use besides: the optional prometheus extra, the FastAPI example's stack, and
# gunicorn (the pre-fork server the fork tests run with 4 workers).
PY_TEST_PACKAGES := prometheus-client fastapi uvicorn gunicorn==27.0.1
# What the benchmark compares against; installed for `make bench-python` only.
PY_BENCH_PACKAGES := uuid-utils snowflake-id
# Where the tests run: a directory with no `polyflake` in it, so the import is the installed one.
PY_TESTDIR := $(ROOT)/python/tests

deps-python:
	$(call say,Python venv $(PY_VENV) with $(PY_TOOLS) $(PY_TEST_PACKAGES))
	@command -v python3 >/dev/null || { echo "python3 not found"; exit 1; }
	@if [ -x $(PY) ]; then echo "venv present: $$($(PY) --version)"; \
	else echo "creating $(PY_VENV)"; python3 -m venv $(PY_VENV); fi
	$(call pip_missing,$(PY),$(PY_TOOLS) $(PY_TEST_PACKAGES))

build-python: deps-python
	$(call say,building the polyflake wheel with maturin and installing it into .venv)
	@rm -rf $(PY_WHEELS)
	$(PY_VENV)/bin/maturin build --release --strip --features workspace-hack -i $(PY) -m python/Cargo.toml -o $(PY_WHEELS)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $(PY_WHEELS)/polyflake-*.whl

build-polyglot-python: build-python
	$(call say,Python participant of the uniqueness run: tests/polyglot/participant.py on the installed wheel)
	$(PY) -m py_compile $(ROOT)/tests/polyglot/participant.py
	cd $(PY_TESTDIR) && $(PY) -c 'import polyflake; print("participant uses polyflake", polyflake.__version__, "from", polyflake.__file__)'

test-python: build-python
	$(call say,Python: stubs (mypy.stubtest) and pytest against the installed wheel)
	cd $(PY_TESTDIR) && MYPY_CACHE_DIR=$(CARGO_TARGET_DIR)/mypy-cache $(PY) -m mypy.stubtest polyflake
	cd $(PY_TESTDIR) && CI=true bash $(ROOT)/tests/stores/with_zookeeper.sh \
	  sh -c 'exec "$$1" -m pytest -p no:cacheprovider -q .' sh $(PY)

bench-python: build-python
	$(call say,Python benchmark (installs $(PY_BENCH_PACKAGES) into .venv for this only))
	$(call pip_missing,$(PY),$(PY_BENCH_PACKAGES))
	cd $(PY_TESTDIR) && $(PY) $(ROOT)/python/bench/bench.py

# Quiet: stdout carries the rows alone (the build's and pip's words go to stderr).
bench-check-python:
	@$(MAKE) -s --no-print-directory build-python >&2
	$(call pip_missing,$(PY),$(PY_BENCH_PACKAGES)) >&2
	@cd $(PY_TESTDIR) && $(PY) $(ROOT)/python/bench/bench.py --check

# Its own workspace and lock file (python/bench/floor/Cargo.lock), built into target/python-floor.
PY_FLOOR := $(CARGO_TARGET_DIR)/python-floor
bench-python-floor: build-python
	$(call say,Python call floor: python/bench/floor/ built into $(PY_FLOOR)/module; next_id beside it)
	PYO3_BUILD_EXTENSION_MODULE=1 PYO3_PYTHON=$(PY) CARGO_TARGET_DIR=$(PY_FLOOR) \
	  cargo build --release --locked -q --manifest-path python/bench/floor/Cargo.toml
	mkdir -p $(PY_FLOOR)/module && cp $(PY_FLOOR)/release/lib_floor.so $(PY_FLOOR)/module/_floor.abi3.so
	cd $(PY_TESTDIR) && $(PY) $(ROOT)/python/bench/floor.py $(PY_FLOOR)/module
