#!/usr/bin/env bash
# CLI tests of `attnrank circuits` on models written by
# tests/tools/make_safetensors.py (BERT F32, GPT-2 fused F16, LLaMA
# grouped-query BF16): the scores against numpy's dense products, the
# selections, the outputs, and one stderr line with exit 2 on bad input.
source "$(dirname "$0")/lib.sh"
GEN="$(dirname "$0")/../tools/make_safetensors.py"
M="$TMP/models"
$PY "$GEN" "$M/bert" --family bert --layers 2 --heads 4 --d 32 --dtype F32 >/dev/null
$PY "$GEN" "$M/gpt2" --family gpt2 --layers 2 --heads 4 --d 32 --dtype F16 >/dev/null
$PY "$GEN" "$M/llama" --family llama --layers 3 --heads 4 --kv-heads 2 --d 32 --dtype BF16 >/dev/null

expect 0 "OV copying scores" -- "$AR" --help
expect 0 "--composition q,k,v" -- "$AR" circuits --help
expect 0 "raw stored weights" -- "$AR" circuits "$M/bert"

# The tensors as stored, read independently of attnrank: get(path, name)
# (by suffix) and one head's dense factors (column convention).
cat >"$TMP/stored.py" <<'PY'
import json, struct, numpy as np
def get(path, name, required=True):
    raw = open(path + "/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]; hdr = json.loads(raw[8:8 + n]); base = 8 + n
    for k, t in hdr.items():
        if k.endswith(name):
            a, b = t["data_offsets"]; buf = raw[base + a:base + b]
            if t["dtype"] == "BF16":
                u = np.frombuffer(buf, np.uint16).astype(np.uint32) << 16
                return u.view(np.float32).astype(np.float64).reshape(t["shape"])
            return np.frombuffer(buf, {"F32": np.float32, "F16": np.float16}[t["dtype"]]).astype(np.float64).reshape(t["shape"])
    if required:
        raise KeyError(name)
    return None
def factors(path, fam, out, l, h):
    d, H, kv, dh = out["d"], out["heads"], out["kv_heads"], out["head_size"]
    g = h // (H // kv)
    if fam == "gpt2":
        W = get(path, f"h.{l}.attn.c_attn.weight"); O = get(path, f"h.{l}.attn.c_proj.weight")
        q, k, v = W[:, h*dh:(h+1)*dh].T, W[:, d+g*dh:d+(g+1)*dh].T, W[:, 2*d+g*dh:2*d+(g+1)*dh].T
        return q, k, v, O[h*dh:(h+1)*dh, :].T
    names = {"bert": ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"),
             "llama": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj")}[fam]
    pre = "layer." if fam == "bert" else "layers."
    Q, K, V, O = (get(path, f"{pre}{l}.{nm}.weight") for nm in names)
    return Q[h*dh:(h+1)*dh], K[g*dh:(g+1)*dh], V[g*dh:(g+1)*dh], O[:, h*dh:(h+1)*dh]
def close(a, b, what, tol=1e-10):
    assert abs(a - b) <= tol * max(1.0, abs(b)), (what, a, b)
PY

# Every score equals the dense numpy route (form W_O W_V, then eig/svd) to
# 1e-10, per family, with the tensor layouts read independently here.
dense_check() { # FAMILY
  "$AR" circuits "$M/$1" --ov --composition q,k,v --json >"$TMP/$1.json" || return 1
  PYTHONPATH="$TMP" $PY - "$M/$1" "$TMP/$1.json" "$1" <<'PY'
import json, sys, numpy as np
from stored import factors, close
path, out, fam = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
d, H = out["d"], out["heads"]
circ = {}
for e in out["circuit_heads"]:
    q, k, v, o = factors(path, fam, out, e["layer"], e["head"])
    M = o @ v; circ[(e["layer"], e["head"])] = (M, q.T @ k)
    lam = np.linalg.eigvals(v @ o); sv = np.linalg.svd(M, compute_uv=False)
    S = (M + M.T) / 2; tr = np.trace(M)
    c = e["copying"]
    close(c["s_eig"], lam.real.sum() / abs(lam).sum(), "s_eig")
    close(c["s_nuc"], tr / sv.sum(), "s_nuc")
    close(c["s_sym"], tr / abs(np.linalg.eigvalsh(S)).sum(), "s_sym")
    close(c["trace"], tr, "trace")
    assert c["sign_certain"] == (abs(tr) > c["trace_bound"])
    for a, b in zip(e["ov_singular_values"], sv): close(a, b, "sv")
fro = np.linalg.norm
for p in out["composition"]["pairs"]:
    M1 = circ[(p["from_layer"], p["from_head"])][0]
    OV2, QK2 = circ[(p["to_layer"], p["to_head"])]
    M2 = {"q": QK2.T, "k": QK2, "v": OV2}[p["mode"]]
    close(p["score"], fro(M2 @ M1) / (fro(M2) * fro(M1)), "composition " + p["mode"])
    close(p["scaled"], p["score"] * np.sqrt(d), "scaled")
assert len(out["composition"]["pairs"]) == 3 * H * H * (len(out["layers"]) * (len(out["layers"]) - 1) // 2)
PY
}
for fam in bert gpt2 llama; do check "$fam: scores equal the dense products" dense_check "$fam"; done

# Full OV circuits U W_O W_V E (V x V) against the dense product to 1e-12
# relative: tied (GPT-2 wte, BERT word_embeddings) and untied (LLaMA lm_head).
$PY "$GEN" "$M/gpt2t" --family gpt2 --layers 2 --heads 4 --d 16 --vocab 48 --embed tied --dtype F32 >/dev/null
$PY "$GEN" "$M/llamau" --family llama --layers 2 --heads 4 --kv-heads 2 --d 16 --vocab 48 --embed untied --dtype BF16 >/dev/null
full_check() { # MODEL FAMILY UNEMBEDDING
  "$AR" circuits "$M/$1" --full --json >"$TMP/$1.full.json" || return 1
  "$AR" circuits "$M/$1" --full --csv "$TMP/$1.full.csv" || return 1
  PYTHONPATH="$TMP" $PY - "$M/$1" "$TMP/$1.full.json" "$2" "$3" "$TMP/$1.full.csv" <<'PY'
import csv, json, sys, numpy as np
from stored import get, factors, close
path, out, fam, unemb = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
rows = list(csv.DictReader(open(sys.argv[5])))
fc = out["full_circuits"]
assert fc["unembedding"] == unemb and fc["embedding"].endswith(("wte.weight", "embed_tokens.weight", "word_embeddings.weight")), fc
we = get(path, fc["embedding"]); wu = we if unemb == "tied" else get(path, "lm_head.weight")
assert fc["vocab"] == we.shape[0]
for e, row in zip(out["circuit_heads"], rows):
    q, k, v, o = factors(path, fam, out, e["layer"], e["head"])
    f = wu @ o @ v @ we.T
    lam = np.linalg.eigvals(f); lam = lam[abs(lam) > 1e-9 * abs(lam).max()]
    tr = np.trace(f); sv = np.linalg.svd(f, compute_uv=False)
    c = e["full_copying"]
    close(c["s_eig"], lam.real.sum() / abs(lam).sum(), "s_eig", 1e-12)
    close(c["s_nuc"], tr / sv.sum(), "s_nuc", 1e-12)
    close(c["s_sym"], tr / abs(np.linalg.eigvalsh((f + f.T) / 2)).sum(), "s_sym", 1e-12)
    close(c["trace"], tr, "trace", 1e-12)
    close(c["nuclear_norm"], sv.sum(), "nuclear norm", 1e-12)
    assert c["trace_bound"] is None and c["z_eig"] is None and not c["sign_certain"]
    assert (int(row["layer"]), int(row["head"])) == (e["layer"], e["head"])
    for key in ("s_eig", "s_nuc", "s_sym", "trace"):
        assert float(row["full_" + key]) == c[key], (key, row)
PY
}
# V = 1100 spans three row blocks of the Gram route; V = 8 < d takes the QR route
$PY "$GEN" "$M/gpt2big" --family gpt2 --layers 1 --heads 2 --d 16 --vocab 1100 --embed untied --dtype F16 >/dev/null
$PY "$GEN" "$M/llamasmall" --family llama --layers 1 --heads 4 --kv-heads 2 --d 16 --vocab 8 --embed tied --dtype F32 >/dev/null
check "gpt2, untied, V 1100: full circuits equal the dense products" full_check gpt2big gpt2 lm_head.weight
check "llama, tied, V 8 < d: full circuits equal the dense products" full_check llamasmall llama tied
check "gpt2, tied: full circuits equal the dense products" full_check gpt2t gpt2 tied
check "llama, untied: full circuits equal the dense products" full_check llamau llama lm_head.weight
check "bert, tied: full circuits equal the dense products" full_check bert bert tied
expect 0 "unembedding tied, V = 48" -- "$AR" circuits "$M/gpt2t" --full
expect 0 "f_eig" -- "$AR" circuits "$M/gpt2t" --full --head-range 0
expect_error 2 "full circuits need the token embedding" -- "$AR" circuits "$M/gpt2" --full

# --tl: TransformerLens's preprocessing applied here to the dense matrices
# (P = I - 11^T/d, P_V over the vocabulary): GPT-2 (LayerNorm: fold and
# centre) and LLaMA (RMSNorm: fold; the unembedding centred over V only).
$PY "$GEN" "$M/gpt2n" --family gpt2 --layers 2 --heads 4 --d 16 --vocab 48 --embed tied --norms --dtype F32 >/dev/null
$PY "$GEN" "$M/llaman" --family llama --layers 2 --heads 4 --kv-heads 2 --d 16 --vocab 48 --embed untied --norms --dtype BF16 >/dev/null
tl_check() { # MODEL FAMILY
  "$AR" circuits "$M/$1" --tl --ov --full --qk --composition q,k,v --json >"$TMP/$1.tl.json" || return 1
  PYTHONPATH="$TMP" $PY - "$M/$1" "$TMP/$1.tl.json" "$2" <<'PY'
import json, sys, numpy as np
from stored import get, factors, close
path, out, fam = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
d = out["d"]; ln = fam == "gpt2"
assert out["weight_preprocessing"] == "tl" and out["weights_centred"] == ln
P = np.eye(d) - np.ones((d, d)) / d
def gain(l):
    return get(path, f"h.{l}.ln_1.weight" if ln else f"layers.{l}.input_layernorm.weight")
we = get(path, out["full_circuits"]["embedding"])
wu = we if out["full_circuits"]["unembedding"] == "tied" else get(path, "lm_head.weight")
gf = get(path, "ln_f.weight" if ln else "model.norm.weight")
V = we.shape[0]; PV = np.eye(V) - np.ones((V, V)) / V
U = PV @ wu @ np.diag(gf) @ (P if ln else np.eye(d))
E = ((we @ P) if ln else we).T
circ = {}
for e in out["circuit_heads"]:
    q, k, v, o = factors(path, fam, out, e["layer"], e["head"])
    G = np.diag(gain(e["layer"])) @ (P if ln else np.eye(d))
    q, k, v = q @ G, k @ G, v @ G
    if ln: o = P @ o
    M = o @ v; circ[(e["layer"], e["head"])] = (M, q.T @ k)
    lam = np.linalg.eigvals(v @ o); tr = np.trace(M)
    c = e["copying"]
    close(c["s_eig"], lam.real.sum() / abs(lam).sum(), "s_eig", 1e-12)
    close(c["s_nuc"], tr / np.linalg.svd(M, compute_uv=False).sum(), "s_nuc", 1e-12)
    close(c["s_sym"], tr / abs(np.linalg.eigvalsh((M + M.T) / 2)).sum(), "s_sym", 1e-12)
    assert c["trace_bound"] is None and not c["sign_certain"]
    for a, b in zip(e["qk"]["singular_values"], np.linalg.svd(q.T @ k, compute_uv=False)):
        close(a, b, "qk sv", 1e-12)
    f = U @ o @ v @ E
    lam = np.linalg.eigvals(f); lam = lam[abs(lam) > 1e-9 * abs(lam).max()]; tr = np.trace(f)
    c = e["full_copying"]
    close(c["s_eig"], lam.real.sum() / abs(lam).sum(), "full s_eig", 1e-12)
    close(c["s_nuc"], tr / np.linalg.svd(f, compute_uv=False).sum(), "full s_nuc", 1e-12)
    close(c["s_sym"], tr / abs(np.linalg.eigvalsh((f + f.T) / 2)).sum(), "full s_sym", 1e-12)
fro = np.linalg.norm
for p in out["composition"]["pairs"]:
    M1 = circ[(p["from_layer"], p["from_head"])][0]
    OV2, QK2 = circ[(p["to_layer"], p["to_head"])]
    M2 = {"q": QK2.T, "k": QK2, "v": OV2}[p["mode"]]
    close(p["score"], fro(M2 @ M1) / (fro(M2) * fro(M1)), "composition " + p["mode"], 1e-12)
PY
}
check "gpt2 --tl equals numpy's preprocessing of the dense matrices" tl_check gpt2n gpt2
check "llama --tl equals numpy's preprocessing of the dense matrices" tl_check llaman llama
expect 0 "TransformerLens preprocessing (--tl): LayerNorm" -- "$AR" circuits "$M/gpt2n" --tl
expect 0 "RMSNorm gains folded" -- "$AR" circuits "$M/llaman" --tl
expect_error 2 "BERT is post-LayerNorm" -- "$AR" circuits "$M/bert" --tl
expect_error 2 "needs the LayerNorm gain 'h.0.ln_1.weight'" -- "$AR" circuits "$M/gpt2t" --tl

check "llama kv groups" $PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["kv_heads"] == 2 and r["precision"] == "bfloat16" and r["weight_preprocessing"] == "raw"
assert [e["kv_head"] for e in r["circuit_heads"][:4]] == [0, 0, 1, 1]
' "$TMP/llama.json"

# selections and outputs
out=$("$AR" circuits "$M/llama" --layer-range 1-2 --head-range 2-3 --qk --json)
check "selection" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["layers"] == [1, 2] and [(e["layer"], e["head"]) for e in r["circuit_heads"]] == [(1, 2), (1, 3), (2, 2), (2, 3)]
assert "composition" not in r and "copying" not in r["circuit_heads"][0] and r["circuit_heads"][0]["qk"]["rank"] >= 1
' "$out"
expect 0 "" -- "$AR" circuits "$M/gpt2" --csv "$TMP/c.csv"
check "csv: header and one row per head" test "$(head -1 "$TMP/c.csv")" = \
  "layer,head,kv_head,precision,s_eig,s_nuc,s_sym,z_eig,z_nuc,z_sym,trace,trace_bound,sign_certain,ill_conditioned,qk_rank,full_s_eig,full_s_nuc,full_s_sym,full_trace,full_ill_conditioned"
check "csv rows" test "$(wc -l <"$TMP/c.csv")" -eq 9
expect 0 "v-composition, 16 pairs" -- "$AR" circuits "$M/bert" --composition v --top 2
expect 0 "qk_rank" -- "$AR" circuits "$M/bert" --qk --ov
a=$("$AR" circuits "$M/gpt2" --json --composition q,k,v --ov); b=$("$AR" circuits "$M/gpt2" --json --composition q,k,v --ov)
check "reruns are byte-identical" test "$a" = "$b"

# heat maps (gnuplot PNG) or a warning without gnuplot
if command -v gnuplot >/dev/null; then
  expect 0 "" -- "$AR" circuits "$M/llama" --composition q,k,v --heatmap "$TMP/copy.png" \
    --heatmap-composition "$TMP/comp.png"
  for f in copy comp; do
    check "$f heat map is a non-empty PNG" $PY -c 'import sys; b = open(sys.argv[1], "rb").read(); assert len(b) > 1000 and b[:8] == b"\x89PNG\r\n\x1a\n"' "$TMP/$f.png"
  done
  expect 0 "" -- "$AR" circuits "$M/gpt2t" --full --heatmap "$TMP/full.png" --heatmap-score full-sym
  check "full-circuit heat map" test -s "$TMP/full.png"
fi
out=$(PATH=/nonexistent "$AR" circuits "$M/bert" --heatmap "$TMP/none.png" 2>&1)
check "no gnuplot: warning" grep -q "gnuplot not found, heat map" <<<"$out"
check "no gnuplot: no file" test ! -e "$TMP/none.png"
check "no temp files left" test -z "$(ls "$TMP" | grep '\.tmp\.')"

# bad input: one line on stderr, exit 2
expect_error 2 "--heatmap-score: expected eig" -- "$AR" circuits "$M/bert" --heatmap "$TMP/x.png" --heatmap-score trace
expect_error 2 "needs --full" -- "$AR" circuits "$M/bert" --heatmap "$TMP/x.png" --heatmap-score full-eig
expect_error 2 "--heatmap-composition needs --composition" -- "$AR" circuits "$M/bert" --heatmap-composition "$TMP/x.png"
expect_error 2 "single quote" -- "$AR" circuits "$M/bert" --heatmap "$TMP/x'.png"
expect_error 2 "missing MODEL_DIR_OR_FILE" -- "$AR" circuits
expect_error 2 "--composition" -- "$AR" circuits "$M/bert" --composition q,x
expect_error 2 "--composition" -- "$AR" circuits "$M/bert" --composition q,q
expect_error 2 "--layer-range" -- "$AR" circuits "$M/bert" --layer-range 3-1
expect_error 2 "--head-range" -- "$AR" circuits "$M/bert" --head-range x
expect_error 2 "range 7-9" -- "$AR" circuits "$M/bert" --layer-range 7-9
expect_error 2 "heads 0-3" -- "$AR" circuits "$M/bert" --head-range 5-6
expect_error 2 "--precision" -- "$AR" circuits "$M/bert" --precision float8
expect_error 2 "cannot open" -- "$AR" circuits "$TMP/none"
expect_error 2 "heads" -- "$AR" circuits "$M/bert" --no-config
expect_error 2 "unknown option" -- "$AR" circuits "$M/bert" --bogus
finish
