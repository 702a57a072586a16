#!/bin/bash
# The orchestration of polyflake's build, called by the Makefile's thin recipes: what is not a
# build or a test command lives here, once. The Makefile and .build/mk/*.mk are lists of targets, each
# with a `## [tier] text` line that `make help` prints.
#
#   build.sh shell TARGET -c LINE     make's SHELL under `make test` (.SHELLFLAGS = shell $@ -c):
#                                     runs LINE with bash and appends "START END TARGET" to
#                                     $POLYFLAKE_TIMING_LOG (a line that runs a sub-make, ours
#                                     always pass --no-print-directory, is left to the sub-make's
#                                     own lines), so each target's time sums right when targets
#                                     run side by side (tests/timing.py prints the table)
#   build.sh help|lint MAKEFILE...    every target by tier, from its ## line (lint: fail when a
#                                     target has no ## line, or more than one)
#   build.sh test-phases ...          make test after its prerequisites (see test_phases)
#   build.sh timing-start LOG         the timing log starts empty (the previous run's kept beside)
#   build.sh warm-start DIR NAME COMMAND [NAME COMMAND]...   the background warm-up
#   build.sh warm-now DIR             the warm-up back to normal priority
#   build.sh flaky MAKE N TARGET      TARGET N times in a row, each from the top; counts
#   build.sh loaded MAKE              make test with every core kept busy by stress-ng
#   build.sh deps-apt PACKAGE...      the Debian packages missing (one apt-get update first)
#   build.sh deps-rust                cargo present, clippy and rustfmt installed
#   build.sh cargo-tool CACHE CRATE VERSION BINARY   a pinned Rust tool, once per machine
#   build.sh rust-toolchain NAME      a rustup toolchain (minimal profile) when missing
#   build.sh gcc-runtimes LIB...      gcc finds each runtime library (libasan.so, ...)
#   build.sh jdks JAVA_HOME...        each a JDK; prints its version
#   build.sh need COMMAND HINT        COMMAND on PATH, else fail with HINT
#   build.sh venv DIR [PACKAGE...]    a Python venv at DIR (created when missing) with PACKAGEs
#   build.sh pip-missing PYTHON PACKAGE...   pip-install what PYTHON lacks (name or name==version)
#   build.sh npm-missing DIR 'PACKAGE...' [NPM-CI-FLAG...]   npm ci in DIR unless all present
#   build.sh pc-files PCDIR INCLUDEDIR LIBDIR VERSION   the C library's pkg-config files
#   build.sh header-drift CBINDGEN    include/polyflake.h is cbindgen's output today, and compiles
#   build.sh each [--valgrind 'VALGRIND...'] DIR PROGRAM... [-- ARG...]   programs one by one
#   build.sh fuzz-run [--report FILE SECONDS SEED] LOGDIR 'CARGO-FUZZ-RUN' TARGET CORPUS OPTION...
#                                     one cargo fuzz run, summed up from its log
#   build.sh fuzz-cmin LOGDIR 'CARGO-FUZZ-RUN' GROWN TARGET...   the corpora minimised
#   build.sh git-drift FILE...        regenerated FILEs are the committed ones
#   build.sh checked-run LOG TAIL PATTERN COMMAND...   COMMAND with its output in LOG; fails on
#                                     a non-zero exit or a sanitizer's report
#
# Decisions:
# - Its home is .build/mk/, beside the makefiles it serves, not .build/hack/, the crate
#   polyflake-hack, whose build script (it prints no rerun-if-changed) reruns when any file under
#   it changes, and every crate of the workspace then compiles again, in every tree.
# - Where a cold make test spends its time: about half compiling, most of the rest tests that
#   wait with one core or none busy (BENCHMARKS.md, "make test"). So three phases: the installs
#   and the main builds, with the warm-up (below) in the background from the start; the test
#   targets TEST_JOBS (3) at a time, longest first (--output-sync=target, every install and build target assumed
#   done with make -o, so nothing rebuilds a file a running test uses); then TEST_LAST alone
#   (test-dist links the release library again with an soname). Three at a time on two cores:
#   the phase is bound by its slots, not its CPU (1,711 s of targets over 882 s of wall clock
#   with the cores about 40% busy, two at a time), and tests must pass on a loaded machine anyway
#   (make test-loaded), a harsher load than three at a time.
# - The warm-up: the trees of their own (loom's, the wheel's zig build, the nightly fuzz and
#   sanitizer builds) share nothing with the main release tree, so make test compiles them at
#   nice 10 from its start: the main build and the tests keep the CPU they want, and the idle
#   time of tests that wait (leases, stores, valgrind's single thread) goes to these builds. It
#   only warms the caches: each target still runs its own build when its turn comes (cargo then
#   finds it done, or waits for the lock), so a failure shows there, in order. A target that
#   needs one of these trees first raises the warm-up back to normal priority (warm-now): on a
#   machine kept busy by others, nice 10 would starve the build that target now waits for. The
#   warm-up runs in a process group of its own (setsid), stops between steps once the make that
#   started it is gone, and logs to target/timing/warm.log.
# - Pinned tools once per machine: cbindgen and cargo-fuzz go to CACHE/<crate>-<version> (the
#   Makefile's TOOLS_CACHE: ~/.cache/polyflake/tools, or under $XDG_CACHE_HOME), outside any
#   checkout: like the Debian packages, a second clone finds them, and a user's own ~/.cargo/bin
#   is never touched. Each is built in a throwaway target directory (not the checkout's, whose
#   profiles and flags it does not share).
# - Timing: under make test every recipe line runs through the timed shell (build.sh shell),
#   which logs its time and target, so the sums hold when targets run side by side.
# - Once, not six times: each installer is here once (apt, pip, npm, cargo tools, toolchains),
#   and installs only what is missing, so make test and make demo stay idempotent.
# - Under `make -n` (n in MAKEFLAGS) the commands that run sub-makes still run them (make passes
#   -n on, so they only print), and everything else is printed, not run.

