#!/usr/bin/env bash
# CLI tests of the rough edges a new user hit: per-axis index columns of
# `spectrum --csv`, float16 .npy and .npz input, `check` (--junit, allocation
# conditions from --layers and --d alone, nothing on stdout on bad input,
# the head size used, a refitted law), `depthwidth --fit` combined with a
# mode, integers in exponent form.  Bad inputs are in tests/bad_inputs.
source "$(dirname "$0")/lib.sh"

$PY - "$TMP" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(5)
# batch x heads stack of planted rank 3, and a 3-D stack
s = rng.standard_normal((2, 3, 12, 3)) @ rng.standard_normal((2, 3, 3, 12))
np.save(d + "/stack4.npy", s)
np.save(d + "/stack3.npy", s[0])
# float16 head of planted rank 4 (what model.half() exports): float16's
# epsilon must read 4, float64's reads full rank
a64 = rng.standard_normal((32, 4)) @ rng.standard_normal((4, 32))
a = a64.astype("<f2")
np.save(d + "/half.npy", a)
np.save(d + "/half_be.npy", a.astype(">f2"))
np.savez(d + "/one.npz", a64)
np.savez_compressed(d + "/two.npz", attn=s[1, 2], x=np.eye(5))
print(np.linalg.matrix_rank(a.astype("f8")), file=open(d + "/half_rank64", "w"))
PY

# ---- spectrum --csv: one index column per leading axis ----
expect 0 "" -- "$AR" spectrum "$TMP/stack4.npy" --csv "$TMP/s4.csv"
check "4-D stack: b,h columns" grep -q '^b,h,index,sigma,sigma_normalised,cumulative_energy$' "$TMP/s4.csv"
check "4-D stack rows (6 matrices x 12 values + header)" test "$(wc -l <"$TMP/s4.csv")" -eq 73
check "last matrix is b=1, h=2" $PY -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows[-1]["b"] == "1" and rows[-1]["h"] == "2" and rows[-1]["index"] == "12", rows[-1]
heads = {(r["b"], r["h"]) for r in rows}
assert len(heads) == 6, heads
' "$TMP/s4.csv"
expect 0 "" -- "$AR" spectrum "$TMP/stack3.npy" --csv "$TMP/s3.csv"
check "3-D stack: i0 column" grep -q '^i0,index,sigma' "$TMP/s3.csv"
expect 0 "" -- "$AR" spectrum --random-attention --n 8 --d 16 --heads 2 --csv "$TMP/r.csv"
check "random attention: head column" grep -q '^head,index,sigma' "$TMP/r.csv"
check "random attention: heads 0 and 1" test "$(cut -d, -f1 "$TMP/r.csv" | sort -u | tr '\n' ' ')" = "0 1 head "

# ---- float16 .npy ----
expect 0 "rank                 4" -- "$AR" spectrum "$TMP/half.npy"
expect 0 "(float16)" -- "$AR" spectrum "$TMP/half.npy"
expect 0 "rank                 4" -- "$AR" spectrum "$TMP/half_be.npy"
check "float64's epsilon over-counts the float16 head" test "$(cat "$TMP/half_rank64")" -gt 4
expect 0 "rank                 $(cat "$TMP/half_rank64")" -- "$AR" spectrum "$TMP/half.npy" --precision float64
out=$("$AR" spectrum "$TMP/half.npy" --json)
check "float16 json: the storage rule, rank 4, certain rank 4, cuts below sigma_1" $PY -c '
import json, sys
m = json.loads(sys.argv[1])["matrices"][0]
t = m["tolerance"]
s1 = m["singular_values"][0]
assert t["precision"] == "float16" and t["rule"] == "storage" and m["rank"] == 4, t
assert t["certain_rank"] == 4 and t["threshold"] < t["certain_threshold"] < s1, t
assert abs(t["rtol"] - t["threshold"] / s1) < 1e-15 and t["draws"] == 3 and t["seed"] == 0, t
' "$out"
out=$("$AR" spectrum "$TMP/half.npy" --json --rtol 0.03125)
check "float16 json with --rtol: numpy's relative rule, no rule key" $PY -c '
import json, sys
t = json.loads(sys.argv[1])["matrices"][0]["tolerance"]
assert "rule" not in t and t["rtol"] == 0.03125, t
' "$out"
expect 0 "rank                 3" -- "$AR" spectrum "$TMP/stack4.npy" --precision float16

