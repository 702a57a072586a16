# The C ABI (ffi-c/, include/polyflake.h) and its tests from C and C++ (Go: mk/go.mk).
#
#   make header-c   regenerate include/polyflake.h with the pinned cbindgen
#   make test-c     header drift + compile checks, Rust unit tests, C and C++ programs against the
#                   static and the shared library (layout and UUIDv7/ULID vectors, every scenario
#                   file on both clock sources, bad input, threads, fork), the same under
#                   valgrind, test-c-lease, test-c-faults, test-c-waits, test-c-restart, test-cpp,
#                   the C/C++/Go participants at once
#                   on a lease directory and on a real ZooKeeper (zk://...) and in uuidv7 mode,
#                   the snippets of docs/c.md, docs/go.md and the README (beside a real ZooKeeper)
#   make test-c-lease  node-id sources from C: file leases, static sources, bad options, TLS and
#                   credential fields, a real etcd and a real ZooKeeper (started and stopped by
#                   tests/c/with_etcd.sh and tests/stores/with_zookeeper.sh), shared, static, valgrind
#   make test-c-waits  waits a caller can bound and cut, from C: deadlines
#                   (polyflake_next_ids_within) and the cancel call (polyflake_generator_interrupt)
#                   on waits that would last seconds, timed; a static node id refused to a second
#                   process and to a forked child, naming the holder's pid, and freed by the
#                   holder's death; refusals echoing the values sent; shared, static, valgrind
#   make test-c-restart  a fixed node id's restart guard from C, with real processes: handovers
#                   (close, exit(), SIGKILL), restarts with the clock stepped back under faketime,
#                   a monotonic holder ahead handing on, lease and static sharing one claim, a user
#                   clock exempt from the host claim, scopes, the state directory and its
#                   environment variables, the kernel's word on the clock (max_clock_error_ms)
#                   under a stand-in for adjtimex; duplicates counted; shared, static
#   make test-c-faults the quiet faults of lease stores from C: slot files and directories removed
#                   under a live holder (two processes), fork faults, damaged records, poisoned
#                   slots, one ID space per store; shared, static, valgrind
#   make test-cpp   the header-only C++ API (include/polyflake.hpp): tests/cpp/test_polyflake_hpp.cpp
#                   built as C++17 and C++20 (-Wall -Wextra -Wpedantic -Werror) against the shared
#                   and the static library, run beside a real ZooKeeper and etcd, under valgrind,
#                   and built with gcc's ASan+UBSan and run; part of test-c. (make test-sanitize
#                   also runs it against the -Zsanitizer=address library: test-cpp-asan)
#   make bench-c    polyflake_next_id per call from Rust, C and Go (beside bwmarrin/snowflake),
#                   on the precise and the coarse clock source, beside clock_gettime; the CPU per
#                   wall-second of a strict loop at 41/10/12's ceiling
#   make -s bench-check-c
#                   the C rows of `make bench-check`: tests/c/bench.c's check mode, static then
#                   shared, `target/c-tests/bench_c_static --check static` and
#                   `target/c-tests/bench_c_shared --check shared` (each row's case and
#                   clock_gettime(CLOCK_REALTIME) timed back to back in each of 201 rounds of ~1 ms,
#                   ratio = the median of the rounds' ratios); one JSON object a line on stdout,
#                   the build on stderr; ~15 s warm
#   make build-polyglot-c build-polyglot-cpp
#                   the cross-language uniqueness run's participants: target/polyglot/participant_{c,cpp}

# Debian packages: mk/packages.mk.
DEPS_TARGETS += deps-c
BUILD_TARGETS += build-c build-polyglot-c build-polyglot-cpp
TEST_TARGETS += test-c

.PHONY: deps-c build-c header-c check-header-c test-c test-c-unit test-c-programs test-c-valgrind \
	test-c-docs test-c-lease test-c-faults test-c-waits test-c-restart test-c-polyglot bench-c \
	bench-c-programs bench-check-c \
	build-polyglot-c build-polyglot-cpp test-cpp test-cpp-asan

