"""attnrank.seprank with token embeddings (embed_rank=, vocab=, positions=):
the CLI's JSON on the same arguments, the closed forms C(m + K, m) and
min(V, C(m + K, m)) at two positions, the JSON key only when asked, and the
refusals (docs/theory/embedding-rank.md)."""

import math

import pytest

import attnrank
from theory_cli import flags as _flags, run_json as _cli, run_status


CASES = [
    ((1, 4), {"embed_rank": 2, "exact": True}),
    ((2, 3), {"embed_rank": 1, "vocab": 4, "exact": True, "no_float": True}),
    ((1, 4), {"embed_rank": 2, "positions": True, "exact": True}),
    ((1, 2), {"embed_rank": 3, "n": 3}),
]


@pytest.mark.parametrize("args,kw", CASES)
def test_equals_the_cli(cli, args, kw):
    got = attnrank.seprank(*args, **kw)
    want = _cli(cli, "seprank", "--layers", args[0], "--d", args[1], *_flags(kw))
    assert got.to_dict() == want
    assert "embedding" in want


def k_of(layers):
    return (3 ** layers - 1) // 2


@pytest.mark.parametrize("layers,d,r", [(1, 5, 2), (2, 4, 1), (2, 2, 4), (1, 3, 3)])
def test_two_positions_depend_on_min_d_r(layers, d, r):
    m = min(d, r)
    got = attnrank.seprank(layers, d, embed_rank=r, exact=True, no_float=True)
    want = math.comb(m + k_of(layers), m)
    e = got.embedding
    assert got.exact_rank == want == e.expected_rank and e.attains_expected
    assert e.m == m and e.k == k_of(layers) and e.expected_claim == "verified"
    assert e.bounds_claim == "proved" and e.rank_meaning == "lower_bound"
    assert got.bound == want  # the parity bound with m coordinates


@pytest.mark.parametrize("v", [2, 5, 9, 30])
def test_vocabulary_is_the_function_table(v):
    got = attnrank.seprank(2, 4, heads=2, embed_rank=2, vocab=v, exact=True, no_float=True)
    assert got.templates == v and got.embedding.exact_function_rank
    assert got.embedding.rank_meaning == "separation_rank"
    assert got.exact_rank == min(v, math.comb(2 + 4, 2)) == got.embedding.expected_rank
    part = attnrank.seprank(2, 4, heads=2, embed_rank=2, vocab=v, templates=v - 1, exact=True)
    assert not part.embedding.exact_function_rank


def test_positions_term_is_conjectured():
    got = attnrank.seprank(2, 4, embed_rank=2, positions=True, exact=True, no_float=True)
    assert got.exact_rank == math.comb(6, 2) + math.comb(5, 2) == got.embedding.expected_rank
    assert got.embedding.expected_claim == "conjectured"
    assert got.bound_log_parity is None or math.isnan(got.bound_log_parity)


def test_no_key_without_the_option():
    got = attnrank.seprank(1, 2)
    assert got.embedding is None and "embedding" not in got.to_dict()


@pytest.mark.parametrize("kw,text", [
    ({"embed_rank": 0}, "embed_rank=: must be >= 1"),
    ({"vocab": 3}, "embed_rank=R"),
    ({"positions": True}, "embed_rank=R"),
    ({"embed_rank": 2, "vocab": 3, "templates": 4}, "at most V templates"),
    ({"embed_rank": 2, "rational": True}, "rational=True"),
    ({"embed_rank": -1}, "embed_rank"),
    ({"embed_rank": 2, "vocab": 0}, "vocab"),
    ({"embed_rank": 2, "positions": 1}, "positions"),
])
def test_refusals(kw, text):
    with pytest.raises(ValueError, match=text):
        attnrank.seprank(1, 4, **kw)


def test_cli_refuses_alike(cli):
    assert run_status(cli, "seprank", "--layers", 1, "--d", 4, "--vocab", 3) == 2
    assert run_status(cli, "seprank", "--layers", 1, "--d", 4, "--embed-rank", 0) == 2


# ---- depthwidth(embed_rank=): the crossover with min(d, r) (derived) ----------

DW_CASES = [
    {"params": 175e9, "embed_rank": 4096},
    {"layers": 12, "embed_rank": 128},
    {"d": 768, "embed_rank": 1024},
    {"layers": 12, "d": 768, "embed_rank": 128, "intercept": 4.0, "slope": 0.1},
]


@pytest.mark.parametrize("kw", DW_CASES)
def test_depthwidth_equals_the_cli(cli, kw):
    got = attnrank.depthwidth(**kw)
    want = _cli(cli, "depthwidth", *_flags(kw))
    assert got.to_dict() == want and want["embedding"]["claim"] == "derived"


def test_depthwidth_crossover_is_the_transition_depth_of_min_d_r():
    law = {"intercept": 4.0, "slope": 0.1}
    e = attnrank.depthwidth(layers=12, d=768, embed_rank=128, **law).embedding
    assert e.width_capped and e.effective_d == 128
    assert e.crossover_layers == pytest.approx((math.log(128) - 4.0) / 0.1, rel=1e-14)
    assert e.depth_efficient == (12 <= e.crossover_layers)
    wide = attnrank.depthwidth(d=768, embed_rank=1024, **law)
    assert not wide.embedding.width_capped and wide.embedding.depth_efficient is None
    assert wide.embedding.crossover_layers == pytest.approx(wide.transition_layers, rel=1e-14)
    assert attnrank.depthwidth(d=768).embedding is None
    assert "embedding" not in attnrank.depthwidth(d=768).to_dict()


def test_depthwidth_refusals(cli):
    with pytest.raises(ValueError, match="embed_rank"):
        attnrank.depthwidth(d=768, embed_rank=0)
    with pytest.raises(ValueError, match="needs a mode"):
        attnrank.depthwidth(fit=[[1, 100], [2, 200]], embed_rank=4)
    assert run_status(cli, "depthwidth", "--d", 768, "--embed-rank", 0) == 2
