#!/usr/bin/env bash
# The Node guide against the installed packages, called by test_dist.sh's Node section
# once the packages are published to its local registry and Rust is off PATH:
#   - the packed polyflake-VERSION.tgz holds every module docs/node.md and node/examples/ import
#     (check_contents.py --npm-modules), and a copy without polyflake/prometheus is refused by name;
#   - a fresh npm project installs polyflake from the registry; every module the guide imports
#     resolves there;
#   - every JavaScript/TypeScript block of docs/node.md is a snippet (<!-- snippet:NAME -->), the
#     copy of an example file (<!-- file:PATH -->) or marked <!-- not-standalone: REASON --> (the
#     reason is printed); the snippets are compiled with tsc --strict (node16 resolution, which
#     reads the exports map, and node10, which does not) and run; the ZooKeeper one beside a real
#     ZooKeeper (tests/stores/with_zookeeper.sh) when Java and ZooKeeper are installed, otherwise
#     it is compiled only and the reason printed;
#   - node/examples/express.js runs from the project on a free port: GET /id, /ids, /healthz,
#     /metrics and POST /orders with curl, the JSON checked, then SIGTERM and a clean exit.
# prom-client and express come from the checkout's node/node_modules (the versions
# node/package-lock.json pins), linked into the project: the local registry has no uplink.
#
#   node_guide.sh ROOT DIST VERSION REGISTRY NPM_TOOLS WORK
set -euo pipefail
root=$1 dist=$2 version=$3 registry=$4 npm_tools=$5 work=$6
guide=$root/docs/node.md
tsc=$npm_tools/node_modules/.bin/tsc
app_pid=""
cleanup() { [ -z "$app_pid" ] || { kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; }; }
trap cleanup EXIT
step() { printf '\n--- %s\n' "$*"; }
fail() { echo "FAIL: $*"; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for tool in cargo rustc rustup; do ! command -v "$tool" > /dev/null || fail "$tool is on PATH"; done
rm -rf "$work" && mkdir -p "$work"

step "Node guide: the packed polyflake holds every module the guide and the examples import"
python3 "$root/tests/dist/check_contents.py" --npm-modules "$dist/polyflake-$version.tgz"
mkdir -p "$work/repack" && tar -xzf "$dist/polyflake-$version.tgz" -C "$work/repack"
rm "$work/repack/package/prometheus.js"
tar -czf "$work/repack/without-prometheus.tgz" -C "$work/repack" package
if python3 "$root/tests/dist/check_contents.py" --npm-modules "$work/repack/without-prometheus.tgz" > "$work/repack.out"; then
  fail "check_contents.py accepted a package without prometheus.js"
fi
grep -q "module polyflake/prometheus .* needs prometheus.js" "$work/repack.out" || { cat "$work/repack.out"; fail "the missing module is not named"; }
echo "a package without prometheus.js is refused, naming polyflake/prometheus"

step "Node guide: a fresh project, polyflake from the local registry"
app=$work/app
mkdir -p "$app" && cd "$app"
printf '{ "name": "node-guide", "version": "1.0.0", "private": true }\n' > package.json
npm install --registry "$registry" --no-package-lock polyflake > "$work/npm-install.log" 2>&1 || { cat "$work/npm-install.log"; fail "npm install polyflake"; }
[ -f node_modules/polyflake-linux-x64-gnu/polyflake.linux-x64-gnu.node ] || fail "no prebuilt addon through optionalDependencies"
for m in prom-client express; do
  [ -d "$root/node/node_modules/$m" ] || fail "$root/node/node_modules/$m is missing (make deps-node)"
  ln -s "$root/node/node_modules/$m" "node_modules/$m"
done
modules=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import check_contents as c; print(" ".join(sorted(c.guide_imports())))' "$root/tests/dist")
for m in $modules; do
  where=$(node -e "console.log(require.resolve(process.argv[1]))" "$m" 2>&1) || { echo "$where"; fail "module $m does not resolve from the installed package"; }
  case $where in "$app/node_modules/polyflake/"*) ;; *) fail "module $m resolves to $where, not the installed package";; esac
  echo "$m -> ${where#"$app/"}"
