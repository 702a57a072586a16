# The Python binding (python/): a PyO3 module built by maturin into an abi3 wheel, installed into
# the project venv (.venv) and tested there, never from the source tree. The guide against the
# published wheel (installed from a package index, no Rust) is tests/dist/python_guide.sh, run by
# `make test-dist` (.build/mk/dist.mk).

DEPS_TARGETS += deps-python
BUILD_TARGETS += build-python build-polyglot-python
TEST_TARGETS += test-python

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
PY_FLOOR := $(CARGO_TARGET_DIR)/python-floor

deps-python: ## the project venv .venv with maturin, pytest, mypy, hypothesis and the tests' packages
	$(call say,Python venv $(PY_VENV) with $(PY_TOOLS) $(PY_TEST_PACKAGES))
	@$(B) venv $(PY_VENV) $(PY_TOOLS) $(PY_TEST_PACKAGES)
build-python: deps-python ## the wheel (target/wheels-python/), installed into .venv
	$(call say,building the polyflake wheel with maturin and installing it into .venv)
	@rm -rf $(PY_WHEELS)
	$(PY_VENV)/bin/maturin build --release --strip --features workspace-hack -i $(PY) -m python/Cargo.toml -o $(PY_WHEELS)
	$(PY) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $(PY_WHEELS)/polyflake-*.whl
build-polyglot-python: build-python ## the uniqueness run's Python participant (tests/polyglot/participant.py on the installed wheel)
	$(call say,Python participant of the uniqueness run: tests/polyglot/participant.py on the installed wheel)
	$(PY) -m py_compile $(ROOT)/tests/polyglot/participant.py
	cd $(PY_TESTDIR) && $(PY) -c 'import polyflake; print("participant uses polyflake", polyflake.__version__, "from", polyflake.__file__)'

test-python: build-python ## [part] the stubs against the module (mypy.stubtest), then pytest against the installed wheel beside a real etcd, PostgreSQL 15 and ZooKeeper: the FastAPI example on uvicorn, docs/python.md's snippets (also under mypy --strict), the restart guard's holders under faketime, the kernel's clock word
	$(call say,Python: stubs (mypy.stubtest) and pytest against the installed wheel)
	cd $(PY_TESTDIR) && MYPY_CACHE_DIR=$(CARGO_TARGET_DIR)/mypy-cache $(PY) -m mypy.stubtest polyflake
	cd $(PY_TESTDIR) && CI=true bash $(ROOT)/tests/stores/with_zookeeper.sh \
	  sh -c 'exec "$$1" -m pytest -p no:cacheprovider -q .' sh $(PY)

bench-python: build-python ## [long] next_id beside time.time_ns, uuid4, uuid_utils.uuid7, snowflake-id; the coarse clock; the async fast path; uuid7(); a strict loop at the layout's ceiling (CPU-s per wall-s)
	$(call say,Python benchmark (installs $(PY_BENCH_PACKAGES) into .venv for this only))
	@$(B) pip-missing $(PY) $(PY_BENCH_PACKAGES)
	cd $(PY_TESTDIR) && $(PY) $(ROOT)/python/bench/bench.py
# Quiet: stdout carries the rows alone (the build's and pip's words go to stderr).
bench-check-python: ## [long] the Python rows of make bench-check: JSON lines on stdout, about 5 s after the wheel's build (from python/tests: ../../.venv/bin/python ../bench/bench.py --check)
	@$(MAKE) -s --no-print-directory build-python >&2
	@$(B) pip-missing $(PY) $(PY_BENCH_PACKAGES) >&2
	@cd $(PY_TESTDIR) && $(PY) $(ROOT)/python/bench/bench.py --check
# Its own workspace and lock file (python/bench/floor/Cargo.lock), built into target/python-floor.
bench-python-floor: build-python ## [long] what a call costs with nothing behind it (PyO3's #[pymethods] and METH_NOARGS) beside time.time_ns and next_id (python/bench/floor/, not shipped)
	$(call say,Python call floor: python/bench/floor/ built into $(PY_FLOOR)/module; next_id beside it)
	PYO3_BUILD_EXTENSION_MODULE=1 PYO3_PYTHON=$(PY) CARGO_TARGET_DIR=$(PY_FLOOR) \
	  cargo build --release --locked -q --manifest-path python/bench/floor/Cargo.toml
	mkdir -p $(PY_FLOOR)/module && cp $(PY_FLOOR)/release/lib_floor.so $(PY_FLOOR)/module/_floor.abi3.so
	cd $(PY_TESTDIR) && $(PY) $(ROOT)/python/bench/floor.py $(PY_FLOOR)/module