# make's SHELL first, and fast: it runs once per recipe line under make test.
if [ "${1:-}" = shell ]; then
  shift
  if [ "${1:-}" != "-c" ]; then target=$1; shift; else target=; fi
  if [ -z "${POLYFLAKE_TIMING_LOG:-}" ] || [ -z "$target" ]; then exec /bin/bash "$@"; fi
  case "$2" in *--no-print-directory*) exec /bin/bash "$@" ;; esac
  start=$(date +%s.%N)
  /bin/bash "$@"
  rc=$?
  printf '%s %s %s\n' "$start" "$(date +%s.%N)" "$target" >> "$POLYFLAKE_TIMING_LOG"
  exit $rc
fi

set -u
self=$(readlink -f "$0")

say() { printf '\n==> %s\n' "$*"; }
die() { echo "$*" >&2; exit 1; }
dry_run() { case " ${MAKEFLAGS:-}" in " "-*) return 1 ;; *) [[ "${MAKEFLAGS%% *}" == *n* ]] ;; esac; }
# A command make would have run: printed under make -n, else run.
run() { if dry_run; then printf '%s\n' "$*"; else "$@"; fi; }
# A step of make test outside any target's recipe, logged as TARGET's like a recipe line.
timed() {
  local target=$1 start rc; shift
  start=$(date +%s.%N)
  if [ "$1" = say ] && dry_run; then echo "printf '\\n==> %s\\n' \"${*:2}\""; rc=0
  elif [ "$1" = say ]; then "$@"; rc=$?
  else run "$@"; rc=$?; fi
  [ -z "${POLYFLAKE_TIMING_LOG:-}" ] || dry_run ||
    printf '%s %s %s\n' "$start" "$(date +%s.%N)" "$target" >> "$POLYFLAKE_TIMING_LOG"
  return $rc
}

# --- make help, and its lint --------------------------------------------------------------