# ---- .npz ----
expect 0 "rank                 4" -- "$AR" spectrum "$TMP/one.npz"
expect 0 "rank                 3" -- "$AR" spectrum "$TMP/two.npz" --key attn
expect 0 "rank                 5" -- "$AR" spectrum "$TMP/two.npz" --key x.npy
cp "$TMP/one.npz" "$TMP/misnamed.csv"
expect 0 "rank                 4" -- "$AR" spectrum "$TMP/misnamed.csv"

# ---- numbers: integral values in exponent form ----
expect 0 "n = 1000" -- "$AR" heads --d 4096 --heads 4 --n 1e3 --samples 0
expect 0 "" -- "$AR" spectrum --random-attention --n 1.6e1 --d 3.2e1 --heads 2e0
out=$("$AR" heads --d 4.096e3 --heads 8 --n 128.0 --samples 0 --json)
check "exponent-form values parse exactly" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); assert (r["d"], r["heads"], r["n"]) == (4096, 8, 128), r
' "$out"
expect_error 2 "--d: expected a positive integer, got '0'" -- "$AR" heads --d 0 --heads 1 --n 4

# ---- check ----
# allocation conditions need only --layers and --d
expect 1 "FAILS depth-efficient" -- "$AR" check --d 12288 --layers 96 --require depth-efficient
expect 0 "HOLDS near-optimal-allocation" -- "$AR" check --d 13422 --layers 80 --require near-optimal-allocation
expect_error 2 "no-bottleneck needs d, heads and n" -- "$AR" check --d 768 --layers 12 --require no-bottleneck,depth-efficient
# the head size actually used is reported (d / heads when defaulted)
out=$("$AR" check --d 768 --heads 12 --n 512 --require no-bottleneck --json)
check "json head_size is the one used" $PY -c '
import json, sys
c = json.loads(sys.argv[1])["configs"][0]; assert c["head_size"] == 64, c
' "$out"
out=$("$AR" check --d 768 --layers 12 --require depth-efficient --json)
check "json: heads, n null when not given; law reported" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); c = r["configs"][0]
assert c["heads"] is None and c["n"] is None and c["head_size"] is None, c
assert r["law"]["source"] == "paper" and r["law"]["intercept"] == 5.039, r["law"]
' "$out"
# nothing on stdout when a later configuration is bad input
printf 'name,d,heads,n,layers,require\nok,768,12,512,12,depth-efficient\nbad,768,12,512,,depth-efficient\n' >"$TMP/mixed.csv"
"$AR" check --configs "$TMP/mixed.csv" --junit "$TMP/mixed.xml" >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
check "bad row: exit 2" test "$rc" -eq 2
check "bad row: stdout empty" test ! -s "$TMP/stdout"
check "bad row: one stderr line naming the row" test "$(grep -c . "$TMP/stderr")" -eq 1 -a -n "$(grep 'bad: depth-efficient needs' "$TMP/stderr")"
check "bad row: no JUnit file" test ! -e "$TMP/mixed.xml"
"$AR" check --configs "$TMP/mixed.csv" --json >"$TMP/stdout" 2>/dev/null
check "bad row, --json: stdout empty" test ! -s "$TMP/stdout"
# --junit: a test case per configuration and condition
printf 'name,d,heads,n,layers,require\nbase,768,12,512,12,no-bottleneck;depth-efficient\ngpt3,12288,96,2048,96,depth-efficient\n' >"$TMP/cfg.csv"
expect 1 "2 configurations, 2 conditions failed" -- "$AR" check --configs "$TMP/cfg.csv" --junit "$TMP/check.xml"
check "check junit parses, 3 cases, 2 failures" $PY -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert root.get("tests") == "3" and root.get("failures") == "2", root.attrib
names = [(c.get("classname"), c.get("name"), c.find("failure") is not None) for c in cases]
assert names == [("base", "no-bottleneck", True), ("base", "depth-efficient", False),
                 ("gpt3", "depth-efficient", True)], names