CBINDGEN_VERSION := 0.29.4
CBINDGEN := $(TOOLS_CACHE)/cbindgen-$(CBINDGEN_VERSION)/bin/cbindgen
C_LIBDIR := $(POLYFLAKE_RELEASE_DIR)
C_PCDIR := $(C_LIBDIR)/pkgconfig
C_TESTDIR := $(CARGO_TARGET_DIR)/c-tests
C_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' $(ROOT)/Cargo.toml | head -n1)
C_ENV := export PKG_CONFIG_PATH=$(C_PCDIR)$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH};
# Strict flags for everything compiled against the header.
C_CFLAGS := -std=c99 -Wall -Wextra -pedantic -Werror -O2 -g
CXX_CFLAGS := -std=c++17 -Wall -Wextra -Werror -O2 -g
# One rule for every C and C++ program against the library: $(1) source(s), $(2) output, $(3) the
# pkg-config package (polyflake: the shared library; polyflake-static: the archive), $(4) more
# libraries. c_both builds $(C_TESTDIR)/$(2)_shared and _static from $(1), with $(3) more libraries.
gcc_program = gcc $(C_CFLAGS) -D_POSIX_C_SOURCE=200809L $(1) -o $(2) $$(pkg-config --cflags --libs $(3)) $(4)
c_program = $(C_ENV) $(call gcc_program,$(1),$(2),$(3),$(4))
cxx_program = $(C_ENV) g++ $(CXX_CFLAGS) $(1) -o $(2) $$(pkg-config --cflags --libs $(3)) $(4)
c_both = $(C_ENV) $(call gcc_program,$(1),$(C_TESTDIR)/$(2)_shared,polyflake,$(3)) && \
	$(call gcc_program,$(1),$(C_TESTDIR)/$(2)_static,polyflake-static,$(3))
VALGRIND := valgrind --tool=memcheck --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect -q

deps-c:
	$(call say,C ABI tools: cbindgen $(CBINDGEN_VERSION) (pinned))
	$(call cargo_tool,cbindgen,$(CBINDGEN_VERSION),cbindgen)

# The libraries, and pkg-config files pointing at this tree: polyflake (shared, with an rpath
# so programs run without LD_LIBRARY_PATH) and polyflake-static (the archive and its system libs).
build-c:
	$(call say,building libpolyflake.so and libpolyflake.a; pkg-config files in $(C_PCDIR))
	$(CARGO) build --release -p polyflake-ffi
	@mkdir -p $(C_PCDIR)
	@printf '%s\n' "includedir=$(ROOT)/include" "libdir=$(C_LIBDIR)" "" \
	  "Name: polyflake" "Description: unique, time-sortable 64-bit IDs (shared library)" \
	  "Version: $(C_VERSION)" 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lpolyflake' \
	  > $(C_PCDIR)/polyflake.pc
	@printf '%s\n' "includedir=$(ROOT)/include" "libdir=$(C_LIBDIR)" "" \
	  "Name: polyflake-static" "Description: unique, time-sortable 64-bit IDs (static library)" \
	  "Version: $(C_VERSION)" 'Cflags: -I$${includedir}' \
	  'Libs: $${libdir}/libpolyflake.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc' \
	  > $(C_PCDIR)/polyflake-static.pc
	@$(C_ENV) pkg-config --cflags --libs polyflake

header-c: deps-c
	$(call say,regenerating include/polyflake.h with cbindgen $(CBINDGEN_VERSION))
	$(CBINDGEN) -q --config ffi-c/cbindgen.toml --crate polyflake-ffi --output include/polyflake.h ffi-c

# The checked-in header must be exactly what cbindgen makes from the source today, and compile
# cleanly as C99 and C++17.
check-header-c: deps-c
	$(call say,include/polyflake.h: drift check against a fresh cbindgen run then C99/C++17 compile)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(CBINDGEN) -q --config ffi-c/cbindgen.toml --crate polyflake-ffi --output $$tmp/polyflake.h ffi-c; \
	if ! diff -u include/polyflake.h $$tmp/polyflake.h; then \
	  echo "include/polyflake.h is stale: run 'make header-c' and commit it"; exit 1; fi; \
	printf '#include "polyflake.h"\nint main(void) { return polyflake_version() == 0; }\n' > $$tmp/h.c; \
	cp $$tmp/h.c $$tmp/h.cpp; \
	gcc -std=c99 -Wall -Wextra -pedantic -Werror -Iinclude -c $$tmp/h.c -o $$tmp/h.o && \
	g++ -std=c++17 -Wall -Wextra -Werror -Iinclude -c $$tmp/h.cpp -o $$tmp/hpp.o && \
	echo "header up to date; compiles as C99 and C++17"

