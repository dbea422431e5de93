#!/usr/bin/env bash
# CLI tests of `attnrank represent --bias` (docs/theory/positional-bias.md):
# the issue's numbers at n = 8 (softmax(-0.5 |i - j|) needs 7 without the
# ALiBi bias of slope 0.5 and 0 with it), the causal ALiBi bias rank 1 and
# the symmetric n - 1, a planted rank-2 map with its bias, T5 buckets and a
# bias file, the certificate's forward check on S + B, and bad values.
source "$(dirname "$0")/lib.sh"

$PY - "$TMP" <<'PY'
import sys, numpy as np
d, n = sys.argv[1], 8
i = np.arange(n)
b = -0.5 * np.abs(i[:, None] - i[None, :])
p = np.exp(b); p /= p.sum(axis=0)
np.save(d + "/alibi8.npy", p)
np.save(d + "/b8.npy", b)
np.save(d + "/b7.npy", b[:7, :7])
# causal, rows as queries: -0.5 (q - k) on keys k <= q
c = np.where(i[None, :] <= i[:, None], -0.5 * (i[:, None] - i[None, :]), -np.inf)
pc = np.exp(c); pc /= pc.sum(axis=1, keepdims=True)
np.save(d + "/causal8.npy", pc)
# rank-2 logits plus the symmetric bias, columns as queries
rng = np.random.default_rng(5)
s = rng.standard_normal((n, 2)) @ rng.standard_normal((2, n)) + b
e = np.exp(s - s.max(axis=0)); np.save(d + "/planted8.npy", e / e.sum(axis=0))
np.save(d + "/t5.npy", rng.standard_normal(32))
np.save(d + "/stack.npy", np.stack([p, p]))
PY

expect 0 "minimal head size: 7" -- "$AR" represent "$TMP/alibi8.npy"
expect 0 "minimal head size: 0" -- "$AR" represent "$TMP/alibi8.npy" --bias alibi:0.5
expect 0 "bias rank 7; a head of size 0 with it reaches shifted logit rank at most 7" -- \
  "$AR" represent "$TMP/alibi8.npy" --bias alibi:0.5
out=$("$AR" represent "$TMP/alibi8.npy" --bias alibi:0.5 --json)
check "ALiBi 0.5 removes the whole map; its bias rank is n - 1" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); b = r["positional_bias"]
assert r["min_head_size"] == 0 and r["representable"] is True, r
assert b == {"kind": "alibi", "slope": 0.5, "bias_rank": 7, "bias_rank_lower": 7,
             "bias_rank_upper": 7, "reach": 7}, b
assert r["certificate"]["max_abs_error"] < 1e-12
' "$out"
out=$("$AR" represent "$TMP/causal8.npy" --axis row --mask causal --bias alibi-causal:0.5 --json)
check "causal ALiBi under the causal mask: bias rank 1, the map needs 0" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); b = r["positional_bias"]
assert r["min_head_size"] == 0 and r["status"] == "exact", r
assert b["kind"] == "alibi_causal" and b["bias_rank"] == 1 and b["reach"] == 1, b
assert r["certificate"]["max_abs_error"] < 1e-12
' "$out"
out=$("$AR" represent "$TMP/planted8.npy" --bias file:"$TMP/b8.npy" --json)
check "planted rank 2 with its bias: head size 2, softmax(S + B) reproduces P" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); b = r["positional_bias"]
assert r["min_head_size"] == 2 and r["representable"] is True, r
assert b["kind"] == "file" and b["source"].endswith("b8.npy") and b["reach"] == 7, b
assert r["certificate"]["max_abs_error"] < 1e-10 and r["certificate"]["kl_max"] < 1e-10
' "$out"
out=$("$AR" represent "$TMP/planted8.npy" --bias file:"$TMP/b8.npy" --head-size 1 --json)
check "below the size: logit error, no fit with a bias" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["representable"] is False and r["logit_error"] > 0, r
assert "fit" not in r and r["fit_skipped"] == "a bias is given (the fit takes none)", r
' "$out"
expect 1 "NOT representable with head size 1 < 2" -- "$AR" represent "$TMP/planted8.npy" --bias file:"$TMP/b8.npy" --head-size 1
out=$("$AR" represent "$TMP/alibi8.npy" --bias t5:"$TMP/t5.npy" --json)
check "T5 buckets: bias rank n - 1 (random bucket values)" $PY -c '
import json, sys
b = json.loads(sys.argv[1])["positional_bias"]
assert b["kind"] == "t5" and b["bias_rank"] == 7, b
' "$out"
check "--bias none is no bias: the output is the bias-free one" bash -c \
  'cmp <("$1" represent "$2" --json) <("$1" represent "$2" --bias none --json)' _ "$AR" "$TMP/alibi8.npy"

expect_error 2 "--bias: bias 'alibi:x': the ALiBi slope must be a finite number >= 0" -- "$AR" represent "$TMP/alibi8.npy" --bias alibi:x
expect_error 2 "--bias: unknown bias 'foo'" -- "$AR" represent "$TMP/alibi8.npy" --bias foo
expect_error 2 "must be n x n = 8 x 8, got 7 x 7" -- "$AR" represent "$TMP/alibi8.npy" --bias file:"$TMP/b7.npy"
expect_error 2 "T5 bucket values must be a vector, got 8 x 8" -- "$AR" represent "$TMP/alibi8.npy" --bias t5:"$TMP/b8.npy"
expect_error 2 "missing.npy" -- "$AR" represent "$TMP/alibi8.npy" --bias t5:"$TMP/missing.npy"
expect_error 2 "--bias takes a single map" -- "$AR" represent "$TMP/stack.npy" --bias alibi:0.5
finish
