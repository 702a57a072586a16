#!/usr/bin/env bash
# Load benchmark of `polyflake serve` from loopback with wrk (Debian package `wrk`): POST /v1/ids
# with count=1 and count=100 on a strict generator, count=100 on a monotonic one (which never
# leaves the async workers), and count=100 of UUIDv7s and of ULIDs (strict) beside the 64-bit
# count=100 run of the same script. Not a test: it prints requests/s and latency percentiles.
#
#   cli/bench/load.sh [POLYFLAKE_BIN] [DURATION_S] [CONNECTIONS] [WRK_THREADS]
#
# The server and wrk share this machine's cores, so the figures are a floor for a dedicated host.
set -euo pipefail
BIN=${1:-${POLYFLAKE_RELEASE_DIR:-target/release}/polyflake}
DURATION=${2:-10}
CONNS=${3:-64}
THREADS=${4:-2}
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)"; exit 1; }
[ -x "$BIN" ] || { echo "$BIN not built (cargo build --release -p polyflake-cli)"; exit 1; }

tmp=$(mktemp -d)
pid=""
stop() { if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi; }
trap 'stop; rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores, $(uname -sr); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(wrk --version 2>&1 | head -n1)"

run() { # run MODE_FLAG COUNT [FORMAT]
  local mode=$1 count=$2 format=${3:-snowflake} out="$tmp/serve.out"
  local body="{\"count\": $count}"
  [ "$format" = snowflake ] || body="{\"count\": $count, \"format\": \"$format\"}"
  "$BIN" serve --listen 127.0.0.1:0 --node-id 901 --max-count 4096 $mode >"$out" 2>"$tmp/serve.err" &
  pid=$!
  for _ in $(seq 100); do grep -q 'http://' "$out" 2>/dev/null && break; sleep 0.05; done
  local url; url=$(grep -o 'http://[^ ]*' "$out")
  local lua="$tmp/post_${count}_$format.lua"
  printf 'wrk.method = "POST"\nwrk.body = "%s"\nwrk.headers["Content-Type"] = "application/json"\n' \
    "${body//\"/\\\"}" >"$lua"
  # One check that the request is what we think before timing it.
  curl -fsS -X POST -H 'Content-Type: application/json' -d "$body" "$url/v1/ids" \
    | python3 -c "import json,sys; v=json.load(sys.stdin); assert len(v['ids'])==$count and v.get('format', 'snowflake')=='$format', v"
  echo
  echo "=== $(head -n1 "$out")"
  echo "=== POST /v1/ids $body: wrk -t$THREADS -c$CONNS -d${DURATION}s --latency"
  wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency -s "$lua" "$url/v1/ids"
  curl -fsS "$url/metrics" | grep -E '^polyflake_(ids_issued_total|ids_refused_total|sequence_exhaustions_total|blocking_calls_total|http_responses_total)'
  stop
}

run "" 1
run "" 100
run "--monotonic" 100
run "" 100 uuidv7
run "" 100 ulid
