#!/usr/bin/env bash
# CLI tests of `attnrank seprank` and `attnrank depthwidth`.
source "$(dirname "$0")/lib.sh"

# ---- depthwidth: the numbers the law implies (docs/theory/depth-width.md) ----
expect 0 "transition_d         215.3  for L = 6" -- "$AR" depthwidth --layers 6
expect 0 "transition_d         2215.0  for L = 48" -- "$AR" depthwidth --layers 48
expect 0 "optimal_layers       80.5" -- "$AR" depthwidth --params 175e9
expect 0 "depth-inefficient" -- "$AR" depthwidth --layers 96 --d 12288
expect 0 "NOT within 15%" -- "$AR" depthwidth --layers 96 --d 12288
expect 0 "transition_layers    78.87  for d = 12288" -- "$AR" depthwidth --d 12288
expect 0 "--fit FILE" -- "$AR" depthwidth --help
out=$("$AR" depthwidth --params 1e12 --json)
check "1T optimum json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["mode"] == "optimum" and abs(r["optimal_d"] - 30000) < 600, r
assert abs(r["optimal_layers"] - 95) < 2 and abs(r["total_params"] - 1e12) < 1
assert r["law"]["intercept"] == 5.039 and r["law"]["slope"] == 0.0555
' "$out"
out=$("$AR" depthwidth --layers 96 --d 12288 --json)
check "GPT-3 verdict json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["verdict"] == "depth-inefficient" and r["depth_efficient"] is False
assert r["near_optimal"] is False and r["tolerance"] == 0.15
assert abs(r["optimal_layers"] - 80) < 1.6 and r["l_th"] < 9
' "$out"
expect 0 "depth-efficient" -- "$AR" depthwidth --layers 12 --d 4096
expect 0 "within 25%" -- "$AR" depthwidth --layers 96 --d 12288 --tolerance 0.25
expect 0 "transition_d         403.4" -- "$AR" depthwidth --layers 10 --intercept 5.5 --slope 0.05
# refit: the law's own values come back; weighted with an error column
printf 'depth,width\n6,215.3\n12,300.4\n24,584.6\n48,2215\n' >"$TMP/pts.csv"
out=$("$AR" depthwidth --fit "$TMP/pts.csv" --json)
check "refit json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["points"] == 4 and r["weighted"] is False
assert abs(r["slope"] - 0.0555) < 1e-4 and abs(r["intercept"] - 5.039) < 1e-3, r
assert r["r2"] > 0.9999
' "$out"
printf '# depth,width,error\n6,230,20\n12,290,20\n24,600,40\n48,2100,200\n' >"$TMP/pts3.csv"
expect 0 "weighted by 1/(error/width)^2" -- "$AR" depthwidth --fit "$TMP/pts3.csv"
expect 0 "chi2_red" -- "$AR" depthwidth --fit "$TMP/pts3.csv"

# ---- depthwidth: bad input ----
printf '6,215\n12\n' >"$TMP/ragged.csv"
printf '6,215\n6,300\n' >"$TMP/same.csv"
expect_error 2 "give one of --params" -- "$AR" depthwidth
expect_error 2 "separate modes" -- "$AR" depthwidth --params 1e9 --layers 4
expect_error 2 "--params: must be > 0" -- "$AR" depthwidth --params -5
expect_error 2 "--params: expected a finite number" -- "$AR" depthwidth --params lots
expect_error 2 "--layers: must be >= 1, got 0" -- "$AR" depthwidth --layers 0
expect_error 2 "ragged.csv: line 2" -- "$AR" depthwidth --fit "$TMP/ragged.csv"
expect_error 2 "all depths equal" -- "$AR" depthwidth --fit "$TMP/same.csv"
expect_error 2 "cannot open" -- "$AR" depthwidth --fit "$TMP/none.csv"
expect_error 2 "transition depth undefined" -- "$AR" depthwidth --d 100 --slope 0
expect_error 2 "--tolerance" -- "$AR" depthwidth --layers 4 --d 4 --tolerance -1

