#!/usr/bin/env bash
# Every key the CLI's JSON can emit is documented in docs/conventions.md.
# The keys are not listed by hand: every subcommand runs with --json on
# inputs that reach its optional sections (stacks, certificates, fits, bounds,
# exact ranks, several model families), and the object keys of all outputs
# are collected recursively.  A key counts as documented when it appears in
# backquotes in docs/conventions.md.
#   test_json_keys.sh PATH/TO/attnrank [--list]   (--list: print the keys)
source "$(dirname "$0")/lib.sh"
list_only=${2:-}
AR=$(readlink -f "$AR")   # the runs below change directory
here=$(cd "$(dirname "$0")/../.." && pwd)
doc="$here/docs/conventions.md"
out="$TMP/json"
mkdir -p "$out"

# Inputs: column-stochastic P (generic and planted rank 2), an X, a
# float32 batch x heads stack, a row-stochastic next-word matrix, points of
# the depth-width law, configurations, and three small model directories.
$PY - "$TMP" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(11)
def colsoftmax(s):
    e = np.exp(s - s.max(axis=0)); return e / e.sum(axis=0)
np.save(d + "/p.npy", colsoftmax(rng.standard_normal((6, 6))))
np.save(d + "/p_planted.npy", colsoftmax(rng.standard_normal((6, 2)) @ rng.standard_normal((2, 6))))
np.save(d + "/x.npy", rng.standard_normal((8, 6)))
z = colsoftmax(rng.standard_normal((6, 6))); z[0, 0] = 0; z[:, 0] /= z[:, 0].sum()
np.save(d + "/p_zero.npy", z)
np.save(d + "/x_thin.npy", rng.standard_normal((3, 6)))
att = rng.standard_normal((2, 3, 8, 8))
att = np.exp(att - att.max(axis=-1, keepdims=True)); att /= att.sum(axis=-1, keepdims=True)
np.save(d + "/stack.npy", att.astype(np.float32))
h, w = rng.standard_normal((5, 2)), rng.standard_normal((9, 2))
l = h @ w.T; p = np.exp(l - l.max(axis=1, keepdims=True)); p /= p.sum(axis=1, keepdims=True)
np.save(d + "/next.npy", p)
# row-stochastic masked maps (rows as queries): causal and a sliding window
n = 8
for name, allowed in (("causal", lambda i, j: j <= i), ("window", lambda i, j: i - 3 < j <= i),
                      ("prefix", lambda i, j: j < 2 or j <= i),
                      ("docs", lambda i, j: j <= i and i // 4 == j // 4),
                      ("sink", lambda i, j: j == 0 or i - 3 < j <= i)):
    m = np.array([[allowed(i, j) for j in range(n)] for i in range(n)])
    e = np.where(m, np.exp(rng.standard_normal((n, n))), 0.0)
    np.save(d + "/" + name + ".npy", e / e.sum(axis=1, keepdims=True))
PY
printf 'depth,width\n6,215\n12,300\n24,585\n48,2215\n' >"$TMP/points.csv"
printf 'depth,width,error\n6,215,5\n12,300,8\n24,585,20\n48,2215,60\n' >"$TMP/points_err.csv"
printf 'name,d,heads,n,layers,require\nbase,768,12,512,12,no-bottleneck;depth-efficient;near-optimal-allocation\n' >"$TMP/cfg.csv"
for fam in bert gpt2 llama; do
  extra=()
  [ "$fam" = llama ] && extra=(--kv-heads 2)
  $PY "$here/tests/tools/make_safetensors.py" "$TMP/$fam" --family "$fam" --layers 1 \
      --heads 4 --d 16 --dtype BF16 "${extra[@]}" >/dev/null
done

i=0
run_json() { # run_json ARGS...: record the JSON on stdout (exit 0 or 1)
  i=$((i + 1))
  local rc
  (cd "$TMP" && "$AR" "$@" --json) >"$out/$i.json" 2>"$out/$i.err"; rc=$?
  checks=$((checks + 1))
  if [ "$rc" -gt 1 ] || ! $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/$i.json" 2>/dev/null; then
    echo "FAIL: no JSON (exit $rc): attnrank $* --json"; head -3 "$out/$i.err"
    failures=$((failures + 1))
  fi
}

run_json spectrum p.npy
run_json spectrum stack.npy
run_json spectrum --random-attention --n 8 --d 16 --heads 2
run_json spectrum --random-attention --n 8 --d 16 --heads 2 --of scores --head-size 4
run_json heads --d 64 --heads 4 --n 32 --samples 1
run_json heads --d 64 --heads 1 --n 32 --samples 1
run_json params --d 512 --heads 8
run_json params --paper-tables
run_json represent p.npy
run_json represent p.npy --head-size 2 --weights-out "$TMP/cert"
run_json represent p_planted.npy --X x.npy --head-size 3
run_json represent p.npy --X x_thin.npy
run_json represent p_zero.npy --smooth 1e-9
run_json represent causal.npy --mask causal --axis row
run_json represent causal.npy --mask auto --axis row --head-size 2
run_json represent window.npy --mask window:3 --axis row
run_json represent prefix.npy --mask prefix:2 --axis row
run_json represent docs.npy --mask docs:4/4 --axis row
run_json represent sink.npy --mask sink:1+window:3 --axis row
run_json represent p.npy --bias alibi:0.5
run_json represent causal.npy --mask causal --axis row --bias alibi-causal:0.25
run_json softmax-bottleneck next.npy --d 1
run_json softmax-bottleneck next.npy --d 2 --bias --no-fit
for fam in bert gpt2 llama; do run_json weights "$fam" --n 8; done
$PY "$here/tests/tools/make_safetensors.py" "$TMP/t5bias" --family bert --layers 1 --heads 2 \
    --d 8 --max-positions 16 --t5-bias >/dev/null
run_json weights t5bias
for fam in bert gpt2 llama; do run_json circuits "$fam" --ov --qk --composition q,k,v; done
run_json circuits bert --full
$PY "$here/tests/tools/make_safetensors.py" "$TMP/gpt2n" --family gpt2 --layers 1 --heads 4 \
    --d 16 --embed tied --norms >/dev/null
run_json circuits gpt2n --tl --full
run_json seprank --layers 1 --d 2 --n 2 --exact
run_json seprank --layers 1 --d 2 --n 3 --exact --rational --residual
run_json seprank --layers 1 --d 4 --embed-rank 2 --vocab 3 --positions --exact
run_json depthwidth --params 175e9
run_json depthwidth --layers 96 --d 12288
run_json depthwidth --layers 12
run_json depthwidth --d 768
run_json depthwidth --layers 12 --d 768 --embed-rank 128
run_json depthwidth --fit points.csv
run_json depthwidth --fit points_err.csv --params 1e9
run_json collapse --layers 3 --n 8 --d 8 --heads 2 --gamma 1 --beta 1
run_json collapse --layers 3 --n 8 --d 8 --heads 2 --skip --mlp
run_json check --d 768 --heads 12 --n 512 --layers 12 --require no-bottleneck,depth-efficient,near-optimal-allocation
run_json check --configs cfg.csv
printf '{"model_type": "gemma2", "hidden_size": 3584, "num_attention_heads": 16, "head_dim": 256, "num_hidden_layers": 42, "max_position_embeddings": 8192, "sliding_window": 4096}' >"$TMP/gemma2.json"
run_json heads --config gemma2.json
printf '{"model_type": "bloom", "n_head": 4, "hidden_size": 64, "seq_length": 32}' >"$TMP/bloom.json"
run_json heads --config bloom.json --n 32 --samples 0
run_json check --config bloom.json --n 32 --require no-bottleneck
$PY -c 'import numpy as np; np.save("'"$TMP"'/stack.npy", np.random.default_rng(1).dirichlet(np.ones(6), size=(2, 6)))'
run_json represent stack.npy --axis row --head-size 3
run_json heads --mask causal --d 768 --heads 12 --n 1024
run_json check --config gemma2.json --require no-bottleneck
run_json check --mask window:16 --d 4096 --heads 32 --n 4096 --require no-bottleneck --strict
run_json check --d 768 --layers 12 --require depth-efficient --fit points.csv
run_json verify --quick --timings

# All object keys, recursively, one per line.
keys=$($PY - "$out" <<'PY'
import json, os, sys
keys = set()
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            keys.add(k); walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
for name in os.listdir(sys.argv[1]):
    if name.endswith(".json"):
        try:
            walk(json.load(open(os.path.join(sys.argv[1], name))))
        except ValueError:
            pass
print("\n".join(sorted(keys)))
PY
)
if [ "$list_only" = --list ]; then printf '%s\n' "$keys"; [ -n "${AR_KEEP_JSON:-}" ] && cp -r "$out" "$AR_KEEP_JSON"; exit 0; fi

nkeys=$(printf '%s\n' "$keys" | grep -c .)
check "collected a plausible number of keys ($nkeys)" test "$nkeys" -ge 100
check "docs/conventions.md exists" test -f "$doc"
while IFS= read -r k; do
  [ -n "$k" ] || continue
  checks=$((checks + 1))
  if ! grep -qF -- "\`$k\`" "$doc"; then
    echo "FAIL: JSON key '$k' is not documented in docs/conventions.md"
    failures=$((failures + 1))
  fi
done <<<"$keys"
finish
