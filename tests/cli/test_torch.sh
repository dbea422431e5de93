#!/usr/bin/env bash
# Certificates in PyTorch's layout, checked by PyTorch itself: a causal map
# made by nn.MultiheadAttention, analysed by `represent --axis row --mask
# auto`, and the written W_q, W_k loaded as the q and k blocks of a fresh
# layer's in_proj_weight reproduce the map's attention weights
# (docs/theory/masked-attention.md, sec. 1).  Stacks from a batch x heads
# forward pass (average_attn_weights=False) are analysed per slice.
source "$(dirname "$0")/lib.sh"
# scripts/test installs python3-torch; a bare `meson test` without it skips.
if ! $PY -c 'import torch' 2>/dev/null; then echo "torch is not installed: skipped"; exit 77; fi

$PY - "$TMP" <<'EOF'
import sys, numpy as np, torch
d = sys.argv[1]
torch.manual_seed(0)
n, E, H = 32, 32, 4                       # head size 8 per head
mha = torch.nn.MultiheadAttention(E, H, bias=False, batch_first=True).double()
x = torch.randn(1, n, E, dtype=torch.float64)
causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)   # True = not allowed
with torch.no_grad():
    _, w = mha(x, x, x, attn_mask=causal, need_weights=True, average_attn_weights=False)
np.save(d + "/heads.npy", w.numpy())              # 1 x 4 x n x n, rows as queries
np.save(d + "/head0.npy", w[0, 0].numpy())
np.save(d + "/x.npy", x[0].numpy().T.copy())      # X = d x n, tokens as columns
EOF

# One head of size 8 on inputs of width 32: the minimal head size is 8.
expect 0 "minimal head size: 8 (exact" -- "$AR" represent "$TMP/head0.npy" --axis row --mask auto
# Certificates padded to the layer's width (zero rows, scale sqrt(E)) so they
# load into a single-head layer of width E: with X = I (E = n) and on x.
expect 0 "W_q, W_k are 32 x 32" -- "$AR" represent "$TMP/head0.npy" --axis row --mask auto --head-size 32 --weights-out "$TMP/eye"
expect 0 "W_q, W_k are 32 x 32" -- "$AR" represent "$TMP/head0.npy" --axis row --mask causal --X "$TMP/x.npy" --head-size 32 --weights-out "$TMP/onx"
check "PyTorch reproduces the map from the certificate" $PY - "$TMP" <<'EOF'
import sys, numpy as np, torch
d = sys.argv[1]
P = np.load(d + "/head0.npy"); n = P.shape[0]
causal = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
def attention(prefix, tokens, swap=False):
    wq, wk = np.load(d + "/" + prefix + "_wq.npy"), np.load(d + "/" + prefix + "_wk.npy")
    if swap:
        wq, wk = wk, wq
    E = wq.shape[1]
    layer = torch.nn.MultiheadAttention(E, 1, bias=False, batch_first=True).double()
    with torch.no_grad():
        layer.in_proj_weight[:E] = torch.from_numpy(wq)        # q block
        layer.in_proj_weight[E:2 * E] = torch.from_numpy(wk)   # k block
        t = torch.from_numpy(tokens)[None]
        _, w = layer(t, t, t, attn_mask=causal, need_weights=True)
    return w[0].numpy()
eye = np.eye(n); x = np.load(d + "/x.npy").T.copy()
for prefix, tokens in (("eye", eye), ("onx", x)):
    err = np.abs(attention(prefix, tokens) - P).max()
    assert err < 1e-9, (prefix, err)
    bad = np.abs(attention(prefix, tokens, swap=True) - P).max()
    assert bad > 1e-3, (prefix, bad)                           # the roles matter
EOF
out=$("$AR" represent "$TMP/heads.npy" --axis row --mask auto --json)
check "a batch x heads stack from PyTorch: every head needs 8" $PY -c '
import json, sys; r = json.loads(sys.argv[1])
assert [s["index"] for s in r["slices"]] == [[0, h] for h in range(4)]
assert all(s["mask"] == "causal" and s["min_head_size"] == 8 for s in r["slices"])
assert r["summary"]["max_min_head_size"] == 8
' "$out"
finish
