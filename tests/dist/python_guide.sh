#!/usr/bin/env bash
# The Python guide against the published wheel, as a user copying from it would run
# it: a fresh venv gets polyflake from the package index given (the local one of test_dist.sh)
# and prometheus-client, fastapi and uvicorn from PyPI, with no cargo, rustc or rustup on PATH.
# Then:
#   - every ```python snippet of docs/python.md (<!-- snippet:NAME --> ... <!-- /snippet -->,
#     extracted by snippet.py) and python/examples/fastapi_app.py pass mypy --strict against the
#     installed package, and the file-lease snippet without its `lease is not None` check is
#     refused (the stubs say a health() snapshot's lease may be None);
#   - every snippet runs, each in a directory of its own, except those the guide marks
#     `<!-- not-standalone:NAME reason -->` (a store to reach), which are named with the reason;
#   - the FastAPI example runs on uvicorn on a free loopback port: /health answers 503
#     restart_guard, then 200; POST /ids gives decimal-string IDs of the health's node id;
#     /metrics is Prometheus text; SIGINT shuts it down cleanly and frees its lease slot.
#
#   python_guide.sh ROOT INDEX_URL VERSION MYPY
#     ROOT       the checkout (docs/python.md, python/examples/, tests/dist/snippet.py)
#     INDEX_URL  the simple index to install polyflake from, e.g. http://127.0.0.1:PORT/simple
#     VERSION    the version it must install
#     MYPY       a mypy executable (test_dist.sh's tools venv); it checks the fresh venv's packages
set -euo pipefail
root=$1 index=$2 version=$3 mypy=$4
guide=$root/docs/python.md
work=$(mktemp -d /tmp/polyflake-guide.XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n--- %s\n' "$*"; }
fail() { echo "FAIL: $*"; exit 1; }
snippet() { python3 "$root/tests/dist/snippet.py" "$@"; }

# test_dist.sh has taken the Rust toolchain off PATH; run alone, this does it too.
no_rust=""
IFS=: read -ra dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ -x "$d/cargo" ] || [ -x "$d/rustc" ] || [ -x "$d/rustup" ] || no_rust=${no_rust:+$no_rust:}$d
done
export PATH=$no_rust
unset CARGO RUSTC RUSTUP_TOOLCHAIN CARGO_TARGET_DIR
for tool in cargo rustc rustup; do
  ! command -v "$tool" > /dev/null || fail "$tool is still on PATH"
done

step "Python guide: polyflake $version from $index, fastapi and uvicorn from PyPI, into a fresh venv"
python3 -m venv "$work/py"
py=$work/py/bin/python
pip() { "$py" -m pip install -q --disable-pip-version-check --no-cache-dir "$@"; }
pip "polyflake==$version" --index-url "$index"
pip prometheus-client fastapi uvicorn
"$py" - "$version" <<'PY'
import importlib.metadata as md, pathlib, sys
import fastapi, polyflake, prometheus_client, uvicorn
assert polyflake.__version__ == sys.argv[1], polyflake.__version__
where = pathlib.Path(polyflake.__file__).resolve()
assert pathlib.Path(sys.prefix).resolve() in where.parents, where
assert "Tag: cp39-abi3-manylinux" in md.distribution("polyflake").read_text("WHEEL")
print(f"polyflake {polyflake.__version__} (wheel) with fastapi {fastapi.__version__}, uvicorn {uvicorn.__version__}")
PY

# The snippets, in the guide's order; NAME -> NAME with '_' for '-' (a module name for mypy).
mapfile -t names < <(grep -o '<!-- snippet:[a-z0-9-]* -->' "$guide" | sed 's/<!-- snippet:\(.*\) -->/\1/')
[ "${#names[@]}" -gt 0 ] || fail "no snippet in $guide"
[ "$(grep -c '^```python' "$guide")" -eq "${#names[@]}" ] || fail "$guide has a \`\`\`python block outside a snippet"
# NAME reason, one a line, for each <!-- not-standalone:NAME reason --> (the reason may wrap).
python3 - "$guide" > "$work/not-standalone" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for name, reason in re.findall(r"<!-- not-standalone:([a-z0-9-]+)\s+(.*?)\s*-->", text, re.S):
    print(name, " ".join(reason.split()))
PY
mkdir -p "$work/check"
for name in "${names[@]}"; do snippet "$guide" "$name" > "$work/check/${name//-/_}.py"; done
cp "$root/python/examples/fastapi_app.py" "$work/check/"

