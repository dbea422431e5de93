#!/usr/bin/env bash
# CLI tests of `attnrank heads`, `attnrank params` and `attnrank represent`
# (low-rank bottleneck, docs/theory/low-rank-bottleneck.md).  Numbers are cross-checked with
# numpy where an independent computation is cheap.
source "$(dirname "$0")/lib.sh"

# ---------------------------------------------------------------- params
expect 0 "--paper-tables" -- "$AR" params --help
expect 0 "total params               336224058" -- "$AR" params --d 1024 --heads 16 --head-size 64
expect 0 "total params               336224058" -- "$AR" params --d 1024 --heads 16
out=$("$AR" params --paper-tables --json)
check "paper tables within 0.5%" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
c = r["configs"]
assert len(c) == 15, len(c)
assert all(abs(x["total_params"] - x["printed_params"]) / x["printed_params"] < 0.005 for x in c)
assert abs(r["max_abs_deviation"] - max(abs(x["deviation"]) for x in c)) < 1e-15
assert [x["table"] for x in c].count("2A") == 4
' "$out"
expect 0 "largest |deviation| 0.342%" -- "$AR" params --paper-tables
out=$("$AR" params --d 512 --heads 12 --head-size 128 --layers 2 --ffn 100 --vocab 10 --json)
check "params formula" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); b = r["breakdown"]
d, h, p, L, f, V = 512, 12, 128, 2, 100, 10
att = 3 * (d * h * p + h * p) + h * p * d + d
assert b["attention_per_layer"] == att
per = att + (2 * d * f + f + d) + 4 * d
emb = (V + 512 + 2) * d + 2 * d
tot = emb + L * per + (d * d + d) + (d * d + d + 2 * d + V)
assert r["total_params"] == tot, (r["total_params"], tot)
' "$out"
expect_error 2 "does not divide" -- "$AR" params --d 512 --heads 12
expect_error 2 "needs --d D and --heads H" -- "$AR" params --d 512
expect_error 2 "takes no size options" -- "$AR" params --paper-tables --d 512
expect_error 2 "--heads: expected a positive integer, got '0'" -- "$AR" params --d 512 --heads 0
expect_error 2 "too large" -- "$AR" params --d 512 --heads 8 --layers 99999999999
expect_error 2 "unknown option" -- "$AR" params --d 512 --heads 8 --bogus

# ---------------------------------------------------------------- heads
expect 0 "largest head count dividing d without bottleneck: 8 exact" -- \
  "$AR" heads --d 1024 --heads 16 --n 128 --samples 0
out=$("$AR" heads --d 1024 --heads 16 --n 128 --samples 0 --json)
check "heads BERT-large" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); s = r["standard"]; f = r["fixed"]
assert s["head_size"] == 64 and s["bottleneck"] and s["bottleneck_paper"]
assert s["rank_deficit"] == 63 and s["max_seq_len"] == 65 and s["logit_rank_bound"] == 64
assert s["attention_params"] == 4 * 1024 * 1024 + 4 * 1024
assert f["head_size"] == 128 and not f["bottleneck"] and f["rank_deficit"] == 0
assert r["max_heads_paper"] == 8 and r["max_heads_exact"] == 8 and r["needed_head_size"] == 127
' "$out"
# exact vs informal criterion: d_p = n - 1 suffices
out=$("$AR" heads --d 1024 --heads 8 --n 129 --samples 0 --json)
check "exact threshold n - 1" $PY -c '
import json, sys
s = json.loads(sys.argv[1])["standard"]
assert s["head_size"] == 128 and not s["bottleneck"] and s["bottleneck_paper"]
' "$out"
# error estimates: bottlenecked standard head has error, the fixed head none
out=$("$AR" heads --d 64 --heads 8 --n 24 --seed 3 --json)
check "heads error estimates" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
for e in r["standard"]["errors"]:
    assert e["samples"] == 2 and e["head_size"] == 8 and e["min_head_size_mean"] == 23
    assert 0.05 < e["logit_error_rel"] < 1 and e["kl_mean"] > 1e-4, e
for e in r["fixed"]["errors"]:
    assert e["logit_error"] == 0 and e["kl_mean"] == 0
