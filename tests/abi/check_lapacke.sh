#!/usr/bin/env bash
# libattnrank.so calls LAPACKE's _work functions only.  The high-level ones
# (LAPACKE_dgelsd, LAPACKE_dpotrf, ... without _work) allocate their own
# workspace and call LAPACKE_xerbla, which prints, on a failed allocation or
# a bad argument; the library must never print (docs/api.md).  The library
# goes through src/core/lapack.c instead.
#
# The check reads the library's undefined dynamic symbols, so that a call
# cannot hide behind a macro or a new source directory; a failure names the
# source lines that make the call.  It also checks that every _work call in
# src/ passes LAPACK_COL_MAJOR (the row-major _work path transposes into
# memory it allocates and calls LAPACKE_xerbla itself).
#
#   check_lapacke.sh SOURCE_ROOT LIBATTNRANK.so
set -euo pipefail
src=$1 lib=$2
undef=$(nm -D --undefined-only --without-symbol-versions "$lib" | awk '{ print $NF }')
# A LAPACKE-free library would pass vacuously: make sure nm saw its calls.
if ! grep -q '^LAPACKE_[a-z0-9]*_work$' <<<"$undef"; then
  echo "FAIL: no LAPACKE_*_work symbol read from $lib (nm output changed?)"
  exit 1
fi
failures=0
high=$(grep -E '^LAPACKE_[a-z0-9]+$' <<<"$undef" || true)
for sym in $high; do
  echo "FAIL: $lib references $sym (a high-level LAPACKE function, which prints on failure)"
  grep -rnE "\\b$sym[[:space:]]*\\(" "$src/src" --include='*.c' --include='*.h' |
    sed "s|^$src/|  called at |" || echo "  (no call found in src/: a macro?)"
  failures=$((failures + 1))
done
# Every _work call on a line with LAPACK_COL_MAJOR (the call sites keep the
# layout on the call's first line).
while IFS= read -r hit; do
  case $hit in
    *LAPACK_COL_MAJOR*) ;;
    *) echo "FAIL: a LAPACKE _work call without LAPACK_COL_MAJOR on its first line: ${hit#"$src/"}"
       failures=$((failures + 1)) ;;
  esac
done < <(grep -rnE 'LAPACKE_[a-z0-9]+_work[[:space:]]*\(' "$src/src" --include='*.c' || true)
if [ "$failures" -gt 0 ]; then
  echo "Call LAPACK through src/core/lapack_internal.h (ar_lapack_*), or the _work form with"
  echo "a workspace query and the library's own allocation."
  exit 1
fi
count=$(grep -c '^LAPACKE_' <<<"$undef")
echo "lapacke_work_only: $count LAPACKE symbols referenced, none high-level"
