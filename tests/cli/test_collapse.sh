#!/usr/bin/env bash
# CLI tests of `attnrank collapse` and `attnrank softmax-bottleneck`.
source "$(dirname "$0")/lib.sh"

# ---- collapse ----
expect 0 "--layers" -- "$AR" collapse --help
expect 0 "rank collapse" -- "$AR" --help
# pure attention: doubly exponential collapse to rank one
out=$("$AR" collapse --layers 6 --n 16 --d 32 --heads 4 --seed 2 --json)
check "pure attention collapses" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
d = r["depths"]
assert r["variant"] == "pure attention" and r["axis"] == "row" and len(d) == 7
assert d[0]["rank"] == 16 and d[6]["rank"] == 1, [x["rank"] for x in d]
assert d[6]["rel_res_fro"] < 1e-12 and d[0]["rel_res_fro"] > 0.9
f = r["decay_fit"]
assert f["order"] > 2.5, f
ratios = [x["ratio"] for x in d[1:f["last_depth"] + 1]]
assert all(b < a for a, b in zip(ratios, ratios[1:])), ratios
assert d[0]["ratio"] is None and "bound_log" not in d[0]
assert len(d[3]["singular_values"]) == 16 and d[3]["tolerance"]["precision"] == "float64"
' "$out"
# skips: the residual does not vanish
out=$("$AR" collapse --layers 8 --n 16 --d 32 --heads 4 --seed 2 --skip --mlp --json)
check "skip keeps the residual" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
d = r["depths"]
assert r["skip"] and r["mlp"] and r["mlp_width"] == 128
assert all(x["rank"] == 16 for x in d)
assert d[8]["rel_res_fro"] > 1e-2 and d[8]["res_fro"] > 0.5 * d[0]["res_fro"]
' "$out"
expect 0 "order of decay" -- "$AR" collapse --layers 5 --n 8 --d 8 --heads 2
expect 0 "paper's bound not evaluated" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2
expect 0 "log bound" -- "$AR" collapse --layers 3 --n 8 --d 8 --heads 2 --gamma 1 --beta 0.5
out=$("$AR" collapse --layers 3 --n 8 --d 8 --heads 2 --gamma 1 --beta 0.5 --json)
check "bound in json" $PY -c '
import json, sys, math
r = json.loads(sys.argv[1])
assert r["bound"]["gamma"] == 1 and r["bound"]["beta"] == 0.5
d = r["depths"]
assert abs(d[0]["bound_log"] - math.log(d[0]["res_1inf"])) < 1e-12
' "$out"
# CSV: header plus one row per depth; reruns are byte-identical
expect 0 "" -- "$AR" collapse --layers 4 --n 8 --d 16 --heads 4 --csv "$TMP/c.csv"
check "csv rows" test "$(wc -l <"$TMP/c.csv")" -eq 6
check "csv header" grep -q '^depth,norm_fro,res_fro,rel_res_fro' "$TMP/c.csv"
a=$("$AR" collapse --layers 4 --n 8 --d 16 --heads 4 --seed 9 --json)
b=$("$AR" collapse --layers 4 --n 8 --d 16 --heads 4 --seed 9 --json)
c=$("$AR" collapse --layers 4 --n 8 --d 16 --heads 4 --seed 10 --json)
check "seed reproducible" test "$a" = "$b"
check "seed changes result" test "$a" != "$c"
# bad input: one line on stderr, exit 2
expect_error 2 "--layers L is required" -- "$AR" collapse --n 8 --d 8 --heads 2
expect_error 2 "does not divide" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 3
expect_error 2 "both --gamma and --beta" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2 --gamma 1
expect_error 2 "pure attention only" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2 --gamma 1 --beta 1 --skip
expect_error 2 "must be > 0" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2 --gamma -1 --beta 1
expect_error 2 "--fit-floor" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2 --fit-floor 2
expect_error 2 "--mlp-width: must be >= 1, got 0" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2 --mlp --mlp-width 0
expect_error 2 "--layers" -- "$AR" collapse --layers 0 --n 8 --d 8 --heads 2
expect_error 2 "--n" -- "$AR" collapse --layers 2 --n x --d 8 --heads 2
expect_error 2 "GB" -- "$AR" collapse --layers 2 --n 100000 --d 100000 --heads 2
expect_error 2 "" -- "$AR" collapse --layers 2 --n 8 --d 8 --heads 2 --csv "$TMP/no/such/dir/c.csv"
check "no partial csv" test ! -e "$TMP/no/such/dir/c.csv"

# ---- softmax-bottleneck ----
expect 0 "--bias" -- "$AR" softmax-bottleneck --help
expect 0 "softmax-bottleneck" -- "$AR" --help
$PY -c '
import numpy as np, sys
rng = np.random.default_rng(7)
def sm(z):
    z = z - z.max(1, keepdims=True); e = np.exp(z); return e / e.sum(1, keepdims=True)