assert {e["family"] for e in r["standard"]["errors"]} == {"dirichlet", "banded", "near-permutation"}
' "$out"
a=$("$AR" heads --d 64 --heads 8 --n 24 --seed 3 --json)
check "heads seeded" test "$out" = "$a"
expect 0 "expected error of one standard head (d_p = 8" -- "$AR" heads --d 64 --heads 8 --n 24
expect 0 "undefined (h does not divide d)" -- "$AR" heads --d 512 --heads 12 --n 128 --head-size 128 --samples 0
expect 0 "exceeds a cap" -- "$AR" heads --d 2048 --heads 16 --n 200 --samples 1
expect_error 2 "does not divide" -- "$AR" heads --d 512 --heads 12 --n 128
expect_error 2 "needs --d D, --heads H and --n N" -- "$AR" heads --d 512 --heads 8
expect_error 2 "--n: expected a positive integer, got '0'" -- "$AR" heads --d 512 --heads 8 --n 0
expect_error 2 "--heads: expected a positive integer, got '-8'" -- "$AR" heads --d 512 --heads -8 --n 4

# ---------------------------------------------------------------- represent
$PY -c '
import numpy as np, sys
d = sys.argv[1]
np.save(d + "/witness.npy", np.array([[0.5, 0.75], [0.5, 0.25]]))
np.save(d + "/x10.npy", np.array([[1.0, 0.0]]))
np.save(d + "/x01.npy", np.array([[0.0, 1.0]]))
rng = np.random.default_rng(11)
n = 24
L = rng.standard_normal((n, 3)) @ rng.standard_normal((3, n))
Q = np.exp(L - L.max(0)); Q /= Q.sum(0)
np.save(d + "/lr3.npy", Q)
np.save(d + "/lr3_row.npy", np.ascontiguousarray(Q.T))
np.save(d + "/lr3_f32.npy", Q.astype(np.float32))
D = rng.dirichlet(np.ones(16), size=16).T
np.save(d + "/dir.npy", D)
np.save(d + "/stack.npy", np.stack([D, D]))
np.save(d + "/rect.npy", D[:, :5])
Z = D.copy(); Z[3, 2] = 0.0; Z[:, 2] /= Z[:, 2].sum(); np.save(d + "/zero.npy", Z)
N = D.copy(); N[1, 1] = np.nan; np.save(d + "/nan.npy", N)
B = D.copy(); B[:, 4] *= 1.001; np.save(d + "/badsum.npy", B)
X = rng.standard_normal((20, 16)); np.save(d + "/xfull.npy", X)
np.save(d + "/xbadcols.npy", X[:, :7])
np.savetxt(d + "/witness.csv", np.array([[0.5, 0.75], [0.5, 0.25]]), delimiter=",")
' "$TMP"

# the paper's witness
expect 1 "constraint failed: query side" -- "$AR" represent "$TMP/witness.npy" --X "$TMP/x10.npy"
expect 1 "NOT representable on this X by any head size" -- "$AR" represent "$TMP/witness.npy" --X "$TMP/x10.npy"
out=$("$AR" represent "$TMP/witness.npy" --X "$TMP/x10.npy" --json)
check "witness json" $PY -c '
import json, sys, math
r = json.loads(sys.argv[1])
assert r["feasible"] is False and r["representable"] is False and r["min_head_size"] is None
assert r["residual"]["failed"] == "query" and abs(r["residual"]["query"] - math.log(3)) < 1e-14
assert r["x"]["shift_forced"] is True and r["x"]["rank"] == 1
' "$out"
expect 0 "verdict: representable with head size 1" -- "$AR" represent "$TMP/witness.csv" --X "$TMP/x01.npy" --weights-out "$TMP/w"
check "witness weights reproduce P" $PY -c '
import numpy as np, sys
d = sys.argv[1]
wq, wk = np.load(d + "/w_wq.npy"), np.load(d + "/w_wk.npy")
X = np.array([[0.0, 1.0]]); P = np.array([[0.5, 0.75], [0.5, 0.25]])
S = (wk @ X).T @ (wq @ X) / np.sqrt(wq.shape[0])
E = np.exp(S - S.max(0)); E /= E.sum(0)
assert wq.shape == (1, 1) and np.abs(E - P).max() < 1e-14
' "$TMP"
expect 1 "no weights written" -- "$AR" represent "$TMP/witness.npy" --X "$TMP/x10.npy" --weights-out "$TMP/nope"
check "no weights for infeasible" test ! -e "$TMP/nope_wq.npy"

