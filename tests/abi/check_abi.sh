#!/usr/bin/env bash
# The exported symbols of libattnrank.so are exactly abi/attnrank.symbols.
# A difference fails with a diff (- recorded, + now exported) and the
# command that records the new set.
#
#   check_abi.sh SOURCE_ROOT LIBATTNRANK.so
set -euo pipefail
src=$1 lib=$2
now=$(mktemp)
trap 'rm -f "$now"' EXIT
bash "$src/scripts/abi-symbols" "$lib" >"$now"
[ -s "$now" ] || { echo "FAIL: no exported symbols read from $lib"; exit 1; }
if ! cmp -s "$src/abi/attnrank.symbols" "$now"; then
  echo "FAIL: the exported symbols of libattnrank.so differ from abi/attnrank.symbols"
  echo "(- recorded, + exported now):"
  diff -u "$src/abi/attnrank.symbols" "$now" | tail -n +3 | grep '^[-+]' || true
  echo "If the change is intended: scripts/abi-update, and commit abi/attnrank.symbols"
  echo "(docs/api.md: removing or changing a symbol breaks the ABI)."
  exit 1
fi
# Nothing outside the ar_ prefix is exported (the version script's rule).
if grep -v '^ar_' "$now"; then echo "FAIL: symbols above lack the ar_ prefix"; exit 1; fi
# The library's CBLAS calls bind inside it (src/core/blas_local.c), so that
# a program's link order cannot hand them to libgslcblas (docs/building.md).
undef=$(nm -D --undefined-only --without-symbol-versions "$lib" | awk '$2 ~ /^cblas_/ { print $2 }')
if [ -n "$undef" ]; then
  echo "FAIL: libattnrank.so leaves CBLAS symbols to the loader:" $undef
  echo "define them in src/core/blas_local.c (Fortran BLAS underneath)"
  exit 1
fi
echo "abi: $(wc -l <"$now") exported symbols, as recorded"