step "mypy --strict: the guide's ${#names[@]} snippets and the FastAPI example, on the installed package"
cd "$work/check"
export MYPY_CACHE_DIR=$work/mypy-cache
"$mypy" --strict --python-executable "$py" ./*.py
# The check has teeth: the file-lease snippet as it was (no None check on health().lease) fails.
grep -v '^    assert lease is not None$' python_file_lease.py > "$work/unchecked_lease.py"
! cmp -s python_file_lease.py "$work/unchecked_lease.py" || fail "the file-lease snippet has no 'assert lease is not None' line"
if "$mypy" --strict --python-executable "$py" "$work/unchecked_lease.py" > "$work/unchecked.out"; then
  fail "mypy --strict accepted health().lease used without a None check"
fi
grep -q 'Item "None" of "LeaseHealth | None" has no attribute\|Item "None" of "Optional\[LeaseHealth\]" has no attribute' \
  "$work/unchecked.out" || { cat "$work/unchecked.out"; fail "mypy refused the unchecked lease for another reason"; }
echo "mypy --strict: every snippet and the example pass; health().lease used unchecked is refused"

step "the guide's snippets run against the installed wheel"
ran=0 skipped=0
for name in "${names[@]}"; do
  reason=$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$work/not-standalone")
  if [ -n "$reason" ]; then
    echo "skipped $name: not standalone: $reason"
    skipped=$((skipped + 1))
    continue
  fi
  mkdir -p "$work/run/$name" && cd "$work/run/$name"
  cp "$work/check/${name//-/_}.py" snippet.py
  started=$(date +%s%N)
  timeout 300 "$py" snippet.py > out.txt 2>&1 || { cat out.txt; fail "snippet $name"; }
  echo "ran $name ($(( ($(date +%s%N) - started) / 1000000 )) ms)"
  ran=$((ran + 1))
done
echo "$ran snippets ran, $skipped not standalone (named above with the reason)"

step "the FastAPI example on uvicorn, a free loopback port, a file lease of its own"
mkdir -p "$work/app" "$work/leases" && cp "$root/python/examples/fastapi_app.py" "$work/app/"
cd "$work/app"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
POLYFLAKE_LEASE_DIR=$work/leases "$work/py/bin/uvicorn" fastapi_app:app --host 127.0.0.1 --port "$port" \
  > "$work/uvicorn.log" 2>&1 &
server=$!
# get PATH BODYFILE [CURL ARGS]: prints the HTTP status (000: no answer), the body into BODYFILE.
get() { curl -s -o "$work/$2" -w '%{http_code}' "${@:3}" "$base$1" || true; }
seen=""
for _ in $(seq 1 300); do
  status=$(get /health health.json)
  if [ "$status" != 000 ]; then seen="$seen $status:$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$work/health.json")"; fi
  [ "$status" = 200 ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/uvicorn.log"; fail "uvicorn exited"; }
  sleep 0.1
done
[ "$status" = 200 ] || { cat "$work/uvicorn.log"; fail "/health never answered 200:$seen"; }
case "$seen" in *"503:restart_guard"*) ;; *) fail "/health did not say 503 restart_guard before 200:$seen" ;; esac
echo "/health: 503 restart_guard while the new slot's guard held, then 200 ok"
[ "$(get '/ids?count=5' ids.json -X POST)" = 200 ] || { cat "$work/ids.json"; fail "POST /ids?count=5"; }
[ "$(get '/ids?count=3' more.json -X POST)" = 200 ] || { cat "$work/more.json"; fail "POST /ids?count=3"; }
[ "$(get '/ids?count=0' bad.json -X POST)" = 422 ] || fail "POST /ids?count=0 is not FastAPI's 422"
[ "$(get /metrics metrics.txt)" = 200 ] || fail "GET /metrics"
"$py" - "$work" <<'PY'
import json, pathlib, sys
import polyflake
work = pathlib.Path(sys.argv[1])
health = json.loads((work / "health.json").read_text())
assert health["ok"] is True and health["source"] == "file_lease", health
answers = [json.loads((work / f).read_text()) for f in ("ids.json", "more.json")]
ids = []
for a, n in zip(answers, (5, 3)):
    assert set(a) == {"ids", "node_id"} and a["node_id"] == health["node_id"], a
    assert len(a["ids"]) == n and all(isinstance(x, str) and x.isdigit() for x in a["ids"]), a
    ids += [int(x) for x in a["ids"]]
assert ids == sorted(ids) and len(set(ids)) == 8, ids
assert {polyflake.decode(x)["node_id"] for x in ids} == {health["node_id"]}
metrics = (work / "metrics.txt").read_text()
issued = [l for l in metrics.splitlines() if l.startswith("polyflake_ids_issued_total")]
assert issued and float(issued[0].split()[-1]) >= 8, issued
print(f"POST /ids: 8 decimal-string IDs of node {health['node_id']}, increasing; /metrics: {issued[0]}")
PY
kill -INT "$server"
code=0; wait "$server" || code=$?
server=""
[ "$code" = 0 ] || { cat "$work/uvicorn.log"; fail "uvicorn exited $code after SIGINT"; }
grep -q "Application shutdown complete" "$work/uvicorn.log" || { cat "$work/uvicorn.log"; fail "no clean shutdown"; }
"$py" - "$work/leases" "$work/health.json" <<'PY'
import json, sys
import polyflake
node = json.load(open(sys.argv[2]))["node_id"]
with polyflake.Snowflake.from_file_lease(sys.argv[1]) as g:  # the freed slot, its guard passed
    assert g.node_id == node and g.health().ok, (g.node_id, node, g.health().reason)
print(f"SIGINT: a clean shutdown; slot {node} is free and ready for the next process")
PY