# planted rank 3: minimal head size 3, certificate checked in numpy
expect 0 "minimal head size: 3 = rank(Pi log P)" -- "$AR" represent "$TMP/lr3.npy" --weights-out "$TMP/lr3"
check "planted certificate in numpy" $PY -c '
import numpy as np, sys
d = sys.argv[1]
wq, wk, P = np.load(d + "/lr3_wq.npy"), np.load(d + "/lr3_wk.npy"), np.load(d + "/lr3.npy")
S = wk.T @ wq / np.sqrt(wq.shape[0])        # X = identity
E = np.exp(S - S.max(0)); E /= E.sum(0)
assert wq.shape == (3, 24) and np.abs(E - P).max() < 1e-12, np.abs(E - P).max()
' "$TMP"
expect 0 "W_q, W_k are 5 x 24" -- "$AR" represent "$TMP/lr3.npy" --head-size 5
expect 0 "minimal head size: 3" -- "$AR" represent "$TMP/lr3_row.npy" --axis row
# Rows as queries (PyTorch): W_q is the query projection, S = (W_q X)^T (W_k X),
# i.e. Q = X^T W_q^T, K = X^T W_k^T and S = Q K^T / sqrt(k), checked by an
# independent numpy forward pass; the swapped roles must NOT reproduce P.
expect 0 "minimal head size: 3" -- "$AR" represent "$TMP/lr3_row.npy" --axis row --weights-out "$TMP/lr3r"
$PY -c '
import numpy as np, sys
rng = np.random.default_rng(5); np.save(sys.argv[1] + "/xrow.npy", rng.standard_normal((30, 24)))
' "$TMP"
expect 0 "minimal head size: 3" -- "$AR" represent "$TMP/lr3_row.npy" --axis row --X "$TMP/xrow.npy" --weights-out "$TMP/lr3rx"
check "row-axis certificate in PyTorch layout" $PY -c '
import numpy as np, sys
d = sys.argv[1]
P = np.load(d + "/lr3_row.npy")
def rowsoft(S):
    E = np.exp(S - S.max(1, keepdims=True)); return E / E.sum(1, keepdims=True)
for pre, X in (("lr3r", np.eye(24)), ("lr3rx", np.load(d + "/xrow.npy"))):
    wq, wk = np.load(d + "/" + pre + "_wq.npy"), np.load(d + "/" + pre + "_wk.npy")
    Q, K = X.T @ wq.T, X.T @ wk.T            # tokens as rows, as nn.Linear computes
    err = np.abs(rowsoft(Q @ K.T / np.sqrt(wq.shape[0])) - P).max()
    bad = np.abs(rowsoft(K @ Q.T / np.sqrt(wq.shape[0])) - P).max()
    assert err < 1e-12 and bad > 1e-3, (pre, err, bad)
