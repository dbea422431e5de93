#!/usr/bin/env bash
# CLI tests of `attnrank spectrum`, `--help` and `--version`.
source "$(dirname "$0")/lib.sh"

# top level
expect 0 "usage: attnrank SUBCOMMAND" -- "$AR" --help
expect 0 "attnrank 0." -- "$AR" --version
expect_error 2 "unknown subcommand 'frobnicate'" -- "$AR" frobnicate
expect 0 "--random-attention" -- "$AR" spectrum --help

# random attention: logits rank = min(d_p, d, n) for every head
out=$("$AR" spectrum --random-attention --n 40 --d 48 --heads 4 --seed 3 --json)
check "json logits ranks" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert len(r["matrices"]) == 4
for m in r["matrices"]:
    assert m["rank"] == 12 == m["expected_rank"], m["rank"]
    assert m["tolerance"]["precision"] == "float64"
    assert len(m["singular_values"]) == 40
' "$out"
expect 0 "expected rank        5  (min(d_p, d, n))  ok" -- "$AR" spectrum --random-attention --n 5 --d 16 --heads 2 --head 1
expect 0 "expected rank        6" -- "$AR" spectrum --random-attention --n 9 --d 6 --heads 3 --head-size 20
expect 0 "scores" -- "$AR" spectrum --random-attention --n 16 --d 8 --heads 2 --of scores --axis row
# same seed, same bytes; another seed, other numbers
a=$("$AR" spectrum --random-attention --n 12 --d 8 --heads 2 --seed 5 --json)
b=$("$AR" spectrum --random-attention --n 12 --d 8 --heads 2 --seed 5 --json)
c=$("$AR" spectrum --random-attention --n 12 --d 8 --heads 2 --seed 6 --json)
check "seed reproducible" test "$a" = "$b"
check "seed changes result" test "$a" != "$c"

# files: CSV with a header, a known diagonal spectrum
printf 'a,b,c\n3,0,0\n0,-2,0\n0,0,1e-20\n' >"$TMP/diag.csv"
out=$("$AR" spectrum "$TMP/diag.csv" --json)
check "csv diag spectrum" $PY -c '
import json, sys
m = json.loads(sys.argv[1])["matrices"][0]
assert m["singular_values"][:2] == [3.0, 2.0], m["singular_values"]
assert m["rank"] == 2 and abs(m["tolerance"]["threshold"] - 3 * 3 * 2.0**-52) < 1e-30
' "$out"
expect 0 "rank                 3" -- "$AR" spectrum "$TMP/diag.csv" --atol 0 --rtol 0
expect 0 "rank                 1" -- "$AR" spectrum "$TMP/diag.csv" --atol 2.5

# npy: a float32 stack of 2 x 3 matrices of rank 2 -> float32 tolerance, slice labels
$PY -c '
import numpy as np, sys
rng = np.random.default_rng(1)
a = np.stack([rng.standard_normal((6, 2)) @ rng.standard_normal((2, 6)) for _ in range(6)]).reshape(2, 3, 6, 6)
np.save(sys.argv[1], a.astype(np.float32))
np.save(sys.argv[2], np.asfortranarray(a[0, 0]).astype(">f8"))
' "$TMP/stack.npy" "$TMP/big_endian_f.npy"
out=$("$AR" spectrum "$TMP/stack.npy" --json)
check "npy stack" $PY -c '
import json, sys
r = json.loads(sys.argv[1])["matrices"]
assert len(r) == 6 and r[5]["index"] == [1, 2], r[5]["index"]
assert all(m["rank"] == 2 and m["tolerance"]["precision"] == "float32" for m in r)
' "$out"
expect 0 "[1,2]" -- "$AR" spectrum "$TMP/stack.npy"
expect 0 "rank                 2" -- "$AR" spectrum "$TMP/big_endian_f.npy"
# float64 epsilon on float32 data over-counts the rank
expect 0 "rank                 6" -- "$AR" spectrum "$TMP/stack.npy" --precision float64

