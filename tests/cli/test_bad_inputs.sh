#!/usr/bin/env bash
# The bad-input catalogue (tests/bad_inputs/cases.tsv) against the binary.
# Each case must exit with its status (2), print exactly one line on stderr
# that starts with "attnrank" and contains the fragment, print nothing on
# stdout, and leave the scratch folder exactly as it was (no half-written or
# temporary output).  Then, for every subcommand listed by `attnrank --help`,
# the argument errors that cli_parse owns: an unknown option, and an option
# that takes a value given without one.
#   bash tests/cli/test_bad_inputs.sh PATH/TO/attnrank [CATALOGUE_DIR]
source "$(dirname "$0")/lib.sh"
# cases run inside the scratch folder: make the binary's path absolute
case $AR in /*) ;; *) AR=$(cd "$(dirname "$AR")" && pwd)/$(basename "$AR") ;; esac
CAT=${2:-$(cd "$(dirname "$0")/../bad_inputs" && pwd)}
WORK="$TMP/cases"
mkdir -p "$WORK"
cp -R "$CAT"/. "$WORK"/
listing() { (cd "$WORK" && find . \( -type d -printf '%p/\n' \) -o -printf '%p %s %T@\n' | sort); }
before=$(listing)

# one_case NAME STATUS FRAGMENT ARGS...
one_case() {
  local name=$1 want=$2 frag=$3; shift 3
  local rc lines first
  (cd "$WORK" && "$AR" "$@" >"$TMP/out" 2>"$TMP/err"); rc=$?
  checks=$((checks + 1))
  lines=$(grep -c '' "$TMP/err")
  first=$(head -n 1 "$TMP/err")
  local why=""
  [ "$rc" -eq "$want" ] || why="exit $rc, want $want"
  [ -z "$why" ] && [ "$lines" -ne 1 ] && why="$lines lines on stderr, want 1"
  [ -z "$why" ] && [[ $first != attnrank* ]] && why="stderr does not start with 'attnrank'"
  [ -z "$why" ] && ! grep -qF -- "$frag" "$TMP/err" && why="stderr lacks '$frag'"
  [ -z "$why" ] && [ -s "$TMP/out" ] && why="unexpected output on stdout"
  if [ -z "$why" ]; then
    local now
    now=$(listing)
    [ "$now" = "$before" ] || why="the folder changed: $(diff <(echo "$before") <(echo "$now") | grep '^[<>]' | head -3 | tr '\n' ' ')"
  fi
  if [ -n "$why" ]; then
    failures=$((failures + 1))
    echo "FAIL [$name]: $why"
    echo "  command: attnrank $*"
    sed 's/^/  stderr: /' "$TMP/err" | head -5
    # restore the scratch copy for the following cases
    rm -rf "$WORK" && mkdir -p "$WORK" && cp -R "$CAT"/. "$WORK"/ && before=$(listing)
  fi
}

ncases=0
while IFS=$'\t' read -r name want frag args; do
  [[ -z $name || $name == \#* ]] && continue
  argv=()
  read -r -a words <<<"$args"
  for w in "${words[@]}"; do
    case $w in
      "''") argv+=("") ;;
      @*) argv+=("$WORK/${w#@}") ;;
      *) argv+=("$w") ;;
    esac
  done
  ncases=$((ncases + 1))
  one_case "$name" "$want" "$frag" "${argv[@]}"
done <"$CAT/cases.tsv"
echo "catalogue: $ncases cases"
check "catalogue has at least 40 cases" test "$ncases" -ge 40

# Generic argument errors of every subcommand in the command table.
subs=$("$AR" --help | sed -n '/^subcommands:/,/^$/p' | awk 'NF > 1 {print $1}')
check "subcommands listed by --help" test -n "$subs"
for s in $subs; do
  one_case "$s-unknown-option" 2 "unknown option '--no-such-option'" "$s" --no-such-option
  # "  --opt METAVAR   help": the first option that takes a value, given none
  o=$("$AR" "$s" --help | awk '$1 ~ /^--[a-z]/ && $2 ~ /^[A-Z]/ {print $1; exit}')
  [ -n "$o" ] && one_case "$s$o-without-value" 2 "$o needs a value" "$s" "$o"
done
finish
