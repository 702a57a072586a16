# The C ABI (ffi-c/, include/polyflake.h) and the header-only C++ API (include/polyflake.hpp), with
# their tests from C and C++ (Go: .build/mk/go.mk). Each test program is built twice, against the shared
# library and the static archive (pkg-config files from build-c); most run again under valgrind.

DEPS_TARGETS += deps-c
BUILD_TARGETS += build-c build-polyglot-c build-polyglot-cpp
TEST_TARGETS += test-c

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
c_both = mkdir -p $(C_TESTDIR) && $(C_ENV) $(call gcc_program,$(1),$(C_TESTDIR)/$(2)_shared,polyflake,$(3)) && \
	$(call gcc_program,$(1),$(C_TESTDIR)/$(2)_static,polyflake-static,$(3))
VALGRIND := valgrind --tool=memcheck --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect -q
# The programs that fork a child leave the parent's mark session allocated in it.
VALGRIND_FORK := $(VALGRIND) --num-callers=50 --suppressions=tests/c/valgrind-fork-child.supp
with_stores := tests/stores/with_zookeeper.sh tests/c/with_etcd.sh

deps-c: ## cbindgen 0.29.4, pinned, once per machine
	$(call say,C ABI tools: cbindgen $(CBINDGEN_VERSION) (pinned))
	@CARGO="$(CARGO)" $(B) cargo-tool $(TOOLS_CACHE) cbindgen $(CBINDGEN_VERSION) cbindgen

build-c: ## libpolyflake.so and libpolyflake.a (release); pkg-config files for both (polyflake, polyflake-static) pointing at this tree
	$(call say,building libpolyflake.so and libpolyflake.a; pkg-config files in $(C_PCDIR))
	$(CARGO) build --release -p polyflake-ffi
	@$(B) pc-files $(C_PCDIR) $(ROOT)/include $(C_LIBDIR) $(C_VERSION)
	@$(C_ENV) pkg-config --cflags --libs polyflake

header-c: deps-c ## [tool] regenerate include/polyflake.h with the pinned cbindgen
	$(call say,regenerating include/polyflake.h with cbindgen $(CBINDGEN_VERSION))
	$(CBINDGEN) -q --config ffi-c/cbindgen.toml --crate polyflake-ffi --output include/polyflake.h ffi-c

check-header-c: deps-c ## the checked-in header is what cbindgen makes from the source today, and compiles as C99 and C++17
	$(call say,include/polyflake.h: drift check against a fresh cbindgen run then C99/C++17 compile)
	@$(B) header-drift $(CBINDGEN)

test-c: test-c-unit test-c-programs test-c-valgrind test-c-lease test-c-faults test-c-waits test-c-restart test-c-polyglot test-c-docs test-cpp ## [part] C and C++: every test-c-* target and test-cpp

test-c-unit: check-header-c ## [part] the header's drift, then ffi-c's Rust unit tests
	$(call say,ffi-c unit tests)
	$(CARGO) test --release -p polyflake-ffi

C_PROGRAMS := test_c_shared test_c_static test_cpp_shared test_cpp_static test_formats_shared test_formats_static
test-c-programs: build-c ## [part] C and C++ programs against both libraries: layout and UUIDv7/ULID vectors, every scenario file on both clock sources, bad input, threads, fork
	$(call say,C and C++ tests against the shared and the static library)
	$(call c_both,tests/c/test_polyflake.c,test_c,$$(pkg-config --cflags --libs libcjson) -lpthread -lm)
	$(call cxx_program,tests/c/test_polyflake.cpp,$(C_TESTDIR)/test_cpp_shared,polyflake,-lpthread)
	$(call cxx_program,tests/c/test_polyflake.cpp,$(C_TESTDIR)/test_cpp_static,polyflake-static,-lpthread)
	$(call c_both,tests/c/test_formats.c,test_formats,$$(pkg-config --cflags --libs libcjson) -lpthread)
	@! ldd $(C_TESTDIR)/test_c_static | grep -q libpolyflake || { echo "static build links the .so"; exit 1; }
	@ldd $(C_TESTDIR)/test_c_shared | grep -q libpolyflake.so || { echo "shared build misses the .so"; exit 1; }
	@$(B) each $(C_TESTDIR) $(C_PROGRAMS) -- $(ROOT)/tests/vectors

test-c-valgrind: test-c-programs ## [part] the same six programs under valgrind memcheck: zero errors and zero leaks
	$(call say,the same six programs under valgrind memcheck: zero errors and zero leaks)
	@$(B) each --only-valgrind "$(VALGRIND)" $(C_TESTDIR) $(C_PROGRAMS) -- $(ROOT)/tests/vectors

