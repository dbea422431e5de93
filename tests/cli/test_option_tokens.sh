#!/usr/bin/env bash
# The library names options as tokens, never in one face's spelling
# (include/attnrank/status.h, docs/conventions.md): no string literal in
# src/ outside the faces (src/cli, src/app) spells a CLI flag (--smooth) or
# says "Python ...".  Each face renders the tokens where it prints.
# Usage: test_option_tokens.sh SOURCE_ROOT
set -u
root=${1:?usage: test_option_tokens.sh SOURCE_ROOT}
cd "$root" || exit 2
mapfile -t files < <(find src -type f \( -name '*.c' -o -name '*.h' \) \
  -not -path 'src/cli/*' -not -path 'src/app/*' | sort)
[ "${#files[@]}" -gt 50 ] || { echo "FAIL: only ${#files[@]} library sources found"; exit 1; }
# A string literal on one line holding --word, or a message naming Python.
hits=$(grep -nE '"([^"\\]|\\.)*(--[a-z]|Python [a-z_]+=)([^"\\]|\\.)*"' "${files[@]}" || true)
if [ -n "$hits" ]; then
  echo "FAIL: library messages spell a face's option (write {opt:NAME} or {flag:NAME}):"
  echo "$hits"
  exit 1
fi
# The check itself sees a flag in a literal (it would otherwise pass on anything).
probe='    return ar_error_set(err, AR_EINVAL, "give --heads");'
grep -qE '"([^"\\]|\\.)*(--[a-z]|Python [a-z_]+=)([^"\\]|\\.)*"' <<<"$probe" ||
  { echo "FAIL: the pattern misses a flag in a literal"; exit 1; }
echo "option tokens: ${#files[@]} library sources, no flag spelled"
