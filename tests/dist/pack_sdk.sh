#!/usr/bin/env bash
# Assembles the C SDK from the dist build and packs it:
#   include/polyflake.h, include/polyflake.hpp (the header-only C++17 API over it)
#   lib/libpolyflake.so.VERSION, libpolyflake.so.ABI -> it (the soname), libpolyflake.so -> .so.ABI
#   lib/libpolyflake.a
#   lib/pkgconfig/polyflake.pc, polyflake-static.pc     (prefix from ${pcfiledir}: relocatable)
#   lib/cmake/polyflake/polyflake-config{,-version}.cmake
#   README-C.md, LICENSE-MIT, LICENSE-APACHE
#
#   pack_sdk.sh ROOT LIBDIR RUSTC_LOG VERSION ABI STAGE_DIR OUT_TARBALL
set -euo pipefail
root=$1 libdir=$2 log=$3 version=$4 abi=$5 stage=$6 out=$7

# rustc's `note: native-static-libs: -lgcc_s -lutil ...` (cargo replays it when the crate is fresh).
static_libs=$(sed -n 's/.*note: native-static-libs: //p' "$log" | tail -n1)
[ -n "$static_libs" ] || { echo "no native-static-libs line in $log"; cat "$log"; exit 1; }
cmake_libs=$(for l in $static_libs; do printf '%s;' "${l#-l}"; done)
cmake_libs=${cmake_libs%;}

soname=$(readelf -d "$libdir/libpolyflake.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libpolyflake.so.$abi" ] || { echo "soname is '$soname', not libpolyflake.so.$abi"; exit 1; }

rm -rf "$stage" && mkdir -p "$stage/include" "$stage/lib/pkgconfig" "$stage/lib/cmake/polyflake"
cp "$root/include/polyflake.h" "$root/include/polyflake.hpp" "$stage/include/"
cp "$libdir/libpolyflake.so" "$stage/lib/libpolyflake.so.$version"
strip --strip-all "$stage/lib/libpolyflake.so.$version"
ln -s "libpolyflake.so.$version" "$stage/lib/libpolyflake.so.$abi"
ln -s "libpolyflake.so.$abi" "$stage/lib/libpolyflake.so"
cp "$libdir/libpolyflake.a" "$stage/lib/"
# The archive keeps its symbol table (the linker needs it); only debug sections go.
strip --strip-debug "$stage/lib/libpolyflake.a"

fill() {
  sed -e "s|@VERSION@|$version|g" -e "s|@SOVERSION@|$abi|g" -e "s|@URL@|https://example.invalid/polyflake|g" \
    -e "s|@NATIVE_STATIC_LIBS@|$static_libs|g" -e "s|@CMAKE_STATIC_LIBS@|$cmake_libs|g" "$1" > "$2"
  ! grep -n '@[A-Z_]*@' "$2" || { echo "$2: a placeholder left"; exit 1; }
}
fill "$root/ffi-c/sdk/polyflake.pc.in" "$stage/lib/pkgconfig/polyflake.pc"
fill "$root/ffi-c/sdk/polyflake-static.pc.in" "$stage/lib/pkgconfig/polyflake-static.pc"
fill "$root/ffi-c/sdk/cmake/polyflake-config.cmake.in" "$stage/lib/cmake/polyflake/polyflake-config.cmake"
fill "$root/ffi-c/sdk/cmake/polyflake-config-version.cmake.in" "$stage/lib/cmake/polyflake/polyflake-config-version.cmake"
cp "$root/ffi-c/sdk/README-C.md" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$stage/"

tar -C "$(dirname "$stage")" --sort=name --owner=0 --group=0 --mtime='2026-01-01 00:00Z' \
  -czf "$out" "$(basename "$stage")"
echo "packed $out (soname $soname; static libs: $static_libs)"