test-c-lease: build-c ## [part] node-id sources from C: file leases, static sources, bad options, TLS and credential fields, a real etcd and ZooKeeper (started and stopped by their wrappers); shared, static, valgrind
	$(call say,C node-id sources: file leases and static sources and bad options and a real etcd)
	$(call c_both,tests/c/test_lease.c,test_lease)
	$(with_stores) $(B) each --valgrind "$(VALGRIND)" $(C_TESTDIR) test_lease_shared test_lease_static --

# Each program re-runs itself as the child processes of the two-process tests.
test-c-faults: build-c ## [part] the quiet faults of lease stores from C: slot files and directories removed under a live holder (two processes), fork faults, damaged records, poisoned slots, one ID space per store; shared, static, valgrind
	$(call say,C quiet faults: deleted slot files and directories and fork and records and ID spaces)
	$(call c_both,tests/c/test_faults.c,test_faults)
	@$(B) each --valgrind "$(VALGRIND_FORK)" $(C_TESTDIR) test_faults_shared test_faults_static

# Each program re-runs itself as the second process of the node-id tests (natively under valgrind
# too: it does not follow exec).
test-c-waits: build-c ## [part] waits a caller can bound and cut, from C: deadlines and the cancel call, timed; a static node id refused to a second process and a forked child, naming the holder, freed by its death; echoed refusals; shared, static, valgrind
	$(call say,C waits: deadlines and the cancel call timed; static node ids held host-wide; echoed refusals)
	$(call c_both,tests/c/test_waits.c,test_waits,-lpthread)
	@$(B) each --valgrind "$(VALGRIND_FORK)" $(C_TESTDIR) test_waits_shared test_waits_static

# Each program re-runs itself as the holders (some under faketime, one under the adjtimex
# stand-in of the core's tests, built here). Not under valgrind: every case is about time.
test-c-restart: build-c ## [part] a fixed node id's restart guard from C with real processes: handovers (close, exit, SIGKILL), restarts behind (faketime), a monotonic lead, lease and static sharing a claim, a user clock, scopes, the state directory, the kernel's clock word; shared, static
	$(call say,C restart guard: handovers and restarts behind (faketime) and a monotonic lead; lease and static; user clock; kernel clock word)
	$(call c_both,tests/c/test_restart.c,test_restart)
	gcc -shared -fPIC -O2 -o $(C_TESTDIR)/fake_adjtimex.so core/tests/support/fake_adjtimex.c
	@$(B) each $(C_TESTDIR) test_restart_shared test_restart_static -- $(C_TESTDIR)/fake_adjtimex.so

# The uniqueness run's participants (tests/polyglot/), against the static library; each run as
# PROGRAM LEASE_DIR SECONDS OUT_PATH [uuidv7].
POLYGLOT_DIR := $(CARGO_TARGET_DIR)/polyglot
build-polyglot-c: build-c ## the uniqueness run's C participant: target/polyglot/participant_c
	$(call say,C participant: $(POLYGLOT_DIR)/participant_c)
	@mkdir -p $(POLYGLOT_DIR)
	$(call c_program,tests/polyglot/participant.c,$(POLYGLOT_DIR)/participant_c,polyflake-static)
build-polyglot-cpp: build-c ## the uniqueness run's C++ participant: target/polyglot/participant_cpp
	$(call say,C++ participant: $(POLYGLOT_DIR)/participant_cpp)
	@mkdir -p $(POLYGLOT_DIR)
	$(call cxx_program,tests/polyglot/participant.cpp,$(POLYGLOT_DIR)/participant_cpp,polyflake-static,-lpthread)