# Every `target: prerequisites ## [tier] text` of the makefiles, as "file<TAB>tier<TAB>target
# <TAB>text" in their order; a target named by rules without ## lines is listed as tier "?".
targets() {
  awk '
    /^[a-zA-Z0-9][a-zA-Z0-9_-]*( +[a-zA-Z0-9][a-zA-Z0-9_-]*)*:([^=]|$)/ {
      split($0, head, ":"); n = split(head[1], names, " ")
      help = index($0, "##") ? substr($0, index($0, "##") + 2) : ""
      tier = "plumbing"
      if (match(help, /^ *\[[a-z]+\]/)) { tier = substr(help, RSTART, RLENGTH); gsub(/[ \[\]]/, "", tier); help = substr(help, RLENGTH + 1) }
      sub(/^ +/, "", help)
      for (i = 1; i <= n; i++) {
        t = names[i]
        if (!(t in seen)) { seen[t] = 1; order[++count] = t; file[t] = FILENAME }
        if (help != "") { helps[t]++; text[t] = help; tiers[t] = tier }
      }
    }
    END {
      for (i = 1; i <= count; i++) {
        t = order[i]
        if (helps[t] == 1) printf "%s\t%s\t%s\t%s\n", file[t], tiers[t], t, text[t]
        else printf "%s\t?\t%s\t%s ## lines\n", file[t], t, helps[t] + 0
      }
    }' "$@"
}

help() {
  local list; list=$(targets "$@")
  echo "polyflake: make TARGET [VARIABLE=value]... Every target, by tier (each line is the ## beside"
  echo "the target in the Makefile or .build/mk/*.mk). make test runs every check; make demo the main job."
  local tier title
  for tier in cmd part long tool plumbing; do
    case $tier in
      cmd) title="The two commands" ;;
      part) title="Languages and the other parts of make test, one at a time (check: the core's inner loop)" ;;
      long) title="Long runs and benchmarks (not part of make test)" ;;
      tool) title="Tools and shipping" ;;
      plumbing) title="Plumbing (make test and make demo make these themselves)" ;;
    esac
    printf '\n%s\n' "$title"
    printf '%s\n' "$list" | awk -F'\t' -v tier="$tier" -v cols="${COLUMNS:-100}" '
      $2 == tier {
        width = 26; line = sprintf("  %-" width - 2 "s", $3); pad = sprintf("%" width "s", "")
        if (length($3) > width - 3) { print "  " $3; line = pad }
        n = split($4, w, " "); used = length(line)
        for (i = 1; i <= n; i++) {
          if (used > width && used + 1 + length(w[i]) > cols) { print line; line = pad w[i]; used = length(line) }
          else { line = line (used > width ? " " : "") w[i]; used = length(line) }
        }
        print line
      }'
  done
  local bad; bad=$(printf '%s\n' "$list" | awk -F'\t' '$2 == "?" { printf " %s (%s)", $3, $1 }')
  [ -z "$bad" ] || printf '\n(targets without exactly one ## line:%s)\n' "$bad"
}

lint() {
  local list bad; list=$(targets "$@")
  bad=$(printf '%s\n' "$list" | awk -F'\t' '$2 == "?" { print "  " $1 ": " $3 ": " $4 }
    $2 !~ /^(cmd|part|long|tool|plumbing|\?)$/ { print "  " $1 ": " $3 ": unknown tier [" $2 "]" }')
  if [ -n "$bad" ]; then printf 'every target needs one ## line (tiers: cmd part long tool, none for plumbing):\n%s\n' "$bad"; exit 1; fi
  echo "$(printf '%s\n' "$list" | wc -l) targets, each with one ## line"
}

# --- make test's phases, timing and warm-up -----------------------------------------------

timing_start() {
  local log=${1:-}
  [ -n "$log" ] || { echo "no timing log: make test sets POLYFLAKE_TIMING_LOG"; return; }
  mkdir -p "$(dirname "$log")"
  [ ! -s "$log" ] || mv -f "$log" "$log.previous"
  printf '%s %s\n' "$(date +%s.%N)" "(start)" > "$log"
}

# test-phases --make MAKE --jobs N --assume 'TARGET...' --last 'TARGET...' --coverage DIR
#   --timing DIR -- TEST_TARGET...
test_phases() {
  local make= jobs=2 assume= last= coverage= timing= t
  while [ $# -gt 0 ]; do
    case $1 in
      --make) make=$2; shift 2 ;; --jobs) jobs=$2; shift 2 ;; --assume) assume=$2; shift 2 ;;
      --last) last=$2; shift 2 ;; --coverage) coverage=$2; shift 2 ;; --timing) timing=$2; shift 2 ;;
      --) shift; break ;; *) die "test-phases: unknown option $1" ;;
    esac
  done
  # Printed under make -n too, and run (make passes -n on).
  # shellcheck disable=SC2086
  submake() { ! dry_run || echo "$make $*"; $make "$@"; }
  local -a assumed=() side=()
  for t in $assume; do assumed+=(-o "$t"); done
  for t in "$@"; do
    case " reset-scenario-coverage $last " in *" $t "*) ;; *) side+=("$t") ;; esac
  done
  # The scenario runners' records start empty; the tests, TEST_JOBS at a time; the last alone.
  submake reset-scenario-coverage || exit 1
  local rc=0
  submake -j"$jobs" --output-sync=target "${assumed[@]}" "${side[@]}" || rc=1
  # shellcheck disable=SC2086
  [ -z "$last" ] || submake "${assumed[@]}" $last || rc=1
  [ $rc -eq 0 ] || exit 1
  timed test say "scenario coverage: every runner ran every scenario file"
  timed test python3 tests/vectors/check_coverage.py "$coverage" || exit 1
  if dry_run; then echo "python3 tests/timing.py \$POLYFLAKE_TIMING_LOG $timing/make-test.md"; else
    printf '%s %s\n' "$(date +%s.%N)" "(end)" >> "$POLYFLAKE_TIMING_LOG"
    python3 tests/timing.py "$POLYFLAKE_TIMING_LOG" "$timing/make-test.md"
    printf '(the background warm-up: %s)\n' "$(tail -n 1 "$timing/warm.log" 2>/dev/null)"
  fi
  timed test say "all tests passed"
}

