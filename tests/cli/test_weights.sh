#!/usr/bin/env bash
# CLI tests of `attnrank weights` on models written by
# tests/tools/make_safetensors.py (BERT, GPT-2 fused, LLaMA grouped-query and
# sharded; F32, F16, BF16) and on malformed files.
source "$(dirname "$0")/lib.sh"
GEN="$(dirname "$0")/../tools/make_safetensors.py"
M="$TMP/models"

$PY "$GEN" "$M/bert" --family bert --layers 3 --heads 4 --d 32 --dtype F32
$PY "$GEN" "$M/gpt2" --family gpt2 --layers 2 --heads 4 --d 32 --dtype F16 --max-positions 1024
$PY "$GEN" "$M/llama" --family llama --layers 3 --heads 8 --kv-heads 2 --d 64 --dtype BF16 --shards 3
$PY "$GEN" "$M/bare" --family bert --layers 2 --heads 2 --d 16 --no-config
$PY "$GEN" "$M/bad" --bad

expect 0 "QK-circuit spectra" -- "$AR" --help
expect 0 "--q-pattern" -- "$AR" weights --help

# ranks of every head equal the planted ones (expected.json), per family
ranks_match() { # MODEL_DIR JSON
  $PY -c '
import json, sys
exp = json.load(open(sys.argv[1] + "/expected.json"))["ranks"]
r = json.loads(sys.argv[2])
got = [[h["rank"] for h in l["heads"]] for l in r["layers"]]
first = r["layers"][0]["layer"]
assert got == exp[first:first + len(got)], (got, exp)
' "$1" "$2"
}

out=$("$AR" weights "$M/bert" --json)
check "bert ranks" ranks_match "$M/bert" "$out"
check "bert json fields" $PY -c '
import json, sys, math
r = json.loads(sys.argv[1])
assert r["family"] == "bert" and not r["fused"] and r["heads"] == 4 and r["head_size"] == 8
t = r["tolerance"]
assert t["precision"] == "float32" and t["unit_roundoff"] == 2.0**-24 and t["subnormal_abs"] == 2.0**-150
assert t["rule"] == "uniform-rounding-mc" and t["default_rule"] == t["rule"] and t["rtol"] is None
assert t["seed"] == 0 and t["draws"] == 4 and t["factor"] == 4.0 and "note" not in t
assert r["context"] == 512 and r["qk_biases_ignored"] and not r["rotary"]
v = r["verdicts"]["context"]
assert v["n"] == 512 and v["bottleneck"] and v["heads_bottlenecked"] == 12 and v["heads_total"] == 12
assert v["fixed_multihead"]["head_size"] == 512
assert r["verdicts"]["n"] is None
h = r["layers"][0]["heads"][1]
assert len(h["singular_values"]) == 8 and h["singular_values"][0] >= h["singular_values"][7]
# the default rule: rank above tau_default, certain rank above tau_cert >= tau_default
for l in r["layers"]:
    for h in l["heads"]:
        z = h["noise"]
        assert h["rule"] == "uniform-rounding-mc" and h["tolerance"]["threshold"] == h["tau_default"]
        assert h["rank"] == h["default_rank"] == sum(s > h["tau_default"] for s in h["singular_values"])
        assert h["certain_rank"] == sum(s > h["tau_cert"] for s in h["singular_values"])
        assert h["certain_rank"] <= h["default_rank"] and h["tau_default"] <= h["tau_cert"]
        assert z["draws"] == 4 and z["factor"] == 4.0 and z["draw_min"] <= z["draw_max"]
        assert h["tau_default"] == min(max(4 * z["draw_max"], z["arith_floor"]), h["tau_cert"])
        assert 0 < z["tail"] < 5, z                  # largest draw / (u sigma_1)
s = r["summary"]
assert s["certain_rank_max"] <= s["default_rank_max"] and s["default_rank_mean"] == s["rank_mean"]
' "$out"

out=$("$AR" weights "$M/gpt2" --json --n 4)
check "gpt2 fused ranks" ranks_match "$M/gpt2" "$out"
check "gpt2 f16 tolerance and --n verdict" $PY -c '
import json, sys, math
r = json.loads(sys.argv[1])
assert r["family"] == "gpt2" and r["fused"] and r["context"] == 1024
assert r["tolerance"]["unit_roundoff"] == 2.0**-11 and r["tolerance"]["subnormal_abs"] == 2.0**-25
assert r["tolerance"]["rule"] == "uniform-rounding-mc"
v = r["verdicts"]["n"]
# GPT-2 is a decoder: causal, so n = 4 needs floor(n/2) = 2 (not n - 1 = 3)
assert r["masks"]["mask_reason"].startswith("model_type gpt2: causal")
assert v["mask"]["kind"] == "causal" and v["needed_head_size"] == 2 and v["generic_status"] == "proved"
assert v["n"] == 4 and not v["bottleneck"]           # head size 8 >= 2
ranks = [h["rank"] for l in r["layers"] for h in l["heads"]]
assert v["heads_bottlenecked"] == sum(k < 2 for k in ranks)
for l in r["layers"]:
    for h in l["heads"]:
        assert h["reach_n"] == min(h["rank"], 2) and h["bottleneck_n"] == (h["rank"] < 2)
