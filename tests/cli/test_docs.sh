#!/usr/bin/env bash
# docs/cli.md covers every subcommand the binary lists (regenerate it with
# scripts/cli-doc after adding one).
source "$(dirname "$0")/lib.sh"
doc="$(dirname "$0")/../../docs/cli.md"
check "docs/cli.md exists" test -f "$doc"
for cmd in $("$AR" --help | awk '/^subcommands:/{on=1; next} /^$/{on=0} on{print $1}'); do
  check "docs/cli.md has a section for $cmd" grep -q "^## attnrank $cmd\$" "$doc"
  check "README or docs mention $cmd --help" grep -q "attnrank $cmd" "$doc"
done
# The mask kinds: `represent --help` lists them from the library's kind
# table; docs/cli.md's represent section must show that list, and every
# kind in it must be in docs/cli.md's mask table, so the docs cannot drift.
kinds=$("$AR" represent --help | sed -n 's/^  --mask MASK *attention mask: \(.*\), auto, file:PATH$/\1/p')
check "represent --help lists the mask kinds" test -n "$kinds"
check "docs/cli.md shows represent's --mask list" \
  grep -qF -- "attention mask: $kinds, auto, file:PATH" "$doc"
IFS=',' read -r -a syntaxes <<<"$kinds"
for syntax in "${syntaxes[@]}"; do
  syntax=${syntax# }
  check "docs/cli.md's mask table has $syntax" grep -qF -- "| \`$syntax\` |" "$doc"
done
finish
