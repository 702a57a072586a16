#!/bin/bash
# Model-check the lease protocol and the fork/registry rules (verify/model/lease.pml), and one node id
# held on one host by static and lease holders (verify/model/host.pml), with spin.
#
#   verify/model/check.sh full      every configuration at the full bounds (3 holders), the liveness
#                            check, every mutation (must fail) and the findings; `make model`
#   verify/model/check.sh bounded   the same at smaller bounds (2 holders); `make test-model`
#   verify/model/check.sh one NAME  one configuration or mutation by name (see the tables below)
#
# Work files (pan.c, pan, *.trail) go to $MODEL_OUT (default target/model/); a mutation's and a
# finding's counterexample is written, trimmed to its events, to verify/model/trails/NAME.txt.
# Exit status: 0 when the real protocol shows no error and every mutation and finding fails.
set -u
cd "$(dirname "$0")"
MODEL_DIR=$(pwd)
OUT=${MODEL_OUT:-$MODEL_DIR/../../target/model}
MODE=${1:-bounded}
ONLY=${2:-}
NICE=${MODEL_NICE:-}    # e.g. MODEL_NICE="nice -n 19" on a shared machine
MEMLIM=${MODEL_MEMLIM:-4096}     # MB for pan's state store
mkdir -p "$OUT" "$MODEL_DIR/trails"

if [ "$MODE" = full ]; then
  H="-DNH=3 -DTMAX=3"; HH="-DNH=3 -DTMAX=3 -DGENS=3"; OPT=-O2; HASH=-w26
  # host-cross-fixed at 3 processes and 3 generators runs out of 4 GB: 2 processes (the third
  # generator is made by a process that ended one), calls in flight as one step (host.pml INFLIGHT)
  HBIG="-DNH=2 -DINFLIGHT=0"
else
  H="-DNH=2 -DTMAX=3"; HH="-DNH=2 -DTMAX=3 -DGENS=2"; OPT=-O1; HASH=-w24
  HBIG=""
fi

# Every fault is off unless a configuration turns it on.
NOFAULT="-DDELETE_FILE=0 -DRESTORE=0 -DFORK=0 -DDOWN=0 -DCLOCKSTEP=0 -DLATE=0"
F="-DSTORE=1 $NOFAULT"
E="-DSTORE=2 $NOFAULT"
Z="-DSTORE=3 $NOFAULT"
# name | kind (safety, live, mutation, finding) | -D flags (later -D flags win) | "skip": not in
# the bounded mode
# Each configuration lets ONE fault of its set happen (BUDGET=1) besides one end of a
# generator (a crash or a clean close, then a restart): faults in separate runs keep every run
# exhaustive within the time allowed.
CONFIGS="
file-crash-down|safety|$F -DDOWN=1
file-clock|safety|$F -DCLOCKSTEP=1
file-delete|safety|$F -DDELETE_FILE=1
file-restore|safety|$F -DRESTORE=1 -DENDS=0
file-restore-crash|safety|$F -DRESTORE=1 -DNH=2
file-fork|safety|$F -DFORK=1
etcd-expire-late|safety|$E -DLATE=1
etcd-down-clock|safety|$E -DDOWN=1 -DCLOCKSTEP=1
etcd-restore|safety|$E -DRESTORE=1 -DENDS=0
etcd-restore-crash|safety|$E -DRESTORE=1 -DNH=2|skip
zk-expire-late|safety|$Z -DLATE=1
zk-down-clock|safety|$Z -DDOWN=1 -DCLOCKSTEP=1
zk-restore|safety|$Z -DRESTORE=1 -DENDS=0
zk-restore-crash|safety|$Z -DRESTORE=1 -DNH=2|skip
etcd-restore-expire|safety|$E -DRESTORE=1 -DBUDGET=2 -DENDS=0
zk-restore-expire|safety|$Z -DRESTORE=1 -DBUDGET=2 -DENDS=0
registry|safety|-DSTORE=0 -DSEQ=2
file-live|live|$F -DLIVE=1 -DTMAX=4 -DDOWN=1 -DENDS=0
etcd-live|live|$E -DLIVE=1 -DTMAX=4 -DDOWN=1 -DENDS=0
no-record-check|mutation|$E -DR_CHECK=0
no-restart-guard|mutation|$F -DR_GUARD=0
r-written-after-issuing|mutation|$F -DCLOCKSTEP=1 -DR_BEFORE=0
registry-not-fork-aware|mutation|-DSTORE=0 -DSEQ=2 -DR_FORKREG=0
handover-repeats-a-millisecond|mutation|-DSTORE=0 -DSEQ=2 -DR_HANDOVER=0
descriptor-closed-by-number|mutation|$F -DTMAX=4 -DFORK=1 -DR_FSTAT=0
no-rollback-detection|mutation|$Z -DRESTORE=1 -DLATE=0 -DBUDGET=2 -DENDS=0 -DR_ROLLBACK=0
no-fence|mutation|$E -DRESTORE=1 -DR_FENCE=0
no-take-fence-read|mutation|$Z -DRESTORE=1 -DBUDGET=2 -DENDS=0 -DR_TAKEFENCE=0
no-file-take-fence-read|mutation|$F -DRESTORE=1 -DR_TAKEFENCE=0
no-claim-check|mutation|$Z -DRESTORE=1 -DNH=2 -DR_TAKEFENCE=0 -DR_CLAIM=0|skip
no-cap|mutation|$F -DDELETE_FILE=1 -DR_CAP=0
finding-unfenced-window|finding|$Z -DRESTORE=1 -DBUDGET=2 -DENDS=0 -DFENCE_WINDOW=1
finding-deleted-file-clock-back|finding|$F -DDELETE_FILE=1 -DCLOCKSTEP=1 -DBUDGET=2 -DENDS=0
"