c = r["verdicts"]["context"]
assert c["n"] == 1024 and c["needed_head_size"] == 512 and c["bottleneck"]
' "$out"
out=$("$AR" weights "$M/gpt2" --json --n 4 --mask none)
check "weights --mask none: n - 1" $PY -c '
import json, sys; r = json.loads(sys.argv[1]); v = r["verdicts"]["n"]
assert v["mask"]["kind"] == "none" and v["needed_head_size"] == 3 and r["masks"]["mask_reason"] == "--mask"
' "$out"
expect 0 "mask causal (model_type gpt2: causal)" -- "$AR" weights "$M/gpt2" --n 4
expect_error 2 "documents fix n" -- "$AR" weights "$M/gpt2" --mask docs:2/2
expect_error 2 "needs an attention map" -- "$AR" weights "$M/gpt2" --mask auto

# F16 rounding puts a tail under every planted rank: float64's rule counts it
out=$("$AR" weights "$M/gpt2" --json --rtol 7.105427357601002e-15)
check "float64 rule calls F16 heads full rank" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert all(h["rank"] == 8 for l in r["layers"] for h in l["heads"])
assert r["tolerance"]["rule"] == "given" and "replace the default rule" in r["tolerance"]["note"]
assert r["tolerance"]["rtol"] == 7.105427357601002e-15
# both thresholds and ranks are still reported beside the given rule
exp = json.load(open(sys.argv[2] + "/expected.json"))["ranks"]
assert [[h["default_rank"] for h in l["heads"]] for l in r["layers"]] == exp
assert all(h["rule"] == "given" and h["certain_rank"] <= h["default_rank"] for l in r["layers"] for h in l["heads"])
' "$out" "$M/gpt2"
expect 0 "rank rule      given: rtol = 7.105e-15" -- "$AR" weights "$M/gpt2" --rtol 7.105427357601002e-15
expect 0 "replace the default rule uniform-rounding-mc" -- "$AR" weights "$M/gpt2" --atol 1e-3
out=$("$AR" weights "$M/gpt2" --json --atol 1e300)
check "--atol alone replaces the default rule" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["tolerance"]["rule"] == "given" and r["tolerance"]["rtol"] == 0.0
assert all(h["rank"] == 0 and h["default_rank"] > 0 for l in r["layers"] for h in l["heads"])
' "$out"

# the default rule's text report: rule, both thresholds, both ranks, seeds
expect 0 "rank rule      uniform-rounding-mc (default): cut tau_dflt = min(4 x the largest of 4 draws" -- "$AR" weights "$M/gpt2"
expect 0 "a_sub = 2^-25: singular values above it are certainly not storage rounding" -- "$AR" weights "$M/gpt2"
expect 0 "per head ar_seed_derive(9, layer, head) (--seed)" -- "$AR" weights "$M/gpt2" --seed 9
expect 0 " cert   tau_cert  dflt   tau_dflt                 seed" -- "$AR" weights "$M/gpt2"
expect 0 "certain/dflt   certain rank min" -- "$AR" weights "$M/gpt2"
out0=$("$AR" weights "$M/llama" --json)
out9=$("$AR" weights "$M/llama" --json --seed 9)
check "--seed: per-head seeds and draws change, ranks do not" $PY -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["tolerance"]["seed"] == 0 and b["tolerance"]["seed"] == 9
ha = [h for l in a["layers"] for h in l["heads"]]
hb = [h for l in b["layers"] for h in l["heads"]]
assert len({h["noise"]["seed"] for h in ha}) == len(ha)          # one seed per (layer, head)
assert all(x["noise"]["seed"] != y["noise"]["seed"] and x["noise"]["draw_max"] != y["noise"]["draw_max"] for x, y in zip(ha, hb))
assert all(x["tau_cert"] == y["tau_cert"] and x["rank"] == y["rank"] for x, y in zip(ha, hb))
' "$out0" "$out9"
check "same seed, same draws" test "$out0" = "$("$AR" weights "$M/llama" --json)"