test-c-polyglot: build-polyglot-c build-polyglot-cpp build-polyglot-go ## [part] the C, C++ and Go participants at once on one lease directory, then on one real ZooKeeper, and in uuidv7 mode: distinct nodes, no duplicate
	$(call say,C and C++ and Go participants at once on one lease directory: distinct nodes and no duplicate; then their uuidv7 mode)
	bash tests/c/polyglot_smoke.sh $(POLYGLOT_DIR)
	$(call say,the same participants leasing from one real ZooKeeper (LEASE_DIR zk://ENSEMBLE/PREFIX))
	tests/stores/with_zookeeper.sh bash tests/c/polyglot_smoke.sh $(POLYGLOT_DIR)

C_DOCS := $(ROOT)/docs/c.md $(ROOT)/docs/go.md $(ROOT)/README.md
test-c-docs: build-c ## [part] every C, C++ and Go snippet of docs/c.md, docs/go.md and the README compiled and run beside a real ZooKeeper (C and C++ against both libraries; Go as a module requiring go/)
	$(call say,docs/c.md docs/go.md README.md: compile and run every C and C++ and Go snippet)
	$(C_ENV) tests/stores/with_zookeeper.sh bash -c 'ZOOKEEPER_ENSEMBLE=$$POLYFLAKE_TEST_ZOOKEEPER \
	  bash tests/c/readme_snippets.sh $(C_TESTDIR)/docs $(C_DOCS)' _

# Built against this tree's include/ first (the .pc files in a shared target directory may name
# another checkout's); the ASan+UBSan builds take the plain library (test-cpp-asan: the
# instrumented one).
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
test-cpp: build-c ## [part] the C++ API (polyflake.hpp) as C++17 and C++20 (-Wall -Wextra -Wpedantic -Werror) against both libraries: beside a real ZooKeeper and etcd, under valgrind, and with gcc's ASan+UBSan
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
	$(with_stores) $(B) each $(CPP_TESTDIR) $(CPP_PROGRAMS) --
	@$(B) each --only-valgrind "$(VALGRIND)" $(CPP_TESTDIR) $(CPP_PROGRAMS)
	@for t in $(CPP_PROGRAMS); do \
	  $(B) checked-run $(CPP_TESTDIR)/$${t}_asan.log 1 FAIL env $(CPP_SAN_ENV) $(CPP_TESTDIR)/$${t}_asan || exit 1; done

# The same program against the library built with -Zsanitizer=address (.build/mk/sanitize.mk; no remote
# stores in that build: POLYFLAKE_CPP_NO_STORES), C++17 and C++20.
test-sanitize: test-cpp-asan
test-cpp-asan: build-asan ## [part] AddressSanitizer + UBSan: the C++ API test against the instrumented static and shared library (part of test-sanitize)
	$(call say,AddressSanitizer + UBSan: the C++ API test against the instrumented static and shared library)
	@mkdir -p $(SAN_BIN)
	g++ -std=c++17 $(CPP_STRICT) $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  $(CPP_TEST_SRC) -o $(SAN_BIN)/test_hpp_asan_static $(SAN_ASAN_LIB)/libpolyflake.a $(SAN_STATIC_LIBS)
	g++ -std=c++20 $(CPP_STRICT) $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  $(CPP_TEST_SRC) -o $(SAN_BIN)/test_hpp_asan_shared -L$(SAN_ASAN_LIB) -Wl,-rpath,$(SAN_ASAN_LIB) -lpolyflake -lpthread
	@ldd $(SAN_BIN)/test_hpp_asan_shared | grep -q "$(SAN_ASAN_LIB)/libpolyflake.so" || { echo "the shared program misses the instrumented .so"; exit 1; }
	@for t in test_hpp_asan_static test_hpp_asan_shared; do \
	  $(B) checked-run $(SAN_BIN)/$$t.log 2 FAIL env $(SAN_ENV) POLYFLAKE_CPP_NO_STORES=1 $(SAN_BIN)/$$t || exit 1; done

bench-c-programs: build-c ## tests/c/bench.c built against both libraries
	$(call c_both,-O3 tests/c/bench.c,bench_c)
bench: bench-c
bench-c: bench-c-programs ## [long] polyflake_next_id per call from Rust, C and Go (beside bwmarrin/snowflake) on the precise and the coarse clock, beside clock_gettime; the CPU per wall-second of a strict loop at 41/10/12's ceiling
	$(call say,benchmark: next_id per call from Rust and C and Go on both clock sources; next_ids per ID from Go; CPU at the ceiling)
	$(CARGO) bench -p polyflake-ffi --bench core_per_call
	$(C_TESTDIR)/bench_c_static static
	$(C_TESTDIR)/bench_c_shared shared
	@$(MAKE) --no-print-directory bench-go
# stdout carries the rows alone: the programs are made by a sub-make writing to stderr.
bench-check-c: ## [long] the C rows of make bench-check (make -s): tests/c/bench.c's check mode, static then shared (each row's case and clock_gettime back to back in 201 rounds of ~1 ms; ratio = the median); ~15 s warm
	@$(MAKE) --no-print-directory bench-c-programs >&2
	@$(C_TESTDIR)/bench_c_static --check static && $(C_TESTDIR)/bench_c_shared --check shared
