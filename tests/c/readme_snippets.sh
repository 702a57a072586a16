#!/usr/bin/env bash
# Compile and run every C, C++ and Go snippet of the docs given, so a broken snippet fails
# `make test`. A snippet is the fenced code between <!-- snippet:NAME --> and <!-- /snippet -->;
# its fence's language (```c, ```cpp, ```go) says how it is built: C and C++ as strict C99 and
# C++17 against the shared and the static library, Go as a module of its own that requires the
# repository's go/ module (through a replace, as a user's module would during development).
# Snippets in other languages (Python, Node, ...) are left to their own runners.
#
# Usage: readme_snippets.sh WORKDIR DOC.md...   (PKG_CONFIG_PATH must find polyflake)
# SNIPPET_LANGS="c cpp" limits it to those languages (each must have a snippet): `make test-dist`
# runs docs/c.md's against the unpacked SDK that way.
set -euo pipefail
work=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
langs=${SNIPPET_LANGS:-c cpp go}
rm -rf "$work"
mkdir -p "$work"

# Each snippet to $work/<doc>-<name>.<c|cpp|go>; one line per file on stdout.
for doc in "$@"; do
  awk -v work="$work" -v doc="$(basename "$doc" .md)" -v langs="$langs" '
    match($0, /^<!-- snippet:[A-Za-z0-9_-]+ -->$/) {
      name = substr($0, 14, length($0) - 17); inside = 1; lang = ""; next
    }
    inside && $0 == "<!-- /snippet -->" {
      if (out != "") close(out)
      inside = 0; out = ""; next
    }
    inside && /^```/ {
      if (lang == "") {
        lang = substr($0, 4)
        if (index(" " langs " ", " " lang " ")) {
          out = work "/" doc "-" name "." lang; print out
        }
      }
      next
    }
    inside && out != "" { print > out }
  ' "$doc"
done > "$work/list"

count() { grep -c "\.$1\$" "$work/list" || true; }
echo "snippets: $(count c) C, $(count cpp) C++, $(count go) Go in $*"
for lang in $langs; do
  [ "$(count "$lang")" -gt 0 ] || { echo "no $lang snippet found: the markers moved?" >&2; exit 1; }
done

strict_c="-std=c99 -Wall -Wextra -pedantic -Werror"
strict_cxx="-std=c++17 -Wall -Wextra -Werror"
while read -r src; do
  base=${src%.*}
  case $src in
    *.c | *.cpp)
      if [[ $src == *.c ]]; then cc="gcc $strict_c"; else cc="g++ $strict_cxx"; fi
      for lib in polyflake polyflake-static; do
        # shellcheck disable=SC2086
        $cc "$src" -o "$base.$lib" $(pkg-config --cflags --libs $lib)
        echo "--- $(basename "$src") ($lib)"
        "$base.$lib"
      done
      ;;
    *.go)
      mkdir -p "$base"
      mv "$src" "$base/main.go"
      printf 'module docs.example/snippet\n\ngo 1.21\n\nrequire example.invalid/polyflake/go v0.0.0\n\nreplace example.invalid/polyflake/go => %s/go\n' \
        "$root" > "$base/go.mod"
      echo "--- $(basename "$src")"
      (cd "$base" && go vet . && go run .)
      ;;
  esac
done < "$work/list"
echo "C, C++ and Go snippets: ok"