# Each program built twice: against the shared library and against the static archive.
C_PROGRAMS := test_c_shared test_c_static test_cpp_shared test_cpp_static test_formats_shared test_formats_static
test-c-programs: build-c
	$(call say,C and C++ tests against the shared and the static library)
	@mkdir -p $(C_TESTDIR)
	$(call c_both,tests/c/test_polyflake.c,test_c,$$(pkg-config --cflags --libs libcjson) -lpthread -lm)
	$(call cxx_program,tests/c/test_polyflake.cpp,$(C_TESTDIR)/test_cpp_shared,polyflake,-lpthread)
	$(call cxx_program,tests/c/test_polyflake.cpp,$(C_TESTDIR)/test_cpp_static,polyflake-static,-lpthread)
	$(call c_both,tests/c/test_formats.c,test_formats,$$(pkg-config --cflags --libs libcjson) -lpthread)
	@! ldd $(C_TESTDIR)/test_c_static | grep -q libpolyflake || { echo "static build links the .so"; exit 1; }
	@ldd $(C_TESTDIR)/test_c_shared | grep -q libpolyflake.so || { echo "shared build misses the .so"; exit 1; }
	@for t in $(C_PROGRAMS); do \
	  echo "--- $$t"; $(C_TESTDIR)/$$t $(ROOT)/tests/vectors || exit 1; done

# The node-id sources, each program built against both libraries and run beside one real etcd,
# plainly and under valgrind.
test-c-lease: build-c
	$(call say,C node-id sources: file leases and static sources and bad options and a real etcd)
	@mkdir -p $(C_TESTDIR)
	$(call c_both,tests/c/test_lease.c,test_lease)
	tests/stores/with_zookeeper.sh tests/c/with_etcd.sh bash -c 'for t in test_lease_shared test_lease_static; do \
	  echo "--- $$t"; $(C_TESTDIR)/$$t "$$1" "$$2" || exit 1; \
	  echo "--- valgrind $$t"; POLYFLAKE_UNDER_VALGRIND=1 $(VALGRIND) $(C_TESTDIR)/$$t "$$1" "$$2" || exit 1; done' _

# The quiet faults: each program re-runs itself as the child processes of the two-process tests.
test-c-faults: build-c
	$(call say,C quiet faults: deleted slot files and directories and fork and records and ID spaces)
	@mkdir -p $(C_TESTDIR)
	$(call c_both,tests/c/test_faults.c,test_faults)
	@for t in test_faults_shared test_faults_static; do \
	  echo "--- $$t"; $(C_TESTDIR)/$$t || exit 1; \
	  echo "--- valgrind $$t"; POLYFLAKE_UNDER_VALGRIND=1 $(VALGRIND) \
	    --num-callers=50 --suppressions=tests/c/valgrind-fork-child.supp $(C_TESTDIR)/$$t || exit 1; done

# Waits and host-wide node ids: each program re-runs itself as the second process of the
# node-id tests (natively under valgrind too: it does not follow exec). Its forked child leaves
# the parent's mark session allocated (tests/c/valgrind-fork-child.supp).
test-c-waits: build-c
	$(call say,C waits: deadlines and the cancel call timed; static node ids held host-wide; echoed refusals)
	@mkdir -p $(C_TESTDIR)
	$(call c_both,tests/c/test_waits.c,test_waits,-lpthread)
	@for t in test_waits_shared test_waits_static; do \
	  echo "--- $$t"; $(C_TESTDIR)/$$t || exit 1; \
	  echo "--- valgrind $$t"; POLYFLAKE_UNDER_VALGRIND=1 $(VALGRIND) \
	    --num-callers=50 --suppressions=tests/c/valgrind-fork-child.supp $(C_TESTDIR)/$$t || exit 1; done

# A fixed node id's restart guard: each program re-runs itself as the holders (some under
# faketime, one under the adjtimex stand-in of the core's tests, built here). Not under valgrind:
# every case is about time between processes.
test-c-restart: build-c
	$(call say,C restart guard: handovers and restarts behind (faketime) and a monotonic lead; lease and static; user clock; kernel clock word)
	@mkdir -p $(C_TESTDIR)
	gcc -shared -fPIC -O2 -o $(C_TESTDIR)/fake_adjtimex.so core/tests/support/fake_adjtimex.c
	$(call c_both,tests/c/test_restart.c,test_restart)
	@for t in test_restart_shared test_restart_static; do \
	  echo "--- $$t"; $(C_TESTDIR)/$$t $(C_TESTDIR)/fake_adjtimex.so || exit 1; done

# The cross-language uniqueness run's participants (see tests/polyglot/): C and C++ against the
# static library (Go: mk/go.mk); each run as PROGRAM LEASE_DIR SECONDS OUT_PATH [uuidv7].
POLYGLOT_DIR := $(CARGO_TARGET_DIR)/polyglot
build-polyglot-c: build-c
	$(call say,C participant: $(POLYGLOT_DIR)/participant_c)
	@mkdir -p $(POLYGLOT_DIR)
	$(call c_program,tests/polyglot/participant.c,$(POLYGLOT_DIR)/participant_c,polyflake-static)