done

step "Node guide: every JavaScript/TypeScript block of docs/node.md, by its marker"
python3 - "$guide" > "$work/blocks" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
fenced, bad = False, []
for i, line in enumerate(lines):
    if not line.startswith("```"):
        continue
    if fenced:
        fenced = False
        continue
    fenced = True
    if not re.fullmatch(r"```(js|ts|javascript|typescript|mjs|cjs)", line):
        continue
    m = re.fullmatch(r"<!-- (snippet:([a-z0-9-]+)|file:(\S+)|not-standalone: (.+)) -->", lines[i - 1] if i else "")
    if not m:
        bad.append(f"line {i + 1}")
    elif m.group(2):
        print(f"snippet {m.group(2)} {line[3:]}")
    elif m.group(3):
        print(f"file {m.group(3)}")
    else:
        print(f"skip line {i + 1}: {m.group(4)}")
if bad:
    sys.exit(f"docs/node.md: unmarked code blocks at {', '.join(bad)}: mark each as a snippet, a file or not-standalone")
PY
snippets=()
while read -r kind name rest; do
  case $kind in
    snippet)
      case $rest in ts|typescript) ;; *) fail "snippet $name is $rest: the guide's snippets are TypeScript";; esac
      python3 "$root/tests/dist/snippet.py" "$guide" "$name" > "$name.ts"
      snippets+=("$name") ;;
    file)
      [ "$name" = node/examples/express.js ] || fail "docs/node.md shows $name, which this test does not run"
      echo "file $name: run below as the Express app" ;;
    skip) echo "not standalone, not run: $name $rest" ;;
  esac
done < "$work/blocks"
[ "${#snippets[@]}" -ge 8 ] || fail "only ${#snippets[@]} snippets found in docs/node.md"
echo "snippets: ${snippets[*]}"

step "Node guide: tsc --strict on the snippets (node16 resolution: the exports map; node10: the files)"
files=$(printf '"%s.ts",' "${snippets[@]}")
for res in node16 node10; do
  module=$([ $res = node16 ] && echo node16 || echo commonjs)
  cat > "tsconfig.$res.json" <<JSON
{ "compilerOptions": { "strict": true, "target": "es2020", "module": "$module", "moduleResolution": "$res",
    "esModuleInterop": true, "skipLibCheck": false, "outDir": "out-$res",
    "typeRoots": ["$npm_tools/node_modules/@types"], "types": ["node"] },
  "files": [${files%,}] }
JSON
  "$tsc" -p "tsconfig.$res.json" || fail "tsc --strict ($res resolution) refused a snippet of docs/node.md"
  echo "tsc --strict, moduleResolution $res: ${#snippets[@]} snippets compile"
done

step "Node guide: the snippets run against the installed packages"
for name in "${snippets[@]}"; do
  tmp=$work/tmp-$name && mkdir -p "$tmp"
  start=$(date +%s%N)
  if grep -q fromZooKeeper "$name.ts"; then
    if [ -x "${JAVA_BIN:-/usr/bin/java}" ] && [ -f /usr/share/java/zookeeper.jar ]; then
      TMPDIR=$tmp "$root/tests/stores/with_zookeeper.sh" \
        sh -c 'ZOOKEEPER=$POLYFLAKE_TEST_ZOOKEEPER exec node out-node16/'"$name"'.js' node-guide \
        || fail "snippet $name failed beside ZooKeeper"
    else
      echo "snippet $name: compiled only, not run: it needs a ZooKeeper ensemble (Java and Debian's zookeeper are not installed)"
      continue
    fi
  else
    TMPDIR=$tmp node "out-node16/$name.js" > "$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "snippet $name failed"; }
  fi
  echo "snippet $name ran ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
