#!/usr/bin/env bash
# The man page and the bash completion built beside the binary are in sync
# with its help: regenerated from the binary they are byte-identical, the
# page renders (man -l, or groff) without warnings, with a section for every
# subcommand that lists every option of it, and the completion completes
# subcommands, options and file arguments.
#   test_man.sh ATTNRANK attnrank.1 attnrank.bash scripts/gen-man
source "$(dirname "$0")/lib.sh"
PAGE=${2:?man page}
COMP=$(readlink -f "${3:?bash completion}")
GEN=${4:?scripts/gen-man}

$PY "$GEN" "$AR" man "$TMP/attnrank.1"
$PY "$GEN" "$AR" bash "$TMP/attnrank.bash"
check "man page in sync with the binary" cmp -s "$PAGE" "$TMP/attnrank.1"
check "completion in sync with the binary" cmp -s "$COMP" "$TMP/attnrank.bash"

warnings=$(groff -man -Tutf8 -ww -z "$PAGE" 2>&1)
check "groff renders without warnings" test -z "$warnings"
[ -n "$warnings" ] && echo "$warnings" | head -5
if command -v man >/dev/null 2>&1; then
  rendered=$(MANWIDTH=100 man -l "$PAGE" 2>&1 | col -b)
else
  rendered=$(groff -man -Tutf8 -rLL=100n "$PAGE" 2>&1 | col -b)
fi
check "rendered page has NAME and EXIT STATUS" grep -q "EXIT STATUS" <<<"$rendered"
subs=$("$AR" --help | awk '/^subcommands:/{on=1; next} /^$/{on=0} on{print $1}')
nsubs=0
for s in $subs; do
  nsubs=$((nsubs + 1))
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$s")
  section=$(awk -v h="ATTNRANK $upper" '$0 == h {on=1; next} /^ATTNRANK [A-Z-]+$/ || /^EXIT STATUS/ {on=0} on' <<<"$rendered")
  check "man page has a section for $s" test -n "$section"
  # every option the subcommand's --help lists appears in its section
  for opt in $("$AR" "$s" --help | sed -n '/^options:/,$p' | awk '$1 ~ /^--/ {print $1}'); do
    checks=$((checks + 1))
    if ! grep -qF -- "$opt" <<<"$section"; then
      echo "FAIL: section $s of the man page lacks $opt"; failures=$((failures + 1))
    fi
  done
done
check "every subcommand was checked ($nsubs)" test "$nsubs" -ge 11

# bash completion, driven as bash would drive it
complete_words() { # complete_words WORD...: COMPREPLY for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _attnrank; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$@"
}
check "completes subcommands" test "$(complete_words attnrank spe)" = spectrum
check "completes a subcommand's options" test "$(complete_words attnrank check --ju)" = --junit
check "options belong to the subcommand" test -z "$(complete_words attnrank heads --ju)"
touch "$TMP/points_a.csv"
check "file argument after --fit" test "$(cd "$TMP" && complete_words attnrank depthwidth --fit points_)" = points_a.csv
finish