# CSV plot data, written atomically
expect 0 "" -- "$AR" spectrum "$TMP/diag.csv" --csv "$TMP/plot.csv"
check "plot csv header (one matrix: no index columns)" grep -q '^index,sigma,sigma_normalised,cumulative_energy$' "$TMP/plot.csv"
check "plot csv rows" test "$(wc -l <"$TMP/plot.csv")" -eq 4
check "no temp files left" test -z "$(ls "$TMP" | grep '\.tmp\.')"

# bad input: one clear line, exit 2
printf '1,2\n3\n' >"$TMP/ragged.csv"
printf '1,2\n3,x\n' >"$TMP/text.csv"
printf '1,nan\n3,4\n' >"$TMP/nan.csv"
: >"$TMP/empty.csv"
printf '\x93NUMPY\x01\x00' >"$TMP/trunc.npy"
expect_error 2 "missing FILE" -- "$AR" spectrum
expect_error 2 "does-not-exist.npy" -- "$AR" spectrum "$TMP/does-not-exist.npy"
expect_error 2 "ragged.csv" -- "$AR" spectrum "$TMP/ragged.csv"
expect_error 2 "'x'" -- "$AR" spectrum "$TMP/text.csv"
expect_error 2 "non-finite value" -- "$AR" spectrum "$TMP/nan.csv"
expect_error 2 "empty.csv" -- "$AR" spectrum "$TMP/empty.csv"
expect_error 2 "trunc.npy" -- "$AR" spectrum "$TMP/trunc.npy"
expect_error 2 "unknown option '--bogus'" -- "$AR" spectrum "$TMP/diag.csv" --bogus
expect_error 2 "--n: expected a positive integer, got '0'" -- "$AR" spectrum --random-attention --n 0 --d 4 --heads 1
expect_error 2 "--n: expected a positive integer, got '-3'" -- "$AR" spectrum --random-attention --n -3 --d 4 --heads 1
expect_error 2 "needs --n N" -- "$AR" spectrum --random-attention --d 4 --heads 1
expect_error 2 "does not divide" -- "$AR" spectrum --random-attention --n 4 --d 10 --heads 3
expect_error 2 "--axis" -- "$AR" spectrum --random-attention --n 4 --d 4 --heads 1 --axis diag
expect_error 2 "--of" -- "$AR" spectrum --random-attention --n 4 --d 4 --heads 1 --of weights
expect_error 2 "--head 2" -- "$AR" spectrum --random-attention --n 4 --d 4 --heads 2 --head 2
expect_error 2 "--rtol: expected a finite number" -- "$AR" spectrum "$TMP/diag.csv" --rtol abc
expect_error 2 "--energy" -- "$AR" spectrum "$TMP/diag.csv" --energy 1.5
expect_error 2 "GB of memory" -- "$AR" spectrum --random-attention --n 100000000 --d 4 --heads 1
expect_error 2 "--csv needs a value" -- "$AR" spectrum "$TMP/diag.csv" --csv
mkdir -p "$TMP/ro"; : >"$TMP/regular"
expect_error 2 "cannot create" -- "$AR" spectrum "$TMP/diag.csv" --csv "$TMP/regular/out.csv"
# --distributed options (their MPI runs: tests/cli/test_mpi.sh)
expect_error 2 "--block and --grid belong to --distributed" -- "$AR" spectrum "$TMP/diag.csv" --block 8
expect_error 2 "--block and --grid belong to --distributed" -- "$AR" spectrum "$TMP/diag.csv" --grid 2x2
if ! "$AR" spectrum "$TMP/diag.csv" --distributed > /dev/null 2>&1 &&
    "$AR" spectrum "$TMP/diag.csv" --distributed 2>&1 | grep -q "no MPI support"; then
    expect_error 2 "rebuild with meson configure -Dmpi=enabled" -- \
        "$AR" spectrum "$TMP/diag.csv" --distributed
fi
finish