' "$TMP"
expect 0 "stored as float32" -- "$AR" represent "$TMP/lr3_f32.npy"
expect 0 "minimal head size: 3" -- "$AR" represent "$TMP/lr3_f32.npy"
# too small a head: Eckart-Young error matches numpy's tail singular values
out=$("$AR" represent "$TMP/lr3.npy" --head-size 2 --json)
check "logit error = tail singular values" $PY -c '
import json, sys, numpy as np
r = json.loads(sys.argv[1]); P = np.load(sys.argv[2] + "/lr3.npy")
L = np.log(P); C = L - L.mean(0)
s = np.linalg.svd(C, compute_uv=False)
assert r["representable"] is False and r["min_head_size"] == 3 and r["head_size"] == 2
assert abs(r["logit_error"] - np.sqrt((s[2:] ** 2).sum())) < 1e-10
f = r["fit"]
assert f["kl_mean"] <= f["start_kl_mean"] and f["kl_mean"] > 0 and f["head_size"] == 2
assert max(abs(a - b) for a, b in zip(r["singular_values"], s)) < 1e-10
' "$out" "$TMP"
expect 1 "best probability-space fit found (L-BFGS, seed 9" -- "$AR" represent "$TMP/dir.npy" --head-size 4 --seed 9
# limits of the fit: --no-fit skips it, --max-iter caps its iterations
out=$("$AR" represent "$TMP/dir.npy" --head-size 4 --no-fit --json)
check "--no-fit: no fit in the JSON" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["representable"] is False and "fit" not in r and r["fit_skipped"] == "--no-fit", r
assert r["logit_error"] > 0
' "$out"
expect 1 "probability-space fit skipped: --no-fit" -- "$AR" represent "$TMP/dir.npy" --head-size 4 --no-fit
out=$("$AR" represent "$TMP/dir.npy" --head-size 4 --max-iter 3 --json)
check "--max-iter 3: at most 3 iterations" $PY -c '
import json, sys
f = json.loads(sys.argv[1])["fit"]
assert 1 <= f["iterations"] <= 3 and not f["converged"], f
assert 0 < f["kl_mean"] <= f["start_kl_mean"], f
' "$out"
out=$("$AR" represent "$TMP/dir.npy" --head-size 4 --max-iter 0 --json)
check "--max-iter 0: the start" $PY -c '
import json, sys
f = json.loads(sys.argv[1])["fit"]
assert f["iterations"] == 0 and f["kl_mean"] <= f["start_kl_mean"], f
' "$out"
expect_error 2 "--max-iter: expected a non-negative integer, got '-1'" -- "$AR" represent "$TMP/dir.npy" --head-size 4 --max-iter -1
expect_error 2 "--max-iter: expected a non-negative integer, got '1.5'" -- "$AR" represent "$TMP/dir.npy" --head-size 4 --max-iter 1.5
expect_error 2 "--max-iter" -- "$AR" represent "$TMP/dir.npy" --head-size 4 --max-iter
# generic targets need n - 1; full-rank X works
expect 0 "minimal head size: 15" -- "$AR" represent "$TMP/dir.npy"
expect 0 "rank 16" -- "$AR" represent "$TMP/dir.npy" --X "$TMP/xfull.npy"
out=$("$AR" represent "$TMP/dir.npy" --X "$TMP/xfull.npy" --json)
check "full-rank X certificate" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["representable"] and r["certificate"]["head_size"] == 15 and r["certificate"]["d"] == 20
assert r["certificate"]["max_abs_error"] < 1e-9 and r["certificate"]["kl_max"] < 1e-9
' "$out"
# tolerances
expect 0 "minimal head size: 0" -- "$AR" represent "$TMP/dir.npy" --atol 1e6
expect 0 "rank threshold" -- "$AR" represent "$TMP/dir.npy" --rtol 1e-3

# smoothing says what it changed
expect_error 2 "is not positive" -- "$AR" represent "$TMP/zero.npy"
expect 0 "1 zero entries" -- "$AR" represent "$TMP/zero.npy" --smooth 1e-9
out=$("$AR" represent "$TMP/zero.npy" --smooth 1e-9 --head-size 3 --json)
check "smoothing json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["smoothing"]["zeros"] == 1 and r["smoothing"]["min_before"] == 0 and r["smoothing"]["eps"] == 1e-9
assert "fit" in r and r["representable"] is False
' "$out"

# bad inputs: one line on stderr, exit 2
expect_error 2 "sums to" -- "$AR" represent "$TMP/badsum.npy"
expect 0 "minimal head size" -- "$AR" represent "$TMP/badsum.npy" --sum-tol 0.01
expect_error 2 "row 0 sums to" -- "$AR" represent "$TMP/dir.npy" --axis row
expect_error 2 "non-finite" -- "$AR" represent "$TMP/nan.npy"
expect_error 2 "must be a square" -- "$AR" represent "$TMP/rect.npy"
expect 0 "a stack of 2 maps" -- "$AR" represent "$TMP/stack.npy"
expect_error 2 "a stack of 2 maps: --weights-out and --X take a single map" -- "$AR" represent "$TMP/stack.npy" --weights-out "$TMP/nope"
expect_error 2 "X must be d x n with n = 16" -- "$AR" represent "$TMP/dir.npy" --X "$TMP/xbadcols.npy"
expect_error 2 "--axis: expected col, row or auto" -- "$AR" represent "$TMP/dir.npy" --axis diag
expect_error 2 "--smooth: must be in [0, 1)" -- "$AR" represent "$TMP/dir.npy" --smooth -1
expect_error 2 "--rtol: must be >= 0" -- "$AR" represent "$TMP/dir.npy" --rtol -1
expect_error 2 "needs the matrix file" -- "$AR" represent
expect_error 2 "missing.npy" -- "$AR" represent "$TMP/missing.npy"
expect_error 2 "unexpected argument" -- "$AR" represent "$TMP/dir.npy" "$TMP/dir.npy"

