#!/usr/bin/env bash
# One-way architecture: the CLI (src/cli), the shared application layer
# (src/app), the experiments and the benchmarks are clients of the library
# and use only what a user of the installed library has: the public headers
# (include/attnrank/*.h), src/app/app.h, and headers beside their own
# sources.  No library-internal header (src/core, src/io, src/theory,
# src/attention), and none of the column-major internals those declare
# (ar_cm_*, ar_matrix_alias, ar_rng_gsl, ar_array_slice_cm, ...).
# Two benchmarks rerun the causal staircase kernels, which have no public
# entry point, and may include theory/masked/masked_internal.h (and nothing else
# internal); bench_fit compares the fit with GSL's vector_bfgs2, which is no
# longer public, and may include theory/bottleneck/bottleneck_fit_gsl.h (the reference
# library's header, and nothing else internal).
# Usage: test_public_only.sh SOURCE_ROOT
set -u
root=${1:?usage: test_public_only.sh SOURCE_ROOT}
cd "$root" || exit 2
failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# bench file -> the one internal header it may include
declare -A bench_allowed=(
  [bench/bench_masked.c]="theory/masked/masked_internal.h"
  [bench/bench_masked_tolerance.c]="theory/masked/masked_internal.h"
  [bench/bench_masked_hazard.c]="theory/masked/masked_internal.h"
  [bench/bench_fit.c]="theory/bottleneck/bottleneck_fit_gsl.h"
)

mapfile -t files < <(find src/cli src/app experiments bench -maxdepth 1 -type f \
                       \( -name '*.c' -o -name '*.h' \) | sort)
checks=$((checks + 1))
[ "${#files[@]}" -ge 30 ] || fail "only ${#files[@]} client sources found under $root"
ncli=0
for f in "${files[@]}"; do
  case $f in src/cli/*) ncli=$((ncli + 1)) ;; esac
done
checks=$((checks + 1))
[ "$ncli" -ge 10 ] || fail "only $ncli sources in src/cli"

internal_names='ar_cm_[a-z_]+|ar_matrix_alias|ar_rng_gsl|ar_rng_gaussian_polar|ar_colmajor_[a-z_]+'
internal_names+='|ar_array_slice_cm|ar_array_reset|ar_array_alloc_data'

# LINE:HEADER for every #include "HEADER" of a file
includes_of() {
  grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$1" |
    sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1:\2/'
}

for f in "${files[@]}"; do
  dir=$(dirname "$f")
  # every quoted include: public, the app layer, or a header beside the file
  while IFS=: read -r line inc; do
    checks=$((checks + 1))
    case $inc in
      attnrank/*.h)
        [ -f "include/$inc" ] || fail "$f:$line: \"$inc\" is not a public header" ;;
      app/app.h) ;;
      */*)
        if [ "${bench_allowed[$f]:-}" != "$inc" ]; then
          fail "$f:$line: includes library-internal \"$inc\" (use include/attnrank/*.h)"
        fi ;;
      *)
        [ -f "$dir/$inc" ] || fail "$f:$line: \"$inc\" is not a header beside $f" ;;
    esac
  done < <(includes_of "$f")
  # internal column-major names, however they might be declared
  checks=$((checks + 1))
  hits=$(grep -nE "\\b($internal_names)\\b" "$f" || true)
  [ -z "$hits" ] || fail "$f uses library internals:"$'\n'"$hits"
done

# The scan itself must catch an internal include (guards against a broken
# pattern silently passing everything).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "cli.h"\n#include "core/matrix_internal.h"\n' >"$tmp/probe.c"
checks=$((checks + 1))
probe=$(includes_of "$tmp/probe.c" | tr '\n' ' ')
[ "$probe" = "1:cli.h 2:core/matrix_internal.h " ] ||
  fail "the include scan reads '$probe' from a probe file"

if [ "$failures" -gt 0 ]; then
  echo "$failures of $checks checks failed"
  exit 1
fi
echo "ok: $checks checks (${#files[@]} client sources use the public API only)"