d = sys.argv[1]
np.save(d + "/g512.npy", sm(rng.standard_normal((5, 12))))
h, w, b = rng.standard_normal((20, 3)), rng.standard_normal((30, 3)), 2 * rng.standard_normal(30)
np.save(d + "/planted.npy", sm(h @ w.T))
np.save(d + "/planted_bias.npy", sm(h @ w.T + b))
np.save(d + "/planted_f32.npy", sm(h @ w.T).astype(np.float32))
p = sm(rng.standard_normal((4, 6)))
np.save(d + "/stack.npy", np.stack([p, p]))
q = p.copy(); q[1, 2] = 0.0; np.save(d + "/zero.npy", q)
q = p.copy(); q[2, 3] = -q[2, 3]; np.save(d + "/negative.npy", q)
q = p.copy(); q[0, 0] = np.nan; np.save(d + "/nan.npy", q)
q = p.copy(); q[3, :] *= 1.01; np.save(d + "/rowsum.npy", q)
np.save(d + "/colstoch.npy", sm(rng.standard_normal((6, 4))).T.copy())
' "$TMP"
# the counterexample to the rank-minus-one rule: N = 5, V = 12, d = 4
expect 0 "Yang's condition is silent here, yet d < 5" -- "$AR" softmax-bottleneck "$TMP/g512.npy" --d 4
out=$("$AR" softmax-bottleneck "$TMP/g512.npy" --d 4 --json)
check "counterexample json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["rank_log"] == 5 and r["required_d"] == 5 and not r["sufficient"]
assert r["yang"]["silent_but_fails"] and not r["yang"]["proves_failure"] and r["yang"]["applies"]
assert r["contexts"] == 5 and r["vocab"] == 12 and len(r["singular_values"]) == 5
f = r["fit"]
assert f["kl_mean"] > 1e-6 and f["kl_mean"] <= f["start_kl_mean"] and f["seed"] == 0
assert r["logit_error"] > 0 and r["tolerance"]["relative_to"] == "sigma_1(log P)"
' "$out"
expect 0 "SUFFICES" -- "$AR" softmax-bottleneck "$TMP/g512.npy" --d 5
expect 0 "yes: proves failure" -- "$AR" softmax-bottleneck "$TMP/g512.npy" --d 3 --no-fit
# planted widths: 3 without bias; with a planted bias 3 with --bias, 4 without
out=$("$AR" softmax-bottleneck "$TMP/planted.npy" --d 3 --json)
check "planted no bias" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["required_d"] == 3 and r["sufficient"] and r["ones_in_rowspace"] and r["rank_log"] == 4
assert r["fit"]["max_abs_error"] < 1e-12 and r["logit_error_rel"] < 1e-12
' "$out"
out=$("$AR" softmax-bottleneck "$TMP/planted_bias.npy" --d 3 --bias --json)
check "planted bias" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["required_d"] == 3 and r["sufficient"] and r["rank_centred"] == 4
assert r["yang"]["wrong_with_bias"] and not r["yang"]["applies"]
assert r["fit"]["max_abs_error"] < 1e-12
' "$out"
expect 0 "TOO SMALL" -- "$AR" softmax-bottleneck "$TMP/planted_bias.npy" --d 3 --no-fit
# float32 data gets float32 tolerances
out=$("$AR" softmax-bottleneck "$TMP/planted_f32.npy" --d 3 --no-fit --json)
check "float32 tolerance" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["tolerance"]["precision"] == "float32" and r["required_d"] == 3, r["required_d"]
assert r["fit"] is None
' "$out"
# CSV of the logit error against the width
expect 0 "" -- "$AR" softmax-bottleneck "$TMP/planted.npy" --d 1 --no-fit --csv "$TMP/sb.csv"
check "csv rows" test "$(wc -l <"$TMP/sb.csv")" -eq 22
check "csv exact at 3" grep -q '^3,.*,1$' "$TMP/sb.csv"
# reruns are byte-identical; the seed moves the fit
a=$("$AR" softmax-bottleneck "$TMP/g512.npy" --d 2 --json --seed 4)
b=$("$AR" softmax-bottleneck "$TMP/g512.npy" --d 2 --json --seed 4)
check "seed reproducible" test "$a" = "$b"
# bad input: one line on stderr, exit 2
expect_error 2 "--d D is required" -- "$AR" softmax-bottleneck "$TMP/g512.npy"
expect_error 2 "missing P.npy" -- "$AR" softmax-bottleneck --d 3
expect_error 2 "not positive" -- "$AR" softmax-bottleneck "$TMP/zero.npy" --d 2
expect_error 2 "not positive" -- "$AR" softmax-bottleneck "$TMP/negative.npy" --d 2
expect_error 2 "non-finite" -- "$AR" softmax-bottleneck "$TMP/nan.npy" --d 2
expect_error 2 "row 3 sums to" -- "$AR" softmax-bottleneck "$TMP/rowsum.npy" --d 2
expect_error 2 "row-stochastic" -- "$AR" softmax-bottleneck "$TMP/colstoch.npy" --d 2
expect 0 "SUFFICES" -- "$AR" softmax-bottleneck "$TMP/rowsum.npy" --d 4 --sum-tol 0.02
expect_error 2 "one 2-D" -- "$AR" softmax-bottleneck "$TMP/stack.npy" --d 2
expect_error 2 "" -- "$AR" softmax-bottleneck "$TMP/does-not-exist.npy" --d 2
expect_error 2 "--rtol" -- "$AR" softmax-bottleneck "$TMP/g512.npy" --d 2 --rtol -1
expect_error 2 "--precision: expected float64, float32, float16 or bfloat16, got 'float8'" -- "$AR" softmax-bottleneck "$TMP/g512.npy" --d 2 --precision float8
expect_error 2 "--d" -- "$AR" softmax-bottleneck "$TMP/g512.npy" --d -1
finish