# The make that runs this recipe: the nearest make above (the recipe's shell, and under make test
# the timed shell, may stand between).
make_pid() {
  local p=$PPID
  while [ "${p:-1}" -gt 1 ]; do
    case $(cat "/proc/$p/comm" 2>/dev/null) in make|gmake) echo "$p"; return ;; esac
    p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
  done
  echo "$PPID"
}

warm_start() {
  local dir=$1 parent; shift
  parent=$(make_pid)
  mkdir -p "$dir"
  say "warm-up: the wheel, nightly and loom trees build in the background (log: $dir/warm.log)"
  setsid nice -n 10 "$self" warm-run "$parent" "$dir" "$@" > "$dir/warm.log" 2>&1 < /dev/null &
  echo $! > "$dir/warm.pgid"
}

warm_run() {
  local parent=$1 dir=$2 failed=0; shift 2
  unset POLYFLAKE_TIMING_LOG
  while [ $# -ge 2 ]; do
    if ! kill -0 "$parent" 2>/dev/null; then
      rm -f "$dir/warm.pgid"; echo "warm-up stopped: the make that started it is gone"; return
    fi
    echo "--- $1"; date +%s
    eval "$2" || { echo "--- $1 failed (exit $?): its target builds it for itself"; failed=$((failed + 1)); }
    shift 2
  done
  rm -f "$dir/warm.pgid"
  if [ $failed -eq 0 ]; then echo "warm-up done"
  else echo "warm-up done, $failed step(s) failed (each target builds for itself)"; fi
}

warm_now() {
  local pg; pg=$(cat "$1/warm.pgid" 2>/dev/null)
  if [ -n "$pg" ] && grep -q warm-run "/proc/$pg/cmdline" 2>/dev/null; then
    renice -n 0 -g "$pg" >/dev/null 2>&1 || true
  fi
}

flaky() {
  local make=$1 n=$2 target=$3 i pass=0 fail=0
  for i in $(seq 1 "$n"); do
    printf '\n==> test-flaky: run %s of %s: make %s\n' "$i" "$n" "$target"
    # shellcheck disable=SC2086
    if $make $target; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  done
  printf '\n==> test-flaky: %s: %s passed, %s failed\n' "$target" "$pass" "$fail"
  [ $fail -eq 0 ]
}

# stress-ng, one CPU worker per core at normal priority, started before make test and stopped
# after it however it ends.
loaded() {
  local make=$1 hog
  if dry_run; then echo "stress-ng --cpu $(nproc) --timeout 0 --quiet &"; $make test; return; fi
  stress-ng --cpu "$(nproc)" --timeout 0 --quiet & hog=$!
  # Expanded now: the trap runs after this function's locals are gone (set -u).
  trap "kill $hog 2>/dev/null; wait $hog 2>/dev/null" EXIT
  printf '\n==> test-loaded: stress-ng --cpu %s (pid %s) keeps every core busy during make test\n' "$(nproc)" "$hog"
  $make test
}

# --- installers: each installs only what is missing, and says what it found ---------------

deps_apt() {
  say "Debian packages: ${*:-none needed}"
  local p missing="" sudo=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -z "$missing" ]; then echo "all present"; return; fi
  echo "installing:$missing"
  [ "$(id -u)" = 0 ] || sudo=sudo
  # shellcheck disable=SC2086
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
}

