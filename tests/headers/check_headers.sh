#!/usr/bin/env bash
# Every public header compiles on its own, twice included, as C11 and as
# C++ (gcc/g++ -Wall -Wextra -pedantic -Werror), and every header that
# declares functions has extern "C" guards.  The headers are the files of
# include/attnrank/ plus the generated version.h of the build tree.
#
#   check_headers.sh SOURCE_ROOT BUILD_ROOT
set -euo pipefail
src=$1 build=$2
CC=${CC:-cc} CXX=${CXX:-c++}
# Headers that may lack guards for now (while being rewritten); they are
# compiled but not required to have guards.  Empty since every header has them.
pending_guards=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v "$CXX" >/dev/null || { echo "FAIL: no C++ compiler ($CXX); scripts/deps installs g++"; exit 1; }
headers=()
for h in "$src"/include/attnrank/*.h "$build"/include/attnrank/*.h; do
  [ -f "$h" ] && headers+=("$(basename "$h")")
done
[ ${#headers[@]} -gt 5 ] || { echo "FAIL: headers not found under $src/include/attnrank"; exit 1; }
inc=(-I"$build/include" -I"$src/include")
fail=0 n=0
for h in "${headers[@]}"; do
  printf '#include <attnrank/%s>\n#include <attnrank/%s>\nint ar_header_check_%s;\n' \
    "$h" "$h" "${h%.h}" >"$tmp/t.c"
  cp "$tmp/t.c" "$tmp/t.cpp"
  for lang in c11 c++11 c++17; do
    case $lang in
      c11) cmd=("$CC" -std=c11 "$tmp/t.c") ;;
      *)   cmd=("$CXX" "-std=$lang" "$tmp/t.cpp") ;;
    esac
    n=$((n + 1))
    if ! "${cmd[@]}" -Wall -Wextra -pedantic -Werror "${inc[@]}" -c -o "$tmp/t.o" 2>"$tmp/err"; then
      echo "FAIL: $h does not compile on its own as $lang:"; head -20 "$tmp/err"; fail=1
    fi
  done
  f=$src/include/attnrank/$h
  [ -f "$f" ] || f=$build/include/attnrank/$h
  if grep -q '^AR_API ' "$f" && ! grep -q 'extern "C"' "$f"; then
    case " $pending_guards " in
      *" $h "*) echo "note: $h has no extern \"C\" guards yet (pending)" ;;
      *) echo "FAIL: $h declares functions without extern \"C\" guards"; fail=1 ;;
    esac
  fi
done
[ "$fail" -eq 0 ] || exit 1
echo "headers: ${#headers[@]} headers, $n compilations (C11, C++11, C++17), all clean"
