#!/usr/bin/env bash
# CLI tests of `attnrank check` (the CI gate).
source "$(dirname "$0")/lib.sh"

# BERT-large: h = 8 gives d_p = 128 >= n - 1 = 127 (no bottleneck); h = 16 gives 64.
expect 0 "HOLDS no-bottleneck" -- "$AR" check --d 1024 --heads 8 --n 128 --require no-bottleneck
expect 1 "FAILS no-bottleneck            head size 64 < n - 1 = 127" -- "$AR" check --d 1024 --heads 16 --n 128 --require no-bottleneck
# exact threshold n - 1, not the paper's n: d_p = 127 at n = 128 holds
expect 0 "HOLDS" -- "$AR" check --d 1024 --heads 8 --n 128 --head-size 127 --require no-bottleneck
expect 1 "FAILS" -- "$AR" check --d 1024 --heads 8 --n 129 --head-size 127 --require no-bottleneck
# d < n: no full-rank X, whatever the head size
expect 1 "X cannot have full column rank" -- "$AR" check --d 64 --heads 1 --n 128 --head-size 200 --require no-bottleneck
# GPT-3 is too deep for its size; BERT-base (L=12, d=768) is depth-efficient
expect 1 "FAILS depth-efficient" -- "$AR" check --d 12288 --heads 96 --n 2048 --layers 96 --require depth-efficient
expect 0 "HOLDS depth-efficient" -- "$AR" check --d 768 --heads 12 --n 512 --layers 12 --require depth-efficient
expect 0 "HOLDS near-optimal-allocation" -- "$AR" check --d 13422 --heads 1 --n 8 --layers 80 --require near-optimal-allocation
expect 1 "2 conditions failed" -- "$AR" check --d 768 --heads 12 --n 512 --layers 12 --require no-bottleneck,depth-efficient --require near-optimal-allocation
out=$("$AR" check --d 768 --heads 12 --n 512 --layers 12 --require depth-efficient --json)
check "check json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
c = r["configs"][0]["conditions"][0]
assert c["condition"] == "depth-efficient" and c["holds"] is True and r["failed_conditions"] == 0
' "$out"

# --configs: a CSV whose header names the flags
printf 'name,d,heads,n,layers,require\nbert-large-h8,1024,8,128,24,no-bottleneck\ngpt3,12288,96,2048,96,depth-efficient\n' >"$TMP/cfg.csv"
expect 1 "2 configurations, 1 condition failed" -- "$AR" check --configs "$TMP/cfg.csv"
printf '# comment\n--d,--heads,--n\n1024,8,128\n' >"$TMP/flags.csv"
expect 0 "1 configuration, 0 conditions failed" -- "$AR" check --configs "$TMP/flags.csv" --require no-bottleneck

# bad input
printf 'd,heads,n\n1024,8\n' >"$TMP/ragged.csv"
printf 'd,heads,n,colour\n1,1,1,red\n' >"$TMP/badcol.csv"
printf 'd,heads,n\n1024,x,128\n' >"$TMP/badval.csv"
printf 'd,heads,n,require\n1024,8,128,fast\n' >"$TMP/badreq.csv"
printf 'd,heads,n\n' >"$TMP/header_only.csv"
expect_error 2 "unknown condition 'fast'" -- "$AR" check --d 8 --heads 1 --n 4 --require fast
expect_error 2 "no condition required" -- "$AR" check --d 8 --heads 1 --n 4
expect_error 2 "needs d, heads and n" -- "$AR" check --d 8 --n 4 --require no-bottleneck
expect_error 2 "does not divide" -- "$AR" check --d 10 --heads 3 --n 4 --require no-bottleneck
expect_error 2 "depth-efficient needs the depth" -- "$AR" check --d 8 --heads 1 --n 4 --require depth-efficient
expect_error 2 "line 2: 2 fields, header has 3" -- "$AR" check --configs "$TMP/ragged.csv" --require no-bottleneck
expect_error 2 "unknown column 'colour'" -- "$AR" check --configs "$TMP/badcol.csv" --require no-bottleneck
expect_error 2 "line 2: heads: expected a non-negative integer, got 'x'" -- "$AR" check --configs "$TMP/badval.csv" --require no-bottleneck
expect_error 2 "line 2: unknown condition 'fast'" -- "$AR" check --configs "$TMP/badreq.csv"
expect_error 2 "no configuration rows" -- "$AR" check --configs "$TMP/header_only.csv" --require no-bottleneck
expect_error 2 "cannot open" -- "$AR" check --configs "$TMP/missing.csv" --require no-bottleneck
expect_error 2 "--configs excludes" -- "$AR" check --configs "$TMP/cfg.csv" --d 4
finish
