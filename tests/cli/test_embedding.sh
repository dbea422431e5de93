#!/usr/bin/env bash
# CLI tests of token embeddings of rank r (docs/theory/embedding-rank.md):
# seprank --embed-rank/--vocab/--positions, depthwidth --embed-rank and the
# embedding block of weights; the refusals.
source "$(dirname "$0")/lib.sh"
GEN="$(dirname "$0")/../tools/make_safetensors.py"

# ---- seprank: C(m + K, m) at two positions, independent of d ----
expect 0 "expected             15 = C(m+K, m) (verified), attained" -- \
  "$AR" seprank --layers 2 --d 6 --embed-rank 2 --exact
out=$("$AR" seprank --layers 2 --d 4 --heads 2 --embed-rank 2 --vocab 8 --exact --no-float --json)
check "vocabulary: min(V, C(m+K, m)) is the function's rank" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); e = r["embedding"]
assert r["exact_rank"] == 8 and r["templates"] == 8 and r["bound"] == 8, r
assert e["exact_function_rank"] and e["rank_meaning"] == "separation_rank"
assert e["expected_rank"] == 8 and e["expected_claim"] == "verified" and e["attains_expected"]
assert e["m"] == 2 and e["k"] == 4 and e["vocab"] == 8 and e["bounds_claim"] == "proved"
' "$out"
out=$("$AR" seprank --layers 2 --d 4 --embed-rank 2 --positions --exact --no-float --json)
check "positions add C(m+K-1, m), conjectured" $PY -c '
import json, sys
r = json.loads(sys.argv[1]); e = r["embedding"]
assert r["exact_rank"] == 25 == e["expected_rank"] and e["expected_claim"] == "conjectured", r
assert r["bound_log_parity"] is None and e["positions"] is True
' "$out"
out=$("$AR" seprank --layers 1 --d 2 --json)
check "no embedding block without --embed-rank" $PY -c '
import json, sys
assert "embedding" not in json.loads(sys.argv[1])
' "$out"
expect_error 2 "--vocab and --positions need --embed-rank R" -- "$AR" seprank --layers 1 --d 4 --vocab 3
expect_error 2 "--embed-rank: must be >= 1, got 0" -- "$AR" seprank --layers 1 --d 4 --embed-rank 0
expect_error 2 "at most V templates" -- "$AR" seprank --layers 1 --d 4 --embed-rank 2 --vocab 3 --templates 4
expect_error 2 "drop --rational" -- "$AR" seprank --layers 1 --d 4 --embed-rank 2 --exact --rational

# ---- depthwidth: the crossover with min(d, r) (derived) ----
expect 0 "the depth is past it at every width" -- "$AR" depthwidth --layers 12 --d 768 --embed-rank 128
out=$("$AR" depthwidth --d 768 --embed-rank 1024 --intercept 4 --slope 0.1 --json)
check "crossover = transition depth of min(d, r)" $PY -c '
import json, math, sys
r = json.loads(sys.argv[1]); e = r["embedding"]
assert e["claim"] == "derived" and e["width_capped"] is False and e["effective_d"] == 768
assert abs(e["crossover_layers"] - (math.log(768) - 4) / 0.1) < 1e-9 and e["depth_efficient"] is None
' "$out"
# ar_dw_run refuses it, after the fit file is read: a readable one
printf 'depth,width\n6,215.3\n12,300.4\n' >"$TMP/pts.csv"
expect_error 2 "--embed-rank needs a mode: --params, --layers or --d" -- "$AR" depthwidth --fit "$TMP/pts.csv" --embed-rank 4

# ---- weights: the rank of W_E beside the width ----
$PY "$GEN" --family bert --layers 1 --heads 2 --d 16 --vocab 40 --dtype BF16 "$TMP/bert" >/dev/null
$PY "$GEN" --family gpt2 --layers 1 --heads 2 --d 16 "$TMP/gpt2" >/dev/null
expect 0 "token embedding      bert.embeddings.word_embeddings.weight: 40 x 16, rank 16" -- \
  "$AR" weights "$TMP/bert"
out=$("$AR" weights "$TMP/bert" --json)
check "weights: the embedding block" $PY -c '
import json, sys
e = json.loads(sys.argv[1])["embedding"]
t = e["token"]
assert t["rows"] == 40 and t["cols"] == 16 and t["rank"] == 16 and t["rule"] == "storage", e
assert t["precision"] == "bfloat16" and 0 < t["threshold"] < t["certain_threshold"]
assert t["certain_rank"] <= t["rank"] and e["embedding_rank"] == 16 and e["width"] == 16
assert e["width_exceeds_rank"] is False and e["token_and_position"] is None
' "$out"
out=$("$AR" weights "$TMP/gpt2" --json)
check "weights: no embedding block without a stored embedding" $PY -c '
import json, sys
assert "embedding" not in json.loads(sys.argv[1])
' "$out"
finish