deps_rust() {
  local cargo=${CARGO:-cargo}
  say "Rust toolchain"
  command -v "$cargo" >/dev/null || die "cargo not found: install Rust with rustup first"
  "$cargo" --version
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt
}

cargo_tool() {
  local cache=$1 crate=$2 version=$3 binary=$4 dir tmp rc
  dir=$cache/$crate-$version
  if [ -x "$dir/bin/$binary" ] && "$dir/bin/$binary" --version 2>/dev/null | grep -q " $version$"; then
    echo "$crate $version present in $dir"; return
  fi
  echo "installing $crate $version into $dir (once per machine)"
  tmp=$(mktemp -d)
  CARGO_TARGET_DIR=$tmp "${CARGO:-cargo}" install "$crate" --version "$version" --locked --root "$dir"
  rc=$?; rm -rf "$tmp"; return $rc
}

rust_toolchain() {
  if rustup toolchain list | grep -q "^$1"; then echo "$1 present: $(rustc +"$1" --version)"
  else echo "installing the $1 toolchain (minimal profile)"; rustup toolchain install "$1" --profile minimal; fi
}

gcc_runtimes() {
  local rt
  for rt in "$@"; do
    gcc -print-file-name="$rt" | grep -q / || die "gcc has no $rt: install gcc's sanitizer runtimes"
  done
  echo "gcc sanitizer runtimes present"
}

jdks() {
  local h
  for h in "$@"; do
    [ -x "$h/bin/javac" ] || die "no JDK at $h"
    echo "$h: $("$h/bin/java" -version 2>&1 | head -n 1)"
  done
}

need() { command -v "$1" >/dev/null || die "$1 not found: $2"; }

pip_missing() {
  local py=$1 p n have missing=""; shift
  for p in "$@"; do
    n=${p%%==*}; n=${n%%[[]*}
    have=$("$py" -m pip show "$n" 2>/dev/null | sed -n 's/^Version: //p')
    case $p in
      *==*) [ "$have" = "${p##*==}" ] || missing="$missing $p" ;;
      *) [ -n "$have" ] || missing="$missing $p" ;;
    esac
  done
  if [ -z "$missing" ]; then echo "all present: $*"; return; fi
  echo "pip install$missing"
  # shellcheck disable=SC2086
  "$py" -m pip install -q --disable-pip-version-check $missing
}