build-polyglot-cpp: build-c
	$(call say,C++ participant: $(POLYGLOT_DIR)/participant_cpp)
	@mkdir -p $(POLYGLOT_DIR)
	$(call cxx_program,tests/polyglot/participant.cpp,$(POLYGLOT_DIR)/participant_cpp,polyflake-static,-lpthread)

# The three participants at once on one temporary lease directory, their output checked.
test-c-polyglot: build-polyglot-c build-polyglot-cpp build-polyglot-go
	$(call say,C and C++ and Go participants at once on one lease directory: distinct nodes and no duplicate; then their uuidv7 mode)
	bash tests/c/polyglot_smoke.sh $(POLYGLOT_DIR)
	$(call say,the same participants leasing from one real ZooKeeper (LEASE_DIR zk://ENSEMBLE/PREFIX))
	tests/stores/with_zookeeper.sh bash tests/c/polyglot_smoke.sh $(POLYGLOT_DIR)

test-c-valgrind: test-c-programs
	$(call say,the same six programs under valgrind memcheck: zero errors and zero leaks)
	@for t in $(C_PROGRAMS); do \
	  echo "--- valgrind $$t"; \
	  POLYFLAKE_UNDER_VALGRIND=1 $(VALGRIND) $(C_TESTDIR)/$$t $(ROOT)/tests/vectors || exit 1; done

# Every C, C++ and Go snippet of docs/c.md, docs/go.md and the README's quickstarts, compiled and
# run (C and C++ against both libraries; Go as a module requiring go/).
C_DOCS := $(ROOT)/docs/c.md $(ROOT)/docs/go.md $(ROOT)/README.md
test-c-docs: build-c
	$(call say,docs/c.md docs/go.md README.md: compile and run every C and C++ and Go snippet)
	$(C_ENV) tests/stores/with_zookeeper.sh bash -c 'ZOOKEEPER_ENSEMBLE=$$POLYFLAKE_TEST_ZOOKEEPER \
	  bash tests/c/readme_snippets.sh $(C_TESTDIR)/docs $(C_DOCS)' _

test-c: test-c-unit test-c-programs test-c-valgrind test-c-lease test-c-faults test-c-waits test-c-restart \
	test-c-polyglot test-c-docs test-cpp

# The C++ API, include/polyflake.hpp: one test program built as C++17 and C++20 against both
# libraries (this tree's include/ first: the .pc files in the shared target directory may name
# another checkout's), run beside a real ZooKeeper and etcd, then under valgrind, then built with
# gcc's AddressSanitizer + UBSan (the library itself plain; test-cpp-asan below uses the
# instrumented one) and run.
CPP_TESTDIR := $(CARGO_TARGET_DIR)/cpp-tests
CPP_TEST_SRC := tests/cpp/test_polyflake_hpp.cpp
CPP_STRICT := -Wall -Wextra -Wpedantic -Werror -I$(ROOT)/include
CPP_ASAN := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
CPP_SAN_ENV := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# $(1) 17 or 20, $(2) shared or static, $(3) the pkg-config package, $(4) flags, $(5) the name's tail
cpp_hpp = g++ -std=c++$(1) $(CPP_STRICT) $(4) $(CPP_TEST_SRC) -o $(CPP_TESTDIR)/test_hpp_$(1)_$(2)$(5) \
	$$(pkg-config --cflags --libs $(3)) -lpthread
CPP_PROGRAMS := test_hpp_17_shared test_hpp_17_static test_hpp_20_shared test_hpp_20_static
test-cpp: build-c
	$(call say,C++ API (polyflake.hpp): C++17 and C++20 against the shared and the static library; real stores then valgrind then ASan+UBSan)
	@mkdir -p $(CPP_TESTDIR)
	@$(C_ENV) set -e; for std in 17 20; do \
	  echo "g++ -std=c++$$std $(CPP_STRICT) -O2 -g $(CPP_TEST_SRC) (shared, static, asan shared, asan static)"; \
	  $(call cpp_hpp,$${std},shared,polyflake,-O2 -g,); \
	  $(call cpp_hpp,$${std},static,polyflake-static,-O2 -g,); \
	  $(call cpp_hpp,$${std},shared,polyflake,$(CPP_ASAN),_asan); \
	  $(call cpp_hpp,$${std},static,polyflake-static,$(CPP_ASAN),_asan); done
	@! ldd $(CPP_TESTDIR)/test_hpp_17_static | grep -q libpolyflake || { echo "static build links the .so"; exit 1; }
	@ldd $(CPP_TESTDIR)/test_hpp_20_shared | grep -q libpolyflake.so || { echo "shared build misses the .so"; exit 1; }
	tests/stores/with_zookeeper.sh tests/c/with_etcd.sh bash -c 'for t in $(CPP_PROGRAMS); do \
	  echo "--- $$t"; $(CPP_TESTDIR)/$$t "$$1" "$$2" || exit 1; done' _
	@for t in $(CPP_PROGRAMS); do \
	  echo "--- valgrind $$t"; POLYFLAKE_UNDER_VALGRIND=1 $(VALGRIND) $(CPP_TESTDIR)/$$t || exit 1; done
	@for t in $(CPP_PROGRAMS); do \
	  echo "--- ASan+UBSan $${t}_asan"; $(CPP_SAN_ENV) $(CPP_TESTDIR)/$${t}_asan > $(CPP_TESTDIR)/$${t}_asan.log 2>&1; rc=$$?; \
	  tail -n 1 $(CPP_TESTDIR)/$${t}_asan.log; \
	  if [ $$rc -ne 0 ] || grep -q 'runtime error\|Sanitizer' $(CPP_TESTDIR)/$${t}_asan.log; then \
	    echo "$${t}_asan failed (exit $$rc)"; grep -B2 -A30 'runtime error\|Sanitizer\|FAIL' $(CPP_TESTDIR)/$${t}_asan.log | head -n 60; exit 1; fi; \
	done

# The same program against the library built with -Zsanitizer=address (mk/sanitize.mk; no remote
# stores in that build: POLYFLAKE_CPP_NO_STORES), C++17 and C++20; part of make test-sanitize.
test-sanitize: test-cpp-asan
test-cpp-asan: build-asan
	$(call say,AddressSanitizer + UBSan: the C++ API test against the instrumented static and shared library)
	@mkdir -p $(SAN_BIN)
	g++ -std=c++17 $(CPP_STRICT) $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  $(CPP_TEST_SRC) -o $(SAN_BIN)/test_hpp_asan_static $(SAN_ASAN_LIB)/libpolyflake.a $(SAN_STATIC_LIBS)
	g++ -std=c++20 $(CPP_STRICT) $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  $(CPP_TEST_SRC) -o $(SAN_BIN)/test_hpp_asan_shared -L$(SAN_ASAN_LIB) -Wl,-rpath,$(SAN_ASAN_LIB) -lpolyflake -lpthread
	@ldd $(SAN_BIN)/test_hpp_asan_shared | grep -q "$(SAN_ASAN_LIB)/libpolyflake.so" || { echo "the shared program misses the instrumented .so"; exit 1; }
	@for t in test_hpp_asan_static test_hpp_asan_shared; do \
	  echo "--- $$t"; $(SAN_ENV) POLYFLAKE_CPP_NO_STORES=1 $(SAN_BIN)/$$t > $(SAN_BIN)/$$t.log 2>&1; rc=$$?; \
	  tail -n 2 $(SAN_BIN)/$$t.log; \
	  if [ $$rc -ne 0 ] || grep -q 'runtime error\|Sanitizer' $(SAN_BIN)/$$t.log; then \
	    echo "$$t failed (exit $$rc): see $(SAN_BIN)/$$t.log"; grep -B2 -A30 'runtime error\|Sanitizer\|FAIL' $(SAN_BIN)/$$t.log | head -n 60; exit 1; fi; \
	done

test-c-unit: check-header-c
	$(call say,ffi-c unit tests)
	$(CARGO) test --release -p polyflake-ffi

# tests/c/bench.c against both libraries.
bench-c-programs: build-c
	@mkdir -p $(C_TESTDIR)
	$(call c_both,-O3 tests/c/bench.c,bench_c)

bench: bench-c
bench-c: bench-c-programs
	$(call say,benchmark: next_id per call from Rust and C and Go on both clock sources; next_ids per ID from Go; CPU at the ceiling)
	$(CARGO) bench -p polyflake-ffi --bench core_per_call
	$(C_TESTDIR)/bench_c_static static
	$(C_TESTDIR)/bench_c_shared shared
	@$(MAKE) --no-print-directory bench-go

# stdout carries the rows alone: the programs are made by a sub-make writing to stderr.
bench-check-c:
	@$(MAKE) --no-print-directory bench-c-programs >&2
	@$(C_TESTDIR)/bench_c_static --check static && $(C_TESTDIR)/bench_c_shared --check shared
