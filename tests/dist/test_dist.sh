#!/usr/bin/env bash
# make test-dist: install what `make dist` built the way users do, with no Rust toolchain.
#
# Starts a PyPI-compatible index (pypiserver) and an npm registry (verdaccio) on free loopback
# ports with temporary storage, publishes dist/'s packages to them, then with cargo, rustc and
# rustup removed from PATH:
#   Python  pip install polyflake --index-url .../simple into a fresh venv; the snippet of the
#           README the wheel carries runs, and mypy --strict checks it (and refuses a bad one);
#   Node    npm install polyflake --registry ... in a fresh project (the platform package comes
#           through optionalDependencies); the README snippet the package carries is compiled
#           with tsc --strict and run;
#   C/C++   the SDK unpacked and moved (it is relocatable); README-C's C program, its C++ program
#           on polyflake.h and its C++ API program (polyflake.hpp, C++17 and C++20) built with
#           pkg-config and with CMake find_package (polyflake::polyflake, polyflake::cpp and their
#           _static forms), shared and static, and run;
#   Go      docs/go.md's install recipe (go-install: both tarballs unpacked, PKG_CONFIG_PATH,
#           a replace) run as written in a fresh module for tests/dist/go/main.go and for each Go
#           snippet of docs/go.md, each built and run (the ZooKeeper one beside a real ZooKeeper);
#           one also with -tags polyflake_static, which still runs once the SDK is deleted.
# Both servers are stopped and the temporary tree removed on exit, also on failure.
#
#   test_dist.sh ROOT DIST VERSION TOOLS
set -euo pipefail
root=$1 dist=$2 version=$3 tools=$4
venv_tools=$tools/venv
npm_tools=$tools/npm
work=$(mktemp -d /tmp/polyflake-dist.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n--- %s\n' "$*"; }
fail() { echo "FAIL: $*"; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { # URL LOG: until the server answers (20 s)
  for _ in $(seq 1 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
  cat "$2"; fail "no answer from $1"
}
snippet() { python3 "$root/tests/dist/snippet.py" "$@"; }

step "version: one version everywhere, in the sources and in dist/; a drifted copy is caught"
python3 "$root/tests/dist/check_version.py" --dist "$dist"
mkdir -p "$work/drift"
(cd "$root" && tar -cf - Cargo.toml core/Cargo.toml ffi-c/Cargo.toml python/Cargo.toml python/pyproject.toml \
  node/Cargo.toml node/package.json node/package-lock.json node/npm/linux-x64-gnu/package.json \
  cli/Cargo.toml verify/sim/Cargo.toml java/Cargo.toml java/pom.xml include/polyflake.h go/*.go ffi-c/sdk CHANGELOG.md) | tar -xf - -C "$work/drift"
sed -i "s/\"version\": \"$version\"/\"version\": \"$version-drift\"/" "$work/drift/node/npm/linux-x64-gnu/package.json"
if python3 "$root/tests/dist/check_version.py" --root "$work/drift" > "$work/drift.out"; then
  fail "check_version.py accepted a drifted platform package"
fi
grep -q "DRIFT node/npm/linux-x64-gnu/package.json" "$work/drift.out" || { cat "$work/drift.out"; fail "drift not named"; }
echo "a drifted node/npm/linux-x64-gnu/package.json is refused"

step "local PyPI: pypiserver on 127.0.0.1, packages uploaded with twine"
py_port=$(free_port)
mkdir -p "$work/pypi"
"$venv_tools/bin/pypi-server" run -i 127.0.0.1 -p "$py_port" -a . -P . "$work/pypi" > "$work/pypi.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$py_port/simple/" "$work/pypi.log"
"$venv_tools/bin/twine" upload --disable-progress-bar --non-interactive -u user -p pass \
  --repository-url "http://127.0.0.1:$py_port/" "$dist"/polyflake-"$version"-*.whl "$dist/polyflake-$version.tar.gz"

step "local npm registry: verdaccio on 127.0.0.1, packages published with npm"
npm_port=$(free_port)
registry=http://127.0.0.1:$npm_port/
mkdir -p "$work/verdaccio/storage"
cat > "$work/verdaccio/config.yaml" <<YAML
storage: $work/verdaccio/storage
auth:
  htpasswd:
    file: $work/verdaccio/htpasswd
packages:
  '**':
    access: \$all
    publish: \$authenticated
uplinks: {}
log: { type: stdout, format: pretty, level: warn }
YAML
"$npm_tools/node_modules/.bin/verdaccio" --config "$work/verdaccio/config.yaml" --listen "127.0.0.1:$npm_port" \
  > "$work/verdaccio.log" 2>&1 &
pids+=($!)
wait_http "${registry}-/ping" "$work/verdaccio.log"
# A user on this throwaway registry (verdaccio's CouchDB-style sign-up), its token in a private npmrc.
token=$(curl -sf -X PUT -H 'content-type: application/json' \
  -d '{"name":"dist-test","password":"dist-test-password"}' \
  "${registry}-/user/org.couchdb.user:dist-test" | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
npmrc=$work/npmrc
printf 'registry=%s\n//127.0.0.1:%s/:_authToken=%s\n' "$registry" "$npm_port" "$token" > "$npmrc"
export npm_config_userconfig=$npmrc npm_config_cache=$work/npm-cache npm_config_audit=false npm_config_fund=false \
  npm_config_update_notifier=false
npm publish --registry "$registry" "$dist/polyflake-linux-x64-gnu-$version.tgz"
npm publish --registry "$registry" "$dist/polyflake-$version.tgz"

step "PATH without cargo, rustc and rustup"
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
echo "PATH=$PATH"

step "Python: pip install polyflake from the local index into a fresh venv"
python3 -m venv "$work/py"
"$work/py/bin/python" -m pip install -q --disable-pip-version-check --no-cache-dir polyflake \
  --index-url "http://127.0.0.1:$py_port/simple"
mkdir -p "$work/py-run" && cd "$work/py-run"
"$work/py/bin/python" - "$version" <<'PY'
import importlib.metadata as md, pathlib, sys
import polyflake
assert polyflake.__version__ == sys.argv[1], polyflake.__version__
where = pathlib.Path(polyflake.__file__).resolve()
assert pathlib.Path(sys.prefix).resolve() in where.parents, where
wheel = md.distribution("polyflake").read_text("WHEEL")
assert "Tag: cp39-abi3-manylinux" in wheel, wheel
pathlib.Path("README.md").write_text(md.metadata("polyflake").get_payload())
print("installed", polyflake.__version__, "from a wheel:", where.parent)
PY
snippet README.md python-package-readme > smoke.py
"$work/py/bin/python" smoke.py
MYPY_CACHE_DIR=$work/mypy-cache "$venv_tools/bin/mypy" --strict --python-executable "$work/py/bin/python" smoke.py
printf 'from polyflake import Snowflake\nwrong: str = Snowflake(node_id=1).next_id()\n' > wrong.py
if MYPY_CACHE_DIR=$work/mypy-cache "$venv_tools/bin/mypy" --strict --python-executable "$work/py/bin/python" wrong.py > wrong.out; then
  fail "mypy accepted an int assigned to a str: the stubs are not in use"
fi
grep -q 'Incompatible types in assignment' wrong.out || { cat wrong.out; fail "mypy failed for another reason"; }
echo "mypy --strict: the README snippet passes; an int assigned to a str is refused"
bash "$root/tests/dist/python_guide.sh" "$root" "http://127.0.0.1:$py_port/simple" "$version" "$venv_tools/bin/mypy"

step "Node: npm install polyflake from the local registry into a fresh project"
mkdir -p "$work/npm-app" && cd "$work/npm-app"
printf '{ "name": "dist-smoke", "version": "1.0.0", "private": true }\n' > package.json
npm install --registry "$registry" --no-package-lock polyflake
[ -f "node_modules/polyflake-linux-x64-gnu/polyflake.linux-x64-gnu.node" ] \
  || fail "the platform package was not installed through optionalDependencies"
! ls node_modules/polyflake/*.node > /dev/null 2>&1 || fail "the main package carries a .node"
node -e "
  const p = require('polyflake'); const v = require('polyflake/package.json').version
  const addon = Object.keys(require.cache).find((k) => k.endsWith('.node'))
  if (v !== '$version' || !addon.includes('polyflake-linux-x64-gnu')) { console.error(v, addon); process.exit(1) }
  console.log('polyflake', v, 'loads', addon)"
snippet node_modules/polyflake/README.md npm > smoke.ts
cat > tsconfig.json <<JSON
{ "compilerOptions": { "strict": true, "target": "es2020", "module": "commonjs", "esModuleInterop": true,
    "outDir": "out", "typeRoots": ["$npm_tools/node_modules/@types"], "types": ["node"] },
  "files": ["smoke.ts"] }
JSON
"$npm_tools/node_modules/.bin/tsc" -p .
node out/smoke.js
printf "import { Snowflake } from 'polyflake'\nconst wrong: number = new Snowflake({ nodeId: 1 }).nextId()\n" > wrong.ts
if "$npm_tools/node_modules/.bin/tsc" --strict --noEmit --types node --typeRoots "$npm_tools/node_modules/@types" wrong.ts > wrong.out; then
  fail "tsc accepted a bigint assigned to a number: index.d.ts is not in use"
fi
grep -q "TS2322" wrong.out || { cat wrong.out; fail "tsc failed for another reason"; }
echo "tsc --strict: the README snippet passes; a bigint assigned to a number is refused"
bash "$root/tests/dist/node_guide.sh" "$root" "$dist" "$version" "$registry" "$npm_tools" "$work/node-guide"

step "C SDK: unpacked, moved elsewhere, README-C's programs (C, C++, the C++ API) with pkg-config (shared and static)"
sdk_name=polyflake-$version-linux-x86_64
mkdir -p "$work/unpack" && tar -xzf "$dist/$sdk_name.tar.gz" -C "$work/unpack"
mkdir -p "$work/opt" && mv "$work/unpack/$sdk_name" "$work/opt/"
sdk=$work/opt/$sdk_name
readelf -d "$sdk/lib/libpolyflake.so" | grep "(SONAME).*\[libpolyflake.so.${version%.*}\]" >/dev/null \
  || { readelf -d "$sdk/lib/libpolyflake.so" | grep SONAME; fail "soname"; }
mkdir -p "$work/c" && cd "$work/c"
snippet "$sdk/README-C.md" sdk-c > app.c
snippet "$sdk/README-C.md" sdk-cpp > app.cpp
snippet "$sdk/README-C.md" sdk-hpp > app_hpp.cpp
[ -f "$sdk/include/polyflake.hpp" ] || fail "the SDK has no include/polyflake.hpp"
grep -q '#include "polyflake.hpp"' app_hpp.cpp && ! grep -q '#include "polyflake.h"' app_hpp.cpp \
  || fail "README-C's sdk-hpp program does not use polyflake.hpp alone"
export PKG_CONFIG_PATH=$sdk/lib/pkgconfig
[ "$(pkg-config --modversion polyflake)" = "$version" ] || fail "pkg-config --modversion polyflake"
gcc -std=c99 -Wall -Wextra -pedantic -Werror app.c -o c_shared $(pkg-config --cflags --libs polyflake)
gcc -std=c99 -Wall -Wextra -pedantic -Werror app.c -o c_static $(pkg-config --cflags --libs polyflake-static)
g++ -std=c++17 -Wall -Wextra -Werror app.cpp -o cpp_shared $(pkg-config --cflags --libs polyflake)
g++ -std=c++17 -Wall -Wextra -Werror app.cpp -o cpp_static $(pkg-config --cflags --libs polyflake-static)
for std in 17 20; do
  g++ -std=c++$std -Wall -Wextra -Wpedantic -Werror app_hpp.cpp -o hpp${std}_shared $(pkg-config --cflags --libs polyflake)
  g++ -std=c++$std -Wall -Wextra -Wpedantic -Werror app_hpp.cpp -o hpp${std}_static $(pkg-config --cflags --libs polyflake-static)
done
for t in c_shared cpp_shared hpp17_shared hpp20_shared; do
  ldd "./$t" | grep "libpolyflake.so.${version%.*} => $sdk/lib/" >/dev/null || { ldd "./$t"; fail "$t does not load the SDK's .so by soname"; }
done
for t in c_static cpp_static hpp17_static hpp20_static; do
  ! ldd "./$t" | grep libpolyflake >/dev/null || fail "$t links the shared library"
done
for t in c_shared c_static cpp_shared cpp_static hpp17_shared hpp17_static hpp20_shared hpp20_static; do
  echo "-- $t"; "./$t"
done

step "C SDK: every C and C++ snippet of docs/c.md, against the unpacked SDK (pkg-config, shared and static)"
SNIPPET_LANGS="c cpp" "$root/tests/stores/with_zookeeper.sh" bash -c \
  'ZOOKEEPER_ENSEMBLE=$POLYFLAKE_TEST_ZOOKEEPER bash "$0/tests/c/readme_snippets.sh" "$1" "$0/docs/c.md"' \
  "$root" "$work/c-docs"
cd "$work/c"

step "C SDK: the same programs with CMake find_package(polyflake): polyflake::polyflake and polyflake::cpp, shared and static"
cp "$root/tests/dist/cmake/CMakeLists.txt" .
cmake -S . -B build -DCMAKE_PREFIX_PATH="$sdk" -DCMAKE_BUILD_TYPE=Release > cmake.log || { cat cmake.log; fail "cmake configure"; }
grep "polyflake $version from $sdk/lib/cmake/polyflake" cmake.log
cmake --build build -j 2 > build.log || { cat build.log; fail "cmake build"; }
! ldd build/app_c_static | grep libpolyflake >/dev/null || fail "CMake's static program links the shared library"
ldd build/app_c_shared | grep "$sdk/lib/libpolyflake.so" >/dev/null || fail "CMake's shared program misses the SDK's .so"
! ldd build/app_hpp_static | grep libpolyflake >/dev/null || fail "polyflake::cpp_static links the shared library"
ldd build/app_hpp_shared | grep "$sdk/lib/libpolyflake.so" >/dev/null || fail "polyflake::cpp misses the SDK's .so"
for t in app_c_shared app_c_static app_cpp_shared app_cpp_static app_hpp_shared app_hpp_static \
  app_hpp20_shared app_hpp20_static; do
  echo "-- cmake $t"; "build/$t"
done

step "Go: docs/go.md's install recipe on the two tarballs; tests/dist/go and every Go snippet of docs/go.md"
# The recipe as the page prints it, but for where it unpacks (/opt/polyflake there). It runs in
# each program's fresh module, beside the two tarballs, with nothing of the checkout or the C
# step's environment: the module and the library come from the tarballs only.
go_sdk=$work/go-sdk
recipe=$(snippet "$root/docs/go.md" go-install)
grep -q '^sdk=/opt/polyflake ' <<< "$recipe" || fail "docs/go.md's go-install no longer starts with sdk=/opt/polyflake"
recipe=$(sed "1s|^sdk=/opt/polyflake |sdk=$go_sdk |" <<< "$recipe")
go_app() { # DIR MAIN.GO: a fresh module with MAIN.GO, set up and built by the recipe (./app)
  mkdir -p "$1" && cd "$1"
  cp "$2" main.go
  ln -sf "$dist/polyflake-$version-linux-x86_64.tar.gz" "$dist/polyflake-go-$version.tar.gz" .
  env -u PKG_CONFIG_PATH -u CGO_LDFLAGS -u GOFLAGS GOPROXY=off bash -c 'set -euo pipefail
    go mod init dist.example/app > /dev/null 2>&1
    eval "$1"
    go vet .
    if [ -n "$2" ]; then go build -tags polyflake_static -o app_static .; fi' _ "$recipe" "${3:-}"
  [ -x app ] || fail "the recipe built no ./app in $1"
}
go_app "$work/go-app" "$root/tests/dist/go/main.go" static
runpath=$(readelf -d app | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[[ $runpath == "$go_sdk/polyflake-$version-linux-x86_64/"* ]] || fail "the Go program's RUNPATH is '$runpath'"
./app | tee go.out
grep -qx "system clock: true 37" go.out && grep -qx "manual clock: 141264821508263936" go.out \
  && grep -qx "step back refused: true" go.out && grep -qx 'json: {"id":"141264821508263936","node_id":37}' go.out \
  && grep -qx "linkage: shared" go.out || fail "the Go program's output"
./app_static | grep -x "linkage: static" >/dev/null || fail "the static Go program's linkage"
go_snippets=$(sed -n 's/^<!-- snippet:\(go-[A-Za-z0-9_-]*\) -->$/\1/p' "$root/docs/go.md")
ran=0
for name in $go_snippets; do
  [ "$name" != go-install ] || continue
  snippet "$root/docs/go.md" "$name" > "$work/$name.go"
  head -n1 "$work/$name.go" | grep -qx 'package main' || continue
  echo "-- docs/go.md $name"
  go_app "$work/go-docs-$name" "$work/$name.go"
  if [ "$name" = go-zookeeper ]; then
    "$root/tests/stores/with_zookeeper.sh" bash -c 'ZOOKEEPER_ENSEMBLE=$POLYFLAKE_TEST_ZOOKEEPER ./app'
  else
    ./app
  fi
  ran=$((ran + 1))
done
[ "$ran" -ge 5 ] || fail "only $ran Go snippets of docs/go.md ran"
echo "$ran Go snippets of docs/go.md built by its install recipe and run"
cd "$work"
rm -rf "$go_sdk"
if "$work/go-app/app" > /dev/null 2>&1; then fail "the shared Go program started with its SDK deleted"; fi
"$work/go-app/app_static" | grep -x "linkage: static" >/dev/null || fail "the static Go program without its SDK"
echo "SDK deleted: the static Go program still runs, the shared one does not start"

step "every install worked with no Rust toolchain on PATH"