venv() {
  local dir=$1; shift
  need python3 "install Python 3"
  if [ -x "$dir/bin/python" ]; then echo "venv present: $("$dir/bin/python" --version)"
  else echo "creating $dir"; python3 -m venv "$dir" || exit 1; fi
  [ $# -eq 0 ] || pip_missing "$dir/bin/python" "$@"
}

npm_missing() {
  local dir=$1 packages=$2 p ok=1; shift 2
  for p in $packages; do [ -d "$dir/node_modules/$p" ] || ok=""; done
  cmp -s "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.polyflake" || ok=""
  if [ -n "$ok" ]; then echo "$dir/node_modules present: $packages"; return; fi
  echo "npm ci in $dir"
  (cd "$dir" && CI=true npm ci --no-audit --no-fund --loglevel=error "$@") &&
    cp "$dir/package-lock.json" "$dir/node_modules/.package-lock.json.polyflake"
}

# --- C: pkg-config files, the header's drift, programs run one by one ------------------------

# pc-files PCDIR INCLUDEDIR LIBDIR VERSION: polyflake.pc (the shared library, with an rpath so
# programs run without LD_LIBRARY_PATH) and polyflake-static.pc (the archive, its system libs).
pc_files() {
  local pc=$1 inc=$2 lib=$3 version=$4
  mkdir -p "$pc"
  printf '%s\n' "includedir=$inc" "libdir=$lib" "" \
    "Name: polyflake" "Description: unique, time-sortable 64-bit IDs (shared library)" \
    "Version: $version" 'Cflags: -I${includedir}' \
    'Libs: -L${libdir} -Wl,-rpath,${libdir} -lpolyflake' > "$pc/polyflake.pc"
  printf '%s\n' "includedir=$inc" "libdir=$lib" "" \
    "Name: polyflake-static" "Description: unique, time-sortable 64-bit IDs (static library)" \
    "Version: $version" 'Cflags: -I${includedir}' \
    'Libs: ${libdir}/libpolyflake.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc' > "$pc/polyflake-static.pc"
}

# header-drift CBINDGEN: include/polyflake.h is exactly what cbindgen makes from the source
# today, and compiles cleanly as C99 and C++17.
header_drift() {
  local tmp; tmp=$(mktemp -d); trap "rm -rf '$tmp'" EXIT
  "$1" -q --config ffi-c/cbindgen.toml --crate polyflake-ffi --output "$tmp/polyflake.h" ffi-c
  if ! diff -u include/polyflake.h "$tmp/polyflake.h"; then
    echo "include/polyflake.h is stale: run 'make header-c' and commit it"; exit 1
  fi
  printf '#include "polyflake.h"\nint main(void) { return polyflake_version() == 0; }\n' > "$tmp/h.c"
  cp "$tmp/h.c" "$tmp/h.cpp"
  gcc -std=c99 -Wall -Wextra -pedantic -Werror -Iinclude -c "$tmp/h.c" -o "$tmp/h.o" &&
    g++ -std=c++17 -Wall -Wextra -Werror -Iinclude -c "$tmp/h.cpp" -o "$tmp/hpp.o" &&
    echo "header up to date; compiles as C99 and C++17"
}

# each [--valgrind 'VALGRIND...' | --only-valgrind 'VALGRIND...'] DIR PROGRAM... [-- ARG...]:
# each PROGRAM of DIR with the ARGs, then (--valgrind) again under valgrind, one program after
# the other; the first failure stops. The store wrappers (tests/stores/with_zookeeper.sh,
# tests/c/with_etcd.sh) append their addresses after the --.
each() {
  local vg="" plain=1 dir t
  local -a programs=()
  while :; do
    case $1 in
      --valgrind) vg=$2; shift 2 ;;
      --only-valgrind) vg=$2; plain=""; shift 2 ;;
      *) break ;;
    esac
  done
  dir=$1; shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do programs+=("$1"); shift; done
  [ $# -eq 0 ] || shift
  for t in "${programs[@]}"; do
    if [ -n "$plain" ]; then echo "--- $t"; "$dir/$t" "$@" || exit 1; fi
    # shellcheck disable=SC2086
    if [ -n "$vg" ]; then echo "--- valgrind $t"; POLYFLAKE_UNDER_VALGRIND=1 $vg "$dir/$t" "$@" || exit 1; fi
  done
}

# --- runs whose outcome is read from a log ---------------------------------------------------

# fuzz-run LOGDIR 'CARGO-FUZZ-RUN' TARGET CORPUS OPTIONS...: the checked-in corpus and
# regressions of TARGET are read, CORPUS is written; the log is LOGDIR/TARGET.log.
fuzz_run() {
  local report="" seconds="" seed="" logs fuzz t corpus log regress="" rc execs rate cov
  if [ "$1" = --report ]; then report=$2 seconds=$3 seed=$4; shift 4; fi
  logs=$1 fuzz=$2 t=$3 corpus=$4; shift 4
  log=$logs/$t.log
  mkdir -p "$logs"
  [ -d "verify/fuzz/regressions/$t" ] && regress=verify/fuzz/regressions/$t
  echo "--- $t: $*"
  eval "$fuzz $t $corpus verify/fuzz/corpus/$t $regress -- $* -print_final_stats=1" > "$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  echo "$t: ${execs:-?} executions (${rate:-?}/s), ${cov:-cov: ?}, exit $rc"
  if [ $rc -ne 0 ]; then
    grep -A4 'panicked at' "$log" | head -n 20
    grep 'ERROR: \|SUMMARY: \|Test unit written\|No such file\|^Error' "$log" | head -n 10
    die "$t failed: the input is in verify/fuzz/artifacts/$t/ (log: $log)"
  fi
  [ -z "$report" ] || echo "$t seconds=$seconds seed=$seed executions=$execs exec/s=$rate corpus=$(ls "$corpus" | wc -l)" >> "$report"
}

