# Shared helpers for the CLI test scripts: run the built binary, check the
# exit status and fragments of its output.  Source it; $AR is the binary.
set -u
AR=${1:?usage: test_X.sh PATH/TO/attnrank}
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
checks=0

# expect STATUS "fragment" -- command...   (fragment searched in stdout+stderr)
expect() {
  local want=$1 frag=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  checks=$((checks + 1))
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: exit $rc (want $want): $*"; echo "$out" | head -5; failures=$((failures + 1)); return
  fi
  if [ -n "$frag" ] && ! grep -qF -- "$frag" <<<"$out"; then
    echo "FAIL: output lacks '$frag': $*"; echo "$out" | head -5; failures=$((failures + 1)); return
  fi
}

# expect_one_line STATUS "fragment" -- command...: bad input gives one stderr line
expect_error() {
  local want=$1 frag=$2; shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  checks=$((checks + 1))
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  if [ "$rc" -ne "$want" ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$frag" <<<"$err"; then
    echo "FAIL: want exit $want and one stderr line with '$frag'; got exit $rc: $*"
    echo "$err" | head -5; failures=$((failures + 1))
  fi
}

# check "description" CONDITION-COMMAND...
check() {
  local what=$1; shift
  checks=$((checks + 1))
  if ! "$@"; then echo "FAIL: $what"; failures=$((failures + 1)); fi
}

finish() {
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