out=$("$AR" weights "$M/llama" --json)
check "llama gqa sharded ranks" ranks_match "$M/llama" "$out"
check "llama gqa layout" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["family"] == "llama" and r["files"] == 3 and r["kv_heads"] == 2 and r["rotary"]
assert [h["kv_head"] for h in r["layers"][0]["heads"]] == [0, 0, 0, 0, 1, 1, 1, 1]
assert r["tolerance"]["precision"] == "bfloat16"
' "$out"
expect 0 "rotary position embeddings: analysed without rotation" -- "$AR" weights "$M/llama"
expect 0 "grouped-query: each serves 4 query heads" -- "$AR" weights "$M/llama"
expect 0 "model.safetensors.index.json" -- "$AR" weights "$M/llama/model.safetensors.index.json" --layer-range 2

# user patterns, layer ranges, a file named directly
out=$("$AR" weights "$M/llama" --json --q-pattern 'layers.{layer}.self_attn.q_proj.weight' \
  --k-pattern 'layers.{layer}.self_attn.k_proj.weight' --layer-range 1-2)
check "custom patterns + range" $PY -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["family"] == "custom" and [l["layer"] for l in r["layers"]] == [1, 2]
' "$out"
check "custom ranks" ranks_match "$M/llama" "$out"
expect 0 "3 found, 1 analysed (1-1)" -- "$AR" weights "$M/bert/model.safetensors" --layer-range 1
expect 0 "summary (12 heads = 3 layers x 4)" -- "$AR" weights "$M/bert"

# no config.json: the head count must be given; no context length known
expect_error 2 "give --heads" -- "$AR" weights "$M/bare"
expect_error 2 "give --heads" -- "$AR" weights "$M/bert" --no-config
expect 0 "no context length known: give --n N" -- "$AR" weights "$M/bare" --heads 2
expect 0 "at n = 100 (--n)" -- "$AR" weights "$M/bare" --heads 2 --n 100

# CSV (atomic), heat map (PNG) or a warning without gnuplot
expect 0 "" -- "$AR" weights "$M/bert" --csv "$TMP/heads.csv" --n 16
check "csv header" grep -q '^layer,head,kv_head,d,head_size,precision,rank,threshold' "$TMP/heads.csv"
check "csv rows" test "$(wc -l <"$TMP/heads.csv")" -eq 13
check "csv bottleneck columns filled" grep -q ',1$' "$TMP/heads.csv"
if command -v gnuplot >/dev/null; then
  expect 0 "summary" -- "$AR" weights "$M/llama" --heatmap "$TMP/heat.png"
  check "heat map is a PNG" $PY -c 'import sys; assert open(sys.argv[1], "rb").read(8) == b"\x89PNG\r\n\x1a\n"' "$TMP/heat.png"
  expect 0 "" -- "$AR" weights "$M/bert" --heatmap "$TMP/heat_rank.png" --heatmap-metric rank
  check "rank heat map" test -s "$TMP/heat_rank.png"
fi
out=$(PATH=/nonexistent "$AR" weights "$M/bert" --heatmap "$TMP/none.png" 2>&1)
check "no gnuplot: warning" grep -q "gnuplot not found, heat map" <<<"$out"
check "no gnuplot: no file" test ! -e "$TMP/none.png"
check "no temp files left" test -z "$(ls "$TMP" | grep '\.tmp\.')"

# a BERT-base-shaped model (12 layers x 12 heads, d = 768; F16 q/k/v/o) runs
# (a scale check: skipped under valgrind, scripts/sanitize sets AR_VALGRIND)
if [ -z "${AR_VALGRIND:-}" ]; then
$PY "$GEN" "$M/base" --family bert --layers 12 --heads 12 --d 768 --dtype F16
"$AR" weights "$M/base" --json >"$TMP/base.json"
check "bert-base ranks and 144 heads" $PY -c '
import json, sys
exp = json.load(open(sys.argv[1] + "/expected.json"))["ranks"]
r = json.load(open(sys.argv[2]))
assert [[h["rank"] for h in l["heads"]] for l in r["layers"]] == exp
assert r["summary"]["heads_total"] == 144 and r["d"] == 768 and r["head_size"] == 64
assert r["tolerance"]["precision"] == "float16"
' "$M/base" "$TMP/base.json"
fi

