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
finish