# fuzz-cmin LOGDIR 'CARGO-FUZZ-RUN' GROWN TARGET...: each TARGET's grown corpus (GROWN/<t>) and
# checked-in corpus merged (-merge=1) into the smallest set that keeps the coverage, which
# replaces verify/fuzz/corpus/<t>.
fuzz_cmin() {
  local logs=$1 fuzz=$2 grown=$3 t cmin; shift 3
  cmin=$(dirname "$grown")/cmin
  mkdir -p "$logs"
  for t in "$@"; do
    rm -rf "${cmin:?}/$t"; mkdir -p "$cmin/$t" "$grown/$t" "verify/fuzz/corpus/$t"
    eval "$fuzz $t $cmin/$t verify/fuzz/corpus/$t $grown/$t -- -merge=1" > "$logs/cmin-$t.log" 2>&1 ||
      { tail -n 20 "$logs/cmin-$t.log"; exit 1; }
    rm -f "verify/fuzz/corpus/$t"/*; cp "$cmin/$t"/* "verify/fuzz/corpus/$t/"
    echo "$t: $(ls "verify/fuzz/corpus/$t" | wc -l) inputs"
  done
}

# git-drift FILE...: the build just regenerated the FILEs (like rustls-ffi's header check): any
# difference from the checkout's commit is drift.
git_drift() {
  if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then echo "not a git checkout: drift check skipped"; return; fi
  if ! git diff --exit-code --stat -- "$@"; then
    echo "$* changed when regenerated: commit the regenerated files"; exit 1
  fi
  echo "no drift"
}

# checked-run LOG TAIL PATTERN COMMAND...: COMMAND's output into LOG (NAME.log), its last TAIL
# lines shown (-N: its first N); a non-zero exit, or a line matching 'runtime error\|Sanitizer', fails with the
# lines around it (PATTERN: what else to show there, e.g. FAIL; may be empty).
checked_run() {
  local log=$1 tail=$2 also=$3 rc name; shift 3
  name=$(basename "$log" .log)
  echo "--- $name"
  "$@" > "$log" 2>&1; rc=$?
  if [ "$tail" -lt 0 ]; then head -n "${tail#-}" "$log"; else tail -n "$tail" "$log"; fi
  if [ $rc -ne 0 ] || grep -q 'runtime error\|Sanitizer' "$log"; then
    echo "$name failed (exit $rc): see $log"
    grep -B2 -A30 "runtime error\|Sanitizer${also:+\\|$also}" "$log" | head -n 60
    exit 1
  fi
}

cmd=${1:-help}; shift || true
case $cmd in
  help) help "$@" ;;
  lint) lint "$@" ;;
  test-phases) test_phases "$@" ;;
  timing-start) timing_start "$@" ;;
  warm-start) warm_start "$@" ;;
  warm-run) warm_run "$@" ;;
  warm-now) warm_now "$@" ;;
  flaky) flaky "$@" ;;
  loaded) loaded "$@" ;;
  deps-apt) deps_apt "$@" ;;
  deps-rust) deps_rust "$@" ;;
  cargo-tool) cargo_tool "$@" ;;
  rust-toolchain) rust_toolchain "$@" ;;
  gcc-runtimes) gcc_runtimes "$@" ;;
  jdks) jdks "$@" ;;
  need) need "$@" ;;
  venv) venv "$@" ;;
  pip-missing) pip_missing "$@" ;;
  npm-missing) npm_missing "$@" ;;
  pc-files) pc_files "$@" ;;
  header-drift) header_drift "$@" ;;
  each) each "$@" ;;
  fuzz-run) fuzz_run "$@" ;;
  fuzz-cmin) fuzz_cmin "$@" ;;
  git-drift) git_drift "$@" ;;
  checked-run) checked_run "$@" ;;
  *) die "build.sh: unknown command $cmd (see the header of $self)" ;;
esac