' "$TMP/check.xml"
expect_error 2 "cannot create" -- "$AR" check --configs "$TMP/cfg.csv" --junit "$TMP/nodir/x.xml"

# ---- depthwidth --fit combined, and check on a refitted law ----
printf 'depth,width\n6,215\n12,300\n24,585\n48,2215\n' >"$TMP/paper_points.csv"
# a steeper law: transition width doubles every 4 layers from 100 at L = 0
printf 'depth,width\n0,100\n4,200\n8,400\n12,800\n' >"$TMP/steep.csv"
expect 0 "applying the refit law" -- "$AR" depthwidth --fit "$TMP/paper_points.csv" --params 175e9
out=$("$AR" depthwidth --fit "$TMP/steep.csv" --layers 8 --json)
check "refit then apply: transition width 400 at L = 8" $PY -c '
import json, sys, math
r = json.loads(sys.argv[1])
assert r["mode"] == "transition_d" and r["law"]["source"] == "fit", r
assert abs(r["law"]["slope"] - math.log(2) / 4) < 1e-12 and abs(r["transition_d"] - 400) < 1e-9, r
assert r["fit"]["points"] == 4 and abs(r["fit"]["r2"] - 1) < 1e-12, r["fit"]
' "$out"
out=$("$AR" depthwidth --fit "$TMP/steep.csv" --d 1600 --json)
check "refit then apply: transition depth 16 at d = 1600" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); assert abs(r["transition_layers"] - 16) < 1e-9, r
' "$out"
"$AR" depthwidth --fit "$TMP/steep.csv" --json >"$TMP/law.json"
expect 0 "transition_layers    16.00" -- "$AR" depthwidth --law "$TMP/law.json" --d 1600
# GPT-3 fails depth-efficient under the paper's law but passes under the
# steep one (its transition depth at d = 12288 is 4 log2(122.88) = 27.7 ... so
# L = 24 passes, L = 32 fails)
expect 0 "HOLDS depth-efficient" -- "$AR" check --d 12288 --layers 24 --require depth-efficient --fit "$TMP/steep.csv"
expect 1 "FAILS depth-efficient" -- "$AR" check --d 12288 --layers 32 --require depth-efficient --fit "$TMP/steep.csv"
expect 1 "FAILS depth-efficient" -- "$AR" check --d 12288 --layers 32 --require depth-efficient --law "$TMP/law.json"
expect 0 "law: ln d = 4.60517 + 0.173287 L, refit from" -- "$AR" check --d 12288 --layers 24 --require depth-efficient --fit "$TMP/steep.csv"
expect 0 "HOLDS depth-efficient" -- "$AR" check --d 768 --layers 12 --require depth-efficient
out=$("$AR" check --d 12288 --layers 24 --require depth-efficient --law "$TMP/law.json" --json)
check "check json names the law file" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); assert r["law"]["source"].endswith("law.json"), r["law"]
' "$out"

# ---- weights: a config.json is not the weights ----
$PY "$(dirname "$0")/../tools/make_safetensors.py" "$TMP/model" --family bert --layers 1 --heads 2 --d 8 >/dev/null
expect_error 2 "give the model directory ($TMP/model)" -- "$AR" weights "$TMP/model/config.json"
expect 0 "" -- "$AR" weights "$TMP/model"

# ---- represent: the hint fits the entry ----
printf '0,0.5\n1,0.5\n' >"$TMP/zero.csv"
printf '%s\n' '-0.25,0.5' '1.25,0.5' >"$TMP/neg.csv"
# (the zero-entry wording belongs to the masked-attention work: a zero may be a mask)
expect_error 2 "zeros that are underflow need --smooth EPS" -- "$AR" represent "$TMP/zero.csv"
expect_error 2 "a negative entry is not a probability (--smooth only lifts zeros" -- "$AR" represent "$TMP/neg.csv"
expect 0 "" -- "$AR" represent "$TMP/zero.csv" --smooth 1e-9
finish