# bad input: one clear line, exit 2
B="$M/bad"
expect_error 2 "missing MODEL_DIR_OR_FILE" -- "$AR" weights
expect_error 2 "cannot open" -- "$AR" weights "$TMP/no-such-model"
expect_error 2 "3 bytes, too short" -- "$AR" weights "$B/st_short.safetensors"
expect_error 2 "runs past the end of the file" -- "$AR" weights "$B/st_header_past_eof.safetensors"
expect_error 2 "invalid JSON header" -- "$AR" weights "$B/st_invalid_json.safetensors"
expect_error 2 "JSON header is not an object" -- "$AR" weights "$B/st_not_object.safetensors"
expect_error 2 "duplicate object key" -- "$AR" weights "$B/st_duplicate_key.safetensors"
expect_error 2 "tensor 'w': unknown dtype 'F12'" -- "$AR" weights "$B/st_unknown_dtype.safetensors"
expect_error 2 "shape [2, 2] of F32 needs 16 bytes" -- "$AR" weights "$B/st_shape_mismatch.safetensors"
expect_error 2 "lie outside the data region" -- "$AR" weights "$B/st_offsets_outside.safetensors"
expect_error 2 "are reversed" -- "$AR" weights "$B/st_offsets_reversed.safetensors"
expect_error 2 "tensors 'a' [0, 16) and 'b' [8, 24) overlap" -- "$AR" weights "$B/st_overlap.safetensors"
expect_error 2 "truncated data" -- "$AR" weights "$B/st_truncated.safetensors"
expect_error 2 "no \"data_offsets\" key" -- "$AR" weights "$B/st_missing_offsets.safetensors"
expect_error 2 "non-finite weight inf at [1, 2]" -- "$AR" weights "$B/st_nonfinite.safetensors" --heads 2
expect_error 2 "non-finite weight nan at [3, 0]" -- "$AR" weights "$B/st_nan_bf16.safetensors" --heads 2
expect_error 2 "no attention query weights" -- "$AR" weights "$B/st_no_attention.safetensors"
expect_error 2 "dtype I64 is not a floating-point weight type" -- "$AR" weights "$B/st_int_query.safetensors" --heads 2
expect_error 2 "model-00001-of-00002.safetensors: cannot open" -- "$AR" weights "$B/st_missing_shard"
expect_error 2 "--layer-range: expected A-B" -- "$AR" weights "$M/bert" --layer-range 3-1
expect_error 2 "--layer-range: expected A-B" -- "$AR" weights "$M/bert" --layer-range x
expect_error 2 "selects none of the 3 layers (0-2)" -- "$AR" weights "$M/bert" --layer-range 5-9
expect_error 2 "--q-pattern and --k-pattern go together" -- "$AR" weights "$M/bert" --q-pattern 'a.{layer}'
expect_error 2 "{layer} placeholder" -- "$AR" weights "$M/bert" --q-pattern a --k-pattern b
expect_error 2 "has no key tensor" -- "$AR" weights "$M/bert" --q-pattern 'layer.{layer}.attention.self.query.weight' --k-pattern 'layer.{layer}.nokey'
expect_error 2 "--rtol: must be >= 0" -- "$AR" weights "$M/bert" --rtol -1
expect_error 2 "--heatmap-metric: expected rank" -- "$AR" weights "$M/bert" --heatmap-metric entropy
expect_error 2 "32 query rows do not split into 5 heads" -- "$AR" weights "$M/bert" --heads 5
expect_error 2 "unexpected argument" -- "$AR" weights "$M/bert" "$M/gpt2"
# positional biases (docs/theory/positional-bias.md): an ALiBi config on a
# causal GPT-2 model gives BLOOM's slopes and the proved causal rank 1, so
# the reach is head size + 1; T5 bucket values stored in the checkpoint give
# each head's computed rank (a constant head 0, Gaussian heads n - 1); a model
# without a bias reports no positional_bias at all.
$PY "$GEN" "$M/alibi" --family gpt2 --layers 1 --heads 4 --d 16 --max-positions 24 --alibi
$PY "$GEN" "$M/t5bias" --family bert --layers 1 --heads 3 --d 12 --max-positions 40 --t5-bias
out=$("$AR" weights "$M/alibi" --json)
check "alibi bias per head" $PY -c '
import json, sys
b = json.loads(sys.argv[1])["positional_bias"]
assert b["kind"] == "alibi" and b["n"] == 24 and b["head_size"] == 4, b
k = b["layer_kinds"][0]
assert k["causal"] and not k["bound_only"] and not k["values_read"]
assert [h["slope"] for h in k["heads"]] == [2.0 ** (-2 * (h + 1)) for h in range(4)]
assert all(h["bias_rank"] == 1 and h["reach"] == 5 and h["proved"] for h in k["heads"])
' "$out"
out=$("$AR" weights "$M/t5bias" --json)
check "t5 bias from the stored buckets" $PY -c '
import json, sys
b = json.loads(sys.argv[1])["positional_bias"]
assert b["kind"] == "t5" and b["buckets"] == 32 and b["max_distance"] == 128 and b["n"] == 40
k = b["layer_kinds"][0]
assert k["values_read"] and not k["causal"]
assert [h["bias_rank"] for h in k["heads"]] == [0, 39, 39], k
assert [h["reach"] for h in k["heads"]] == [4, 39, 39]
assert all(h["known"] and not h["proved"] for h in k["heads"])
' "$out"
expect 0 "bias_rank" -- "$AR" weights "$M/t5bias"
out=$("$AR" weights "$M/bert" --json)
check "no bias, no key" $PY -c '
import json, sys
assert "positional_bias" not in json.loads(sys.argv[1])
' "$out"

finish
