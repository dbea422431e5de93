#!/usr/bin/env bash
# The repository stands alone: no tracked file cites a document that lives
# outside it (the project's old planning notes), and every relative link of
# the user documentation (README.md, docs/) resolves to a file or directory
# of the tree.  Usage: test_references.sh SOURCE_ROOT
set -u
root=${1:?usage: test_references.sh SOURCE_ROOT}
cd "$root" || exit 2
failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The patterns are assembled from pieces so that this script does not match
# itself; it is still scanned like every other file.
outside=("THEORY"".md" "STYLE"".md" "BUILD""-NOTES" "../sha""red")

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "FAIL: $root is not a git work tree (the test scans git ls-files)"; exit 1
fi
mapfile -t tracked < <(git ls-files)
checks=$((checks + 1))
[ "${#tracked[@]}" -gt 100 ] || fail "git ls-files lists only ${#tracked[@]} files"

for pat in "${outside[@]}"; do
  checks=$((checks + 1))
  hits=$(printf '%s\0' "${tracked[@]}" | xargs -0 grep -InF -- "$pat" 2>/dev/null || true)
  if [ -n "$hits" ]; then
    fail "references to '$pat' (a file outside the repository):"
    printf '%s\n' "$hits" | head -20
  fi
done

# Relative markdown links [text](target) and ![alt](target) in README.md and
# docs/: the target (without #anchor) must exist relative to the linking file.
mapfile -t mdfiles < <(printf '%s\n' "${tracked[@]}" | grep -E '^(README\.md|docs/.*\.md)$')
checks=$((checks + 1))
[ "${#mdfiles[@]}" -ge 5 ] || fail "only ${#mdfiles[@]} markdown files in README.md and docs/"
nlinks=0
for f in "${mdfiles[@]}"; do
  dir=$(dirname "$f")
  # Links inside code spans or fenced blocks are not links; drop fences first.
  while IFS= read -r target; do
    [ -n "$target" ] || continue
    case "$target" in
      http://*|https://*|mailto:*|\#*) continue ;;
    esac
    path=${target%%#*}
    nlinks=$((nlinks + 1))
    checks=$((checks + 1))
    [ -e "$dir/$path" ] || fail "$f: link '$target' does not resolve"
  done < <(awk '/^```/{fence=!fence; next} !fence' "$f" |
           grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//')
done
checks=$((checks + 1))
[ "$nlinks" -ge 10 ] || fail "only $nlinks relative links found: is the link pattern broken?"

echo "$((checks - failures)) passed, $failures failed ($nlinks relative links)"
[ "$failures" -eq 0 ]