# ---------------------------------------------------------------- represent --mask: fit under the mask
# A generic causal map (columns as queries) needs floor(n/2) = 8; head size 2
# gets the logit-space lower bound and a probability-space fit under the mask
# (docs/theory/masked-attention.md).
$PY -c '
import numpy as np, sys
rng = np.random.default_rng(21); n = 16
S = rng.standard_normal((n, n)); M = np.tril(np.ones((n, n), bool))
E = np.where(M, np.exp(S - np.where(M, S, -np.inf).max(1, keepdims=True)), 0.0)
np.save(sys.argv[1] + "/causal16.npy", np.ascontiguousarray((E / E.sum(1, keepdims=True)).T))
' "$TMP"
out=$("$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --seed 3 --json)
check "masked fit json" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["representable"] is False and r["min_head_size"] == 8 and r["head_size"] == 2
assert r["logit_error_lower"] > 0
f = r["fit"]
assert f["head_size"] == 2 and f["seed"] == 3 and 0 < f["iterations"] <= 400, f
assert 0 < f["kl_mean"] <= f["start_kl_mean"] and f["kl_max"] >= f["kl_mean"], f
assert 0 < f["max_abs_error"] < 1 and f["fro_error"] > 0, f
' "$out"
expect 1 "best probability-space fit found under the mask (L-BFGS, seed 3" -- \
  "$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --seed 3
# the same limits under the mask
out=$("$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --no-fit --json)
check "masked --no-fit: no fit in the JSON" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["representable"] is False and "fit" not in r and r["fit_skipped"] == "--no-fit", r
assert r["logit_error_lower"] > 0
' "$out"
expect 1 "probability-space fit skipped: --no-fit" -- "$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --no-fit
out=$("$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --max-iter 3 --json)
check "masked --max-iter 3: at most 3 iterations" $PY -c '
import json, sys
f = json.loads(sys.argv[1])["fit"]
assert 1 <= f["iterations"] <= 3 and 0 < f["kl_mean"] <= f["start_kl_mean"], f
' "$out"
expect_error 2 "--max-iter: expected a non-negative integer, got '-1'" -- "$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --max-iter -1
expect_error 2 "--max-iter: expected a non-negative integer, got '1.5'" -- "$AR" represent "$TMP/causal16.npy" --mask causal --head-size 2 --max-iter 1.5
# a stack does not fit: the flags are accepted
expect 0 "a stack of 2 maps" -- "$AR" represent "$TMP/stack.npy" --no-fit --max-iter 5
out=$("$AR" represent "$TMP/causal16.npy" --mask causal --head-size 8 --json)
check "no fit when representable" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); assert r["representable"] is True and "fit" not in r
' "$out"

# ---- sums of maps stored in low precision (docs/theory/low-rank-bottleneck.md, sec. 2) ----
$PY - "$TMP" <<'EOF2'
import numpy as np, sys
d = sys.argv[1]
def bf16(a):
    """Round float64 to bfloat16 (nearest, ties to even), kept as float32."""
    b = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32)
rng = np.random.default_rng(23)
for n in (64, 256, 1024):
    S = rng.standard_normal((n, n)) * 3
    E = np.exp(S - S.max(1, keepdims=True)); P = E / E.sum(1, keepdims=True)
    np.save(f"{d}/bf16_{n}.npy", bf16(P))
    for name, scale in (("low", 0.9), ("high", 1.1)):
        np.save(f"{d}/bf16_{name}_{n}.npy", bf16(P * scale))
    E1 = np.exp(S / 3); P1 = E1 / E1.sum(1, keepdims=True)   # no float16 underflow
    if n < 1024:
        np.save(f"{d}/f16_{n}.npy", P1.astype(np.float16))
    np.save(f"{d}/f32_off_{n}.npy", (P * (1 + 3e-3)).astype(np.float32))
np.save(f"{d}/bf16_uniform.npy", bf16(np.full((1000, 1000), 1e-3)))   # every entry rounds down
np.save(f"{d}/f16_colstoch.npy", P1.T.astype(np.float16))
EOF2
# honest roundings pass (n = 1024 and beyond: tests/test_bottleneck.c); rows
# scaled to 0.9 or 1.1 are refused
for n in 64 256; do
  expect 0 "SUFFICES" -- "$AR" softmax-bottleneck "$TMP/bf16_$n.npy" --d $n --precision bfloat16 --no-fit
  expect 0 "minimal head size" -- "$AR" represent "$TMP/bf16_$n.npy" --axis row --precision bfloat16 --head-size $((n - 1)) --no-fit
  expect 0 "minimal head size" -- "$AR" represent "$TMP/f16_$n.npy" --axis row --head-size $((n - 1)) --no-fit
done
# n = 1024 is a scale check: skipped under valgrind (scripts/sanitize sets AR_VALGRIND)
sizes="64 256 1024"
[ -n "${AR_VALGRIND:-}" ] && sizes="64 256"
for n in $sizes; do
  for s in low high; do
    expect_error 2 "row 0 sums to" -- "$AR" represent "$TMP/bf16_${s}_$n.npy" --axis row --precision bfloat16
    expect_error 2 "not row-stochastic, and its columns do not sum to 1 either: check --axis" -- "$AR" represent "$TMP/bf16_${s}_$n.npy" --axis row --precision bfloat16
    expect_error 2 "row 0 sums to" -- "$AR" softmax-bottleneck "$TMP/bf16_${s}_$n.npy" --d 4 --precision bfloat16
  done
  # a float32 map off by a bfloat16-sized amount is not told to claim bfloat16
  expect_error 2 "not row-stochastic, and its columns do not sum to 1 either" -- "$AR" represent "$TMP/f32_off_$n.npy" --axis row
done
check "no hint advises --precision for a real defect" bash -c '! "$1" represent "$2" --axis row 2>&1 | grep -q -- --precision' _ "$AR" "$TMP/f32_off_256.npy"
# bfloat16 values in a float32 file: their rounding is the truth, the hint says so
expect_error 2 "within bfloat16 rounding, and every entry is a bfloat16 value: stored in bfloat16? give --precision bfloat16" -- "$AR" represent "$TMP/bf16_uniform.npy" --axis row
expect 0 "minimal head size" -- "$AR" represent "$TMP/bf16_uniform.npy" --axis row --precision bfloat16 --no-fit
# the other axis sums to 1: say so
expect_error 2 "not row-stochastic, but every column sums to 1: the map is column-stochastic; give --axis col" -- "$AR" represent "$TMP/f16_colstoch.npy" --axis row

# ---- --axis auto: the axis read from the sums (stored float16 maps too) ----
$PY - "$TMP" <<'EOF2'
import numpy as np, sys
d = sys.argv[1]
rng = np.random.default_rng(31)
S = rng.standard_normal((3, 6, 6))
E = np.exp(S); P = E / E.sum(2, keepdims=True)            # rows are queries
np.save(f"{d}/auto_stack_rows.npy", P)
np.save(f"{d}/auto_stack_mixed.npy", np.stack([P[0], P[1], P[2].T]))
np.save(f"{d}/auto_uniform.npy", np.full((5, 5), 0.2))     # doubly stochastic
np.save(f"{d}/auto_neither.npy", np.full((3, 3), 0.5))
np.save(f"{d}/auto_one.npy", np.ones((1, 1)))
EOF2
expect 0 '"axis": "row"' -- "$AR" represent "$TMP/f16_64.npy" --axis auto --no-fit --json
expect 0 '"axis": "col"' -- "$AR" represent "$TMP/f16_colstoch.npy" --axis auto --no-fit --json
expect 0 "stochastic (--axis row)" -- "$AR" represent "$TMP/f16_64.npy" --axis auto --no-fit
expect 0 '"axis": "row"' -- "$AR" represent "$TMP/auto_stack_rows.npy" --axis auto --json
expect 0 '"axis": "col"' -- "$AR" represent "$TMP/auto_one.npy" --axis auto --json
expect_error 2 "rows and columns both sum to 1 (a doubly stochastic map, symmetric or a permutation, say): the layout cannot be read from the sums; give --axis row (PyTorch layout, rows are queries) or --axis col" -- "$AR" represent "$TMP/auto_uniform.npy" --axis auto
expect_error 2 "neither the rows nor the columns sum to 1 (row 0 sums to 1.5, column 0 to 1.5" -- "$AR" represent "$TMP/auto_neither.npy" --axis auto
expect_error 2 "slice 0 is only row-stochastic but slice 2 only column-stochastic" -- "$AR" represent "$TMP/auto_stack_mixed.npy" --axis auto
expect_error 2 "--axis: expected col, row or auto, got 'rows'" -- "$AR" represent "$TMP/auto_one.npy" --axis rows
# the default stays col: a row map is refused with the axis hint
expect_error 2 "give --axis row" -- "$AR" represent "$TMP/f16_64.npy"
expect_error 2 "--axis auto reads the axis from a map's sums" -- "$AR" spectrum --random-attention --n 4 --d 4 --heads 1 --of scores --axis auto

finish