# verify/model/host.pml: one node id (0) on one host, taken by processes as a static id or as a file
# lease's slot; the code's rules are all 1 unless a line sets one to 0. Bounds: HH above (NH
# processes at once, GENS generators in a run, the clock 1..TMAX and one step back of 1 ms);
# mutations and findings run at NH=2 GENS=2 (or the GENS their line gives) in every mode.
# Each run allows at most one process death (a kill, or an exit with a generator open).
# UNLOCK_FIRST, LEASE_MARK and SPENT_ALWAYS (see host.pml) were found by this model and are rules
# of the code now: each removed is a mutation that must fail.
STATICS_ONLY="-DLEASES=0"
HOST_CONFIGS="
host-static|safety|$STATICS_ONLY
host-markless|safety|$STATICS_ONLY -DMARKLESS=2 -DSTEPS=0 -DMONO=0
host-cross|safety|$HBIG
host-cross-markless|safety|-DMARKLESS=1 -DSTEPS=0 -DMONO=0
no-host-claim-for-leases|mutation|-DKILLS=0 -DR_ONECLAIM=0
clock-read-before-claim|mutation|$STATICS_ONLY -DMARKLESS=2 -DSTEPS=0 -DMONO=0 -DR_AFTERCLAIM=0
no-mark|mutation|$STATICS_ONLY -DR_MARK=0
mark-ignores-lead|mutation|$STATICS_ONLY -DSTEPS=0 -DR_LEAD=0
mark-written-after-issuing|mutation|$STATICS_ONLY -DR_BEFORE=0
exit-write-before-close|mutation|$STATICS_ONLY -DKILLS=0 -DR_EXIT=0
lease-ignores-host-mark|mutation|-DKILLS=0 -DR_CROSS=0
lease-close-leaves-no-mark|mutation|-DKILLS=0 -DR_CROSSCLOSE=0 -DLEASE_MARK=0
lease-killed-stale-state|mutation|-DLEASE_MARK=0 -DUNLOCK_FIRST=0 -DSPENT_ALWAYS=0 -DSTEPS=0 -DEXITS=0 -DMONO=0
lease-killed-clock-back|mutation|-DLEASE_MARK=0 -DINITMARK=0 -DEXITS=0 -DMONO=0
lease-killed-lead|mutation|-DLEASE_MARK=0 -DINITMARK=0 -DEXITS=0 -DSTEPS=0
claim-released-before-unlock|mutation|-DUNLOCK_FIRST=0 -DLEASE_MARK=0 -DSPENT_ALWAYS=0 -DGENS=3 -DKILLS=0 -DEXITS=0 -DSTEPS=0 -DMONO=0 -DINITMARK=0
markless-then-static|mutation|-DSPENT_ALWAYS=0 -DMARKLESS=1 -DLEASES=0 -DKILLS=0 -DEXITS=0 -DSTEPS=0 -DMONO=0
markless-then-lease|mutation|-DSPENT_ALWAYS=0 -DMARKLESS=1 -DINITMARK=0 -DKILLS=0 -DEXITS=0 -DSTEPS=0 -DMONO=0
"

