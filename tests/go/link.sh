#!/usr/bin/env bash
# make test-go: the Go package linked statically (-tags polyflake_static) and dynamically against
# an SDK laid out as the shipped one (include/, lib/ with libpolyflake.a and .so, lib/pkgconfig/
# with the relocatable polyflake.pc and polyflake-static.pc), then the SDK moved away and deleted:
#   - the shared build carries an absolute RUNPATH into the SDK: it no longer starts;
#   - the static build needs nothing of the SDK: it still serves IDs;
#   - Go's build cache does not see the move (golang/go#24544) unless CGO_LDFLAGS names the SDK,
#     as docs/go.md advises: with it, a rebuild links the SDK's new place.
#
#   link.sh ROOT LIBDIR     (LIBDIR: the release directory with libpolyflake.a/.so and pkgconfig/)
set -euo pipefail
root=$1 libdir=$2
work=$(mktemp -d /tmp/polyflake-go-link.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset LD_LIBRARY_PATH

# The SDK's layout, from this build (tests/dist/pack_sdk.sh makes the shipped one).
sdk=$work/sdk
mkdir -p "$sdk/include" "$sdk/lib/pkgconfig"
cp "$root/include/polyflake.h" "$sdk/include/"
strip --strip-debug -o "$sdk/lib/libpolyflake.a" "$libdir/libpolyflake.a"
strip --strip-all -o "$sdk/lib/libpolyflake.so" "$libdir/libpolyflake.so"
static_libs=$(sed -n 's/^Libs: ${libdir}\/libpolyflake.a //p' "$libdir/pkgconfig/polyflake-static.pc")
[ -n "$static_libs" ] || fail "no system libraries in $libdir/pkgconfig/polyflake-static.pc"
for pc in polyflake polyflake-static; do
  sed -e "s|@VERSION@|0|; s|@URL@|https://example.invalid/polyflake|; s|@NATIVE_STATIC_LIBS@|$static_libs|" \
    "$root/ffi-c/sdk/$pc.pc.in" > "$sdk/lib/pkgconfig/$pc.pc"
done

# As docs/go.md says: PKG_CONFIG_PATH at the SDK, and CGO_LDFLAGS naming it so that Go's build
# cache keys the package on the SDK's place.
use_sdk() {
  export PKG_CONFIG_PATH=$1/lib/pkgconfig CGO_LDFLAGS="-g -O2 -L$1/lib"
}
use_sdk "$sdk"
cd "$root/tests/go"
go build -o "$work/svc_shared" ./linkcheck
go build -tags polyflake_static -o "$work/svc_static" ./linkcheck
runpath=$(readelf -d "$work/svc_shared" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[[ $runpath == "$sdk/"* ]] || fail "the shared build's RUNPATH is '$runpath', not into $sdk"
! readelf -d "$work/svc_static" | grep 'NEEDED.*libpolyflake' >/dev/null || fail "the static build needs libpolyflake.so"
echo "shared: RUNPATH $runpath; static: no libpolyflake.so needed ($(du -h "$work/svc_static" | cut -f1))"
"$work/svc_shared" | grep -x 'linkage shared: 100 IDs over HTTP, increasing, the last [0-9]*'
"$work/svc_static" | grep -x 'linkage static: 100 IDs over HTTP, increasing, the last [0-9]*'

echo "-- the SDK moved away"
mv "$sdk" "$work/moved"
if "$work/svc_shared" > "$work/shared.out" 2>&1; then fail "the shared build started without its SDK"; fi
grep -q 'libpolyflake.so: cannot open shared object file' "$work/shared.out" || { cat "$work/shared.out"; fail "why the shared build failed"; }
echo "shared build: $(cat "$work/shared.out")"
"$work/svc_static" | grep -x 'linkage static: .*'

echo "-- rebuilt against the moved SDK"
# Without CGO_LDFLAGS naming the SDK, the cached package would keep the old paths (reported, not
# judged: it is Go's behaviour, golang/go#24544).
if PKG_CONFIG_PATH=$work/moved/lib/pkgconfig CGO_LDFLAGS="-g -O2 -L$sdk/lib" \
    go build -o "$work/svc_cached" ./linkcheck > "$work/cached.out" 2>&1; then
  echo "PKG_CONFIG_PATH alone: built, RUNPATH $(readelf -d "$work/svc_cached" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')"
else
  echo "PKG_CONFIG_PATH alone: the build cache kept the old link path: $(grep -m1 'cannot find' "$work/cached.out")"
fi
use_sdk "$work/moved"
go build -o "$work/svc_shared" ./linkcheck
runpath=$(readelf -d "$work/svc_shared" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[[ $runpath == "$work/moved/"* ]] || fail "after the move, with CGO_LDFLAGS naming the SDK: RUNPATH '$runpath'"
"$work/svc_shared" | grep -x 'linkage shared: .*'

echo "-- the SDK deleted"
rm -rf "$work/moved"
if "$work/svc_shared" > /dev/null 2>&1; then fail "the shared build started with its SDK deleted"; fi
"$work/svc_static" | grep -x 'linkage static: .*'
echo "the static build serves IDs with the SDK deleted; the shared one does not start"
