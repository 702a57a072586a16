# Sanitizers under the C ABI (valgrind: .build/mk/c.mk): the test programs built with gcc's -fsanitize
# and its runtimes, against libpolyflake built by nightly rustc with -Zsanitizer (the ffi crate,
# the core and every dependency; Rust's std not instrumented, hence ThreadSanitizer on the
# 8-thread test only, with POLYFLAKE_RESTART_GUARD=off; tests/c/tsan_shim.c supplies what gcc 12's
# libtsan lacks). Why, and the checks that it reports: docs/reliability.md, "Sanitizers".

DEPS_TARGETS += deps-sanitize
TEST_TARGETS += test-sanitize

SAN_TOOLCHAIN ?= nightly
SAN_HOST := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
SAN_DIR := $(CARGO_TARGET_DIR)/sanitize
# Both sanitizer builds (and cargo fuzz's, .build/mk/fuzz.mk) compile in one nightly target directory,
# without the remote stores their programs never use (no gRPC, TLS or crypto stack); each build's
# libraries are copied out of it, so the two instrumented libraries can sit side by side.
NIGHTLY_DIR := $(CARGO_TARGET_DIR)/nightly
SAN_BUILT := $(NIGHTLY_DIR)/$(SAN_HOST)/release
SAN_ASAN_LIB := $(SAN_DIR)/asan-lib
SAN_TSAN_LIB := $(SAN_DIR)/tsan-lib
SAN_BIN := $(SAN_DIR)/bin
SAN_RUSTFLAGS_COMMON := -Cunsafe-allow-abi-mismatch=sanitizer -Cforce-frame-pointers=yes
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L -Iinclude
SAN_STATIC_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
# Every report is fatal; leaks are errors (LeakSanitizer runs at exit).
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	CARGO_TARGET_DIR=$(NIGHTLY_DIR)

deps-sanitize: ## the nightly Rust toolchain (SAN_TOOLCHAIN; -Zsanitizer) and gcc's sanitizer runtimes
	$(call say,sanitizers: the $(SAN_TOOLCHAIN) Rust toolchain (-Zsanitizer) and gcc's sanitizer runtimes)
	@$(B) rust-toolchain $(SAN_TOOLCHAIN) && $(B) gcc-runtimes libasan.so libubsan.so libtsan.so

# $(1): address or thread; $(2): where its libraries go.
san_cargo = RUSTFLAGS="-Zsanitizer=$(1) $(SAN_RUSTFLAGS_COMMON)" $(CARGO) +$(SAN_TOOLCHAIN) build --release \
	  -p polyflake-ffi --no-default-features --target $(SAN_HOST) --target-dir $(NIGHTLY_DIR)
define san_build
	$(call san_cargo,$(1))
	@mkdir -p $(2) && cp $(SAN_BUILT)/libpolyflake.a $(SAN_BUILT)/libpolyflake.so $(2)/
endef

build-asan: deps-sanitize ## libpolyflake.a and .so built with -Zsanitizer=address (no remote stores; target/nightly), copied to target/sanitize/asan-lib
	$(warm_now)
	$(call say,libpolyflake with -Zsanitizer=address ($(SAN_TOOLCHAIN); no remote stores; target dir $(NIGHTLY_DIR)))
	$(call san_build,address,$(SAN_ASAN_LIB))

build-tsan: deps-sanitize ## libpolyflake.a and .so built with -Zsanitizer=thread, copied to target/sanitize/tsan-lib
	$(warm_now)
	$(call say,libpolyflake with -Zsanitizer=thread ($(SAN_TOOLCHAIN); no remote stores; target dir $(NIGHTLY_DIR)))
	$(call san_build,thread,$(SAN_TSAN_LIB))

test-asan: build-asan ## [part] tests/c/test_polyflake.c and .cpp built with gcc -fsanitize=address,undefined against the instrumented static and shared library: four programs, the whole C and C++ tests
	$(call say,AddressSanitizer + UBSan: C and C++ tests against the instrumented static and shared library)
	@mkdir -p $(SAN_BIN)
	gcc -std=c99 -Wall -Wextra -pedantic -Werror $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  tests/c/test_polyflake.c -o $(SAN_BIN)/test_c_asan_static $(SAN_ASAN_LIB)/libpolyflake.a -lcjson $(SAN_STATIC_LIBS)
	gcc -std=c99 -Wall -Wextra -pedantic -Werror $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  tests/c/test_polyflake.c -o $(SAN_BIN)/test_c_asan_shared -L$(SAN_ASAN_LIB) -Wl,-rpath,$(SAN_ASAN_LIB) -lpolyflake -lcjson -lpthread -lm
	g++ -std=c++17 -Wall -Wextra -Werror $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  tests/c/test_polyflake.cpp -o $(SAN_BIN)/test_cpp_asan_static $(SAN_ASAN_LIB)/libpolyflake.a $(SAN_STATIC_LIBS)
	g++ -std=c++17 -Wall -Wextra -Werror $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
	  tests/c/test_polyflake.cpp -o $(SAN_BIN)/test_cpp_asan_shared -L$(SAN_ASAN_LIB) -Wl,-rpath,$(SAN_ASAN_LIB) -lpolyflake -lpthread
	@ldd $(SAN_BIN)/test_c_asan_shared | grep -q "$(SAN_ASAN_LIB)/libpolyflake.so" || { echo "the shared program misses the instrumented .so"; exit 1; }
	@nm $(SAN_ASAN_LIB)/libpolyflake.a 2>/dev/null | grep -q '__asan_report_load' || { echo "libpolyflake.a is not instrumented"; exit 1; }
	@for t in test_c_asan_static test_c_asan_shared test_cpp_asan_static test_cpp_asan_shared; do \
	  $(B) checked-run $(SAN_BIN)/$$t.log 3 '' env $(SAN_ENV) $(SAN_BIN)/$$t $(ROOT)/tests/vectors || exit 1; done

test-tsan: build-tsan ## [part] the 8-thread part of tests/c/test_polyflake.c (threads mode) built with gcc -fsanitize=thread against the instrumented static library
	$(call say,ThreadSanitizer: the 8-thread C test against the instrumented static library)
	@mkdir -p $(SAN_BIN)
	gcc -std=c99 -Wall -Wextra -pedantic -Werror $(SAN_CFLAGS) -fsanitize=thread \
	  tests/c/test_polyflake.c tests/c/tsan_shim.c -o $(SAN_BIN)/test_c_tsan \
	  $(SAN_TSAN_LIB)/libpolyflake.a -lcjson $(SAN_STATIC_LIBS)
	@nm $(SAN_TSAN_LIB)/libpolyflake.a 2>/dev/null | grep -q '__tsan_atomic64_compare_exchange' || { echo "libpolyflake.a is not instrumented"; exit 1; }
	@$(B) checked-run $(SAN_BIN)/test_c_tsan.log -80 '' env $(SAN_ENV) POLYFLAKE_RESTART_GUARD=off $(SAN_BIN)/test_c_tsan $(ROOT)/tests/vectors threads

test-sanitize: test-asan test-tsan ## [part] test-asan, test-tsan and test-cpp-asan