# ---- seprank: known ranks ----
# L = 1, N = 2: d + 1; L = 2: C(d + 4, 4); exact = float = over Q on small cases
expect 0 "exact rank           5" -- "$AR" seprank --layers 1 --d 4 --exact
expect 0 "over Q: 5" -- "$AR" seprank --layers 1 --d 4 --exact
expect 0 "(attained by the exact rank)" -- "$AR" seprank --layers 2 --d 3 --exact
out=$("$AR" seprank --layers 2 --d 4 --heads 2 --exact --json)
check "seprank json L=2 d=4" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["exact_rank"] == 70 == r["float_rank"] and r["bound"] == 70, r["exact_rank"]
assert r["primes_agree"] and len(r["primes"]) == 2 and r["saturated"] is False
assert r["templates"] == 71 and r["rows"] == 71 and r["partition"] == "0/1"
assert r["tolerance"]["threshold"] > 0 and len(r["singular_values"]) == 71
assert r["bound_log_parity"] <= r["bound_log_split"] <= r["bound_log_monomial"]
assert r["regime"] == "linear" and abs(r["l_th"] - 1.2618595) < 1e-6
' "$out"
# depth 3: the float spectrum under-counts, the exact rank does not
out=$("$AR" seprank --layers 3 --d 2 --exact --json)
check "float under-counts at depth 3" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["exact_rank"] == 105 and r["float_rank"] < 105 and r["float_undercounts"] is True
' "$out"
expect 0 "float under-counts" -- "$AR" seprank --layers 3 --d 2 --exact
# too few templates: saturated, said so
expect 0 "saturated" -- "$AR" seprank --layers 2 --d 4 --templates 10 --exact
# more positions and an explicit partition; entry read-out; residual
expect 0 "grid: partition 0,1/2,3, 16 templates -> 256 x 256" -- "$AR" seprank --layers 1 --d 2 --n 4 --max-dim 256 --exact
expect 0 "partition 1/0,2" -- "$AR" seprank --layers 1 --d 3 --n 3 --partition 1/0,2 --templates 5
expect 0 "read-out entry 1 at position 1" -- "$AR" seprank --layers 1 --d 3 --entry 1 --position 1
expect 0 "with residual" -- "$AR" seprank --layers 2 --d 2 --residual --exact
# reproducible, atomic CSV
a=$("$AR" seprank --layers 2 --d 2 --seed 4 --json)
b=$("$AR" seprank --layers 2 --d 2 --seed 4 --json)
check "seed reproducible" test "$a" = "$b"
expect 0 "" -- "$AR" seprank --layers 2 --d 2 --csv "$TMP/sv.csv"
check "sv csv header" grep -q '^index,sigma,sigma_normalised,above_threshold$' "$TMP/sv.csv"
check "sv csv rows" test "$(wc -l <"$TMP/sv.csv")" -eq 17
check "no temp files left" test -z "$(ls "$TMP" | grep '\.tmp\.')"

# ---- seprank: bad input ----
expect_error 2 "--layers L is required" -- "$AR" seprank --d 4
expect_error 2 "--heads 3 does not divide --d 4" -- "$AR" seprank --layers 1 --d 4 --heads 3
expect_error 2 "--n: must be >= 2, got 1" -- "$AR" seprank --layers 1 --d 4 --n 1
expect_error 2 "--partition: partition: position 2 given twice" -- "$AR" seprank --layers 1 --d 2 --n 3 --partition 0,2/2
expect_error 2 "position 3 missing" -- "$AR" seprank --layers 1 --d 2 --n 4 --partition 0,1/2
expect_error 2 "exactly one '/'" -- "$AR" seprank --layers 1 --d 2 --n 4 --partition 0,1,2,3
expect_error 2 "exceeds 2^26 entries" -- "$AR" seprank --layers 1 --d 2 --templates 100000
expect_error 2 "--entry 4 out of range" -- "$AR" seprank --layers 1 --d 4 --entry 4
expect_error 2 "--position 2 out of range" -- "$AR" seprank --layers 1 --d 4 --position 2
expect_error 2 "--no-float needs --exact" -- "$AR" seprank --layers 1 --d 4 --no-float
expect_error 2 "--primes: at most 3" -- "$AR" seprank --layers 1 --d 4 --exact --primes 4
# FLINT's memory (it aborts on a failed allocation): refused by the estimate
expect_error 2 "the rank over Q of the 64 x 64 grid needs up to 0.0549 GB in FLINT, above max_bytes 0.001 GB" -- "$AR" seprank --layers 2 --d 2 --templates 64 --exact --max-memory 1e6
expect_error 2 "the rank mod p of the 64 x 64 grid needs up to" -- "$AR" seprank --layers 2 --d 2 --templates 64 --exact --max-memory 1000
expect_error 2 "--max-memory: must be >= 0 bytes, got -1" -- "$AR" seprank --layers 1 --d 4 --exact --max-memory -1
expect_error 2 "--max-memory: expected a finite number, got 'nan'" -- "$AR" seprank --layers 1 --d 4 --exact --max-memory nan
expect 0 "exact rank           5" -- "$AR" seprank --layers 1 --d 4 --exact --max-memory 0
expect_error 2 "unknown option '--width'" -- "$AR" seprank --layers 1 --width 4
expect_error 2 "--layers: expected a non-negative integer, got 'two'" -- "$AR" seprank --layers two --d 4
: >"$TMP/regular"
expect_error 2 "cannot create" -- "$AR" seprank --layers 1 --d 2 --csv "$TMP/regular/out.csv"
finish