done

step "Node guide: node/examples/express.js from the project, on a free port, with curl"
cp "$root/node/examples/express.js" "$app/express.js"
port=$(free_port)
mkdir -p "$work/lease"
node express.js "$work/lease" "$port" 200 > "$work/express.log" 2>&1 &
app_pid=$!
for _ in $(seq 1 100); do grep -qx "listening $port" "$work/express.log" && break; sleep 0.2; done
grep -qx "listening $port" "$work/express.log" || { cat "$work/express.log"; fail "the Express app did not listen on $port"; }
base=http://127.0.0.1:$port
# check WHAT STATUS BODY PYTHON: the response's status, then the expression on its JSON (j).
check() {
  python3 - "$1" "$2" "$3" "$4" <<'PY' || { cat "$work/express.log"; fail "$1"; }
import json, sys
what, status, body, expr = sys.argv[1:]
text, _, code = body.rpartition("\n")
j = json.loads(text)
assert code == status, f"{what}: HTTP {code}, wanted {status}: {text}"
assert eval(expr, {"j": j}), f"{what}: {expr} is false for {text}"
print(f"{what}: HTTP {code} {text[:100]}")
PY
}
req() { curl -s -w '\n%{http_code}' "$@"; }
one=$(req "$base/id")
check "GET /id" 200 "$one" 'j["id"].isdigit() and 0 < int(j["id"]) < 2**63'
id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1].rpartition("\n")[0])["id"])' "$one")
check "GET /ids?count=5" 200 "$(req "$base/ids?count=5")" \
  "len(j['ids']) == 5 and all(s.isdigit() for s in j['ids']) and [int(s) for s in j['ids']] == sorted(set(int(s) for s in j['ids'])) and int(j['ids'][0]) > $id"
order=$(req -X POST -H 'content-type: application/json' -d '{"item":"book","qty":2}' "$base/orders")
check "POST /orders" 201 "$order" 'j["order"] == {"item": "book", "qty": 2} and int(j["id"]) > 0 and j["createdAt"].endswith("Z")'
# createdAt is the ID's own time: decode it with the installed package.
node -e '
  const { Snowflake } = require("polyflake")
  const o = JSON.parse(process.argv[1].slice(0, process.argv[1].lastIndexOf("\n")))
  const t = Snowflake.decode(o.id).time.toISOString()
  if (t !== o.createdAt) { console.error(`createdAt ${o.createdAt}, the ID decodes to ${t}`); process.exit(1) }
  console.log(`POST /orders: createdAt is the time the ID decodes to (${t})`)' "$order"
check "GET /ids?count=0" 400 "$(req "$base/ids?count=0")" 'j["error"] == "BAD_COUNT"'
check "GET /ids?count=2**30" 400 "$(req "$base/ids?count=$((1 << 30))")" 'j["error"] == "INVALID_ARGUMENT"'
check "GET /healthz" 200 "$(req "$base/healthz")" 'j["ok"] is True and j["status"] == "ok" and isinstance(j["nodeId"], int)'
metrics=$(curl -sf "$base/metrics")
grep -qx 'polyflake_ids_issued_total 7' <<< "$metrics" || { echo "$metrics" | head -30; fail "GET /metrics: polyflake_ids_issued_total is not 7"; }
grep -qx 'polyflake_healthy 1' <<< "$metrics" || fail "GET /metrics: polyflake_healthy is not 1"
echo "GET /metrics: polyflake_ids_issued_total 7, polyflake_healthy 1"
kill -TERM "$app_pid"
status=0 && wait "$app_pid" || status=$?
app_pid=""
[ "$status" = 0 ] || { cat "$work/express.log"; fail "the Express app exited with $status after SIGTERM"; }
echo "SIGTERM: the Express app closed and exited 0"

step "Node guide: every snippet and the Express app ran against the installed packages"