fail=0
summary=()
run_one() {
  local name=$1 kind=$2 flags=$3 pml=${4:-lease.pml}
  local dir="$OUT/$name"
  rm -rf "$dir" && mkdir -p "$dir" && cp "$MODEL_DIR"/*.pml "$dir"/
  local allflags="$H $flags" fixed="-DNH=2 -DTMAX=3"
  [ "$pml" = host.pml ] && allflags="$HH $flags" && fixed="-DNH=2 -DTMAX=3 -DGENS=2"
  # mutations and findings run at the same bounds in every mode: the same trail each time
  case $kind in mutation|finding) allflags="$fixed $flags" ;; esac
  local t0 t1 res
  t0=$(date +%s.%N)
  ( cd "$dir" && $NICE spin -a $allflags "$pml" >spin.out 2>&1 ) || { echo "spin -a failed: $name"; cat "$dir/spin.out"; fail=1; return; }
  case $kind in
    live)
      ( cd "$dir" && $NICE gcc $OPT -w -DMEMLIM=$MEMLIM -DCOLLAPSE -DNFAIR=3 -o pan pan.c && \
        $NICE ./pan -m1000000 $HASH -a -f -N live >pan.out 2>&1 ) ;;
    safety)
      ( cd "$dir" && $NICE gcc $OPT -w -DSAFETY -DMEMLIM=$MEMLIM -DCOLLAPSE -o pan pan.c && \
        $NICE ./pan -m1000000 $HASH -E >pan.out 2>&1 ) ;;
    mutation|finding)
      # depth-first, stopping at the first counterexample (breadth-first would give the
      # shortest, but runs out of memory on the deeper ones); host.pml's are small: pan
      # unoptimised compiles in a third of the time
      local opt=$OPT
      [ "$pml" = host.pml ] && opt=-O0
      ( cd "$dir" && $NICE gcc $opt -w -DSAFETY -DMEMLIM=$MEMLIM -DCOLLAPSE -o pan pan.c && \
        $NICE ./pan -m1000000 $HASH -E >pan.out 2>&1 ) ;;
  esac
  t1=$(date +%s.%N)
  local secs errors states depth
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.out" | head -1)
  states=$(sed -n 's/^ *\([0-9e+.]*\) states, stored.*/\1/p' "$dir/pan.out" | head -1)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$dir/pan.out" | head -1)
  if grep -q "out of memory\|Search not completed\|max search depth too small" "$dir/pan.out" && [ "${errors:-1}" = 0 ]; then
    res="INCOMPLETE"; fail=1
  elif [ "$kind" = safety ] || [ "$kind" = live ]; then
    if [ "$errors" = 0 ]; then res="ok: no error"; else res="FAILED: $errors error(s)"; fail=1; fi
  else
    if [ -n "$errors" ] && [ "$errors" != 0 ] && [ -f "$dir/$pml.trail" ]; then
      res="ok: counterexample, verify/model/trails/$name.txt"
      local failed
      failed=$(grep -m1 "assertion violated" "$dir/pan.out" | sed 's/^pan:[0-9]*: //')
      case "$failed" in
        *"issued["*) failed="P1 violated (two issued IDs equal): $failed" ;;
        *"myR"*) failed="P2 violated (an ID past its holder's R): $failed" ;;
        *"pred"*) failed="P3 violated (an ID at or below a predecessor's possible R): $failed" ;;
        *"lseq"*) failed="P4 violated (a holder's IDs not increasing): $failed" ;;
      esac
      {
        echo "# $name ($kind): verify/model/$pml with $allflags"
        echo "# spin -t replay of the counterexample, events only (spin -t -p $allflags $pml for every statement)"
        echo "# $failed"
        if [ "$pml" = host.pml ]; then
          echo "# Properties: P1 no two IDs equal; P2 no ID past its holder's R; P4 each generator's IDs"
          echo "# increase. IDs are (ms, seq) of node 0. P<n> is process n; ENV the environment."
        else
          echo "# Properties: P1 no two IDs equal; P2 no ID past its holder's R; P3 nothing at or below the"
          echo "# predecessors' possible R; P4 each holder's IDs increase. H<n> is holder n; ENV the environment."
        fi
        echo
        ( cd "$dir" && $NICE spin -t $allflags "$pml" 2>&1 ) | grep -E "MSC:|assertion violated|text of failed" | sed -E 's/^ *//; s/^MSC: //'
      } >"$MODEL_DIR/trails/$name.txt"
    else
      res="FAILED: the mutation shows no error"; fail=1
    fi
  fi
  printf '%-32s %-9s %10s states  depth %5s  %7s s  %s\n' "$name" "$kind" "${states:-?}" "${depth:-?}" "$secs" "$res"
  summary+=("$name $kind states=${states:-?} depth=${depth:-?} time=${secs}s $res")
}

echo "spin model check ($MODE: lease.pml $H, host.pml $HH), $(spin -V)"
while IFS='|' read -r name kind flags bflags; do
  [ -z "$name" ] && continue
  if [ "$MODE" = one ]; then [ "$name" = "$ONLY" ] || continue; fi
  if [ "$MODE" = bounded ] && [ "${bflags:-}" = skip ]; then continue; fi
  run_one "$name" "$kind" "$flags"
done <<<"$CONFIGS"
while IFS='|' read -r name kind flags bflags; do
  [ -z "$name" ] && continue
  if [ "$MODE" = one ]; then [ "$name" = "$ONLY" ] || continue; fi
  if [ "$MODE" = bounded ] && [ "${bflags:-}" = skip ]; then continue; fi
  run_one "$name" "$kind" "$flags" host.pml
done <<<"$HOST_CONFIGS"
if [ $fail = 0 ]; then echo "model check: all as expected"; else echo "model check: FAILED"; fi
exit $fail
