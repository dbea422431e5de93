#!/usr/bin/env bash
# The library's layers depend one way (docs/architecture.md):
#   analyses -> theory -> attention -> io -> core, and dist -> io -> core.
# A source of a layer includes internal headers ("core/x.h", "theory/masked/x.h",
# or "x.h" beside it) of its own layer or a lower one only, and never the
# public header of a higher layer (attnrank/bottleneck.h in src/attention,
# attnrank/weights.h in src/theory).  src/theory holds families only: every
# source lives in a family folder with its own meson.build, whose first line
# says what the family is.  The faces (src/cli, src/app, experiments, bench)
# are checked by test_public_only.sh.
# Usage: test_layers.sh SOURCE_ROOT
set -u
root=${1:?usage: test_layers.sh SOURCE_ROOT}
cd "$root" || exit 2
failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# layer -> the src/ folders its internal includes may name
declare -A allowed=(
  [core]="core"
  [io]="core io"
  [attention]="core io attention"
  [theory]="core io attention theory"
  [analyses]="core io attention theory analyses"
  [dist]="core io dist"
)
# layer -> the public headers of the layers above it
theory_public='bottleneck|masked|multihead|seprank|depthwidth|collapse|softmax_bottleneck'
analyses_public='weights|check|json|depthwidth_run'
declare -A forbidden_public=(
  [core]="$theory_public|$analyses_public"
  [io]="$theory_public|$analyses_public"
  [attention]="$theory_public|$analyses_public"
  [theory]="$analyses_public"
  [analyses]=""
  [dist]="$theory_public|$analyses_public"
)

# LINE:HEADER for every #include "HEADER" of a file
includes_of() {
  grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$1" |
    sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1:\2/'
}

# The verdicts on one file of a layer (printed, one line each).
check_file() {
  local f=$1 layer=$2 dir line inc top
  dir=$(dirname "$f")
  while IFS=: read -r line inc; do
    echo "check"
    case $inc in
      attnrank/*.h)
        if [ -n "${forbidden_public[$layer]}" ] &&
           [[ $inc =~ ^attnrank/(${forbidden_public[$layer]})\.h$ ]]; then
          echo "FAIL: $f:$line: \"$inc\" is the public header of a layer above $layer"
        fi ;;
      */*)
        top=${inc%%/*}
        if [ ! -f "src/$inc" ]; then
          echo "FAIL: $f:$line: \"$inc\" is not a header under src/"
        elif [[ " ${allowed[$layer]} " != *" $top "* ]]; then
          echo "FAIL: $f:$line: $layer includes \"$inc\" of a layer above it"
        fi ;;
      *)
        [ -f "$dir/$inc" ] || echo "FAIL: $f:$line: \"$inc\" is not a header beside $f" ;;
    esac
  done < <(includes_of "$f")
}

run_checks() {
  local out l
  out=$(check_file "$1" "$2")
  while IFS= read -r l; do
    [ -n "$l" ] || continue
    checks=$((checks + 1))
    case $l in FAIL:*) fail "${l#FAIL: }" ;; esac
  done <<<"$out"
}

nfiles=0
for layer in core io attention theory analyses dist; do
  checks=$((checks + 1))
  [ -d "src/$layer" ] || { fail "src/$layer is missing"; continue; }
  mapfile -t files < <(find "src/$layer" -type f \( -name '*.c' -o -name '*.h' \) | sort)
  checks=$((checks + 1))
  [ "${#files[@]}" -ge 1 ] || fail "no sources in src/$layer"
  for f in "${files[@]}"; do
    nfiles=$((nfiles + 1))
    run_checks "$f" "$layer"
  done
done
checks=$((checks + 1))
[ "$nfiles" -ge 80 ] || fail "only $nfiles library sources found under $root/src"

# src/theory: families only, each with a meson.build that says what it is.
checks=$((checks + 1))
loose=$(find src/theory -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sort)
[ -z "$loose" ] || fail "sources outside a family folder of src/theory:"$'\n'"$loose"
nfam=0
for d in src/theory/*/ src/analyses/; do
  d=${d%/}
  nfam=$((nfam + 1))
  checks=$((checks + 1))
  if [ ! -f "$d/meson.build" ]; then
    fail "$d has no meson.build"
  elif ! head -n 1 "$d/meson.build" | grep -qE '^# [A-Z]'; then
    fail "$d/meson.build does not start with a comment saying what the family is"
  elif ! grep -qF "subdir('${d#src/theory/}')" src/theory/meson.build &&
       [ "$d" != src/analyses ]; then
    fail "src/theory/meson.build does not build $d"
  fi
done
checks=$((checks + 1))
[ "$nfam" -ge 6 ] || fail "only $((nfam - 1)) families under src/theory"

# The scan itself must catch a wrong-way include (guards against a broken
# pattern silently passing everything).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "core/matrix_internal.h"\n#include "theory/bottleneck/bottleneck_internal.h"\n#include "attnrank/bottleneck.h"\n' >"$tmp/probe.c"
checks=$((checks + 1))
probe=$(check_file "$tmp/probe.c" attention | grep -c '^FAIL' || true)
[ "$probe" = 2 ] || fail "the scan finds $probe of 2 wrong-way includes in a probe file"

if [ "$failures" -gt 0 ]; then
  echo "$failures of $checks checks failed"
  exit 1
fi
echo "ok: $checks checks ($nfiles library sources depend downwards only)"
