#!/usr/bin/env bash
# Compile and run the README's "Use from C, C++ and Go" snippets, so a broken snippet fails
# `make test`. Usage: readme_snippets.sh README.md WORKDIR (PKG_CONFIG_PATH must find polyflake).
set -euo pipefail
readme=$1
work=$2
rm -rf "$work"
mkdir -p "$work/go"

# The fenced code between <!-- snippet:NAME --> and <!-- /snippet -->, without the fences.
extract() {
  awk -v name="$1" '
    $0 == "<!-- snippet:" name " -->" { inside = 1; next }
    inside && $0 == "<!-- /snippet -->" { inside = 0; found = 1; next }
    inside && /^```/ { next }
    inside { print }
    END { if (!found) exit 1 }
  ' "$readme" || { echo "README snippet '$1' is missing" >&2; exit 1; }
}

extract c > "$work/snippet.c"
extract c-file-lease > "$work/lease.c"
extract cpp > "$work/snippet.cpp"
extract go > "$work/go/main.go"

strict_c="-std=c99 -Wall -Wextra -pedantic -Werror"
strict_cxx="-std=c++17 -Wall -Wextra -Werror"
gcc $strict_c "$work/snippet.c" -o "$work/c_shared" $(pkg-config --cflags --libs polyflake)
gcc $strict_c "$work/snippet.c" -o "$work/c_static" $(pkg-config --cflags --libs polyflake-static)
gcc $strict_c "$work/lease.c" -o "$work/lease_shared" $(pkg-config --cflags --libs polyflake)
gcc $strict_c "$work/lease.c" -o "$work/lease_static" $(pkg-config --cflags --libs polyflake-static)
g++ $strict_cxx "$work/snippet.cpp" -o "$work/cpp_shared" $(pkg-config --cflags --libs polyflake)
g++ $strict_cxx "$work/snippet.cpp" -o "$work/cpp_static" $(pkg-config --cflags --libs polyflake-static)
for prog in c_shared c_static lease_shared lease_static cpp_shared cpp_static; do
  echo "--- README $prog"
  "$work/$prog"
done

echo "--- README go"
printf 'module readme.example/snippet\n\ngo 1.21\n' > "$work/go/go.mod"
(cd "$work/go" && go vet . && go run .)
echo "README snippets: ok"
